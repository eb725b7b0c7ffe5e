"""Exact UVs through Blender: V values that flipping twice rounds come back as the file's."""

from __future__ import annotations

import numpy as np

from rigport.io_formats.renderware import dff
from rigport.samples import renderware as samples


def _rounding_v(n: int, seed: int) -> np.ndarray:
    """``n`` float32 values near 0.1 for which 1 - (1 - v) is not v."""
    rng = np.random.default_rng(seed)
    out: list[np.float32] = []
    while len(out) < n:
        v = np.float32(0.1 + rng.uniform(0.0, 1e-3))
        if np.float32(1.0) - (np.float32(1.0) - v) != v:
            out.append(v)
    return np.array(out, np.float32)


def test_dff_uvs_that_round_when_flipped_come_back_byte_identical(blank_blend, tmp_path):
    bpy = blank_blend
    src = samples.static_clump(uv_sets=2)
    for k, geo in enumerate(src.clump.geometries()):
        assert len(geo.uvs) == 2
        for i, uv in enumerate(geo.uvs):
            uv[::2, 1] = _rounding_v(len(uv[::2]), 10 * k + i)
    path = tmp_path / "uvs.dff"
    data = dff.write(src)
    path.write_bytes(data)
    geos = dff.read(data).clump.geometries()
    assert all(
        np.any(np.float32(1.0) - (np.float32(1.0) - u[:, 1]) != u[:, 1])
        for g in geos
        for u in g.uvs
    )
    assert bpy.ops.import_scene.rw_dff(filepath=str(path)) == {"FINISHED"}
    out = tmp_path / "out.dff"
    assert bpy.ops.export_scene.rw_dff(filepath=str(out)) == {"FINISHED"}
    assert out.read_bytes() == data


def test_dff_edited_uvs_are_written_from_blender(blank_blend, tmp_path):
    bpy = blank_blend
    src = samples.static_clump(uv_sets=2)
    for geo in src.clump.geometries():
        geo.uvs[1][:, 1] = _rounding_v(len(geo.uvs[1]), 7)
    path = tmp_path / "uvs.dff"
    path.write_bytes(dff.write(src))
    assert bpy.ops.import_scene.rw_dff(filepath=str(path)) == {"FINISHED"}
    for obj in (o for o in bpy.data.objects if o.type == "MESH"):
        layer = obj.data.uv_layers["UVMap1"]
        layer.data.foreach_set("uv", np.tile([0.25, 0.75], len(layer.data)).astype(np.float32))
    out = tmp_path / "out.dff"
    assert bpy.ops.export_scene.rw_dff(filepath=str(out)) == {"FINISHED"}
    for geo in dff.read(out.read_bytes()).clump.geometries():
        np.testing.assert_array_equal(geo.uvs[1], np.tile([0.25, 0.25], (len(geo.uvs[1]), 1)))
