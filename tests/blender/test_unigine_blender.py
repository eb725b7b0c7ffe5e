"""Blender round trips of Unigine files built from the specification (both bpy versions)."""

from __future__ import annotations

import numpy as np
import pytest

from rigport.io_formats.unigine import anim, mesh
from rigport.samples import unigine as samples
from rigport.samples import unigine_compare as compare


def _write(path, m: mesh.Mesh):
    path.write_bytes(mesh.write(m))
    return str(path)


def _mesh_roundtrip(bpy, tmp_path, m: mesh.Mesh) -> tuple[mesh.Mesh, mesh.Mesh]:
    src = _write(tmp_path / "in.mesh", m)
    assert bpy.ops.import_scene.unigine_mesh(filepath=src) == {"FINISHED"}
    out = tmp_path / "out.mesh"
    assert bpy.ops.export_scene.unigine_mesh(filepath=str(out)) == {"FINISHED"}
    return mesh.read((tmp_path / "in.mesh").read_bytes()), mesh.read(out.read_bytes())


@pytest.mark.parametrize(
    "build",
    [
        lambda: samples.skinned_mesh(),
        lambda: samples.static_mesh(),
        lambda: samples.skinned_mesh(n_bones=9, surfaces=3, morphs=("a", "b", "c"), animations=1),
    ],
    ids=["skinned", "static", "three-surfaces"],
)
def test_mesh_roundtrip(blank_blend, tmp_path, build):
    a, b = _mesh_roundtrip(blank_blend, tmp_path, build())
    assert compare.mesh_differences(a, b) == []
    # change flags set only where a component changes: the same records as the original
    for x, y in zip(a.animations, b.animations, strict=True):
        assert np.array_equal(x.frames.flags, y.frames.flags), x.name
    assert len(mesh.write(b)) == len(mesh.write(a))


def test_wide_indices_roundtrip(blank_blend, tmp_path):
    a, b = _mesh_roundtrip(blank_blend, tmp_path, samples.large_mesh(rings=300))
    assert compare.mesh_differences(a, b) == []
    assert b.surfaces[0].n_coords > 65535


def test_imported_content(blank_blend, tmp_path):
    bpy = blank_blend
    m = samples.skinned_mesh()
    assert bpy.ops.import_scene.unigine_mesh(filepath=_write(tmp_path / "c.mesh", m)) == {
        "FINISHED"
    }
    obj = next(o for o in bpy.data.objects if o.type == "MESH")
    arm = obj.parent
    assert arm is not None and arm.type == "ARMATURE"
    assert [s.material.name for s in obj.material_slots] == ["surface_0", "surface_1"]
    me = obj.data
    assert len(me.vertices) == sum(s.n_coords for s in m.surfaces)
    assert len(me.polygons) == sum(len(s.tris) // 3 for s in m.surfaces)
    assert [k.name for k in me.shape_keys.key_blocks] == ["Basis", "bulge", "pinch"]
    assert [u.name for u in me.uv_layers] == ["UVMap", "UVMap2"]
    assert "Color" in me.color_attributes
    assert {g.name for g in obj.vertex_groups} == {b.name for b in m.bones}
    # the exact bind pose, scale included: world bind from the file vs Blender's rest
    from rigport.io_formats.unigine.mesh_import import skeleton_from_file

    world = skeleton_from_file(m.bones, m.bind).world_rest()
    for i, b in enumerate(m.bones):
        bone = arm.data.bones[b.name]
        rest = np.array(bone.matrix_local)
        scale = np.linalg.norm(world[i][:3, :3], axis=0)
        assert np.allclose(rest[:3, 3], world[i][:3, 3], atol=1e-5)
        assert np.allclose(rest[:3, :3] * scale, world[i][:3, :3], atol=1e-5)
    assert {a.name for a in bpy.data.actions} == {"clip_0", "clip_1"}
    # the scene's rate by default, as in every format
    assert bpy.data.actions["clip_0"]["rigport_fps"] == bpy.context.scene.render.fps


def test_embedded_animation_pose(blank_blend, tmp_path):
    """The armature posed by the imported action matches the engine's world transforms."""
    bpy = blank_blend
    m = samples.skinned_mesh(n_frames=6)
    bpy.ops.import_scene.unigine_mesh(filepath=_write(tmp_path / "p.mesh", m), frame_rate="CUSTOM")
    arm = next(o for o in bpy.data.objects if o.type == "ARMATURE")
    from rigport.io_formats.transforms import compose_trs, world_from_local
    from rigport.io_formats.unigine.anim_convert import decode

    a = m.animations[-1]  # the last imported animation is the active action
    assert arm.animation_data.action.name == a.name
    t, q, s = decode(a.frames, m.bind[a.bones], a.frames.translation, a.frames.scale)
    frame = 4
    local = compose_trs(m.bind[:, 0:3], m.bind[:, [6, 3, 4, 5]], m.bind[:, 7:10])
    local[a.bones] = compose_trs(t[frame], q[frame], s[frame])
    world = world_from_local(local, np.array([b.parent for b in m.bones]))
    bpy.context.scene.frame_set(frame)
    for i, b in enumerate(m.bones):
        pose = np.array(arm.pose.bones[b.name].matrix)
        assert np.allclose(pose[:3, 3], world[i][:3, 3], atol=1e-4), b.name
        unit = world[i][:3, :3] / np.linalg.norm(world[i][:3, :3], axis=0)
        assert np.allclose(pose[:3, :3] / np.linalg.norm(pose[:3, :3], axis=0), unit, atol=1e-4)


@pytest.mark.parametrize("flag", [15, 127])
def test_anim_roundtrip(blank_blend, tmp_path, flag):
    bpy = blank_blend
    m = samples.skinned_mesh(animations=0)
    bpy.ops.import_scene.unigine_mesh(filepath=_write(tmp_path / "c.mesh", m))
    src = tmp_path / "in.anim"
    src.write_bytes(anim.write(samples.anim_file(m, flag)))
    assert bpy.ops.import_anim.unigine_anim(filepath=str(src)) == {"FINISHED"}
    assert {a.name for a in bpy.data.actions} == {"take_0", "take_1"}
    out = tmp_path / "out.anim"
    assert bpy.ops.export_anim.unigine_anim(filepath=str(out)) == {"FINISHED"}
    a, b = anim.read(src.read_bytes()), anim.read(out.read_bytes())
    assert compare.anim_differences(a, b) == []


def test_modules_without_an_operator(blank_blend, tmp_path):
    """The importer and exporter take a context, a path and an options dataclass,
    and return a Result: what batch and scripts call."""
    from rigport.operators.unigine import exporter, importer, settings

    bpy = blank_blend
    m = samples.skinned_mesh(animations=2)
    src = _write(tmp_path / "c.mesh", m)
    done = importer.import_mesh_file(bpy.context, src, settings.MeshImportOptions())
    assert done.armature is not None and len(done.actions) == 2 and done.undo
    assert done.infos == [f"{len(done.objects)} objects, 2 actions"]
    meshes = [o for o in done.objects if o.type == "MESH"]
    out = tmp_path / "out.mesh"
    written = exporter.export_mesh_file(bpy.context, str(out), meshes, settings.MeshExportOptions())
    assert written.infos == ["out.mesh: 2 surfaces, 2 animations written"]
    assert compare.mesh_differences(m, mesh.read(out.read_bytes())) == []

    clips = tmp_path / "in.anim"
    clips.write_bytes(anim.write(samples.anim_file(m, 15)))
    applied = importer.import_anim_file(bpy.context, str(clips), settings.AnimImportOptions())
    assert applied.armature == done.armature and applied.warnings == []
    assert applied.summary.startswith(f"2 actions on {done.armature.name} (")
    out = tmp_path / "out.anim"
    written = exporter.export_anim_file(
        bpy.context, str(out), done.armature, settings.AnimExportOptions()
    )
    assert written.summary == "2 animations"
    assert (
        compare.anim_differences(anim.read(clips.read_bytes()), anim.read(out.read_bytes())) == []
    )


def _snapshot(bpy) -> dict:
    return {
        name: sorted(x.name for x in getattr(bpy.data, name))
        for name in ("objects", "meshes", "armatures", "materials", "actions", "collections")
    }


@pytest.mark.parametrize("cut", [0.3, 0.6, 0.95])
def test_bad_mesh_leaves_nothing(blank_blend, tmp_path, cut):
    bpy = blank_blend
    data = mesh.write(samples.skinned_mesh())
    bad = tmp_path / "bad.mesh"
    bad.write_bytes(data[: int(len(data) * cut)])
    before = _snapshot(bpy)
    with pytest.raises(RuntimeError, match="offset"):
        bpy.ops.import_scene.unigine_mesh(filepath=str(bad))
    assert _snapshot(bpy) == before


def test_bad_file_among_several_leaves_nothing(blank_blend, tmp_path):
    bpy = blank_blend
    good = _write(tmp_path / "good.mesh", samples.static_mesh())
    data = mesh.write(samples.skinned_mesh())
    (tmp_path / "old.mesh").write_bytes(b"ms10" + data[4:])
    before = _snapshot(bpy)
    with pytest.raises(RuntimeError, match="unsupported version 'ms10'"):
        bpy.ops.import_scene.unigine_mesh(
            directory=str(tmp_path),
            files=[{"name": "good.mesh"}, {"name": "old.mesh"}],
            filepath=good,
        )
    assert _snapshot(bpy) == before


def test_bad_anim_leaves_nothing(blank_blend, tmp_path):
    bpy = blank_blend
    m = samples.skinned_mesh(animations=0)
    bpy.ops.import_scene.unigine_mesh(filepath=_write(tmp_path / "c.mesh", m))
    data = anim.write(samples.anim_file(m, 127))
    bad = tmp_path / "bad.anim"
    bad.write_bytes(data[:-9] + data[-4:])
    before = _snapshot(bpy)
    with pytest.raises(RuntimeError, match="offset"):
        bpy.ops.import_anim.unigine_anim(filepath=str(bad))
    assert _snapshot(bpy) == before


def test_edited_mesh_exports(blank_blend, tmp_path):
    """A mesh made in Blender (no stored data): new tangents, weights summing to 65535."""
    bpy = blank_blend
    bpy.ops.mesh.primitive_uv_sphere_add(segments=12, ring_count=6)
    obj = bpy.context.active_object
    obj.data.materials.append(bpy.data.materials.new("skin"))
    out = tmp_path / "sphere.mesh"
    assert bpy.ops.export_scene.unigine_mesh(filepath=str(out)) == {"FINISHED"}
    m = mesh.read(out.read_bytes())
    s = m.surfaces[0]
    assert s.name == "skin" and s.n_coords == len(obj.data.vertices)
    assert len(s.tris) == 3 * sum(len(p.vertices) - 2 for p in obj.data.polygons)
    assert len(s.uv0) == s.n_vertices and len(s.targets[0].tangents) == s.n_vertices
    # tangent quaternions turn +Z into the outward normal of the sphere
    from rigport.io_formats.unigine.mesh_import import tangent_normals

    pos = s.targets[0].positions[s.coords]
    n = tangent_normals(s.targets[0].tangents)[s.tris]
    assert ((pos / np.linalg.norm(pos, axis=1, keepdims=True)) * n).sum(
        1
    ).min() > 0.9  # flat shaded


def _pose(bpy, arm, frame: int) -> np.ndarray:
    bpy.context.scene.frame_set(frame)
    return np.array([np.array(pb.matrix) for pb in arm.pose.bones])


def test_blender_made_action_exports(blank_blend, tmp_path):
    """An action keyed in Blender (frames 1 to 9, two bones, rotation and location):
    the exported ANIM, imported again, poses the armature the same way."""
    bpy = blank_blend
    m = samples.skinned_mesh(animations=0)
    bpy.ops.import_scene.unigine_mesh(filepath=_write(tmp_path / "c.mesh", m))
    arm = next(o for o in bpy.data.objects if o.type == "ARMATURE")
    bpy.context.view_layer.objects.active = arm
    action = bpy.data.actions.new("wave")
    from rigport.operators.blender import compat

    compat.assign_action(arm, action)
    for name, axis in (("bone_02", 0), ("bone_04", 2)):
        pb = arm.pose.bones[name]
        pb.rotation_mode = "QUATERNION"
        for frame, angle, y in ((1, 0.0, 0.0), (5, 0.6, 0.3), (7, 0.6, 0.3), (9, -0.3, 0.1)):
            pb.rotation_quaternion = (np.cos(angle / 2), *np.eye(3)[axis] * np.sin(angle / 2))
            pb.location = (0.0, y, 0.0)
            pb.keyframe_insert("rotation_quaternion", frame=frame)
            pb.keyframe_insert("location", frame=frame)
    expected = {f: _pose(bpy, arm, f) for f in (1, 3, 5, 9)}
    out = tmp_path / "wave.anim"
    assert bpy.ops.export_anim.unigine_anim(
        filepath=str(out), export_animations="ACTIVE", frame_rate="CUSTOM"
    ) == {"FINISHED"}
    a = anim.read(out.read_bytes())
    clip = a.animations[0]
    assert clip.name == "wave" and clip.frames.n_frames == 9 and clip.flag == 15
    assert sorted(a.bones[i].name for i in clip.bones) == ["bone_02", "bone_04"]
    # frame 0 stores everything, later frames only what changed: nothing while held
    assert (clip.frames.flags[0] == 15).all() and (clip.frames.flags[1:4] == 15).all()
    assert (clip.frames.flags[5:7] == 0).all() and (clip.frames.flags[7:] == 15).all()
    compat.assign_action(arm, bpy.data.actions.new("empty"))
    bpy.data.actions.remove(action)
    assert bpy.ops.import_anim.unigine_anim(filepath=str(out), frame_rate="CUSTOM") == {"FINISHED"}
    for f, want in expected.items():
        got = _pose(bpy, arm, f - 1)  # the file's frame 0 is Blender's frame 1
        assert np.allclose(got, want, atol=2e-4), f


def test_second_import_of_the_same_files(blank_blend, tmp_path):
    """Blender renames clashing actions (clip_0.001): exports still use the file's names
    and the second import's own actions."""
    bpy = blank_blend
    m = samples.skinned_mesh()
    src = _write(tmp_path / "c.mesh", m)
    bpy.ops.import_scene.unigine_mesh(filepath=src)
    bpy.ops.import_scene.unigine_mesh(filepath=src)
    assert "clip_0.001" in bpy.data.actions
    second = [o for o in bpy.data.objects if o.type == "MESH"][-1]
    for o in bpy.data.objects:
        o.select_set(o is second)
    out = tmp_path / "out.mesh"
    assert bpy.ops.export_scene.unigine_mesh(filepath=str(out), use_selection=True) == {"FINISHED"}
    assert compare.mesh_differences(m, mesh.read(out.read_bytes())) == []
    a = samples.anim_file(m, 127)
    (tmp_path / "a.anim").write_bytes(anim.write(a))
    bpy.context.view_layer.objects.active = second.parent
    for _ in range(2):
        bpy.ops.import_anim.unigine_anim(filepath=str(tmp_path / "a.anim"))
    # the second import's last clip is active (keep_actions: the last one active)
    # named by file and clip: "take_1" is the first import's
    assert second.parent.animation_data.action.name == f"a take_{len(a.animations) - 1}"
    bpy.ops.export_anim.unigine_anim(filepath=str(tmp_path / "b.anim"))
    assert compare.anim_differences(a, anim.read((tmp_path / "b.anim").read_bytes())) == []


def test_anim_without_armature_is_an_error(blank_blend, tmp_path):
    bpy = blank_blend
    path = tmp_path / "a.anim"
    path.write_bytes(anim.write(samples.anim_file(samples.skinned_mesh(animations=0), 15)))
    before = _snapshot(bpy)
    with pytest.raises(RuntimeError, match="no armature"):
        bpy.ops.import_anim.unigine_anim(filepath=str(path))
    assert _snapshot(bpy) == before
