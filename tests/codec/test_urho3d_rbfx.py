"""rbfx's UMD3 models and UAN2 animations: lossless codec, layout facts, bad input."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from rigport.io_formats.codec import FormatError
from rigport.io_formats.urho3d import ani, animation_convert, mdl, model_import
from rigport.samples import rbfx as rbfx_samples


@pytest.mark.parametrize("version", [1, 2])
def test_umd3_round_trip(version):
    model = rbfx_samples.umd3_model(version)
    data = mdl.write(model)
    assert data[:4] == b"UMD3" and struct.unpack_from("<I", data, 4)[0] == version
    back = mdl.read(data)
    assert back.version == version and back.magic == b"UMD3"
    assert mdl.write(back) == data
    weights = [m.weight for m in back.morphs]
    assert weights == ([0.25, 0.75] if version == 2 else [0.0, 0.0])


def test_umd3_version_2_adds_exactly_one_float_per_morph():
    v1 = mdl.write(rbfx_samples.umd3_model(1))
    v2 = mdl.write(rbfx_samples.umd3_model(2))
    model = mdl.read(v2)
    assert len(v2) - len(v1) == 4 * len(model.morphs)
    # the weight follows the morph's name
    name = model.morphs[0].name.encode() + b"\0"
    at = v2.index(name) + len(name)
    assert struct.unpack_from("<f", v2, at)[0] == 0.25
    # UMD3 is UMD2 with the version: without it (and the weights) the bytes agree
    as_umd2 = mdl.read(v1)
    as_umd2.magic, as_umd2.version = b"UMD2", None
    assert b"UMD2" + mdl.write(as_umd2)[4:] == b"UMD2" + v1[8:]


def test_umd3_morph_weights_reach_the_neutral_scene():
    scene = model_import.import_model(rbfx_samples.umd3_model(2), "T")
    assert [m.default_weight for m in scene.meshes[0].morphs] == [0.25, 0.75]
    assert scene.meshes[0].extras["urho_layout"]["version"] == 2
    assert scene.meshes[0].extras["urho_layout"]["magic"] == "UMD3"


@pytest.mark.parametrize("version", [1, 2, 3])
def test_uan2_round_trip(version):
    anim = rbfx_samples.uan2_animation(version=version)
    data = ani.write(anim)
    assert data[:4] == b"UAN2" and struct.unpack_from("<I", data, 4)[0] == version
    back = ani.read(data)
    assert back.version == version
    assert ani.write(back) == data
    assert len(back.variant_tracks) == (3 if version >= 2 else 0)
    if version == 3:
        assert [t.weight for t in back.tracks][:4] == [1.0, 0.875, 0.75, 0.625]
        assert [t.weight for t in back.variant_tracks] == [0.75, 1.0, 1.0]


def test_uan2_variant_track_values():
    back = ani.read(ani.write(rbfx_samples.uan2_animation(version=3)))
    light, camera, sign = back.variant_tracks
    assert light.value_type == 3 and light.interpolation == 1
    times = np.linspace(0, 1, 5).astype(np.float32)
    assert np.array_equal(light.times, times)
    assert np.allclose(light.values.view("<f4").ravel(), np.sin(times * 3))
    assert camera.interpolation == ani.INTERPOLATION_TANGENT_SPLINE
    assert camera.tangents.shape == (10, 12)
    assert np.allclose(camera.values.view("<f4").reshape(5, 3)[:, 1], times * 2)
    assert sign.values == ["one", "два", "三"] and sign.tangents is None


def test_uan2_version_1_equals_uani_after_the_version():
    anim = rbfx_samples.uan2_animation(version=1)
    v1 = ani.write(anim)
    anim.version = None
    assert ani.write(anim) == b"UANI" + v1[8:]


def test_uan2_extras_survive_the_neutral_animation():
    src = rbfx_samples.uan2_animation(version=3)
    neutral = animation_convert.import_animation(ani.read(ani.write(src)))
    extras = neutral.extras[animation_convert.RBFX_EXTRA]
    out = animation_convert.export_animation(neutral)
    animation_convert.apply_rbfx_extras(out, extras)
    assert out.version == 3
    assert [t.weight for t in out.tracks] == [t.weight for t in src.tracks]
    assert len(ani.write(src)) == len(ani.write(out))
    for a, b in zip(src.tracks, out.tracks, strict=True):
        assert (a.name, a.mask) == (b.name, b.mask)
        for f in a.keys.dtype.names:
            assert np.allclose(a.keys[f], b.keys[f], atol=1e-6), (a.name, f)
    for a, b in zip(src.variant_tracks, out.variant_tracks, strict=True):
        assert (a.name, a.value_type, a.interpolation, a.tension, a.weight) == (
            b.name,
            b.value_type,
            b.interpolation,
            b.tension,
            b.weight,
        )
        assert np.array_equal(np.asarray(a.values), np.asarray(b.values))


def test_umd3_and_uan2_bad_versions():
    data = bytearray(mdl.write(rbfx_samples.umd3_model(2)))
    struct.pack_into("<I", data, 4, 3)
    with pytest.raises(FormatError) as info:
        mdl.read(bytes(data))
    assert info.value.offset == 4 and "version 3" in info.value.message
    data = bytearray(ani.write(rbfx_samples.uan2_animation(version=3)))
    struct.pack_into("<I", data, 4, 4)
    with pytest.raises(FormatError) as info:
        ani.read(bytes(data))
    assert info.value.offset == 4


def test_uan2_unsupported_variant_type():
    anim = rbfx_samples.uan2_animation(version=2)
    data = bytearray(ani.write(anim))
    name = anim.variant_tracks[0].name.encode() + b"\0"
    at = data.index(name) + len(name)
    data[at] = 15  # VariantMap: no fixed size
    with pytest.raises(FormatError) as info:
        ani.read(bytes(data))
    assert info.value.offset == at and "type 15" in info.value.message


@pytest.mark.parametrize(
    "data",
    [
        mdl.write(rbfx_samples.umd3_model(2)),
        ani.write(rbfx_samples.uan2_animation(version=3)),
        ani.write(rbfx_samples.uan2_animation(version=2)),
    ],
    ids=["umd3", "uan2v3", "uan2v2"],
)
@pytest.mark.urho3d_engine(skip=True)  # damaged files re-written byte for byte
def test_truncation_and_random_damage(data):
    module = mdl if data[:4] == b"UMD3" else ani
    for n in sorted({*range(0, 40), *range(40, len(data), 211), len(data) - 1}):
        if module is mdl and n == len(data) - 12 * 1:
            continue  # a model without its geometry centres is valid
        with pytest.raises(FormatError):
            module.read(data[:n])
    rng = np.random.default_rng(5)
    for _ in range(300):
        damaged = bytearray(data)
        for at in rng.integers(0, len(data), rng.integers(1, 4)):
            damaged[at] = rng.integers(0, 256)
        try:
            parsed = module.read(bytes(damaged))
        except FormatError:
            continue
        assert module.write(parsed) == bytes(damaged)
