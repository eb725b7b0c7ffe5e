"""BonesPro operators follow Blender's conventions (issue 14, items 1-3): options
drawn once with tooltips, axes and scale ("As Imported" gives the file back),
Apply Modifiers, Collection Exporter scope, frame rate and scene timing, and
All Actions / NLA Tracks export (one file each)."""

from __future__ import annotations

import numpy as np
import pytest

from rigport.io_formats.bonespro import animation as A
from rigport.io_formats.bonespro import convert, structure
from rigport.samples import bonespro as samples
from rigport.tests.operator_draw import check_draw

TOL = 1e-5


def _write(tmp_path, name: str, data: bytes) -> str:
    path = tmp_path / name
    path.write_bytes(data)
    return str(path)


def _rig(tmp_path, name: str = "rig.txt", seed: int = 0):
    s = samples.structure(n_vertices=30, scaled=True, seed=seed)
    return s, _write(tmp_path, name, structure.write(s))


def _armature(bpy, name: str | None = None):
    return next(o for o in bpy.data.objects if o.type == "ARMATURE" and name in (None, o.name))


def _read_structure(path) -> structure.Structure:
    return structure.read(open(path, "rb").read())


def _assert_structure(got, want, tol=TOL) -> None:
    assert got.names == want.names
    for field in ("bone_transforms", "node_transforms", "boxes", "positions", "weights"):
        np.testing.assert_allclose(getattr(got, field), getattr(want, field), rtol=tol, atol=tol)


def test_draw_every_option_once_with_a_tooltip(blank_blend) -> None:
    from rigport.operators.bonespro import operators as ops

    for cls in (
        ops.IMPORT_SCENE_OT_bonespro_structure,
        ops.IMPORT_ANIM_OT_bonespro_anim,
        ops.IMPORT_SCENE_OT_bonespro,
        ops.EXPORT_SCENE_OT_bonespro_structure,
        ops.EXPORT_ANIM_OT_bonespro_anim,
    ):
        drawn = check_draw(blank_blend.context, cls)
        assert "global_scale" in drawn, cls
    items = blank_blend.ops.export_anim.bonespro_anim.get_rna_type().properties
    for prop in items:
        if prop.type == "ENUM" and not prop.identifier.startswith("axis_"):  # bpy_extras'
            assert all(i.identifier.replace("_", "").isalnum() for i in prop.enum_items)
            assert all(i.identifier == i.identifier.upper() for i in prop.enum_items)


@pytest.mark.parametrize(
    "options",
    [{"global_scale": 0.01}, {"axis_forward": "X", "axis_up": "Z"}],
    ids=["scale", "axes"],
)
def test_structure_as_imported_gives_the_file_back(blank_blend, tmp_path, options) -> None:
    bpy = blank_blend
    s, path = _rig(tmp_path)
    assert bpy.ops.import_scene.bonespro_structure(filepath=path, **options) == {"FINISHED"}
    arm = _armature(bpy)
    assert bpy.context.view_layer.objects.active == arm and arm.select_get()
    if "global_scale" in options:
        np.testing.assert_allclose(np.array(arm.matrix_world), np.diag([0.01, 0.01, 0.01, 1]))
    else:
        assert not np.allclose(np.array(arm.matrix_world), np.eye(4))
    out = str(tmp_path / "out.txt")
    assert bpy.ops.export_scene.bonespro_structure(filepath=out) == {"FINISHED"}
    _assert_structure(_read_structure(out), s)


def test_default_options_change_no_byte(blank_blend, tmp_path) -> None:
    bpy = blank_blend
    _, path = _rig(tmp_path)
    bpy.ops.import_scene.bonespro_structure(filepath=path)
    first, second = str(tmp_path / "a.txt"), str(tmp_path / "b.txt")
    assert bpy.ops.export_scene.bonespro_structure(filepath=first) == {"FINISHED"}
    # an Armature modifier alone is not a modifier to apply
    mesh = next(o for o in bpy.data.objects if o.type == "MESH")
    mesh.modifiers.new("Armature", "ARMATURE").object = _armature(bpy)
    assert bpy.ops.export_scene.bonespro_structure(filepath=second) == {"FINISHED"}
    assert open(first, "rb").read() == open(second, "rb").read()
    assert bpy.ops.export_scene.bonespro_structure(
        filepath=second, apply_modifiers=False, use_transform_as_imported=False
    ) == {"FINISHED"}
    assert open(first, "rb").read() == open(second, "rb").read()


def test_explicit_scale_scales_what_is_written(blank_blend, tmp_path) -> None:
    bpy = blank_blend
    s, path = _rig(tmp_path)
    bpy.ops.import_scene.bonespro_structure(filepath=path)
    out = str(tmp_path / "out.txt")
    assert bpy.ops.export_scene.bonespro_structure(
        filepath=out, use_transform_as_imported=False, global_scale=2.0
    ) == {"FINISHED"}
    got = _read_structure(out)
    np.testing.assert_allclose(got.positions, 2.0 * s.positions, rtol=TOL, atol=TOL)
    np.testing.assert_allclose(got.bone_transforms[:, 3], 2.0 * s.bone_transforms[:, 3], atol=TOL)
    np.testing.assert_allclose(got.bone_transforms[:, :3], s.bone_transforms[:, :3], atol=TOL)
    np.testing.assert_allclose(got.boxes, 2.0 * s.boxes, rtol=TOL)


def _cube_on(bpy, armature, bone: str):
    import bmesh

    me = bpy.data.meshes.new("Cube")
    bm = bmesh.new()
    bmesh.ops.create_cube(bm, size=1.0)
    bm.to_mesh(me)
    bm.free()
    cube = bpy.data.objects.new("Cube", me)
    bpy.context.scene.collection.objects.link(cube)
    cube.vertex_groups.new(name=bone).add(list(range(8)), 1.0, "REPLACE")
    cube.modifiers.new("Armature", "ARMATURE").object = armature
    return cube


def test_apply_modifiers(blank_blend, tmp_path) -> None:
    bpy = blank_blend
    s, path = _rig(tmp_path)
    bpy.ops.import_scene.bonespro_structure(filepath=path)
    arm = _armature(bpy)
    cube = _cube_on(bpy, arm, s.names[1])
    cube.modifiers.new("Bevel", "BEVEL").width = 0.1
    bpy.context.view_layer.objects.active = cube
    applied, plain = str(tmp_path / "applied.txt"), str(tmp_path / "plain.txt")
    assert bpy.ops.export_scene.bonespro_structure(filepath=applied) == {"FINISHED"}
    assert bpy.ops.export_scene.bonespro_structure(filepath=plain, apply_modifiers=False) == {
        "FINISHED"
    }
    got, base = _read_structure(applied), _read_structure(plain)
    assert len(base.positions) == 8 and len(got.positions) > 8
    assert (got.weight_counts == 1).all()  # the weights follow the bevelled vertices
    assert set(got.weight_bones.tolist()) == {1}
    assert bpy.data.objects.get("Cube") == cube and len(bpy.data.objects) == 3  # no leftovers


def test_collection_exporter_writes_only_its_collection(blank_blend, tmp_path) -> None:
    bpy = blank_blend
    _, path_a = _rig(tmp_path, "a.txt", seed=0)
    s_b, path_b = _rig(tmp_path, "b.txt", seed=7)
    bpy.ops.import_scene.bonespro_structure(filepath=path_a, weights_to="NEW")
    bpy.ops.import_scene.bonespro_structure(filepath=path_b, weights_to="NEW")
    coll = bpy.data.collections.new("B")
    bpy.context.scene.collection.children.link(coll)
    for obj in list(bpy.context.selected_objects):  # what the second import made
        for user in list(obj.users_collection):
            user.objects.unlink(obj)
        coll.objects.link(obj)
    bpy.context.view_layer.objects.active = _armature(bpy, "a")
    out = str(tmp_path / "out.txt")
    assert bpy.ops.export_scene.bonespro_structure(filepath=out, collection="B") == {"FINISHED"}
    _assert_structure(_read_structure(out), s_b)


def test_animation_frame_rate_and_scene_timing(blank_blend, tmp_path) -> None:
    bpy = blank_blend
    scene = bpy.context.scene
    scene.render.fps, scene.render.fps_base = 30, 1.0
    s, path = _rig(tmp_path)
    a = samples.animation(s, A.BONES, n_frames=5, first=10, step=2)
    anim = _write(tmp_path, "anim.txt", A.write(a))
    bpy.ops.import_scene.bonespro_structure(filepath=path)
    assert bpy.ops.import_anim.bonespro_anim(
        filepath=anim, frame_rate="CUSTOM", fps=60.0, set_scene_timing=False
    ) == {"FINISHED"}
    action = _armature(bpy).animation_data.action
    assert tuple(action.frame_range) == pytest.approx((5.0, 9.0))  # 60 fps frames at 30
    assert scene.render.fps == 30
    # As Imported: the same file frames come back
    out = str(tmp_path / "out.txt")
    assert bpy.ops.export_anim.bonespro_anim(filepath=out) == {"FINISHED"}
    got = A.read(open(out, "rb").read())
    assert (got.first_frame, got.last_frame, got.step) == (10.0, 18.0, 2.0)
    np.testing.assert_allclose(got.bone_values, a.bone_values, atol=TOL)
    # the default: the scene takes the file's rate and range
    bpy.ops.import_anim.bonespro_anim(filepath=anim, frame_rate="CUSTOM", fps=60.0)
    assert scene.render.fps == 60 and (scene.frame_start, scene.frame_end) == (10, 18)
    assert tuple(_armature(bpy).animation_data.action.frame_range) == pytest.approx((10, 18))


def test_animation_as_imported_with_a_scaled_rig(blank_blend, tmp_path) -> None:
    bpy = blank_blend
    s, path = _rig(tmp_path)
    a = samples.animation(s, A.BONES, n_frames=4)
    bpy.ops.import_scene.bonespro_structure(filepath=path, global_scale=0.01)
    bpy.ops.import_anim.bonespro_anim(filepath=_write(tmp_path, "anim.txt", A.write(a)))
    out = str(tmp_path / "out.txt")
    assert bpy.ops.export_anim.bonespro_anim(filepath=out) == {"FINISHED"}
    got = A.read(open(out, "rb").read())
    np.testing.assert_allclose(got.bone_values, a.bone_values, atol=TOL)
    np.testing.assert_allclose(got.node_values, a.node_values, atol=TOL)
    assert bpy.ops.export_anim.bonespro_anim(
        filepath=out, use_transform_as_imported=False, global_scale=3.0
    ) == {"FINISHED"}
    got = A.read(open(out, "rb").read())
    want, _ = convert.bone_worlds(a, s.parents)
    have, _ = convert.bone_worlds(got, s.parents)
    # 3 file units per Blender unit, the rig 0.01 of the file: 0.03 of the file's
    np.testing.assert_allclose(have[..., :3, 3], 0.03 * want[..., :3, 3], atol=TOL)


def test_mesh_animation_transform_on_the_new_mesh(blank_blend, tmp_path) -> None:
    bpy = blank_blend
    s, path = _rig(tmp_path)
    a = samples.animation(s, A.MESH_ABSOLUTE, n_frames=3, first=1)
    assert bpy.ops.import_anim.bonespro_anim(
        filepath=_write(tmp_path, "m.txt", A.write(a)), global_scale=0.01
    ) == {"FINISHED"}
    obj = bpy.context.view_layer.objects.active
    assert obj.type == "MESH" and np.isclose(obj.matrix_world[0][0], 0.01)
    out = str(tmp_path / "out.txt")
    assert bpy.ops.export_anim.bonespro_anim(filepath=out) == {"FINISHED"}
    got = A.read(open(out, "rb").read())
    np.testing.assert_allclose(got.positions, a.positions, rtol=TOL, atol=TOL)


def test_all_actions_and_nla_tracks_one_file_each(blank_blend, tmp_path) -> None:
    bpy = blank_blend
    s, path = _rig(tmp_path)
    bpy.ops.import_scene.bonespro_structure(filepath=path)
    anims = {}
    for i, name in enumerate(("walk", "run", "jump")):
        a = samples.animation(s, A.BONES, n_frames=3 + i, first=i, seed=i + 1)
        anims[name] = a
        bpy.context.view_layer.objects.active = _armature(bpy)
        bpy.ops.import_anim.bonespro_anim(filepath=_write(tmp_path, f"{name}.txt", A.write(a)))
    folder = tmp_path / "out"
    folder.mkdir()
    assert bpy.ops.export_anim.bonespro_anim(
        filepath=str(folder / "hero.txt"), export_animations="ACTIONS"
    ) == {"FINISHED"}
    names = {a.name for a in bpy.data.actions}
    assert sorted(p.name for p in folder.iterdir()) == sorted(f"hero_{n}.txt" for n in names)
    arm = _armature(bpy)
    for name, a in anims.items():
        action = next(x for x in bpy.data.actions if x.name.startswith(name))
        got = A.read((folder / f"hero_{action.name}.txt").read_bytes())
        assert got.frame_count == a.frame_count and got.first_frame == a.first_frame
        np.testing.assert_allclose(got.bone_values, a.bone_values, atol=TOL)
    assert arm.animation_data.action.name.startswith("jump")  # put back
    named = tmp_path / "named"
    named.mkdir()
    bpy.ops.export_anim.bonespro_anim(
        filepath=str(named / "x.txt"), export_animations="ACTIONS", use_action_names=True
    )
    assert sorted(p.name for p in named.iterdir()) == sorted(f"{n}.txt" for n in names)
    tracks = [t.name for t in arm.animation_data.nla_tracks]
    assert len(tracks) == 3
    nla = tmp_path / "nla"
    nla.mkdir()
    assert bpy.ops.export_anim.bonespro_anim(
        filepath=str(nla / "hero.txt"), export_animations="NLA"
    ) == {"FINISHED"}
    assert sorted(p.name for p in nla.iterdir()) == sorted(f"hero_{t}.txt" for t in tracks)
