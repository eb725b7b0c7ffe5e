"""Urho3D models that come back exactly through Blender where they used to change:
vertices no triangle uses (kept as loose vertices and written back in their
buffer), bone names Blender cannot hold (longer than 63 bytes, empty, or equal in
their first 63 bytes), tangents that follow the object's transform, and morph
position offsets that Blender's absolute shape keys round."""

from __future__ import annotations

import numpy as np
import pytest

from rigport.io_formats.unigine import mesh as unigine_mesh
from rigport.io_formats.urho3d import ani, mdl
from rigport.io_formats.urho3d.model_import import MORPH_POSITION, unheld_offsets
from rigport.samples import rbfx as rbfx_samples
from rigport.samples import unigine as unigine_samples
from rigport.samples import urho3d as samples
from rigport.tests.support import ODD_VALUES


def _import(bpy, path, lods: str = "ALL") -> list:
    before = set(bpy.data.objects)
    assert bpy.ops.import_scene.urho3d_mdl(filepath=str(path), lods=lods) == {"FINISHED"}
    return [o for o in bpy.data.objects if o not in before]


def _export(bpy, path, **options) -> None:
    assert bpy.ops.export_scene.urho3d_mdl(filepath=str(path), **options) == {"FINISHED"}


def _meshes(objects: list) -> list:
    return sorted((o for o in objects if o.type == "MESH"), key=lambda o: o.name)


def _positions(vb: mdl.VertexBuffer) -> np.ndarray:
    return vb.data["position0"].astype(np.float64)


# -- vertices no triangle uses -------------------------------------------------


def _unused_cases() -> dict[str, tuple[mdl.Model, int, int]]:
    """Models with one unused vertex: (model, its vertex buffer, its place)."""
    one = samples.with_unused_vertex(samples.skinned_model(n_bones=6, morphs=0), 0, 200)
    morphed = samples.with_unused_vertex(samples.skinned_model(n_bones=6, morphs=2), 0, 200)
    lod = samples.with_unused_vertex(samples.lod_buffer_model(n_bones=6), 1, 5)
    return {"geometry": (one, 0, 200), "morphs": (morphed, 0, 200), "lod-buffer": (lod, 1, 5)}


@pytest.mark.parametrize("case", ["geometry", "morphs", "lod-buffer"])
def test_unused_vertex_unedited_byte_identical(blank_blend, tmp_path, case):
    model, k, at = _unused_cases()[case]
    src = tmp_path / "in.mdl"
    src.write_bytes(mdl.write(model))
    objects = _import(blank_blend, src)
    owner = _meshes(objects)[k]  # the LOD that draws from the vertex's buffer keeps it
    loose = np.ones(len(owner.data.vertices), bool)
    corner_verts = np.empty(len(owner.data.loops), np.int32)
    owner.data.loops.foreach_get("vertex_index", corner_verts)
    loose[corner_verts] = False
    assert int(loose.sum()) == 1
    out = tmp_path / "out.mdl"
    _export(blank_blend, out)
    assert out.read_bytes() == src.read_bytes()


def test_unused_vertex_survives_a_position_edit(blank_blend, tmp_path):
    model, k, at = _unused_cases()["geometry"]
    src = tmp_path / "in.mdl"
    src.write_bytes(mdl.write(model))
    body = _meshes(_import(blank_blend, src))[0]
    co = np.empty(3 * len(body.data.vertices), np.float32)
    body.data.vertices.foreach_get("co", co)
    body.data.vertices.foreach_set("co", co * 2)  # doubles every file coordinate too
    body.data.update()
    out = tmp_path / "out.mdl"
    _export(blank_blend, out)
    a, b = mdl.read(src.read_bytes()), mdl.read(out.read_bytes())
    assert b.vertex_buffers[k].count == a.vertex_buffers[k].count
    assert np.allclose(_positions(b.vertex_buffers[k]), 2 * _positions(a.vertex_buffers[k]), 1e-6)
    assert np.array_equal(b.vertex_buffers[k].data["normal0"], a.vertex_buffers[k].data["normal0"])


def test_unused_vertex_survives_a_topology_edit(blank_blend, tmp_path):
    model, k, at = _unused_cases()["geometry"]
    src = tmp_path / "in.mdl"
    src.write_bytes(mdl.write(model))
    body = _meshes(_import(blank_blend, src))[0]
    import bmesh

    bm = bmesh.new()
    bm.from_mesh(body.data)
    bm.faces.ensure_lookup_table()
    bmesh.ops.delete(bm, geom=[bm.faces[0]], context="FACES_ONLY")
    bm.to_mesh(body.data)
    bm.free()
    out = tmp_path / "out.mdl"
    _export(blank_blend, out)
    b = mdl.read(out.read_bytes())
    orphan = _positions(model.vertex_buffers[k])[at]
    written = np.concatenate([_positions(vb) for vb in b.vertex_buffers])
    assert np.any(np.all(np.abs(written - orphan) <= 1e-6, axis=1))
    drawn = np.unique(np.concatenate([ib.indices for ib in b.index_buffers]))
    assert len(drawn) < len(written)  # written, not drawn


# -- bone names Blender cannot hold -------------------------------------------


def test_unheld_bone_names_round_trip_and_take_their_animation(blank_blend, tmp_path):
    bpy = blank_blend
    model = samples.with_unheld_bone_names(samples.skinned_model(n_bones=6, morphs=0))
    anim = samples.walk_animation(model, n_keys=5)
    src = tmp_path / "in.mdl"
    src.write_bytes(mdl.write(model))
    (tmp_path / "a.ani").write_bytes(ani.write(anim))
    objects = _import(bpy, src)
    arm = next(o for o in objects if o.type == "ARMATURE")
    held = [b.name for b in arm.data.bones]
    assert all(h != n for h, n in zip(held[1:5], samples.UNHELD_BONE_NAMES, strict=True))
    out = tmp_path / "out.mdl"
    _export(bpy, out)
    assert out.read_bytes() == src.read_bytes()  # names, and the weights of those bones

    bpy.context.view_layer.objects.active = arm
    assert bpy.ops.import_anim.urho3d_ani(filepath=str(tmp_path / "a.ani")) == {"FINISHED"}
    action = arm.animation_data.action
    assert "rigport_missing_bones" not in action
    animated = {p.split('"')[1] for p in _curve_paths(action)}
    assert animated == set(held)  # every track on its bone, the long-named ones too
    assert bpy.ops.export_anim.urho3d_ani(filepath=str(tmp_path / "b.ani")) == {"FINISHED"}
    back = ani.read((tmp_path / "b.ani").read_bytes())
    assert [t.name for t in back.tracks] == [t.name for t in anim.tracks]
    for x, y in zip(anim.tracks, back.tracks, strict=True):
        assert np.allclose(x.keys["position"], y.keys["position"], atol=1e-5), x.name


def test_renamed_bone_writes_its_new_name(blank_blend, tmp_path):
    model = samples.with_unheld_bone_names(samples.skinned_model(n_bones=6, morphs=0))
    src = tmp_path / "in.mdl"
    src.write_bytes(mdl.write(model))
    arm = next(o for o in _import(blank_blend, src) if o.type == "ARMATURE")
    arm.data.bones[1].name = "Renamed"
    out = tmp_path / "out.mdl"
    _export(blank_blend, out)
    names = [b.name for b in mdl.read(out.read_bytes()).bones]
    assert names[1] == "Renamed" and names[2:5] == list(samples.UNHELD_BONE_NAMES[1:])


def _curve_paths(action) -> list[str]:
    from rigport.operators.blender import compat  # imports bpy: only once Blender runs

    return [fc.data_path for fc in compat.fcurves(action)]


def _unigine_bone_weights(surface, n_bones: int) -> np.ndarray:
    w = surface.weights
    return np.bincount(w.bones.astype(np.int64), w.values.astype(np.float64), minlength=n_bones)


def test_unigine_unheld_bone_names_keep_names_and_weights(blank_blend, tmp_path):
    """The same names through a Unigine mesh (the naming is shared): the bones keep
    their whole names and the vertices weighted to them keep their weights."""
    source = unigine_samples.skinned_mesh(n_bones=6, animations=0)
    renamed = [b for b in source.bones if b.name.startswith("bone_")][:4]
    for bone, name in zip(renamed, samples.UNHELD_BONE_NAMES, strict=True):
        bone.name = name
    src = tmp_path / "in.mesh"
    src.write_bytes(unigine_mesh.write(source))
    bpy = blank_blend
    assert bpy.ops.import_scene.unigine_mesh(filepath=str(src)) == {"FINISHED"}
    out = tmp_path / "out.mesh"
    assert bpy.ops.export_scene.unigine_mesh(filepath=str(out)) == {"FINISHED"}
    a, b = unigine_mesh.read(src.read_bytes()), unigine_mesh.read(out.read_bytes())
    assert [x.name for x in b.bones] == [x.name for x in a.bones]
    for sa, sb in zip(a.surfaces, b.surfaces, strict=True):
        before, after = _unigine_bone_weights(sa, 6), _unigine_bone_weights(sb, 6)
        assert np.allclose(after, before, rtol=1e-3), (before, after)


# -- tangents follow the object's transform ------------------------------------


def _file_frames(model: mdl.Model) -> tuple[np.ndarray, ...]:
    """Per triangle corner of the file: its normal, its tangent (xyz, w) and the
    directions of increasing u and v across its triangle (dP/du, dP/dv)."""
    vb = model.vertex_buffers[0]
    idx = np.concatenate([ib.indices for ib in model.index_buffers]).astype(np.int64)
    tri = idx.reshape(-1, 3)
    p = vb.data["position0"].astype(np.float64)[tri]
    uv = vb.data["texcoord0"].astype(np.float64)[tri]
    e1, e2 = p[:, 1] - p[:, 0], p[:, 2] - p[:, 0]
    d1, d2 = uv[:, 1] - uv[:, 0], uv[:, 2] - uv[:, 0]
    det = d1[:, 0] * d2[:, 1] - d2[:, 0] * d1[:, 1]
    dpdu = (e1 * d2[:, 1:2] - e2 * d1[:, 1:2]) / det[:, None]
    dpdu /= np.linalg.norm(dpdu, axis=1, keepdims=True)
    dpdv = (e2 * d1[:, 0:1] - e1 * d2[:, 0:1]) / det[:, None]
    normals = vb.data["normal0"].astype(np.float64)[idx]
    tangents = vb.data["tangent0"].astype(np.float64)[idx]
    return normals, tangents, np.repeat(dpdu, 3, axis=0), np.repeat(dpdv, 3, axis=0)


#: The export's own axes and scale (the Transform panel), turning the data.
EXPORT_AXES = {"axis_forward": "Z", "axis_up": "X", "global_scale": 2.0}


@pytest.mark.parametrize(
    "rotation, scale, options",
    [
        ((0.4, -0.7, 1.1), (1, 1, 1), {}),
        ((0.4, -0.7, 1.1), (1, 2.5, 0.5), {}),
        ((0, 0, 0), (1, 1, 1), EXPORT_AXES),
        ((0.4, -0.7, 1.1), (1, 2.5, 0.5), EXPORT_AXES),
    ],
    ids=["rotated", "scaled", "export-axes", "scaled-export-axes"],
)
def test_computed_tangents_follow_the_transform(blank_blend, tmp_path, rotation, scale, options):
    """Blender's tangents (a new mesh has no file tangents) are written in the
    file's space like the normals, through the object's placement and the
    export's axes: unit length, perpendicular to the written normals, along the
    written direction of increasing u, and with the same handedness as the
    untransformed object's."""
    bpy = blank_blend
    bpy.ops.mesh.primitive_grid_add(x_subdivisions=4, y_subdivisions=3, size=2.0, calc_uvs=True)
    obj = bpy.context.active_object
    out = tmp_path / "plain.mdl"
    _export(bpy, out)
    plain_w = _file_frames(mdl.read(out.read_bytes()))[1][:, 3]
    obj.rotation_euler = rotation
    obj.scale = scale
    obj.location = (1.0, 2.0, 3.0)
    out = tmp_path / "placed.mdl"
    _export(bpy, out, **options)
    normals, tangents, dpdu, _ = _file_frames(mdl.read(out.read_bytes()))
    assert not np.allclose(normals, [0.0, 1.0, 0.0], atol=1e-3)  # it did turn
    assert np.allclose(np.linalg.norm(tangents[:, :3], axis=1), 1.0, atol=1e-5)
    assert np.allclose(np.einsum("ij,ij->i", normals, tangents[:, :3]), 0.0, atol=1e-5)
    assert np.allclose(np.einsum("ij,ij->i", tangents[:, :3], dpdu), 1.0, atol=1e-5)
    assert np.array_equal(tangents[:, 3], plain_w)


def test_kept_file_tangents_follow_the_object_transform(blank_blend, tmp_path):
    """An imported model's own tangents (kept while its topology holds) turn with
    its object as its normals do."""
    model = samples.skinned_model(n_bones=0, morphs=0, color=False)
    src = tmp_path / "in.mdl"
    src.write_bytes(mdl.write(model))
    body = _meshes(_import(blank_blend, src))[0]
    body.rotation_euler = (0.4, -0.7, 1.1)
    body.scale = (1.5, 1.5, 1.5)  # angles kept: tangents as along u as they were
    out = tmp_path / "out.mdl"
    _export(blank_blend, out)
    a, b = mdl.read(src.read_bytes()), mdl.read(out.read_bytes())
    assert b.vertex_buffers[0].count == a.vertex_buffers[0].count  # the kept layout
    normals, tangents, dpdu, _ = _file_frames(b)
    before = _file_frames(a)
    assert np.allclose(np.einsum("ij,ij->i", normals, tangents[:, :3]), 0.0, atol=1e-5)
    along = np.einsum("ij,ij->i", tangents[:, :3], dpdu)
    assert np.allclose(along, np.einsum("ij,ij->i", before[1][:, :3], before[2]), atol=1e-4)
    assert np.array_equal(tangents[:, 3], before[1][:, 3])


# -- morph position offsets ------------------------------------------------------


def _morph_cases() -> dict[str, mdl.Model]:
    return {
        "tentacle": samples.skinned_model(n_bones=6),
        "umd3": rbfx_samples.umd3_model(),
    }


def _kept_offsets(obj, i: int) -> np.ndarray:
    """Per vertex: whether the import kept morph ``i``'s file offset."""
    attr = obj.data.attributes.get(MORPH_POSITION.format(i))
    if attr is None:
        return np.zeros(len(obj.data.vertices), bool)
    v = np.empty(3 * len(obj.data.vertices), np.float32)
    attr.data.foreach_get("vector", v)
    return np.any(v.reshape(-1, 3) != 0, axis=1)


def _key_coords(kb, n: int) -> np.ndarray:
    co = np.empty(3 * n, np.float32)
    kb.data.foreach_get("co", co)
    return co.reshape(n, 3)


def test_unheld_offsets_keep_only_what_the_key_rounds():
    """Kept: an offset the basis rounds away and a -0 (the key gives +0 back);
    not kept: offsets that come back, and a non-finite one (Blender gets 0)."""
    positions = np.array([[1000.0, 0, 0], [1, 2, 3], [0, 0, 0], [5, 5, 5]], np.float32)
    offsets = np.array([[3e-5, 0, 0], [0.5, 0.25, -1], [-0.0, 0, 0], [np.nan, 0, 0]], np.float32)
    verts, kept = unheld_offsets(positions, offsets, None)
    assert verts.tolist() == [0, 2]
    assert kept.view(np.uint32).tolist() == offsets[[0, 2]].view(np.uint32).tolist()
    sparse = unheld_offsets(positions, offsets[[1]], np.array([1]))
    assert sparse is None


@pytest.mark.parametrize("case", ["tentacle", "umd3"])
def test_morph_offsets_unedited_byte_identical(blank_blend, tmp_path, case):
    """Offsets that ``(basis + offset) - basis`` rounds come back with the file's bits."""
    src = tmp_path / "in.mdl"
    src.write_bytes(mdl.write(_morph_cases()[case]))
    body = _meshes(_import(blank_blend, src))[0]
    assert _kept_offsets(body, 0).any()  # the case needs the kept offsets
    out = tmp_path / "out.mdl"
    _export(blank_blend, out)
    assert out.read_bytes() == src.read_bytes()


def test_edited_shape_key_vertex_written_from_blender(blank_blend, tmp_path):
    """An edited vertex of a shape key gets Blender's offset; the key's unedited
    vertices keep the file's bits, the other keys all of theirs."""
    model = samples.skinned_model(n_bones=6)
    src = tmp_path / "in.mdl"
    src.write_bytes(mdl.write(model))
    body = _meshes(_import(blank_blend, src))[0]
    n = len(body.data.vertices)
    kept = np.flatnonzero(_kept_offsets(body, 0))
    v = int(kept[0])
    keys = body.data.shape_keys.key_blocks
    co = _key_coords(keys[1], n)
    co[v] += np.float32(0.125)
    keys[1].data.foreach_set("co", co.ravel())
    out = tmp_path / "out.mdl"
    _export(blank_blend, out)
    a, b = mdl.read(src.read_bytes()), mdl.read(out.read_bytes())
    assert a.vertex_buffers[0].data.tobytes() == b.vertex_buffers[0].data.tobytes()
    for k, (ma, mb) in enumerate(zip(a.morphs, b.morphs, strict=True)):
        da, db = ma.buffers[0].data, mb.buffers[0].data
        assert np.array_equal(da["index"], db["index"])
        moved = np.any(da["position"].view(np.uint32) != db["position"].view(np.uint32), axis=1)
        if k != 0:
            assert not moved.any()
            continue
        assert da["index"][moved].tolist() == [v]  # one engine vertex per Blender vertex
        base = _key_coords(keys[0], n)[v]
        blender = (co[v] - base)[[0, 2, 1]]  # Blender's offset, in the file's axes
        assert np.array_equal(db["position"][moved][0], blender.astype(np.float32))
        assert np.allclose(db["position"][moved][0] - da["position"][moved][0], 0.125, atol=1e-6)


def test_edited_basis_vertex_writes_blender_offsets(blank_blend, tmp_path):
    """A basis vertex moved (its shape keys left): every key's offset there is
    Blender's (``key - basis``), no longer the file's bits; the kept test is per
    vertex, like the UVs', so a key that still gives its kept offset back keeps it."""
    src = tmp_path / "in.mdl"
    src.write_bytes(mdl.write(samples.skinned_model(n_bones=6)))
    body = _meshes(_import(blank_blend, src))[0]
    n = len(body.data.vertices)
    v = int(np.flatnonzero(_kept_offsets(body, 0))[0])
    keys = body.data.shape_keys.key_blocks
    coords = [_key_coords(kb, n) for kb in keys]
    coords[0][v] += np.float32(0.375)
    keys[0].data.foreach_set("co", coords[0].ravel())
    body.data.vertices.foreach_set("co", coords[0].ravel())
    out = tmp_path / "out.mdl"
    _export(blank_blend, out)
    b = mdl.read(out.read_bytes())
    checked = 0
    for k, m in enumerate(b.morphs):
        data = m.buffers[0].data
        row = np.flatnonzero(data["index"] == v)
        assert len(row) == 1  # the vertex moves in every key now
        blender = (coords[k + 1][v] - coords[0][v])[[0, 2, 1]].astype(np.float32)
        assert np.array_equal(data["position"][row[0]], blender)
        checked += 1
    assert checked == len(keys) - 1


# -- values Blender's groups and normals cannot hold --------------------------------


@pytest.mark.parametrize("value", list(ODD_VALUES))
def test_odd_values_kept_and_written_back_unedited(blank_blend, tmp_path, value):
    """A tangent's w, a blend weight and (when not finite) a normal's part that
    Blender cannot hold as they are: the import keeps the file's bits (a
    signalling NaN stays signalling: the values reach Blender in bulk, never
    through a Python float), and the unedited export writes the file back byte for
    byte. (A finite normal far from its face's is not held exactly by bpy 4.2's
    custom normals, so it is not one of these.)"""
    bits = ODD_VALUES[value]
    model = samples.skinned_model(n_bones=4, morphs=1, color=False)
    data = model.vertex_buffers[0].data
    if not np.isfinite(np.uint32(bits).view(np.float32)):
        data["normal0"][3:4, 0:1].view(np.uint32)[...] = bits
    data["tangent0"][4:5, 3:4].view(np.uint32)[...] = bits
    data["blendweights0"][5:6, 1:2].view(np.uint32)[...] = bits
    src = tmp_path / "in.mdl"
    src.write_bytes(mdl.write(model))
    body = _meshes(_import(blank_blend, src))[0]
    source = np.empty(len(body.data.vertices), np.int32)
    body.data.attributes["urho:source"].data.foreach_get("value", source)
    tangents = np.empty(len(source) * 4, np.float32)
    body.data.attributes["urho:tangent"].data.foreach_get("color", tangents)
    w = tangents.reshape(-1, 4)[:, 3].view(np.uint32)[source == 4]
    assert w.tolist() == [bits ^ 0x80000000]  # negated for Blender's axes, payload kept
    out = tmp_path / "out.mdl"
    _export(blank_blend, out)
    assert out.read_bytes() == src.read_bytes()
