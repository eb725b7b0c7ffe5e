"""What the Urho3D engine needs of exported files: morph ranges it applies, skin
palettes every build draws, axes and keys as imported."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from rigport.io_formats.codec import FormatError
from rigport.io_formats.urho3d import ani, engine_rules, mdl
from rigport.samples import urho3d as samples
from rigport.tests.support import assert_same_urho3d_skeleton


def _mesh_object(bpy):
    return next(o for o in bpy.data.objects if o.type == "MESH")


def _write(tmp_path, name: str, data: bytes) -> str:
    path = tmp_path / name
    path.write_bytes(data)
    return str(path)


def _export(bpy, tmp_path, name: str = "out.mdl", **kw) -> mdl.Model:
    out = tmp_path / name
    assert bpy.ops.export_scene.urho3d_mdl(filepath=str(out), **kw) == {"FINISHED"}
    return mdl.read(out.read_bytes())


def _morph_offsets(model: mdl.Model) -> dict[str, dict[int, np.ndarray]]:
    """Morph name -> {vertex index: position offset} (one vertex buffer)."""
    out = {}
    for m in model.morphs:
        (mb,) = m.buffers
        out[m.name] = dict(zip(mb.data["index"].tolist(), mb.data["position"], strict=True))
    return out


def test_new_mesh_shape_keys_get_a_morph_range(blank_blend, tmp_path):
    """A mesh made in Blender: the moved vertices come first and the morph range
    spans exactly them, so the engine applies the shape keys."""
    bpy = blank_blend
    bpy.ops.mesh.primitive_grid_add(x_subdivisions=8, y_subdivisions=8, size=2)
    obj = bpy.context.active_object
    obj.shape_key_add(name="Basis")
    lift, tilt = obj.shape_key_add(name="Lift"), obj.shape_key_add(name="Tilt")
    n = len(obj.data.vertices)
    moved = {"Lift": [5, 40, n - 1], "Tilt": [12, 40]}
    for key, verts in ((lift, moved["Lift"]), (tilt, moved["Tilt"])):
        for v in verts:
            key.data[v].co.z += 0.25 + 0.01 * v
    model = _export(bpy, tmp_path)
    assert engine_rules.check(model) == []
    (vb,) = model.vertex_buffers
    offsets = _morph_offsets(model)
    assert sorted(offsets) == ["Lift", "Tilt"]
    listed = sorted(set(offsets["Lift"]) | set(offsets["Tilt"]))
    assert (vb.morph_start, vb.morph_count) == (0, len(listed))
    assert listed == list(range(len(listed)))
    # The offsets are Blender's (Z up becomes the engine's Y up), at the right vertices.
    pos = vb.data["position0"]
    for name, verts in moved.items():
        want = {
            tuple(np.round([c for c in obj.data.vertices[v].co], 5)): 0.25 + 0.01 * v for v in verts
        }
        got = {tuple(np.round(pos[i][[0, 2, 1]], 5)): off for i, off in offsets[name].items()}
        assert set(got) >= set(want)
        for p, dz in want.items():
            assert np.allclose(got[p], [0, dz, 0], atol=1e-6)


def test_shape_key_added_to_imported_mesh(blank_blend, tmp_path):
    """The kept range is written while it covers the morphs; a new shape key
    moving vertices outside it widens it to cover them."""
    bpy = blank_blend
    model = samples.skinned_model(n_bones=4, morphs=1)
    vb0 = model.vertex_buffers[0]
    assert vb0.morph_start > 0
    src = _write(tmp_path, "in.mdl", mdl.write(model))
    assert bpy.ops.import_scene.urho3d_mdl(filepath=src) == {"FINISHED"}
    same = _export(bpy, tmp_path, "same.mdl")
    assert (same.vertex_buffers[0].morph_start, same.vertex_buffers[0].morph_count) == (
        vb0.morph_start,
        vb0.morph_count,
    )
    obj = _mesh_object(bpy)
    src_attr = obj.data.attributes["urho:source"]
    sources = np.zeros(len(obj.data.vertices), np.int32)
    src_attr.data.foreach_get("value", sources)
    first, last = int(np.argmin(sources)), int(np.argmax(sources))
    key = obj.shape_key_add(name="Extra", from_mix=False)
    key.data[first].co.x += 0.5
    key.data[last].co.x -= 0.5
    out = _export(bpy, tmp_path, "edited.mdl")
    assert engine_rules.check(out) == []
    vb = out.vertex_buffers[0]
    assert vb.count == vb0.count
    assert (vb.morph_start, vb.morph_count) == (0, vb0.count)
    extra = _morph_offsets(out)["Extra"]
    assert sorted(extra) == [0, vb0.count - 1]
    old = _morph_offsets(model)
    new = _morph_offsets(out)
    assert sorted(old[model.morphs[0].name]) == sorted(new[model.morphs[0].name])


def _fresh_scene(rigport, bpy, model: mdl.Model, name: str = "Rig"):
    """``model`` built in Blender as a new asset: nothing of an import is kept."""
    from rigport.io_formats.urho3d.model_import import import_model
    from rigport.operators.blender.build import build_scene

    scene = import_model(model, name)
    for mesh in scene.meshes:
        mesh.extras = {}
    scene.extras = {}
    return build_scene(bpy.context, scene)


def _global_influences(model: mdl.Model) -> dict[tuple, float]:
    """(rounded position, global bone) -> weight over every skinned vertex drawn."""
    out: dict[tuple, float] = {}
    for geo in model.geometries:
        d = geo.lods[0]
        vb = model.vertex_buffers[d.vertex_buffer]
        idx = np.unique(
            model.index_buffers[d.index_buffer].indices[
                d.index_start : d.index_start + d.index_count
            ]
        )
        joints = vb.data["blendindices0"][idx].astype(np.int64)
        if len(geo.bone_mapping):
            joints = geo.bone_mapping[joints]
        weights = vb.data["blendweights0"][idx]
        for p, j, w in zip(vb.data["position0"][idx], joints, weights, strict=True):
            for jj, ww in zip(j, w, strict=True):
                if ww > 0:
                    out[(*np.round(p, 4).tolist(), int(jj))] = round(float(ww), 5)
    return out


@pytest.mark.parametrize("limit", ["AUTO", "64", "128"])
def test_80_bones_get_bone_mappings(blank_blend, rigport, tmp_path, limit):
    """80 bones: every setting writes a bone mapping per geometry, none above 64,
    so every Urho3D build (GL2, GLES: 64 skin matrices) draws the model; the
    skinning is the same."""
    bpy = blank_blend
    model = samples.skinned_model(n_bones=80, morphs=0, geometries=2)
    assert all(len(g.bone_mapping) <= 64 for g in model.geometries)
    _fresh_scene(rigport, bpy, model)
    out = _export(bpy, tmp_path, bone_limit=limit)
    assert engine_rules.check(out) == []
    assert len(out.geometries) == 2
    assert all(0 < len(g.bone_mapping) <= 64 for g in out.geometries)
    assert _global_influences(out) == _global_influences(model)


def _single_draw_80(model: mdl.Model) -> mdl.Model:
    """One geometry skinning all 80 bones, blend indices global."""
    flat = copy.deepcopy(model)
    vb = flat.vertex_buffers[0]
    for geo in flat.geometries:
        d = geo.lods[0]
        idx = np.unique(
            flat.index_buffers[d.index_buffer].indices[
                d.index_start : d.index_start + d.index_count
            ]
        )
        vb.data["blendindices0"][idx] = geo.bone_mapping[vb.data["blendindices0"][idx]]
    starts = [g.lods[0].index_start for g in flat.geometries]
    ends = [g.lods[0].index_start + g.lods[0].index_count for g in flat.geometries]
    lod = flat.geometries[0].lods[0]
    lod.index_start, lod.index_count = min(starts), max(ends) - min(starts)
    flat.geometries = [mdl.Geometry(np.zeros(0, np.uint32), [lod])]
    flat.geometry_centers = flat.geometry_centers[:1]
    return flat


@pytest.mark.urho3d_engine(bone_limit=128)
def test_one_draw_of_80_bones_needs_the_128_choice(blank_blend, rigport, tmp_path):
    """A geometry skinning 80 bones: refused with 64 (the default for a new
    model), written with a warning naming GL3/D3D11 with 128."""
    bpy = blank_blend
    flat = _single_draw_80(samples.skinned_model(n_bones=80, morphs=0, geometries=2))
    _fresh_scene(rigport, bpy, flat)
    out = tmp_path / "out.mdl"
    with pytest.raises(RuntimeError, match="more than the limit of 64 skin matrices"):
        bpy.ops.export_scene.urho3d_mdl(filepath=str(out))
    from rigport.operators.urho3d.model_exporter import ModelExportOptions, export_mdl

    objects = [o for o in bpy.data.objects if o.type == "MESH"]
    with pytest.raises(FormatError, match="more than the limit of 64 skin matrices"):
        export_mdl(bpy.context, str(out), objects, ModelExportOptions())
    options = ModelExportOptions(bone_limit="128")
    warnings = export_mdl(bpy.context, str(out), objects, options).warnings
    assert any("only GL3/D3D11 builds draw it" in w for w in warnings), warnings
    back = mdl.read(out.read_bytes())
    assert [len(g.bone_mapping) for g in back.geometries] == [80]
    assert engine_rules.check(back) != [] and engine_rules.check(back, 128) == []


@pytest.mark.urho3d_engine(bone_limit=128)
def test_gl3_only_file_comes_back_as_it_was(blank_blend, rigport, tmp_path):
    """A file that already skins 80 bones in one draw without mappings (made for
    GL3/D3D11): the default export reproduces it, with a warning."""
    bpy = blank_blend
    flat = _single_draw_80(samples.skinned_model(n_bones=80, morphs=0, geometries=2))
    src = _write(tmp_path, "in.mdl", mdl.write(flat))
    assert bpy.ops.import_scene.urho3d_mdl(filepath=src) == {"FINISHED"}
    from rigport.operators.urho3d.model_exporter import ModelExportOptions, export_mdl

    objects = [o for o in bpy.data.objects if o.type == "MESH"]
    out = tmp_path / "out.mdl"
    warnings = export_mdl(bpy.context, str(out), objects, ModelExportOptions()).warnings
    assert any("only GL3/D3D11 builds draw it" in w for w in warnings), warnings
    back = mdl.read(out.read_bytes())
    assert [len(g.bone_mapping) for g in back.geometries] == [0]
    assert np.array_equal(
        back.vertex_buffers[0].data["blendindices0"], flat.vertex_buffers[0].data["blendindices0"]
    )
    with pytest.raises(FormatError, match="80 bones, more than the limit of 64"):
        export_mdl(bpy.context, str(out), objects, ModelExportOptions(bone_limit="64"))


def test_kept_file_axes_round_trip(blank_blend, tmp_path):
    """Imported with the file's axes: the default export writes them back
    (model and animation), not Blender's."""
    bpy = blank_blend
    model = samples.skinned_model(n_bones=5, morphs=1)
    anim = samples.walk_animation(model, n_keys=7)
    src = _write(tmp_path, "in.mdl", mdl.write(model))
    src_ani = _write(tmp_path, "in.ani", ani.write(anim))
    from rigport.operators.urho3d.animation_importer import AnimationImportOptions, import_ani
    from rigport.operators.urho3d.model_importer import ModelImportOptions, import_mdl

    built = import_mdl(bpy.context, src, ModelImportOptions(lods="FIRST", convert=False))
    arm = built.armature
    bpy.context.view_layer.objects.active = arm
    import_ani(bpy.context, src_ani, AnimationImportOptions(convert=False), arm)
    back = _export(bpy, tmp_path)
    a, b = model.vertex_buffers[0], back.vertex_buffers[0]
    assert (a.count, a.morph_start, a.morph_count) == (b.count, b.morph_start, b.morph_count)
    assert np.allclose(a.data["position0"], b.data["position0"], atol=1e-5)
    assert np.allclose(a.data["normal0"], b.data["normal0"], atol=2e-3)
    assert_same_urho3d_skeleton(model, back)
    for x, y in zip(model.morphs, back.morphs, strict=True):
        assert np.array_equal(x.buffers[0].data["index"], y.buffers[0].data["index"])
        assert np.allclose(x.buffers[0].data["position"], y.buffers[0].data["position"], atol=1e-5)
    out_ani = tmp_path / "out.ani"
    assert bpy.ops.export_anim.urho3d_ani(filepath=str(out_ani)) == {"FINISHED"}
    got = ani.read(out_ani.read_bytes())
    for x, y in zip(anim.tracks, got.tracks, strict=True):
        assert np.allclose(x.keys["position"], y.keys["position"], atol=1e-5)
        q, r = x.keys["rotation"], y.keys["rotation"]
        assert np.allclose(q, r * np.sign(np.sum(q * r, axis=1, keepdims=True)), atol=1e-5)
    # Not "As Imported": the engine's axes.
    swapped = _export(bpy, tmp_path, "swapped.mdl", use_transform_as_imported=False)
    assert np.allclose(
        swapped.vertex_buffers[0].data["position0"], a.data["position0"][:, [0, 2, 1]], atol=1e-5
    )


def _with_steps(anim: ani.Animation) -> ani.Animation:
    """Two tracks get instant steps: a second key at the time of keys 2 and 4
    (track 0), and of key 3 (track 2), holding a different pose."""
    out = copy.deepcopy(anim)
    for t, at in ((0, (2, 4)), (2, (3,))):
        keys = out.tracks[t].keys
        rows = []
        for i, k in enumerate(keys):
            rows.append(k.copy())
            if i in at:
                jump = k.copy()
                jump["position"] = k["position"] + np.float32(0.125)
                rows.append(jump)
        out.tracks[t].keys = np.array(rows, keys.dtype)
    return out


def test_instant_steps_survive_an_unedited_round_trip(blank_blend, rigport, tmp_path):
    """Two keys at one time: counted in a warning on import, kept, written back
    exactly while the track is unedited; an edited track drops them, saying so."""
    bpy = blank_blend
    from rigport.operators.result import Level
    from rigport.operators.urho3d.animation_exporter import AnimationExportOptions, export_ani
    from rigport.operators.urho3d.animation_importer import AnimationImportOptions, import_ani

    model = samples.skinned_model(n_bones=5, morphs=0)
    anim = _with_steps(samples.walk_animation(model, n_keys=9))
    src = _write(tmp_path, "in.mdl", mdl.write(model))
    src_ani = _write(tmp_path, "steps.ani", ani.write(anim))
    assert bpy.ops.import_scene.urho3d_mdl(filepath=src) == {"FINISHED"}
    arm = next(o for o in bpy.data.objects if o.type == "ARMATURE")
    imported = import_ani(bpy.context, src_ani, AnimationImportOptions(), arm)
    (action,) = imported.actions
    (note,) = [f"warning: {m.text}" for m in imported.messages if m.level is Level.WARNING]
    assert note.startswith("warning: 3 keys sharing a time") and "in 2 tracks" in note
    out = tmp_path / "out.ani"
    assert export_ani(bpy.context, str(out), arm, action, AnimationExportOptions()).warnings == []
    got = ani.read(out.read_bytes())
    for t in (0, 2):
        assert got.tracks[t].keys.tobytes() == anim.tracks[t].keys.tobytes()
    for x, y in zip(anim.tracks, got.tracks, strict=True):
        assert np.allclose(x.keys["time"], y.keys["time"], atol=1e-6)
    # The operator with default options does the same.
    bpy.context.view_layer.objects.active = arm
    assert bpy.ops.export_anim.urho3d_ani(filepath=str(out)) == {"FINISHED"}
    assert ani.read(out.read_bytes()).tracks[0].keys.tobytes() == anim.tracks[0].keys.tobytes()
    # Edit track 0 in Blender: its steps go, track 2 keeps its own.
    name = anim.tracks[0].name
    from rigport.operators.blender import compat

    fc = next(
        f
        for f in compat.fcurves(action)
        if f.data_path == f'pose.bones["{name}"].location' and f.array_index == 0
    )
    fc.keyframe_points[1].co.y += 0.5
    fc.update()
    warnings = export_ani(bpy.context, str(out), arm, action, AnimationExportOptions()).warnings
    assert len(warnings) == 1 and f"track {name!r} was edited" in warnings[0]
    got = ani.read(out.read_bytes())
    assert len(np.unique(got.tracks[0].keys["time"])) == len(got.tracks[0].keys)
    assert got.tracks[2].keys.tobytes() == anim.tracks[2].keys.tobytes()


def test_removed_shape_key_leaves_the_others_intact(blank_blend, tmp_path):
    """The kept normal deltas and vertex lists follow each shape key by name: with
    the first key removed, the second is written with its own."""
    bpy = blank_blend
    model = samples.skinned_model(n_bones=4, morphs=2)
    first, second = model.morphs
    src = _write(tmp_path, "in.mdl", mdl.write(model))
    assert bpy.ops.import_scene.urho3d_mdl(filepath=src) == {"FINISHED"}
    obj = _mesh_object(bpy)
    obj.shape_key_remove(obj.data.shape_keys.key_blocks[first.name])
    out = _export(bpy, tmp_path)
    (got,) = out.morphs
    assert got.name == second.name
    (a,), (b,) = second.buffers, got.buffers
    assert a.mask == b.mask
    assert np.array_equal(a.data["index"], b.data["index"])
    for f in a.data.dtype.names[1:]:
        assert np.allclose(a.data[f], b.data[f], atol=1e-5), f
    assert engine_rules.check(out) == []
