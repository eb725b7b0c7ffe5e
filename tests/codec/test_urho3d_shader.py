"""Compiled Urho3D shaders (USHD, shader models 3 and 4): lossless codec and bad input."""

from __future__ import annotations

import struct

import pytest

from rigport.io_formats.codec import FormatError
from rigport.io_formats.registry import format_of
from rigport.io_formats.urho3d import shader
from rigport.io_formats.urho3d.formats import summarize_package
from rigport.samples import rbfx as rbfx_samples

SAMPLES = {
    "sm3_vertex": lambda: rbfx_samples.shader_sm3(shader.VERTEX),
    "sm3_pixel": lambda: rbfx_samples.shader_sm3(shader.PIXEL),
    "sm4_vertex": lambda: rbfx_samples.shader_sm4(shader.VERTEX),
    "sm4_pixel": lambda: rbfx_samples.shader_sm4(shader.PIXEL),
}


@pytest.mark.parametrize("name", SAMPLES)
def test_shader_round_trip(name):
    src = SAMPLES[name]()
    data = shader.write(src)
    back = shader.read(data)
    assert shader.write(back) == data
    assert back == src


def test_sm3_layout():
    data = shader.write(rbfx_samples.shader_sm3())
    assert data[:4] == b"USHD"
    assert struct.unpack_from("<hhI", data, 4) == (0, 3, 3)
    assert data[12:26] == b"ModelViewProj\0" and data[26:28] == bytes([0, 4])
    assert struct.unpack_from("<I", data, len(data) - 1500 - 4)[0] == 1500


def test_sm4_layout():
    data = shader.write(rbfx_samples.shader_sm4(shader.VERTEX))
    assert struct.unpack_from("<hhII", data, 4) == (0, 4, 0x1F3A5C77, 3)
    at = 16 + len(b"cMatDiffColor\0")
    assert data[16:at] == b"cMatDiffColor\0"
    assert data[at] == 1 and struct.unpack_from("<II", data, at + 1) == (0, 16)
    summary = shader.summarize(shader.read(data))
    assert summary["model"] == 4 and summary["type"] == "vertex"
    assert summary["parameters"][2] == {
        "name": "cLightColor",
        "cbuffer": 2,
        "offset": 64,
        "size": 16,
    }
    assert summary["texture_units"][1] == {"name": "sEnvCubeMap", "sampler": 4}


def test_registry_and_package_summary():
    for ext in shader.EXTENSIONS:
        assert format_of("x" + ext).key == "urho3d.shader"
    from rigport.io_formats.urho3d import package

    pytest.importorskip("lz4.block")
    pkg = package.read(rbfx_samples.sample_package(compressed=True))
    rows = {r["name"]: r for r in summarize_package(pkg)["files"]}
    assert rows["Shaders/LitSolid.vs3"]["shader"]["model"] == 3
    assert rows["Shaders/LitSolid.ps4"]["shader"]["type"] == "pixel"
    assert rows["Data/Big.bin"]["kind"] == "other" and rows["Data/Big.bin"]["blocks"] == 4


@pytest.mark.parametrize("name", SAMPLES)
def test_bad_shaders(name):
    data = shader.write(SAMPLES[name]())
    for n in range(len(data) - 1):
        if n < 200 or n % 97 == 0:
            with pytest.raises(FormatError):
                shader.read(data[:n])
    with pytest.raises(FormatError) as info:
        shader.read(data + b"\0")
    assert "bytecode size" in info.value.message
    bad = bytearray(data)
    struct.pack_into("<h", bad, 6, 5)
    with pytest.raises(FormatError) as info:
        shader.read(bytes(bad))
    assert info.value.offset == 6 and "model 5" in info.value.message
    bad = bytearray(data)
    struct.pack_into("<h", bad, 4, 2)
    with pytest.raises(FormatError) as info:
        shader.read(bytes(bad))
    assert info.value.offset == 4
    with pytest.raises(FormatError):
        shader.read(b"USHX" + data[4:])
