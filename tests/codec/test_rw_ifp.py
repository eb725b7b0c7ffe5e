"""GTA IFP codec: byte round trips of every layout, key decoding, edits, bad input."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from rigport.io_formats.codec import FormatError
from rigport.io_formats.renderware import ifp
from rigport.io_formats.transforms import quat_to_matrix
from rigport.samples import renderware_ifp as ifp_samples
from rigport.samples.renderware import ped_skeleton

GAMES = tuple(ifp_samples.GAMES)


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("quirks", [False, True])
def test_byte_round_trip(game, quirks):
    data = ifp.write(ifp_samples.walk_package(game, animations=3, quirks=quirks))
    f = ifp.read(data)
    assert ifp.write(f) == data
    assert [a.name for a in f.animations] == ["walk", "anim001", "anim002"]
    assert f.version == ifp_samples.GAMES[game][0]
    if quirks:
        assert len(data) % 2048 == 0


def _rot_close(a, b, atol):
    return np.allclose(quat_to_matrix(a), quat_to_matrix(b), atol=atol)


@pytest.mark.parametrize("game", GAMES)
def test_keys_decode_to_what_was_written(game):
    skeleton = ped_skeleton(32)
    expect = ifp_samples.cycle_keys(skeleton, 31)
    f = ifp.read(ifp.write(ifp_samples.walk_package(game, skeleton)))
    walk = f.find("WALK")  # GTA names are matched without case
    assert walk is not None and walk.frame_count == 31
    compressed = ifp_samples.GAMES[game][1]
    tol = 1.5 / ifp.ROTATION_STEP if compressed else 1e-6
    for obj, keys, name in zip(walk.objects, expect, skeleton.names, strict=True):
        got = obj.keys()
        assert obj.name == name
        assert np.allclose(got.times, keys.times, atol=0.5 / 60 if compressed else 1e-6)
        assert _rot_close(got.rotation, keys.rotation, 4 * tol)
        if keys.translation is not None:
            step = 1 / ifp.TRANSLATION_STEP if compressed else 1e-6
            assert np.allclose(got.translation, keys.translation, atol=step)
    if ifp_samples.GAMES[game][2]:
        ids = [e["rw_bone_id"] for e in skeleton.extras]
        assert [o.bone_id for o in walk.objects] == ids


def test_anpk_rotation_is_stored_conjugated():
    skeleton = ped_skeleton(4)
    f = ifp_samples.walk_package("VC", skeleton, frames=3)
    obj = f.animations[0].objects[1]
    raw = obj.frames["q"][0].astype(np.float64)  # x y z w as stored
    true = obj.keys().rotation[0]  # w x y z as applied
    assert np.allclose(raw, [-true[1], -true[2], -true[3], true[0]], atol=1e-7)


def test_anpk_layout_fields():
    data = ifp.write(ifp_samples.walk_package("VC", ped_skeleton(3), frames=2))
    assert data[:4] == b"ANPK"
    assert struct.unpack_from("<I", data, 4)[0] == len(data) - 8
    assert data[8:12] == b"INFO"
    at = data.index(b"ANIM")
    assert struct.unpack_from("<I", data, at + 4)[0] == 44  # VC: with a bone ID
    assert data[at + 8 : at + 12] == b"Root"
    assert struct.unpack_from("<i", data, at + 36)[0] == 2  # key count
    assert data[at + 52 : at + 56] == b"KRT0"  # the root carries translation
    iii = ifp.write(ifp_samples.walk_package("III", ped_skeleton(3), frames=2))
    at = iii.index(b"ANIM")
    assert struct.unpack_from("<I", iii, at + 4)[0] == 48  # III: sibling indices


def test_edit_quantises_like_the_file():
    f = ifp.read(ifp.write(ifp_samples.walk_package("SA")))
    obj = f.animations[0].objects[0]
    keys = obj.keys()
    keys.translation = keys.translation + 0.3
    before = obj.frames.copy()
    obj.frames = obj.encode(keys)
    again = ifp.read(ifp.write(f)).animations[0].objects[0].keys()
    assert np.allclose(again.translation, keys.translation, atol=0.5 / ifp.TRANSLATION_STEP)
    assert np.array_equal(before["q"], obj.frames["q"])  # unedited channels: same integers


def test_new_key_count_updates_last_frame_index():
    f = ifp.read(ifp.write(ifp_samples.walk_package("VC", ped_skeleton(3), frames=5)))
    obj = f.animations[0].objects[1]
    k = obj.keys()
    obj.frames = obj.encode(ifp.Keys(k.times[:3], k.rotation[:3]))
    back = ifp.read(ifp.write(f)).animations[0].objects[1]
    assert len(back.frames) == 3
    assert struct.unpack_from("<i", back.anim_tail, 4)[0] == 2


@pytest.mark.parametrize("game", GAMES)
def test_truncated_and_lying_files_fail_cleanly(game):
    data = ifp.write(ifp_samples.walk_package(game, ped_skeleton(5), animations=2, frames=4))
    for cut in range(0, len(data), max(len(data) // 97, 1)):
        try:
            ifp.write(ifp.read(data[:cut]))
        except FormatError:
            pass
    huge = bytearray(data)
    if game.startswith("SA"):
        struct.pack_into("<i", huge, 32, 10**9)  # animation count
    else:
        struct.pack_into("<i", huge, 16, 10**9)
    with pytest.raises(FormatError, match="count"):
        ifp.read(bytes(huge))
    with pytest.raises(FormatError, match="not an IFP"):
        ifp.read(b"RIFF" + data[4:])


def test_anp3_flag_that_disagrees_with_keys():
    f = ifp_samples.walk_package("SA_float", ped_skeleton(4), frames=3)
    f.animations[0].flags = 1  # says compressed, holds floats
    data = ifp.write(f)
    back = ifp.read(data)
    assert not back.animations[0].objects[0].compressed
    assert ifp.write(back) == data
