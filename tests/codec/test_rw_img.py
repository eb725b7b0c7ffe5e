"""IMG archives: both versions, members in and out, bad directories, batch paths."""

from __future__ import annotations

import json
import struct

import pytest

from rigport.io_formats import containers
from rigport.io_formats.codec import FormatError
from rigport.io_formats.renderware import dff, ifp, img
from rigport.samples import renderware as samples
from rigport.samples import renderware_ifp as ifp_samples
from rigport.samples import renderware_txd as txd_samples
from rigport.tests.support import run_batch


def _members() -> dict[str, bytes]:
    return {
        "ped.dff": dff.write(samples.skinned_ped("VC")),
        "ped.ifp": ifp.write(ifp_samples.walk_package("VC")),
        "ped.txd": txd_samples.every_layout("VC"),
    }


def _archive(tmp_path, version: int):
    a = img.new_archive(version)
    for name, data in _members().items():
        a.put(name, data)
    path = tmp_path / ("gta3.img" if version == 2 else "models.img")
    img.save_archive(str(path), a)
    return path


@pytest.mark.parametrize("version", [1, 2])
def test_members_in_and_out(tmp_path, version):
    path = _archive(tmp_path, version)
    if version == 1:
        assert (tmp_path / "models.dir").stat().st_size == 3 * 32
    else:
        assert path.read_bytes()[:4] == b"VER2"
    a = img.open_archive(str(path))
    assert a.names() == list(_members())
    for name, data in _members().items():
        got = a.read(name.upper())
        assert got[: len(data)] == data and not got[len(data) :].strip(b"\0")
        assert len(got) % img.SECTOR == 0
    ifp.read(a.read("ped.ifp"))  # members parse with their padding
    dff.read(a.read("ped.dff"))
    bigger = _members()["ped.ifp"] * 3
    a.put("ped.ifp", bigger)
    a.put("new.txd", b"x" * 5000)
    img.save_archive(str(path), a)
    b = img.open_archive(str(path))
    assert b.read("ped.ifp")[: len(bigger)] == bigger
    assert b.read("ped.dff")[:100] == _members()["ped.dff"][:100]
    assert b.names()[-1] == "new.txd"


def test_v2_directory_growth_moves_the_first_member():
    a = img.new_archive(2)
    a.put("first.dff", b"A" * 10)
    for k in range(70):  # 70 entries need a second directory sector
        a.put(f"m{k}.txd", bytes([k]) * 100)
    back = img.read_v2(img.write_v2(a))
    assert back.read("first.dff")[:10] == b"A" * 10
    assert all(back.read(f"m{k}.txd")[:100] == bytes([k]) * 100 for k in range(70))
    assert min(e.offset for e in back.entries) >= 2


def test_codec_round_trip_is_lossless(tmp_path):
    data = _archive(tmp_path, 2).read_bytes()
    assert img.write_image(img.read_image(data)) == data
    d = (_archive(tmp_path, 1).parent / "models.dir").read_bytes()
    assert img.write_directory(img.read_dir_file(d + b"xy")) == d + b"xy"


def test_bad_directories_are_refused():
    a = img.new_archive(2)
    a.put("a.dff", b"z" * 3000)
    data = bytearray(img.write_v2(a))
    bad = bytearray(data)
    struct.pack_into("<I", bad, 4, 10**8)
    with pytest.raises(FormatError, match="entry count"):
        img.read_v2(bytes(bad))
    bad = bytearray(data)
    struct.pack_into("<I", bad, 8, 500)  # offset past the end
    with pytest.raises(FormatError, match="spans sectors"):
        img.read_v2(bytes(bad))
    with pytest.raises(FormatError, match="spans sectors"):
        img.read_v1(img.ENTRY_V1.pack(0, 9, b"x.dff".ljust(24, b"\0")), b"\0" * 2048)


def test_container_paths():
    assert containers.split_member("a/B.IMG:ped.dff") == ("a/B.IMG", "ped.dff")
    assert containers.split_member("x.pak:Models/m.mdl") == ("x.pak", "Models/m.mdl")
    assert containers.split_member("plain.dff") == ("plain.dff", None)


@pytest.mark.parametrize("version", [1, 2])
def test_batch_check_walks_members_and_writes_into_archives(tmp_path, version):
    path = _archive(tmp_path, version)
    r = run_batch("check", path)
    assert r.returncode == 0, r.stderr
    for name in _members():
        assert f"{path}:{name}: lossless" in r.stdout
    r = run_batch("inspect", f"{path}:ped.ifp")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["format"] == "renderware.ifp" and doc["animations"][0]["name"] == "walk"
    r = run_batch("check", f"{path}:missing.dff")
    assert r.returncode == 1 and "no file 'missing.dff'" in r.stderr
