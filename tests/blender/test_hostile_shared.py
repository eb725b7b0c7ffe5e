"""Hostile files through Blender (issue 26): the shared Blender side and the
Urho3D importers. Each file is built by our own writers."""

from __future__ import annotations

import numpy as np
import pytest

from rigport.io_formats.urho3d import mdl
from rigport.samples import rbfx as rbfx_samples


def _f32(bits: int) -> np.float32:
    return np.array(bits, np.uint32).view(np.float32)[()]


def _bits(value) -> int:
    return int(np.asarray(value, np.float32).view(np.uint32))


@pytest.mark.parametrize("bits", [0x7FA00001, 0x7FC00000, 0xFFC00123, 0x7F800000])
def test_umd3_weight_nan_keeps_its_bits(blank_blend, tmp_path, bits):
    """Finding 9: a signalling NaN, NaN or infinite default weight (Blender's key
    gets 0) is written back with its exact bits; the other morph's weight too."""
    bpy = blank_blend
    model = rbfx_samples.umd3_model(version=2)
    model.morphs[0].weight = _f32(bits)
    src, out = tmp_path / "in.mdl", tmp_path / "out.mdl"
    src.write_bytes(mdl.write(model))
    assert bpy.ops.import_scene.urho3d_mdl(filepath=str(src)) == {"FINISHED"}
    obj = next(o for o in bpy.data.objects if o.type == "MESH")
    assert obj.data.shape_keys.key_blocks[1].value == 0.0
    assert bpy.ops.export_scene.urho3d_mdl(filepath=str(out)) == {"FINISHED"}
    back = mdl.read(out.read_bytes())
    assert [_bits(m.weight) for m in back.morphs] == [bits, _bits(model.morphs[1].weight)]


def test_umd3_weight_nan_edited_is_what_blender_has(blank_blend, tmp_path):
    """A key the artist set after the import exports its own value."""
    bpy = blank_blend
    model = rbfx_samples.umd3_model(version=2)
    model.morphs[0].weight = _f32(0x7FA00001)
    src, out = tmp_path / "in.mdl", tmp_path / "out.mdl"
    src.write_bytes(mdl.write(model))
    assert bpy.ops.import_scene.urho3d_mdl(filepath=str(src)) == {"FINISHED"}
    obj = next(o for o in bpy.data.objects if o.type == "MESH")
    obj.data.shape_keys.key_blocks[1].value = 0.5
    assert bpy.ops.export_scene.urho3d_mdl(filepath=str(out)) == {"FINISHED"}
    assert mdl.read(out.read_bytes()).morphs[0].weight == 0.5
