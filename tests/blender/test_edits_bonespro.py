"""BonesPro mesh-mode animations (absolute, bones c.s.) exported with default
options whether the armature (as after Select All) or the mesh is active, and read
back into an empty scene."""

from __future__ import annotations

import numpy as np
import pytest

from rigport.io_formats.bonespro import animation as A
from rigport.io_formats.bonespro import structure
from rigport.samples import bonespro as samples

TOL = 1e-5


def _import(bpy, rig: str, anim: str) -> None:
    assert bpy.ops.import_scene.bonespro_structure(filepath=rig) == {"FINISHED"}
    assert bpy.ops.import_anim.bonespro_anim(filepath=anim) == {"FINISHED"}


def _mesh_animation(bpy):
    return next(o for o in bpy.data.objects if o.name.endswith("mesh animation"))


@pytest.mark.parametrize("mode", [A.MESH_ABSOLUTE, A.MESH_BONES])
def test_mesh_animation_exports_with_the_armature_or_the_mesh_active(blank_blend, tmp_path, mode):
    bpy = blank_blend
    s = samples.structure(n_vertices=25, seed=4)
    a = samples.animation(s, mode, n_frames=4, first=2)
    rig, src = tmp_path / "rig.txt", tmp_path / "anim.txt"
    rig.write_bytes(structure.write(s))
    src.write_bytes(A.write(a))
    _import(bpy, str(rig), str(src))
    arm = next(o for o in bpy.data.objects if o.type == "ARMATURE")
    written = {}
    for active in (arm, _mesh_animation(bpy)):
        bpy.ops.object.select_all(action="SELECT")
        bpy.context.view_layer.objects.active = active
        out = tmp_path / f"out_{active.type}.txt"
        assert bpy.ops.export_anim.bonespro_anim(filepath=str(out)) == {"FINISHED"}
        written[active.type] = out.read_bytes()
    assert written["ARMATURE"] == written["MESH"]
    got = A.read(written["ARMATURE"])
    assert (got.mode, got.vertex_count, got.frame_count) == (mode, a.vertex_count, a.frame_count)
    assert (got.first_frame, got.last_frame, got.step) == (a.first_frame, a.last_frame, a.step)
    if mode == A.MESH_BONES:  # the rig rests (no Bones animation): the layout is the file's
        np.testing.assert_array_equal(got.block_bones, a.block_bones)
        np.testing.assert_array_equal(got.block_counts, a.block_counts)
        np.testing.assert_array_equal(got.block_vertices, a.block_vertices)
        return
    np.testing.assert_allclose(got.positions, a.positions, atol=TOL)
    # read back into an empty scene: every frame's positions are the original's
    from rigport.operators.bonespro.rig import world_positions

    bpy.ops.wm.read_factory_settings(use_empty=True)
    again = tmp_path / "again.txt"
    again.write_bytes(written["ARMATURE"])
    _import(bpy, str(rig), str(again))
    obj = _mesh_animation(bpy)
    for f in range(a.frame_count):
        bpy.context.scene.frame_set(2 + f)
        np.testing.assert_allclose(world_positions(obj, evaluated=True), a.positions[f], atol=TOL)


def test_an_armature_with_two_mesh_animations_asks_for_one(blank_blend, tmp_path):
    bpy = blank_blend
    s = samples.structure(n_vertices=25, seed=4)
    rig = tmp_path / "rig.txt"
    rig.write_bytes(structure.write(s))
    for k in range(2):
        src = tmp_path / f"anim{k}.txt"
        src.write_bytes(A.write(samples.animation(s, A.MESH_ABSOLUTE, n_frames=3, first=1)))
        if k == 0:
            _import(bpy, str(rig), str(src))
        else:
            assert bpy.ops.import_anim.bonespro_anim(filepath=str(src)) == {"FINISHED"}
    arm = next(o for o in bpy.data.objects if o.type == "ARMATURE")
    bpy.context.view_layer.objects.active = arm
    with pytest.raises(RuntimeError, match="has 2 mesh animations .*: make the one to export"):
        bpy.ops.export_anim.bonespro_anim(filepath=str(tmp_path / "out.txt"))
    assert not (tmp_path / "out.txt").exists()
