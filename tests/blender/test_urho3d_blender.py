"""Urho3D import/export in Blender: counts, round trips, bad input."""

from __future__ import annotations

import numpy as np
import pytest

from rigport.io_formats.urho3d import ani, mdl
from rigport.operators.blender import guard
from rigport.tests.support import assert_same_urho3d_skeleton

MODELS = [
    "urho3d/Box.mdl",
    "urho3d/Cone.mdl",
    "urho3d/Jack.mdl",
    "urho3d/LinePrimitives_Basis.mdl",
    "urho3d/LinePrimitives_CubicBezier.mdl",
    "urho3d/Mushroom.mdl",
    "urho3d/TeaPot.mdl",
    "rbfx/Box.mdl",
    "rbfx/Plane.mdl",
]


def _reference_counts(model: mdl.Model, lod: int) -> dict:
    """What a plain reading of the file says LOD ``lod`` holds."""
    used, faces, edges = set(), 0, 0
    base = np.cumsum([0] + [vb.count for vb in model.vertex_buffers])
    for geo in model.geometries:
        if lod >= len(geo.lods):
            continue
        d = geo.lods[lod]
        idx = model.index_buffers[d.index_buffer].indices[
            d.index_start : d.index_start + d.index_count
        ]
        used.update((idx.astype(np.int64) + base[d.vertex_buffer]).tolist())
        if d.primitive_type == mdl.PRIMITIVE_LINES:
            edges += len(idx) // 2
        else:
            faces += len(idx) // 3
    uv = {
        e.index
        for vb in model.vertex_buffers
        for e in vb.elements
        if e.semantic == 4 and e.type == 2
    }
    return {"vertices": len(used), "faces": faces, "edges": edges, "uv": len(uv)}


@pytest.mark.parametrize("rel", MODELS)
def test_import_counts(blank_blend, corpus_dir, rel):
    bpy = blank_blend
    path = corpus_dir / rel
    model = mdl.read(path.read_bytes())
    assert bpy.ops.import_scene.urho3d_mdl(filepath=str(path), lods="ALL") == {"FINISHED"}
    meshes = sorted((o for o in bpy.data.objects if o.type == "MESH"), key=lambda o: o["urho_lod"])
    n_lods = max(len(g.lods) for g in model.geometries)
    assert len(meshes) == n_lods
    for obj in meshes:
        ref = _reference_counts(model, obj["urho_lod"])
        me = obj.data
        assert len(me.vertices) == ref["vertices"]
        # faces Blender cannot hold (Jack's LOD 5 repeats a triangle) are kept aside
        kept = guard.loads(me[guard.KEPT]) if guard.KEPT in me else {}
        dropped = len(kept["faces"]["sizes"]) if "faces" in kept else 0
        assert len(me.polygons) + dropped == ref["faces"]
        assert dropped <= (1 if rel == "urho3d/Jack.mdl" else 0)
        assert sum(1 for e in me.edges if e.is_loose) == ref["edges"]
        assert len(me.uv_layers) == ref["uv"]
        assert len(me.materials) == len(model.geometries)
    arms = [o for o in bpy.data.objects if o.type == "ARMATURE"]
    assert len(arms) == (1 if model.bones else 0)
    if model.bones:
        bones = arms[0].data.bones
        assert [b.name for b in bones] == [b.name for b in model.bones]
        for i, (b, src) in enumerate(zip(bones, model.bones, strict=True)):
            want = None if src.parent == i else model.bones[src.parent].name
            assert (b.parent.name if b.parent else None) == want


def test_default_import_keeps_every_lod(blank_blend, corpus_dir):
    """Every LOD level comes in (so a default export writes them back); only LOD 0 shows."""
    bpy = blank_blend
    bpy.ops.import_scene.urho3d_mdl(filepath=str(corpus_dir / "urho3d/Mushroom.mdl"))
    meshes = sorted((o for o in bpy.data.objects if o.type == "MESH"), key=lambda o: o["urho_lod"])
    assert [o["urho_lod"] for o in meshes] == [0, 1, 2, 3, 4]
    assert [o.hide_get() for o in meshes] == [False, True, True, True, True]
    bpy.ops.wm.read_factory_settings(use_empty=True)
    bpy.ops.import_scene.urho3d_mdl(filepath=str(corpus_dir / "urho3d/Mushroom.mdl"), lods="FIRST")
    meshes = [o for o in bpy.data.objects if o.type == "MESH"]
    assert len(meshes) == 1 and meshes[0]["urho_lod"] == 0


def test_bind_pose_matches_offset_matrices(blank_blend, corpus_dir):
    """Blender's rest matrices are the inverse offset matrices (axes converted)."""
    bpy = blank_blend
    path = corpus_dir / "urho3d/Jack.mdl"
    model = mdl.read(path.read_bytes())
    bpy.ops.import_scene.urho3d_mdl(filepath=str(path))
    arm = next(o for o in bpy.data.objects if o.type == "ARMATURE")
    swap = np.array([[1.0, 0, 0, 0], [0, 0, 1, 0], [0, 1, 0, 0], [0, 0, 0, 1]])
    for bone, src in zip(arm.data.bones, model.bones, strict=True):
        inv = np.eye(4)
        inv[:3, :] = src.offset_matrix
        world = swap @ np.linalg.inv(inv) @ swap
        world[:3, :3] /= np.linalg.norm(world[:3, :3], axis=0)
        assert np.allclose(np.array(bone.matrix_local), world, atol=1e-5)


def _export_import(bpy, tmp_path, src, name="out.mdl", **kw):
    out = tmp_path / name
    assert bpy.ops.export_scene.urho3d_mdl(filepath=str(out), **kw) == {"FINISHED"}
    return mdl.read(src.read_bytes()), mdl.read(out.read_bytes()), out


@pytest.mark.parametrize("rel", MODELS)
def test_roundtrip_all_lods(blank_blend, corpus_dir, tmp_path, rel):
    """Import every LOD, export with defaults: the same model within tolerances."""
    bpy = blank_blend
    src = corpus_dir / rel
    bpy.ops.import_scene.urho3d_mdl(filepath=str(src), lods="ALL")
    a, b, _ = _export_import(bpy, tmp_path, src)
    assert a.magic == b.magic
    assert [vb.count for vb in a.vertex_buffers] == [vb.count for vb in b.vertex_buffers]
    for va, vb_ in zip(a.vertex_buffers, b.vertex_buffers, strict=True):
        assert va.elements == vb_.elements
        for name in va.data.dtype.names:
            x, y = va.data[name].astype(np.float64), vb_.data[name].astype(np.float64)
            if name.startswith("position"):
                assert np.allclose(x, y, atol=1e-5), name
            elif name.startswith("texcoord"):
                assert np.allclose(x, y, atol=1e-6), name
            elif name.startswith("color"):
                assert np.array_equal(x, y), name
    for ia, ib in zip(a.index_buffers, b.index_buffers, strict=True):
        assert np.array_equal(ia.indices, ib.indices)
    for ga, gb in zip(a.geometries, b.geometries, strict=True):
        assert np.array_equal(ga.bone_mapping, gb.bone_mapping)
        assert [vars(x) for x in ga.lods] == [vars(x) for x in gb.lods]
    assert_same_urho3d_skeleton(a, b)
    assert np.allclose(a.bbox_min, b.bbox_min, atol=1e-5)
    assert (a.geometry_centers is None) == (b.geometry_centers is None)


def _weights_by_bone(model: mdl.Model) -> np.ndarray:
    """(V, n_bones) weight matrix with the geometries' bone mappings resolved."""
    vb = model.vertex_buffers[0]
    out = np.zeros((vb.count, len(model.bones)))
    done = np.zeros(vb.count, bool)
    for geo in model.geometries:
        for d in geo.lods:
            idx = np.unique(
                model.index_buffers[d.index_buffer].indices[
                    d.index_start : d.index_start + d.index_count
                ]
            )
            idx = idx[~done[idx]]
            done[idx] = True
            joints = vb.data["blendindices0"][idx].astype(np.int64)
            if len(geo.bone_mapping):
                joints = geo.bone_mapping[joints]
            w = vb.data["blendweights0"][idx]
            for k in range(4):
                np.add.at(out, (idx, joints[:, k]), w[:, k])
    return out


def test_jack_walk_roundtrip(blank_blend, corpus_dir, tmp_path):
    """Jack + Walk: import, export, re-read: bind pose, weights and keys agree."""
    bpy = blank_blend
    model_path = corpus_dir / "urho3d/Jack.mdl"
    anim_path = corpus_dir / "urho3d/Jack_Walk.ani"
    assert bpy.ops.import_scene.urho3d_mdl(filepath=str(model_path), lods="FIRST") == {"FINISHED"}
    arm = next(o for o in bpy.data.objects if o.type == "ARMATURE")
    bpy.context.view_layer.objects.active = arm
    assert bpy.ops.import_anim.urho3d_ani(filepath=str(anim_path)) == {"FINISHED"}
    out_mdl, out_ani = tmp_path / "jack.mdl", tmp_path / "walk.ani"
    assert bpy.ops.export_scene.urho3d_mdl(filepath=str(out_mdl)) == {"FINISHED"}
    assert bpy.ops.export_anim.urho3d_ani(filepath=str(out_ani)) == {"FINISHED"}

    a, b = mdl.read(model_path.read_bytes()), mdl.read(out_mdl.read_bytes())
    assert_same_urho3d_skeleton(a, b)
    # LOD 0 only: the same vertices, weights per bone within float precision.
    assert len(b.geometries) == 2 and all(len(g.lods) == 1 for g in b.geometries)
    for g in a.geometries:
        g.lods = g.lods[:1]
    wa, wb = _weights_by_bone(a), _weights_by_bone(b)
    used = np.unique(
        np.concatenate(
            [
                a.index_buffers[0].indices[d.index_start : d.index_start + d.index_count]
                for g in a.geometries
                for d in g.lods
            ]
        )
    )
    assert b.vertex_buffers[0].count == len(used)
    assert np.allclose(wa[used], wb, atol=1e-6)

    x, y = ani.read(anim_path.read_bytes()), ani.read(out_ani.read_bytes())
    assert x.name == y.name and np.isclose(x.length, y.length)
    assert [t.name for t in x.tracks] == [t.name for t in y.tracks]
    for tx, ty in zip(x.tracks, y.tracks, strict=True):
        assert tx.mask == ty.mask
        assert np.allclose(tx.keys["time"], ty.keys["time"], atol=1e-5)
        if tx.mask & 1:
            assert np.allclose(tx.keys["position"], ty.keys["position"], atol=1e-5)
        if tx.mask & 2:
            qa, qb = tx.keys["rotation"], ty.keys["rotation"]
            sign = np.sign(np.sum(qa * qb, axis=1, keepdims=True))
            assert np.allclose(qa, qb * sign, atol=1e-5)
        if tx.mask & 4:
            assert np.allclose(tx.keys["scale"], ty.keys["scale"], atol=1e-5)


def test_animation_targets_matching_armature(blank_blend, corpus_dir):
    bpy = blank_blend
    bpy.ops.import_scene.urho3d_mdl(filepath=str(corpus_dir / "urho3d/Jack.mdl"))
    bpy.context.view_layer.objects.active = None
    assert bpy.ops.import_anim.urho3d_ani(filepath=str(corpus_dir / "urho3d/Jack_Walk.ani")) == {
        "FINISHED"
    }
    arm = next(o for o in bpy.data.objects if o.type == "ARMATURE")
    action = arm.animation_data.action
    from rigport.operators.blender import compat

    curves = compat.fcurves(action)
    walk = ani.read((corpus_dir / "urho3d/Jack_Walk.ani").read_bytes())
    expected = sum(
        3 * bool(t.mask & 1) + 4 * bool(t.mask & 2) + 3 * bool(t.mask & 4) for t in walk.tracks
    )
    assert len(curves) == expected
    assert all(len(fc.keyframe_points) == 32 for fc in curves)


def _datablock_counts(bpy) -> tuple:
    d = bpy.data
    return (
        len(d.objects),
        len(d.meshes),
        len(d.armatures),
        len(d.materials),
        len(d.actions),
        len(d.collections),
    )


@pytest.mark.parametrize("cut", [3, 40, 1000, 200000, 359000])
def test_truncated_file_leaves_blend_unchanged(blank_blend, corpus_dir, tmp_path, cut):
    bpy = blank_blend
    bad = tmp_path / "bad.mdl"
    bad.write_bytes((corpus_dir / "urho3d/Jack.mdl").read_bytes()[:cut])
    before = _datablock_counts(bpy)
    with pytest.raises(RuntimeError, match="offset"):
        bpy.ops.import_scene.urho3d_mdl(filepath=str(bad))
    assert _datablock_counts(bpy) == before


def test_bad_animation_leaves_blend_unchanged(blank_blend, corpus_dir, tmp_path):
    bpy = blank_blend
    bpy.ops.import_scene.urho3d_mdl(filepath=str(corpus_dir / "urho3d/Jack.mdl"))
    data = bytearray((corpus_dir / "urho3d/Jack_Walk.ani").read_bytes())
    data[0] = ord("X")
    bad = tmp_path / "bad.ani"
    bad.write_bytes(bytes(data))
    before = _datablock_counts(bpy)
    with pytest.raises(RuntimeError, match="UANI"):
        bpy.ops.import_anim.urho3d_ani(filepath=str(bad))
    assert _datablock_counts(bpy) == before


def test_line_list_is_edge_only_mesh(blank_blend, corpus_dir):
    bpy = blank_blend
    bpy.ops.import_scene.urho3d_mdl(filepath=str(corpus_dir / "urho3d/LinePrimitives_Basis.mdl"))
    me = next(o for o in bpy.data.objects if o.type == "MESH").data
    assert len(me.polygons) == 0 and len(me.edges) == 3


def test_export_format_choice(blank_blend, corpus_dir, tmp_path):
    bpy = blank_blend
    src = corpus_dir / "urho3d/Box.mdl"
    bpy.ops.import_scene.urho3d_mdl(filepath=str(src))
    out = tmp_path / "box2.mdl"
    bpy.ops.export_scene.urho3d_mdl(filepath=str(out), file_format="UMD2")
    a, b = mdl.read(src.read_bytes()), mdl.read(out.read_bytes())
    assert b.magic == b"UMD2"
    assert a.vertex_buffers[0].elements == b.vertex_buffers[0].elements
    assert np.allclose(a.vertex_buffers[0].data["position0"], b.vertex_buffers[0].data["position0"])


def test_corpus_box_is_byte_identical(blank_blend, corpus_dir, tmp_path):
    """An untouched simple model comes back byte for byte."""
    bpy = blank_blend
    src = corpus_dir / "urho3d/Box.mdl"
    bpy.ops.import_scene.urho3d_mdl(filepath=str(src))
    out = tmp_path / "box.mdl"
    bpy.ops.export_scene.urho3d_mdl(filepath=str(out))
    assert out.read_bytes() == src.read_bytes()


def test_export_plain_blender_mesh(blank_blend, tmp_path):
    """A mesh made in Blender: fresh layout, seams split, computed tangents."""
    bpy = blank_blend
    bpy.ops.mesh.primitive_cube_add(size=2.0)
    cube = bpy.context.active_object
    out = tmp_path / "cube.mdl"
    assert bpy.ops.export_scene.urho3d_mdl(filepath=str(out)) == {"FINISHED"}
    model = mdl.read(out.read_bytes())
    assert model.magic == b"UMD2"
    assert len(model.geometries) == 1 and len(model.bones) == 0
    vb = model.vertex_buffers[0]
    assert [e.key for e in vb.elements] == ["position0", "normal0", "texcoord0", "tangent0"]
    assert vb.count == 24  # 8 corners x 3 faces each: UV seams and flat normals split them
    assert len(model.index_buffers[0].indices) == 36
    pos = vb.data["position0"]
    assert np.allclose(np.abs(pos), 1.0)
    assert np.allclose(np.linalg.norm(vb.data["normal0"], axis=1), 1.0, atol=1e-5)
    tan = vb.data["tangent0"]
    assert np.allclose(np.linalg.norm(tan[:, :3], axis=1), 1.0, atol=1e-5)
    assert np.allclose(np.abs(tan[:, 3]), 1.0)
    assert np.allclose(np.sum(tan[:, :3] * vb.data["normal0"], axis=1), 0.0, atol=1e-5)
    assert np.allclose(model.bbox_min, -1.0) and np.allclose(model.bbox_max, 1.0)
    # Re-import gives the cube back (Blender axes) with the same faces.
    assert cube.name in bpy.data.objects
    bpy.ops.import_scene.urho3d_mdl(filepath=str(out))
    back = next(o for o in bpy.data.objects if o.name.startswith("cube"))
    assert len(back.data.polygons) == 12
    co = np.array([v.co for v in back.data.vertices])
    assert np.allclose(np.abs(co), 1.0)


def test_multi_file_import_is_all_or_nothing(blank_blend, corpus_dir, tmp_path):
    bpy = blank_blend
    bad = tmp_path / "bad.mdl"
    bad.write_bytes((corpus_dir / "urho3d/Jack.mdl").read_bytes()[:5000])
    before = _datablock_counts(bpy)
    with pytest.raises(RuntimeError, match="offset"):
        bpy.ops.import_scene.urho3d_mdl(
            directory=str(corpus_dir / "urho3d") + "/",
            files=[{"name": "Box.mdl"}, {"name": str(bad)}],
        )
    assert _datablock_counts(bpy) == before


def test_selected_export_names_the_hidden_lod_objects_it_left_out(
    blank_blend, corpus_dir, tmp_path
):
    """An import hides the LOD levels after 0; an artist who selects the character
    and exports Selected Objects gets LOD 0 alone, and the warning says which LOD
    objects were left out and why (not that they were never imported)."""
    bpy = blank_blend
    bpy.ops.import_scene.urho3d_mdl(filepath=str(corpus_dir / "urho3d/Mushroom.mdl"))
    bpy.ops.object.select_all(action="DESELECT")
    first = next(o for o in bpy.data.objects if o.type == "MESH" and o["urho_lod"] == 0)
    first.select_set(True)
    bpy.context.view_layer.objects.active = first
    from rigport.operators.urho3d.model_exporter import ModelExportOptions, export_mdl

    result = export_mdl(bpy.context, str(tmp_path / "one.mdl"), [first], ModelExportOptions())
    warned = [m.text for m in result.messages if "LOD levels" in m.text]
    assert len(warned) == 1 and "were not among the objects to export" in warned[0]
    assert "4 mesh objects of its other levels" in warned[0]
    assert len(mdl.read((tmp_path / "one.mdl").read_bytes()).geometries[0].lods) == 1
    # not imported at all: the other advice
    bpy.ops.wm.read_factory_settings(use_empty=True)
    bpy.ops.import_scene.urho3d_mdl(filepath=str(corpus_dir / "urho3d/Mushroom.mdl"), lods="FIRST")
    only = next(o for o in bpy.data.objects if o.type == "MESH")
    result = export_mdl(bpy.context, str(tmp_path / "two.mdl"), [only], ModelExportOptions())
    warned = [m.text for m in result.messages if "LOD levels" in m.text]
    assert len(warned) == 1 and "import with all LODs to keep them" in warned[0]
