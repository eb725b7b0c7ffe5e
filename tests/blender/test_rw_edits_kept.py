"""RenderWare's kept geometry data under the shared fingerprint rule, edited as an
artist edits: what still describes the mesh is written back exactly, what does not
is rebuilt (split data after a weight edit, strips after a topology edit), and the
output is read back (by our codec, and by librw and DragonFF where they are here)."""

from __future__ import annotations

import numpy as np

from rigport.io_formats.renderware import dff
from rigport.io_formats.renderware.geometry import TRISTRIP, strip_triangles
from rigport.samples import renderware as samples


def _import(bpy, tmp_path, f: dff.DffFile | bytes, name: str = "in.dff") -> bytes:
    from rigport.operators.renderware.clump_importer import ClumpImportOptions, import_clump_file

    path = tmp_path / name
    data = f if isinstance(f, bytes) else dff.write(f)
    path.write_bytes(data)
    import_clump_file(bpy.context, str(path), ClumpImportOptions())
    return data


def _export(bpy, tmp_path, name: str = "out.dff") -> tuple[bytes, list[str]]:
    from rigport.operators.renderware.clump_exporter import ClumpExportOptions, export_clump_file

    out = tmp_path / name
    objects = [o for o in bpy.context.scene.objects if o.type == "MESH"]
    result = export_clump_file(bpy.context, str(out), ClumpExportOptions(), objects)
    return out.read_bytes(), list(result.warnings)


def _mesh(bpy):
    return next(o for o in bpy.context.scene.objects if o.type == "MESH")


def test_weight_edit_rebuilds_split_data_only(blank_blend, tmp_path):
    """A weight painted on one vertex: the fingerprint names the weights alone, so the
    split data (which depends on the weights) is rebuilt while the file's strips,
    triangle material IDs and spheres are written back exactly."""
    from rigport.operators.blender import fingerprint
    from rigport.operators.renderware.build import FINGERPRINT

    bpy = blank_blend
    src = samples.skinned_ped("SA", split=True, strips=True)
    original = _import(bpy, tmp_path, src)
    obj = _mesh(bpy)
    assert fingerprint.changed(obj, FINGERPRINT) == set()
    assert _export(bpy, tmp_path)[0] == original

    group = obj.vertex_groups[obj.data.vertices[0].groups[0].group]
    group.add([0], 0.25, "REPLACE")
    assert fingerprint.changed(obj, FINGERPRINT) == {fingerprint.WEIGHTS}
    data, warnings = _export(bpy, tmp_path)
    assert any("the weights changed; split data zeroed" in w for w in warnings)
    before = src.clump.geometries()[0]
    geo = dff.read(data).clump.geometries()[0]
    assert geo.skin.split.is_zero()
    assert geo.bin_mesh.to_bytes() == before.bin_mesh.to_bytes()
    np.testing.assert_array_equal(geo.triangles, before.triangles)
    for a, b in zip(geo.morph_targets, before.morph_targets, strict=True):
        np.testing.assert_array_equal(a.sphere, b.sphere)


def test_moved_vertex_keeps_strips_and_split(blank_blend, tmp_path):
    """Positions alone changed: the kept Bin Mesh (strips) and split data still describe
    the mesh; only the bounding sphere follows the vertex."""
    from rigport.operators.blender import fingerprint
    from rigport.operators.renderware.build import FINGERPRINT

    bpy = blank_blend
    src = samples.skinned_ped("SA", split=True, strips=True)
    _import(bpy, tmp_path, src)
    obj = _mesh(bpy)
    obj.data.vertices[3].co.z += 5.0
    obj.data.update()
    assert fingerprint.changed(obj, FINGERPRINT) == {fingerprint.POSITIONS}
    data, _ = _export(bpy, tmp_path)
    before = src.clump.geometries()[0]
    geo = dff.read(data).clump.geometries()[0]
    assert geo.bin_mesh.to_bytes() == before.bin_mesh.to_bytes()
    assert geo.flags & TRISTRIP
    assert not geo.skin.split.is_zero()
    assert geo.morph_targets[0].sphere[3] > before.morph_targets[0].sphere[3]


def test_forgotten_fingerprint_falls_back_to_the_codec_check(blank_blend, tmp_path):
    """An object imported before fingerprints (none stored) still round-trips exactly."""
    from rigport.operators.renderware.build import FINGERPRINT

    bpy = blank_blend
    original = _import(bpy, tmp_path, samples.skinned_ped("SA", split=True, strips=True))
    del _mesh(bpy)[FINGERPRINT]
    assert _export(bpy, tmp_path)[0] == original


def _decoded(geo) -> list[tuple[int, tuple[int, int, int]]]:
    """(material, triangle rotated to start at its smallest corner) of a Bin Mesh."""
    out = []
    for mat, ix in geo.bin_mesh.meshes:
        tris = strip_triangles(ix) if geo.bin_mesh.strips else ix.reshape(-1, 3)
        for t in np.asarray(tris, np.int64).tolist():
            k = t.index(min(t))
            out.append((mat, tuple(t[k:] + t[:k])))
    return sorted(out)
