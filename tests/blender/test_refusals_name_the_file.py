"""A refusal from the neutral conversion (after the file parsed) names the file
and the element it is about, and the import leaves nothing behind."""

from __future__ import annotations

import re

import pytest

from rigport.io_formats.bonespro import structure
from rigport.io_formats.urho3d import mdl
from rigport.samples import bonespro as bp_samples
from rigport.samples import urho3d as u_samples


def _counts(bpy) -> dict:
    return {k: len(getattr(bpy.data, k)) for k in ("objects", "meshes", "armatures", "actions")}


def _refused(bpy, op, path, *words: str) -> None:
    before = _counts(bpy)
    with pytest.raises(RuntimeError) as info:
        op(filepath=str(path))
    message = str(info.value)
    assert str(path) in message, message
    for w in words:
        assert re.search(w, message), message
    assert _counts(bpy) == before


def test_urho3d_bone_cycle(blank_blend, tmp_path):
    model = u_samples.skinned_model(n_bones=3, morphs=0)
    model.bones[1].parent, model.bones[2].parent = 2, 1
    path = tmp_path / "cycle.mdl"
    path.write_bytes(mdl.write(model))
    _refused(blank_blend, blank_blend.ops.import_scene.urho3d_mdl, path, r"cycle: bone \d")


def test_bonespro_singular_bone_transform(blank_blend, tmp_path):
    s = bp_samples.structure(n_vertices=6, seed=1)
    s.bone_transforms[2] = 0.0
    path = tmp_path / "rig.txt"
    path.write_bytes(structure.write(s))
    op = blank_blend.ops.import_scene.bonespro_structure
    _refused(blank_blend, op, path, "bone 2 <", "singular")
