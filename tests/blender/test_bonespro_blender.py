"""BonesPro in Blender: structure and animation import, export round trips within
DESIGN.md's tolerances, content detection, bad input leaving the file unchanged."""

from __future__ import annotations

import numpy as np
import pytest

from rigport.io_formats.bonespro import animation as A
from rigport.io_formats.bonespro import convert, structure
from rigport.samples import bonespro as samples

TOL = 1e-5


def _write(tmp_path, name: str, data: bytes) -> str:
    path = tmp_path / name
    path.write_bytes(data)
    return str(path)


def _rig(tmp_path, n_vertices=40, scaled=True, seed=0):
    s = samples.structure(n_vertices=n_vertices, scaled=scaled, seed=seed)
    return s, _write(tmp_path, "rig.txt", structure.write(s))


def _blend_state(bpy) -> dict:
    return {
        kind: sorted(x.name for x in getattr(bpy.data, kind))
        for kind in ("objects", "meshes", "armatures", "actions", "materials", "shape_keys")
    }


def _weights_by_vertex(s) -> list[dict]:
    out = [dict() for _ in range(len(s.positions))]
    owner = np.repeat(np.arange(len(s.positions)), s.weight_counts)
    for v, b, w in zip(owner.tolist(), s.weight_bones.tolist(), s.weights.tolist(), strict=True):
        out[v][b] = w
    return out


def _assert_same_structure(got, want) -> None:
    assert got.names == want.names
    np.testing.assert_array_equal(got.parents, want.parents)
    np.testing.assert_allclose(got.bone_transforms, want.bone_transforms, rtol=TOL, atol=TOL)
    np.testing.assert_allclose(got.node_transforms, want.node_transforms, rtol=TOL, atol=TOL)
    np.testing.assert_allclose(got.boxes, want.boxes, rtol=TOL, atol=TOL)
    np.testing.assert_allclose(got.positions, want.positions, rtol=TOL, atol=TOL)
    np.testing.assert_array_equal(got.weight_counts, want.weight_counts)
    np.testing.assert_array_equal(got.weight_bones, want.weight_bones)  # file order kept
    for g, w in zip(_weights_by_vertex(got), _weights_by_vertex(want), strict=True):
        assert g.keys() == w.keys()
        for b in g:
            assert abs(g[b] - w[b]) < 1e-7  # Blender keeps weights as float32


# ------------------------------------------------------------------ structure
def test_structure_import_builds_armature_and_vertex_only_mesh(blank_blend, tmp_path):
    bpy = blank_blend
    s, path = _rig(tmp_path)
    assert bpy.ops.import_scene.bonespro_structure(filepath=path) == {"FINISHED"}
    arm = next(o for o in bpy.data.objects if o.type == "ARMATURE")
    mesh = next(o for o in bpy.data.objects if o.type == "MESH")
    assert len(arm.data.bones) == 6 and arm.data.bones["Bip01 L Thigh"].parent.name == "Tail Tip"
    assert len(mesh.data.vertices) == 40 and len(mesh.data.polygons) == 0
    assert mesh.modifiers[0].type == "ARMATURE" and mesh.modifiers[0].object == arm
    assert list(arm.data.bones["Bip01 Spine"][convert.BOX]) == pytest.approx(s.boxes[2])
    # Rest pose = bone transforms with scale taken out, axes unchanged.
    bind = convert.rows_to_matrix(s.bone_transforms)
    for i, name in enumerate(s.names):
        rest = np.array(arm.data.bones[name].matrix_local)
        basis = bind[i, :3, :3] / np.linalg.norm(bind[i, :3, :3], axis=0)
        np.testing.assert_allclose(rest[:3, :3], basis, atol=1e-6)
        np.testing.assert_allclose(rest[:3, 3], bind[i, :3, 3], atol=1e-6)
    want = _weights_by_vertex(s)
    for v in mesh.data.vertices:
        got = {s.names.index(mesh.vertex_groups[g.group].name): g.weight for g in v.groups}
        assert got.keys() == want[v.index].keys()


def test_structure_weights_onto_the_active_mesh(blank_blend, tmp_path):
    bpy = blank_blend
    s, path = _rig(tmp_path, n_vertices=30)
    me = bpy.data.meshes.new("body")
    me.vertices.add(30)
    me.vertices.foreach_set("co", (s.positions + 0.001).astype(np.float32).ravel())
    body = bpy.data.objects.new("body", me)
    bpy.context.collection.objects.link(body)
    bpy.context.view_layer.objects.active = body
    assert bpy.ops.import_scene.bonespro_structure(filepath=path) == {"FINISHED"}
    assert [o.name for o in bpy.data.objects if o.type == "MESH"] == ["body"]
    assert {g.name for g in body.vertex_groups} == set(s.names)
    assert body.modifiers["BonesPro"].object.type == "ARMATURE"


def test_structure_blender_round_trip(blank_blend, tmp_path):
    bpy = blank_blend
    s, path = _rig(tmp_path, n_vertices=50)
    s.weights[3] = 0.0  # an explicit zero weight is kept too
    path = _write(tmp_path, "rig0.txt", structure.write(s))
    bpy.ops.import_scene.bonespro_structure(filepath=path)
    out = str(tmp_path / "out.txt")
    assert bpy.ops.export_scene.bonespro_structure(filepath=out) == {"FINISHED"}
    _assert_same_structure(
        structure.read(open(out, "rb").read()), structure.read(open(path, "rb").read())
    )


def test_structure_export_without_stored_values(blank_blend, tmp_path):
    """A rig made in Blender: bone matrices come from the rest pose."""
    bpy = blank_blend
    s, path = _rig(tmp_path, scaled=False)
    bpy.ops.import_scene.bonespro_structure(filepath=path)
    arm = next(o for o in bpy.data.objects if o.type == "ARMATURE")
    for b in arm.data.bones:
        for key in (convert.BONE, convert.NODE, convert.BOX):
            del b[key]
    out = str(tmp_path / "out.txt")
    bpy.ops.export_scene.bonespro_structure(filepath=out)
    got = structure.read(open(out, "rb").read())
    np.testing.assert_allclose(got.bone_transforms, s.bone_transforms, atol=1e-5)
    np.testing.assert_allclose(got.node_transforms, got.bone_transforms)


# ------------------------------------------------------------------ Bones mode
BONES_CASES = [
    (A.ABSOLUTE, A.MATRIX, "XYZ", A.DEGREES, True),
    (A.RELATIVE, A.MATRIX, "XYZ", A.DEGREES, True),
    (A.RELATIVE, A.EULER, "ZXZ", A.DEGREES, False),
    (A.ABSOLUTE, A.EULER, "YXZ", A.RADIANS, False),
    (A.RELATIVE, A.EULER, "XYX", A.RADIANS, False),
]


@pytest.mark.parametrize("system,rep,order,units,scaled", BONES_CASES)
def test_bones_animation_round_trip(blank_blend, tmp_path, system, rep, order, units, scaled):
    bpy = blank_blend
    s, path = _rig(tmp_path, scaled=scaled)
    a = samples.animation(s, A.BONES, system, rep, order, units, n_frames=6, first=3, step=2)
    anim_path = _write(tmp_path, "anim.txt", A.write(a))
    bpy.ops.import_scene.bonespro_structure(filepath=path)
    assert bpy.ops.import_anim.bonespro_anim(filepath=anim_path) == {"FINISHED"}
    arm = next(o for o in bpy.data.objects if o.type == "ARMATURE")
    action = arm.animation_data.action
    assert action is not None
    # The pose at each exported frame is the file's world matrices.
    bpy.context.scene.frame_set(7)
    world = samples.bone_world_frames(s, 6)[2]
    for i, name in enumerate(s.names):
        pose = np.array(arm.pose.bones[name].matrix)
        basis = world[i, :3, :3] / np.linalg.norm(world[i, :3, :3], axis=0)
        np.testing.assert_allclose(pose[:3, :3], basis, atol=2e-5)
        np.testing.assert_allclose(pose[:3, 3], world[i, :3, 3], atol=2e-5)
    out = str(tmp_path / "out.txt")
    assert bpy.ops.export_anim.bonespro_anim(filepath=out) == {"FINISHED"}
    got = A.read(open(out, "rb").read())
    want = A.read(open(anim_path, "rb").read())
    for key, value in convert.header(want).items():
        assert getattr(got, key) == value, key
    np.testing.assert_allclose(got.boxes, want.boxes, atol=TOL)
    gb, gn = convert.bone_worlds(got, s.parents)
    wb, wn = convert.bone_worlds(want, s.parents)
    np.testing.assert_allclose(gb, wb, atol=TOL, rtol=TOL)
    np.testing.assert_allclose(gn, wn, atol=TOL, rtol=TOL)
    if rep == A.EULER:  # the same angles, not only the same matrices
        np.testing.assert_allclose(got.bone_values, want.bone_values, atol=1e-4)


def test_bones_animation_export_in_other_settings(blank_blend, tmp_path):
    bpy = blank_blend
    s, path = _rig(tmp_path, scaled=False)
    a = samples.animation(s, A.BONES, n_frames=4)
    bpy.ops.import_scene.bonespro_structure(filepath=path)
    bpy.ops.import_anim.bonespro_anim(filepath=_write(tmp_path, "a.txt", A.write(a)))
    want, _ = convert.bone_worlds(a, s.parents)
    for order in ("XYZ", "ZYX", "YZY"):
        out = str(tmp_path / f"{order}.txt")
        bpy.ops.export_anim.bonespro_anim(
            filepath=out,
            system="RELATIVE",
            representation="EULER",
            euler_order=order,
            angle_units="RADIANS",
        )
        got = A.read(open(out, "rb").read())
        assert (got.system, got.euler_order, got.angle_units) == (A.RELATIVE, order, A.RADIANS)
        np.testing.assert_allclose(convert.bone_worlds(got, s.parents)[0], want, atol=TOL)


# ------------------------------------------------------------------ Mesh modes
def test_mesh_absolute_import_and_round_trip(blank_blend, tmp_path):
    bpy = blank_blend
    s, path = _rig(tmp_path, n_vertices=25)
    a = samples.animation(s, A.MESH_ABSOLUTE, n_frames=4, first=1)
    anim_path = _write(tmp_path, "mesh.txt", A.write(a))
    bpy.ops.import_scene.bonespro_structure(filepath=path)
    assert bpy.ops.import_anim.bonespro_anim(filepath=anim_path) == {"FINISHED"}
    obj = next(o for o in bpy.data.objects if o.name.endswith("mesh animation"))
    assert obj.data.shape_keys is None  # the frames sit in one mesh, picked by a modifier
    frames = obj.modifiers[0].node_group.nodes["Object Info"].inputs["Object"].default_value
    assert len(frames.data.vertices) == 4 * 25
    from rigport.operators.bonespro.rig import world_positions

    for f in range(4):
        bpy.context.scene.frame_set(1 + f)
        np.testing.assert_allclose(world_positions(obj, evaluated=True), a.positions[f], atol=1e-5)
    bpy.context.view_layer.objects.active = obj
    out = str(tmp_path / "out.txt")
    assert bpy.ops.export_anim.bonespro_anim(filepath=out) == {"FINISHED"}
    got = A.read(open(out, "rb").read())
    assert got.mode == A.MESH_ABSOLUTE and got.frame_count == 4 and got.first_frame == 1
    np.testing.assert_allclose(got.positions, a.positions, atol=TOL)


def test_mesh_bones_cs_import_through_the_pose_and_round_trip(blank_blend, tmp_path):
    bpy = blank_blend
    s, path = _rig(tmp_path, n_vertices=25, seed=3)
    bones_anim = samples.animation(s, A.BONES, n_frames=4)
    mesh_anim = samples.animation(s, A.MESH_BONES, n_frames=4)
    bpy.ops.import_scene.bonespro_structure(filepath=path)
    bpy.ops.import_anim.bonespro_anim(filepath=_write(tmp_path, "b.txt", A.write(bones_anim)))
    assert bpy.ops.import_anim.bonespro_anim(
        filepath=_write(tmp_path, "m.txt", A.write(mesh_anim))
    ) == {"FINISHED"}
    obj = next(o for o in bpy.data.objects if o.name.endswith("mesh animation"))
    from rigport.operators.bonespro.rig import world_positions

    want = samples.skinned_positions(s, samples.bone_world_frames(s, 4))
    for f in range(4):
        bpy.context.scene.frame_set(f)
        np.testing.assert_allclose(world_positions(obj, evaluated=True), want[f], atol=1e-5)
    # Export from the rig's own deforming mesh: Blender's armature skinning gives the
    # same positions, listed per bone in that bone's frame.
    body = next(o for o in bpy.context.scene.objects if o.type == "MESH" and o != obj)
    bpy.context.view_layer.objects.active = body
    out = str(tmp_path / "out.txt")
    assert bpy.ops.export_anim.bonespro_anim(filepath=out, mode="MESH_BONES") == {"FINISHED"}
    got = A.read(open(out, "rb").read())
    assert got.mode == A.MESH_BONES
    positions, hits, spread = convert.block_world_positions(got, samples.bone_world_frames(s, 4))
    np.testing.assert_allclose(positions, want, atol=1e-4)
    np.testing.assert_array_equal(got.block_counts[0], np.bincount(s.weight_bones, minlength=6))


# ------------------------------------------------------------------ detection, bad input
def test_content_detection(blank_blend, tmp_path):
    bpy = blank_blend
    s, path = _rig(tmp_path)
    anim_path = _write(tmp_path, "a.txt", A.write(samples.animation(s, A.BONES, n_frames=2)))
    notes = _write(tmp_path, "notes.txt", b"shopping list\n")
    before = _blend_state(bpy)
    with pytest.raises(RuntimeError, match="BonesPro animation file"):
        bpy.ops.import_scene.bonespro_structure(filepath=anim_path)
    with pytest.raises(RuntimeError, match="BonesPro structure file"):
        bpy.ops.import_anim.bonespro_anim(filepath=path)
    with pytest.raises(RuntimeError, match="neither a BonesPro structure nor"):
        bpy.ops.import_scene.bonespro(filepath=notes)
    assert _blend_state(bpy) == before
    # The generic importer (drag and drop) takes both, structures first.
    directory = str(tmp_path)
    files = [{"name": "a.txt"}, {"name": "rig.txt"}]
    assert bpy.ops.import_scene.bonespro(directory=directory, files=files) == {"FINISHED"}
    arm = next(o for o in bpy.data.objects if o.type == "ARMATURE")
    assert arm.animation_data.action is not None


def test_bad_files_leave_the_blend_file_unchanged(blank_blend, tmp_path):
    bpy = blank_blend
    s, path = _rig(tmp_path)
    lines = structure.write(s).decode().splitlines()
    i = 2 + 6 * 11 + 2
    lines[i] = "17 0.5"
    bad = _write(tmp_path, "bad.txt", ("\n".join(lines) + "\n").encode())
    before = _blend_state(bpy)
    with pytest.raises(RuntimeError, match=f"line {i + 1}: vertex weight for bone 17"):
        bpy.ops.import_scene.bonespro_structure(filepath=bad)
    assert _blend_state(bpy) == before
    # A good file then a bad one in one import: nothing stays.
    with pytest.raises(RuntimeError, match="line"):
        bpy.ops.import_scene.bonespro_structure(
            directory=str(tmp_path), files=[{"name": "rig.txt"}, {"name": "bad.txt"}]
        )
    assert _blend_state(bpy) == before
    bpy.ops.import_scene.bonespro_structure(filepath=path)
    arm = next(o for o in bpy.data.objects if o.type == "ARMATURE")
    before = _blend_state(bpy)
    a = A.write(samples.animation(s, A.BONES, n_frames=2)).decode().replace("Bones", "Bonez", 1)
    with pytest.raises(RuntimeError, match="line 4: ExportMode"):
        bpy.ops.import_anim.bonespro_anim(filepath=_write(tmp_path, "b.txt", a.encode()))
    wrong = samples.animation(
        samples.structure(names=list("abc"), parents=[-1, 0, 0], max_weights=2), n_frames=2
    )
    with pytest.raises(RuntimeError, match="3 bones"):
        bpy.ops.import_anim.bonespro_anim(filepath=_write(tmp_path, "c.txt", A.write(wrong)))
    assert _blend_state(bpy) == before and arm.animation_data is None


# ------------------------------------------------------------------ the nine Euler orders
def _row_rotation(axis: str, angle: float) -> np.ndarray:
    """3ds Max row-vector rotation about a world axis (rows: where X, Y, Z go)."""
    c, s = np.cos(angle), np.sin(angle)
    return {
        "X": np.array([[1, 0, 0], [0, c, s], [0, -s, c]]),
        "Y": np.array([[c, 0, -s], [0, 1, 0], [s, 0, c]]),
        "Z": np.array([[c, s, 0], [-s, c, 0], [0, 0, 1]]),
    }[axis]


@pytest.mark.parametrize("order", ["XYZ", "XZY", "YZX", "YXZ", "ZXY", "ZYX", "XYX", "YZY", "ZXZ"])
def test_euler_order_import_matches_direct_matrices(blank_blend, tmp_path, order):
    """Pose matrices after import equal Ra(E0) Rb(E1) Rc(E2) chained as
    local x parent-world in row form, computed here without the add-on's code."""
    bpy = blank_blend
    s, path = _rig(tmp_path, scaled=False)
    a = samples.animation(s, A.BONES, A.RELATIVE, A.EULER, order, A.DEGREES, n_frames=3)
    bpy.ops.import_scene.bonespro_structure(filepath=path)
    bpy.ops.import_anim.bonespro_anim(filepath=_write(tmp_path, "e.txt", A.write(a)))
    arm = next(o for o in bpy.data.objects if o.type == "ARMATURE")
    a = A.read(open(tmp_path / "e.txt", "rb").read())
    for f in range(3):
        bpy.context.scene.frame_set(f)
        world: dict[int, np.ndarray] = {}
        for b in [0, 1, 2, 5, 3, 4]:  # parents first
            e = np.radians(a.bone_values[f, b, :3])
            local = np.eye(4)
            local[:3, :3] = (
                _row_rotation(order[0], e[0])
                @ _row_rotation(order[1], e[1])
                @ _row_rotation(order[2], e[2])
            )
            local[3, :3] = a.bone_values[f, b, 3:]
            p = s.parents[b]
            world[b] = local if p < 0 else local @ world[p]
            pose = np.array(arm.pose.bones[s.names[b]].matrix)
            np.testing.assert_allclose(pose[:3, :3], world[b][:3, :3].T, atol=2e-5)
            np.testing.assert_allclose(pose[:3, 3], world[b][3, :3], atol=2e-5)


def test_weights_message_reports_the_position_offset(blank_blend, tmp_path):
    bpy = blank_blend
    from rigport.operators.bonespro.importer import StructureImportOptions, import_structure

    s, path = _rig(tmp_path, n_vertices=12)
    me = bpy.data.meshes.new("body")
    me.vertices.add(12)
    moved = s.positions.copy()
    moved[5] += (0.0, 0.25, 0.0)
    me.vertices.foreach_set("co", moved.astype(np.float32).ravel())
    body = bpy.data.objects.new("body", me)
    bpy.context.collection.objects.link(body)
    bpy.context.view_layer.objects.active = body
    messages = import_structure(bpy.context, path, StructureImportOptions()).infos
    assert "weights put on 'body'" in messages[1] and "0.25 at most" in messages[1]
    me2 = bpy.data.meshes.new("small")
    me2.vertices.add(3)
    small = bpy.data.objects.new("small", me2)
    bpy.context.collection.objects.link(small)
    bpy.context.view_layer.objects.active = small
    messages = import_structure(bpy.context, path, StructureImportOptions()).infos
    assert "has 3 vertices, the file 12" in messages[1]


def test_pose_from_fcurves_equals_the_evaluated_pose(blank_blend, tmp_path):
    """The exporter reads bone matrices from the F-curves; with a constraint on a bone
    it sets each frame instead. Both give the same matrices, also between keys."""
    bpy = blank_blend
    from rigport.operators.bonespro.rig import bone_order, sample_frames

    s, path = _rig(tmp_path)
    bpy.ops.import_scene.bonespro_structure(filepath=path)
    a = samples.animation(s, A.BONES, A.RELATIVE, n_frames=5)
    bpy.ops.import_anim.bonespro_anim(filepath=_write(tmp_path, "a.txt", A.write(a)))
    arm = next(o for o in bpy.data.objects if o.type == "ARMATURE")
    arm.location = (1.0, -2.0, 0.5)
    bpy.context.view_layer.update()
    names = bone_order(arm)
    frames = np.array([0.0, 1.0, 2.5, 4.0])
    fast, _ = sample_frames(bpy.context, frames, arm, names)
    con = arm.pose.bones[names[2]].constraints.new("COPY_LOCATION")
    con.influence = 0.0
    slow, _ = sample_frames(bpy.context, frames, arm, names)
    np.testing.assert_allclose(fast, slow, atol=1e-5)
    world = samples.bone_world_frames(s, 5)
    np.testing.assert_allclose(fast[1, :, :3, :3], world[1, :, :3, :3], atol=1e-5)
    np.testing.assert_allclose(fast[1, :, :3, 3], world[1, :, :3, 3] + (1.0, -2.0, 0.5), atol=1e-5)


def test_export_renames_bones_a_file_cannot_hold(blank_blend, tmp_path):
    bpy = blank_blend
    s, path = _rig(tmp_path)
    bpy.ops.import_scene.bonespro_structure(filepath=path)
    arm = next(o for o in bpy.data.objects if o.type == "ARMATURE")
    arm.data.bones["Tail Tip"].name = "Tail>Tip"
    out = str(tmp_path / "out.txt")
    assert bpy.ops.export_scene.bonespro_structure(filepath=out) == {"FINISHED"}
    assert structure.read(open(out, "rb").read()).names[5] == "Tail_Tip"
    empty = samples.animation(s, A.BONES, n_frames=0)
    before = _blend_state(bpy)
    with pytest.raises(RuntimeError, match="no frames"):
        bpy.ops.import_anim.bonespro_anim(filepath=_write(tmp_path, "e.txt", A.write(empty)))
    assert _blend_state(bpy) == before


def test_node_transforms_and_boxes_that_vary_per_frame(blank_blend, tmp_path):
    bpy = blank_blend
    from rigport.operators.bonespro.exporter import AnimationExportOptions, write_animation
    from rigport.operators.bonespro.importer import AnimationImportOptions, import_animation

    s, path = _rig(tmp_path)
    a = samples.animation(s, A.BONES, A.RELATIVE, A.MATRIX, n_frames=4)
    a.node_values[2, 3, 9:] += (0.5, -0.25, 0.125)  # bone 3's node moves on frame 2
    a.boxes[1, 0] *= 2.0
    anim_path = _write(tmp_path, "a.txt", A.write(a))
    bpy.ops.import_scene.bonespro_structure(filepath=path)
    result = import_animation(bpy.context, anim_path, AnimationImportOptions())
    assert any("node transforms move" in w for w in result.warnings)
    assert any("box sizes change" in w for w in result.warnings)
    out = str(tmp_path / "out.txt")
    assert bpy.ops.export_anim.bonespro_anim(filepath=out) == {"FINISHED"}
    got, want = A.read(open(out, "rb").read()), A.read(open(anim_path, "rb").read())
    np.testing.assert_allclose(got.boxes, want.boxes, atol=TOL)
    np.testing.assert_allclose(got.node_values, want.node_values, atol=TOL)
    # Other frames: the first frame's offsets and boxes, with a warning.
    arm = result.armature
    bpy.context.view_layer.objects.active = arm
    custom = AnimationExportOptions(interval="CUSTOM", first_frame=0, last_frame=2, step=1)
    warnings = write_animation(bpy.context, out, arm, None, custom).warnings
    assert any("first frame's are written" in w for w in warnings)


@pytest.mark.parametrize("mode", ["XYZ", "ZXY"])
def test_pose_from_euler_fcurves(blank_blend, tmp_path, mode):
    """Bones keyed in an Euler rotation mode (a rig animated in Blender) export the
    same matrices from their F-curves as Blender evaluates."""
    bpy = blank_blend
    from rigport.operators.bonespro.rig import bone_order, sample_frames

    s, path = _rig(tmp_path, scaled=False)
    bpy.ops.import_scene.bonespro_structure(filepath=path)
    arm = next(o for o in bpy.data.objects if o.type == "ARMATURE")
    for i, pb in enumerate(arm.pose.bones):
        pb.rotation_mode = mode
        for frame, angle in ((1, 0.0), (5, 0.4 + 0.1 * i)):
            pb.rotation_euler = (angle, -angle * 0.5, angle * 0.25)
            pb.location = (0.0, angle, 0.0)
            pb.keyframe_insert("rotation_euler", frame=frame)
            pb.keyframe_insert("location", frame=frame)
    names = bone_order(arm)
    frames = np.array([1.0, 3.0, 5.0])
    fast, _ = sample_frames(bpy.context, frames, arm, names)
    arm.pose.bones[0].constraints.new("COPY_ROTATION").influence = 0.0
    slow, _ = sample_frames(bpy.context, frames, arm, names)
    np.testing.assert_allclose(fast, slow, atol=1e-5)
    out = str(tmp_path / "out.txt")
    bpy.context.view_layer.objects.active = arm
    assert bpy.ops.export_anim.bonespro_anim(filepath=out) == {"FINISHED"}
    got = A.read(open(out, "rb").read())
    assert (got.first_frame, got.last_frame, got.frame_count) == (1, 5, 5)


def test_export_errors_change_nothing(blank_blend, tmp_path):
    bpy = blank_blend
    s, path = _rig(tmp_path)
    bpy.ops.import_scene.bonespro_structure(filepath=path)
    arm = next(o for o in bpy.data.objects if o.type == "ARMATURE")
    bpy.context.view_layer.objects.active = arm
    out = tmp_path / "none.txt"
    with pytest.raises(RuntimeError, match="nothing is animated"):
        bpy.ops.export_anim.bonespro_anim(filepath=str(out))
    with pytest.raises(RuntimeError, match="needs a mesh"):
        bpy.ops.export_anim.bonespro_anim(
            filepath=str(out), mode="MESH_ABSOLUTE", interval="CUSTOM", last_frame=3
        )
    assert not out.exists()


# ------------------------------------------------------------------ Mesh (absolute) cost
def _mesh_absolute_file(tmp_path, n_frames: int, n_vertices: int = 10) -> tuple[str, A.Animation]:
    rng = np.random.default_rng(n_frames)
    a = A.Animation(1, n_vertices, n_frames, A.MESH_ABSOLUTE, first_frame=1.0)
    a.last_frame = float(n_frames)
    a.positions = rng.normal(size=(n_frames, n_vertices, 3)).astype(np.float32).astype(float)
    return _write(tmp_path, f"frames{n_frames}.txt", A.write(a)), a


def test_mesh_absolute_import_makes_the_same_datablocks_at_any_frame_count(blank_blend, tmp_path):
    """A shape key and an F-curve per frame cost a name search over all the others each:
    20,000 frames took 51 s. The import now makes the same few data-blocks whatever the
    frame count, which is what made it linear (checked by what it makes, not by a
    clock: bench/bonespro_bench.py measures the time)."""
    bpy = blank_blend
    made = {}
    for n in (2000, 8000):
        path, _ = _mesh_absolute_file(tmp_path, n)
        before = {
            k: len(getattr(bpy.data, k))
            for k in ("objects", "meshes", "actions", "shape_keys", "node_groups")
        }
        assert bpy.ops.import_anim.bonespro_anim(filepath=path) == {"FINISHED"}
        made[n] = {k: len(getattr(bpy.data, k)) - v for k, v in before.items()}
    assert (
        made[2000]
        == made[8000]
        == {"objects": 2, "meshes": 2, "actions": 0, "shape_keys": 0, "node_groups": 1}
    )


def test_mesh_absolute_frames_survive_a_save(blank_blend, tmp_path):
    bpy = blank_blend
    path, a = _mesh_absolute_file(tmp_path, 6, 5)
    assert bpy.ops.import_anim.bonespro_anim(filepath=path) == {"FINISHED"}
    blend = str(tmp_path / "saved.blend")
    bpy.ops.wm.save_as_mainfile(filepath=blend)
    bpy.ops.wm.open_mainfile(filepath=blend)
    from rigport.operators.bonespro.rig import world_positions

    obj = next(o for o in bpy.data.objects if o.name.endswith("mesh animation"))
    for f in range(6):
        bpy.context.scene.frame_set(1 + f)
        np.testing.assert_allclose(world_positions(obj, evaluated=True), a.positions[f], atol=1e-5)


def test_mesh_absolute_beyond_what_can_be_indexed_is_refused(blank_blend, tmp_path, monkeypatch):
    """Geometry Nodes index the frames in float32: more positions than 2**24 are refused
    with the file's name (the limit is lowered here to keep the file small)."""
    from rigport.operators.bonespro import rig

    monkeypatch.setattr(rig, "MAX_FRAME_POINTS", 100)
    bpy = blank_blend
    path, _ = _mesh_absolute_file(tmp_path, 11, 10)
    before = _blend_state(bpy)
    with pytest.raises(RuntimeError, match="frames11.txt.*110 positions, more than the 100"):
        bpy.ops.import_anim.bonespro_anim(filepath=path)
    assert _blend_state(bpy) == before


# ------------------------------------------------------------------ defaults reproduce the file
@pytest.mark.parametrize("mode", [A.BONES, A.MESH_ABSOLUTE, A.MESH_BONES])
@pytest.mark.parametrize("with_bones_action", [False, True], ids=["alone", "after bones"])
def test_default_export_after_import_reproduces_the_file(
    blank_blend, tmp_path, mode, with_bones_action
):
    """Structure, then an animation in any mode (alone, or after the Bones animation of the
    same motion), then File > Export with every option at its default: the same file.

    A Mesh (bones c.s) file lists vertices in frames of bones that move: without the
    Bones animation the armature is in its rest pose, which disagrees (the import warns),
    so only the layout is compared then."""
    bpy = blank_blend
    s, path = _rig(tmp_path, n_vertices=25, seed=4)
    a = samples.animation(s, mode, n_frames=4, first=2, quoted=mode == A.MESH_BONES)
    assert bpy.ops.import_scene.bonespro_structure(filepath=path) == {"FINISHED"}
    if with_bones_action:
        motion = samples.animation(s, A.BONES, n_frames=4, first=2)
        assert bpy.ops.import_anim.bonespro_anim(
            filepath=_write(tmp_path, "motion.txt", A.write(motion))
        ) == {"FINISHED"}
    assert bpy.ops.import_anim.bonespro_anim(filepath=_write(tmp_path, "anim.txt", A.write(a))) == {
        "FINISHED"
    }
    out = str(tmp_path / "out.txt")
    assert bpy.ops.export_anim.bonespro_anim(filepath=out) == {"FINISHED"}
    got = A.read(open(out, "rb").read())
    header = ("mode", "system", "representation", "euler_order", "angle_units", "quoted")
    assert [getattr(got, k) for k in header] == [getattr(a, k) for k in header]
    assert (got.bone_count, got.vertex_count, got.frame_count) == (
        a.bone_count,
        a.vertex_count,
        a.frame_count,
    )
    assert (got.first_frame, got.last_frame, got.step) == (a.first_frame, a.last_frame, a.step)
    if mode == A.MESH_ABSOLUTE:
        np.testing.assert_allclose(got.positions, a.positions, atol=TOL)
    elif mode == A.MESH_BONES:
        np.testing.assert_array_equal(got.block_bones, a.block_bones)
        np.testing.assert_array_equal(got.block_counts, a.block_counts)
        np.testing.assert_array_equal(got.block_vertices, a.block_vertices)
        if with_bones_action:
            np.testing.assert_allclose(got.block_positions, a.block_positions, atol=1e-4)
    else:
        np.testing.assert_allclose(
            convert.bone_worlds(got, s.parents)[0], convert.bone_worlds(a, s.parents)[0], atol=TOL
        )
