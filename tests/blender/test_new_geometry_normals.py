"""Geometry an artist adds to an imported Urho3D model exports with normals. On
4.5 and later the import holds the file's normals as free custom normals, and a
vertex added later holds (0, 0, 0) there; the shared reader gives such a corner
the normal of the triangles around its vertex (``extract.corner_normals``), and
every vertex the file had keeps its normal."""

from __future__ import annotations

import numpy as np

from rigport.io_formats.urho3d import mdl
from rigport.samples import urho3d as samples


def _unit(normals: np.ndarray) -> None:
    np.testing.assert_allclose(np.linalg.norm(normals, axis=1), 1.0, atol=1e-3)


def test_a_circle_added_in_edit_mode_exports_with_normals(blank_blend, tmp_path):
    bpy = blank_blend
    source = samples.skinned_model(n_bones=4, morphs=0, lods=1, geometries=1)
    path = tmp_path / "in.mdl"
    path.write_bytes(mdl.write(source))
    assert bpy.ops.import_scene.urho3d_mdl(filepath=str(path)) == {"FINISHED"}
    (obj,) = [o for o in bpy.data.objects if o.type == "MESH"]
    for other in bpy.data.objects:
        other.select_set(False)
    obj.select_set(True)
    bpy.context.view_layer.objects.active = obj
    bpy.ops.object.mode_set(mode="EDIT")
    bpy.ops.mesh.select_all(action="DESELECT")
    # a filled pentagon in the plane z = 7 (object space), facing +z
    bpy.ops.mesh.primitive_circle_add(vertices=5, radius=0.5, fill_type="NGON", location=(5, 0, 7))
    bpy.ops.object.mode_set(mode="OBJECT")
    out = tmp_path / "out.mdl"
    assert bpy.ops.export_scene.urho3d_mdl(filepath=str(out)) == {"FINISHED"}
    vb = mdl.read(out.read_bytes()).vertex_buffers[0]
    pos = np.asarray(vb.data["position0"], np.float64)
    normals = np.asarray(vb.data["normal0"], np.float64)
    _unit(normals)
    added = np.isclose(pos[:, 1], 7.0)  # the engine's axes: Y up
    assert added.sum() == 5
    np.testing.assert_allclose(normals[added], [[0.0, 1.0, 0.0]] * 5, atol=1e-5)
    # the file's own vertices keep their normals (matched by position; within
    # what 4.2's custom normals round to, as its edited meshes export Blender's)
    src = source.vertex_buffers[0].data
    src_pos = np.round(np.asarray(src["position0"], np.float64), 4)
    src_normals = np.asarray(src["normal0"], np.float64)
    assert (~added).sum() == len(src_pos)
    for p, n in zip(np.round(pos[~added], 4), normals[~added], strict=True):
        same = np.all(src_pos == p, axis=1)
        assert np.abs(src_normals[same] - n).max(axis=1).min() < 0.01
