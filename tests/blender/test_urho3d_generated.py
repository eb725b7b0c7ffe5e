"""Blender round trips of generated Urho3D files: what the corpus lacks."""

from __future__ import annotations

import numpy as np
import pytest

from rigport.io_formats.urho3d import ani, mdl
from rigport.samples import urho3d as samples
from rigport.tests.support import assert_same_urho3d_skeleton


def _roundtrip(bpy, tmp_path, model: mdl.Model, lods: str = "ALL") -> tuple[mdl.Model, mdl.Model]:
    src = tmp_path / "in.mdl"
    src.write_bytes(mdl.write(model))
    assert bpy.ops.import_scene.urho3d_mdl(filepath=str(src), lods=lods) == {"FINISHED"}
    out = tmp_path / "out.mdl"
    assert bpy.ops.export_scene.urho3d_mdl(filepath=str(out)) == {"FINISHED"}
    return mdl.read(src.read_bytes()), mdl.read(out.read_bytes())


def _exact_normals() -> bool:
    """Blender 4.5+ holds custom normals exactly (``compat.HAS_NORMAL_ATTRIBUTE``)."""
    import bpy

    return bpy.app.version >= (4, 5, 0)


def _assert_equivalent(a: mdl.Model, b: mdl.Model) -> None:
    assert a.magic == b.magic
    assert [vb.count for vb in a.vertex_buffers] == [vb.count for vb in b.vertex_buffers]
    for va, vb_ in zip(a.vertex_buffers, b.vertex_buffers, strict=True):
        assert va.elements == vb_.elements
        assert (va.morph_start, va.morph_count) == (vb_.morph_start, vb_.morph_count)
        for name in va.data.dtype.names:
            x = va.data[name].astype(np.float64)
            y = vb_.data[name].astype(np.float64)
            if name.startswith("normal") and _exact_normals():
                assert np.array_equal(x, y), name  # the custom_normal attribute (4.5+)
            elif name.startswith(("normal", "tangent")):
                assert np.allclose(x, y, atol=2e-3), name
            else:
                assert np.allclose(x, y, atol=1e-5), name
    for ia, ib in zip(a.index_buffers, b.index_buffers, strict=True):
        assert np.array_equal(ia.indices, ib.indices)
        assert ia.index_size == ib.index_size
    assert len(a.geometries) == len(b.geometries)
    for ga, gb in zip(a.geometries, b.geometries, strict=True):
        assert np.array_equal(ga.bone_mapping, gb.bone_mapping)
        assert [vars(x) for x in ga.lods] == [vars(x) for x in gb.lods]
    assert [m.name for m in a.morphs] == [m.name for m in b.morphs]
    for ma, mb in zip(a.morphs, b.morphs, strict=True):
        for ba, bb in zip(ma.buffers, mb.buffers, strict=True):
            assert (ba.vertex_buffer, ba.mask) == (bb.vertex_buffer, bb.mask)
            assert np.array_equal(ba.data["index"], bb.data["index"])
            for f in ba.data.dtype.names[1:]:
                assert np.allclose(ba.data[f], bb.data[f], atol=1e-5), f
    assert_same_urho3d_skeleton(a, b)
    assert np.allclose(a.bbox_min, b.bbox_min, atol=1e-5)
    assert np.allclose(a.bbox_max, b.bbox_max, atol=1e-5)
    if a.geometry_centers is None:
        assert b.geometry_centers is None
    else:
        assert np.allclose(a.geometry_centers, b.geometry_centers, atol=1e-5)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"n_bones": 8, "morphs": 3, "uv_sets": 2},
        {"n_bones": 8, "morphs": 2, "legacy": True},
        {"n_bones": 70, "morphs": 1, "lods": 3, "uv_sets": 4},
        {"n_bones": 6, "morphs": 1, "root_scale": 0.25, "geometries": 2},
        {"n_bones": 0, "morphs": 0, "centers": False},
    ],
    ids=["umd2-morphs", "umdl-morphs", "70-bones-lods-4uv", "bind-scale", "static"],
)
def test_generated_model_roundtrip(blank_blend, tmp_path, kwargs):
    a, b = _roundtrip(blank_blend, tmp_path, samples.skinned_model(**kwargs))
    _assert_equivalent(a, b)


def test_shape_keys_from_morphs(blank_blend, tmp_path):
    bpy = blank_blend
    model = samples.skinned_model(n_bones=4, morphs=3)
    src = tmp_path / "m.mdl"
    src.write_bytes(mdl.write(model))
    bpy.ops.import_scene.urho3d_mdl(filepath=str(src))
    obj = next(o for o in bpy.data.objects if o.type == "MESH")
    keys = obj.data.shape_keys.key_blocks
    assert [k.name for k in keys] == ["Basis"] + [m.name for m in model.morphs]
    assert all(k.value == 0.0 for k in keys)
    moved = [
        np.count_nonzero(
            np.any(
                np.array([p.co for p in k.data]) != np.array([p.co for p in keys[0].data]), axis=1
            )
        )
        for k in keys[1:]
    ]
    for n, m in zip(moved, model.morphs, strict=True):
        pos = m.buffers[0].data["position"]
        assert n == np.count_nonzero(np.any(pos != 0, axis=1))


def test_all_element_types_roundtrip(blank_blend, tmp_path):
    """Every UMD2 element type and semantic, several buffers, 32-bit indices, lines."""
    a, b = _roundtrip(blank_blend, tmp_path, samples.all_elements_model())
    _assert_equivalent(a, b)


def test_legacy_every_mask_bit_roundtrip(blank_blend, tmp_path):
    a, b = _roundtrip(blank_blend, tmp_path, samples.legacy_all_bits_model())
    _assert_equivalent(a, b)


def test_animation_with_bind_scale_roundtrip(blank_blend, tmp_path):
    """Keys relative to scaled bind poses come back exactly (scale included)."""
    bpy = blank_blend
    model = samples.skinned_model(n_bones=6, morphs=0, root_scale=0.25)
    anim = samples.walk_animation(model, n_keys=9, scale_every=2)
    (tmp_path / "m.mdl").write_bytes(mdl.write(model))
    (tmp_path / "a.ani").write_bytes(ani.write(anim))
    bpy.ops.import_scene.urho3d_mdl(filepath=str(tmp_path / "m.mdl"))
    arm = next(o for o in bpy.data.objects if o.type == "ARMATURE")
    bpy.context.view_layer.objects.active = arm
    assert bpy.ops.import_anim.urho3d_ani(filepath=str(tmp_path / "a.ani")) == {"FINISHED"}
    assert bpy.ops.export_anim.urho3d_ani(filepath=str(tmp_path / "b.ani")) == {"FINISHED"}
    back = ani.read((tmp_path / "b.ani").read_bytes())
    assert [t.name for t in anim.tracks] == [t.name for t in back.tracks]
    for x, y in zip(anim.tracks, back.tracks, strict=True):
        assert x.mask == y.mask
        assert np.allclose(x.keys["time"], y.keys["time"], atol=1e-6)
        for f in x.keys.dtype.names[1:]:
            u, v = x.keys[f], y.keys[f]
            if f == "rotation":
                v = v * np.sign(np.sum(u * v, axis=1, keepdims=True))
            assert np.allclose(u, v, atol=1e-5), f


def test_two_objects_merge_with_warnings(blank_blend, tmp_path, rigport):
    """Two objects into one model: both geometries written, a missing UV set warned about."""
    bpy = blank_blend
    from rigport.operators.urho3d.model_exporter import ModelExportOptions, export_mdl

    model = samples.skinned_model(n_bones=4, morphs=1, uv_sets=2)
    src = tmp_path / "m.mdl"
    src.write_bytes(mdl.write(model))
    bpy.ops.import_scene.urho3d_mdl(filepath=str(src))
    obj = next(o for o in bpy.data.objects if o.type == "MESH")
    twin = obj.copy()
    twin.data = obj.data.copy()
    twin.name = "twin"
    bpy.context.scene.collection.objects.link(twin)
    twin.data.uv_layers.remove(twin.data.uv_layers[1])
    out = tmp_path / "out.mdl"
    warnings = export_mdl(bpy.context, str(out), [obj, twin], ModelExportOptions()).warnings
    assert any("twin: no UV set 2" in w for w in warnings), warnings
    back = mdl.read(out.read_bytes())
    assert len(back.geometries) == 2 * len(model.geometries)
    assert [m.name for m in back.morphs] == [m.name for m in model.morphs]
    n_src = model.vertex_buffers[0].count
    assert sum(vb.count for vb in back.vertex_buffers) >= 2 * n_src


def test_animation_import_all_or_nothing(blank_blend, tmp_path):
    """A bad file among several animations takes the good ones back, and the
    armature keeps the action it had."""
    bpy = blank_blend
    model = samples.skinned_model(n_bones=4)
    (tmp_path / "m.mdl").write_bytes(mdl.write(model))
    bpy.ops.import_scene.urho3d_mdl(filepath=str(tmp_path / "m.mdl"))
    (tmp_path / "a.ani").write_bytes(ani.write(samples.walk_animation(model, n_keys=5)))
    (tmp_path / "b.ani").write_bytes(b"UANI\x00\x01")
    assert bpy.ops.import_anim.urho3d_ani(filepath=str(tmp_path / "a.ani")) == {"FINISHED"}
    arm = next(o for o in bpy.data.objects if o.type == "ARMATURE")
    first = arm.animation_data.action
    actions = set(bpy.data.actions)
    files = [{"name": "a.ani"}, {"name": "b.ani"}]
    with pytest.raises(RuntimeError, match="b.ani"):  # the operator's error report
        bpy.ops.import_anim.urho3d_ani(directory=str(tmp_path), files=files)
    assert set(bpy.data.actions) == actions
    assert arm.animation_data.action == first
