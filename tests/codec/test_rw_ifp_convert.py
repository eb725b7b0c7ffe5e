"""IFP <-> neutral animation without Blender: bone matching, unchanged keys keep
their bytes, edits are quantised like the file."""

from __future__ import annotations

import numpy as np
import pytest

from rigport.io_formats.renderware import anim_convert, ifp
from rigport.samples import renderware_ifp as ifp_samples
from rigport.samples.renderware import ped_skeleton


def _bones(skeleton):
    return [(n, e["rw_bone_id"]) for n, e in zip(skeleton.names, skeleton.extras, strict=True)]


def test_match_by_id_then_name():
    bones = [("Pelvis", 1), ("Spine", 2), ("Head", 5)]
    hits, missing = anim_convert.match_bones(
        [("whatever", 2), (" HEAD", None), ("pelvis", 99), ("Tail", None)], bones
    )
    assert hits == [1, 2, 0, None] and missing == ["Tail"]


@pytest.mark.parametrize("game", list(ifp_samples.GAMES))
def test_unchanged_round_trip_is_byte_identical_despite_float_noise(game):
    skeleton = ped_skeleton(32)
    f = ifp.read(ifp.write(ifp_samples.walk_package(game, skeleton, quirks=True)))
    bones = _bones(skeleton)
    version, compressed = f.version, ifp_samples.GAMES[game][1]
    source = f.animations[0]
    neutral, missing = anim_convert.ifp_to_animation(source, bones)
    assert not missing and len(neutral.tracks) == 32
    rng = np.random.default_rng(1)
    for t in neutral.tracks:  # what a trip through Blender's float32 curves leaves
        t.rotation = t.rotation + rng.normal(scale=1e-7, size=t.rotation.shape)
        if t.translation is not None:
            t.translation = t.translation + rng.normal(scale=1e-7, size=t.translation.shape)
    back = anim_convert.to_ifp_animation(neutral, bones, version, compressed, source)
    shell = ifp.IfpFile(
        f.version,
        f.name_raw,
        [back, *f.animations[1:]],
        f.size_delta,
        f.info_pad,
        f.tail,
        f.trailing,
    )
    assert ifp.write(shell) == ifp.write(f)


def test_new_animation_without_source_uses_the_layout():
    skeleton = ped_skeleton(8)
    f = ifp.read(ifp.write(ifp_samples.walk_package("SA", skeleton)))
    neutral, _ = anim_convert.ifp_to_animation(f.animations[0], _bones(skeleton))
    neutral.name = "fresh"
    out = anim_convert.to_ifp_animation(neutral, _bones(skeleton), "ANP3", True, None, {"Root"})
    assert out.name == "fresh" and out.objects[0].kind == "4" and out.objects[1].kind == "3"
    assert all(o.compressed for o in out.objects)
    for o0, o1 in zip(f.animations[0].objects, out.objects, strict=True):
        assert np.array_equal(o0.frames, o1.frames)  # same values, same quantisation
    anpk = anim_convert.to_ifp_animation(neutral, _bones(skeleton), "ANPK", False, None, {"Root"})
    assert anpk.objects[0].kind == "KRT0" and anpk.objects[1].kind == "KR00"
    assert anpk.objects[3].bone_id == skeleton.extras[3]["rw_bone_id"]
