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


