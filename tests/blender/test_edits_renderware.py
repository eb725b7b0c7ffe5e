"""RenderWare edits as an artist makes them, exported with default options and read
back with the codec: the bounding spheres follow moved vertices (every vertex lies
inside each morph target's sphere) and are kept exactly while positions are unchanged."""

from __future__ import annotations

import numpy as np
import pytest

from rigport.io_formats.renderware import dff
from rigport.samples import renderware as samples


def _import(bpy, tmp_path, f: dff.DffFile) -> bytes:
    from rigport.operators.renderware.clump_importer import ClumpImportOptions, import_clump_file

    path = tmp_path / "in.dff"
    data = dff.write(f)
    path.write_bytes(data)
    import_clump_file(bpy.context, str(path), ClumpImportOptions())
    return data


def _export(bpy, tmp_path) -> bytes:
    from rigport.operators.renderware.clump_exporter import ClumpExportOptions, export_clump_file

    out = tmp_path / "out.dff"
    objects = [o for o in bpy.context.scene.objects if o.type == "MESH"]
    export_clump_file(bpy.context, str(out), ClumpExportOptions(), objects)
    return out.read_bytes()


def _mesh(bpy):
    return next(o for o in bpy.data.objects if o.type == "MESH")


@pytest.mark.parametrize("name", ["gta_ped", "gta_map_prop"])
def test_moved_vertex_grows_the_bounding_sphere(blank_blend, tmp_path, name):
    bpy = blank_blend
    src = getattr(samples, name)()
    original = _import(bpy, tmp_path, src)
    assert _export(bpy, tmp_path) == original  # unedited: the file's spheres, exactly
    old = [mt.sphere.copy() for mt in src.clump.geometries()[0].morph_targets]

    me = _mesh(bpy).data
    co = np.empty(len(me.vertices) * 3, np.float32)
    me.vertices.foreach_get("co", co)
    co = co.reshape(-1, 3)
    co[0] += (20.0, 0.0, 0.0)
    me.vertices.foreach_set("co", co.ravel())
    me.update()

    geo = dff.read(_export(bpy, tmp_path)).clump.geometries()[0]
    for mt, before in zip(geo.morph_targets, old, strict=True):
        centre, radius = mt.sphere[:3], float(mt.sphere[3])
        distance = np.linalg.norm(mt.positions - centre, axis=1)
        assert distance.max() <= radius * (1 + 1e-5)
        assert radius > float(before[3])


def _ped_with_duplicate() -> dff.DffFile:
    """The sample ped with triangle 0 once more, the other way round (two-sided)."""
    src = samples.gta_ped()
    geo = src.clump.geometries()[0]
    twin = geo.triangles[:1, [0, 2, 1]]
    geo.triangles = np.concatenate([geo.triangles, twin]).astype(geo.triangles.dtype)
    geo.tri_materials = np.concatenate([geo.tri_materials, geo.tri_materials[:1]])
    mat, ix = next((m, ix) for m, ix in geo.bin_mesh.meshes if np.isin(twin, ix).all())
    meshes = geo.bin_mesh.meshes
    k = next(k for k, (m, _) in enumerate(meshes) if m == mat)
    meshes[k] = (mat, np.concatenate([ix, twin.ravel()]).astype(ix.dtype))
    return src


def _delete_faces(bpy, obj, faces: list[int]) -> None:
    import bmesh

    bm = bmesh.new()
    bm.from_mesh(obj.data)
    bm.faces.ensure_lookup_table()
    bmesh.ops.delete(bm, geom=[bm.faces[i] for i in faces], context="FACES_ONLY")
    bm.to_mesh(obj.data)
    bm.free()
    obj.data.update()


def _face_materials(me) -> np.ndarray:
    mi = np.empty(len(me.polygons), np.int32)
    me.polygons.foreach_get("material_index", mi)
    return mi


def test_topology_edit_keeps_duplicates_and_blender_materials(blank_blend, tmp_path):
    """Faces deleted: the file's two-sided duplicate triangle is still written, and
    each triangle's material ID is its Blender material index (the Bin Mesh agrees)."""
    bpy = blank_blend
    src = _ped_with_duplicate()
    original = _import(bpy, tmp_path, src)
    assert _export(bpy, tmp_path) == original
    obj = _mesh(bpy)
    _delete_faces(bpy, obj, [5, 40])
    mats = _face_materials(obj.data)
    assert len(set(mats.tolist())) == 2

    geo = dff.read(_export(bpy, tmp_path)).clump.geometries()[0]
    assert len(geo.triangles) == len(obj.data.polygons) + 1
    np.testing.assert_array_equal(geo.tri_materials[: len(mats)], mats)
    rows = [tuple(np.sort(t)) for t in geo.triangles.tolist()]
    assert rows.count(tuple(np.sort(geo.triangles[0]))) == 2
    from_bin = {tuple(np.sort(t)): m for m, ix in geo.bin_mesh.meshes for t in ix.reshape(-1, 3)}
    assert [from_bin[r] for r in rows] == geo.tri_materials.tolist()


def test_duplicate_of_a_deleted_triangle_goes_with_a_warning(blank_blend, tmp_path):
    from rigport.operators.renderware.clump_exporter import ClumpExportOptions, export_clump_file

    bpy = blank_blend
    src = _ped_with_duplicate()
    _import(bpy, tmp_path, src)
    obj = _mesh(bpy)
    _delete_faces(bpy, obj, [0])
    out = tmp_path / "out.dff"
    result = export_clump_file(bpy.context, str(out), ClumpExportOptions(), [obj])
    assert any("1 duplicate or repeated-vertex triangle" in w for w in result.warnings)
    geo = dff.read(out.read_bytes()).clump.geometries()[0]
    assert len(geo.triangles) == len(obj.data.polygons)
