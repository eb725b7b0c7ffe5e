"""Custom normals: exact through the ``custom_normal`` attribute on Blender 4.5+,
encoded by ``normals_split_custom_set`` on 4.2 (see ``compat.py``)."""

from __future__ import annotations

import numpy as np
import pytest

from rigport.io_formats.scene import Mesh, Scene
from rigport.io_formats.urho3d import mdl
from rigport.io_formats.urho3d.model_import import NORMAL_ATTRIBUTE
from rigport.samples import urho3d as u3_samples

#: 4.2's encoding is off by up to about 1.4e-2 (issue 16); 4.5+ keeps the bits.
TOLERANCE_42 = 2e-2


def _exact(bpy) -> bool:
    return bpy.app.version >= (4, 5, 0)


def _grid_mesh(per_corner: bool) -> Mesh:
    """Quads over a 4 x 4 grid with random unit normals (per corner or per vertex)."""
    rng = np.random.default_rng(7)
    n = 5
    x, y = np.meshgrid(np.arange(n), np.arange(n))
    pos = np.stack([x.ravel(), y.ravel(), np.zeros(n * n)], 1).astype(np.float32)
    quads = []
    for j in range(n - 1):
        for i in range(n - 1):
            a = j * n + i
            quads.append((a, a + 1, a + n + 1, a + n))
    cv = np.array(quads, np.int32).ravel()
    if per_corner:
        normals = rng.normal(size=(len(cv), 3))
    else:
        normals = rng.normal(size=(n * n, 3))[cv]
    normals[:, 2] = np.abs(normals[:, 2]) + 0.5
    normals /= np.linalg.norm(normals, axis=1, keepdims=True)
    return Mesh(
        "grid",
        pos,
        cv,
        np.arange(0, len(cv), 4, dtype=np.int32),
        np.zeros(len(quads), np.int32),
        normals=normals.astype(np.float32),
    )


def _corner_normals(me) -> np.ndarray:
    out = np.empty(len(me.loops) * 3, np.float32)
    me.corner_normals.foreach_get("vector", out)
    return out.reshape(-1, 3)


@pytest.mark.parametrize("per_corner", [True, False], ids=["per-corner", "per-vertex"])
def test_custom_normals_exact_on_45_and_later(blank_blend, per_corner):
    from rigport.operators.blender.build import build_scene
    from rigport.operators.blender.extract import extract_mesh

    bpy = blank_blend
    mesh = _grid_mesh(per_corner)
    built = build_scene(bpy.context, Scene("s", meshes=[mesh]))
    obj = built.objects[0]
    me = obj.data
    got = _corner_normals(me)
    attr = me.attributes.get("custom_normal")
    if _exact(bpy):
        assert (attr.domain, attr.data_type) == ("CORNER", "FLOAT_VECTOR")
        assert np.array_equal(got, mesh.normals)
    else:
        assert attr is None or attr.data_type != "FLOAT_VECTOR"
        assert np.allclose(got, mesh.normals, atol=TOLERANCE_42)
        assert not np.array_equal(got, mesh.normals)  # 4.2 really rounds them
    # read back on export: the triangles' corners are the quads' corners
    out = extract_mesh(obj)
    me.calc_loop_triangles()
    loops = np.empty(len(me.loop_triangles) * 3, np.int32)
    me.loop_triangles.foreach_get("loops", loops)
    if _exact(bpy):
        assert np.array_equal(out.normals, mesh.normals[loops])
    else:
        assert np.allclose(out.normals, mesh.normals[loops], atol=TOLERANCE_42)


def test_sharp_faces_do_not_change_custom_normals(blank_blend):
    """On 4.5+ the attribute is the normal whatever the sharp flags say."""
    from rigport.operators.blender.build import build_scene

    bpy = blank_blend
    if not _exact(bpy):
        pytest.skip("4.2 derives corner normals from sharp edges and the encoded normals")
    mesh = _grid_mesh(True)
    me = build_scene(bpy.context, Scene("s", meshes=[mesh])).objects[0].data
    sharp = me.attributes.new("sharp_face", "BOOLEAN", "FACE")
    sharp.data.foreach_set("value", np.ones(len(me.polygons), bool))
    sharp_edge = me.attributes.new("sharp_edge", "BOOLEAN", "EDGE")
    sharp_edge.data.foreach_set("value", np.ones(len(me.edges), bool))
    assert np.array_equal(_corner_normals(me), mesh.normals)


def test_zero_and_nan_normals_get_blenders_own_and_come_back(blank_blend):
    from rigport.operators.blender.build import build_scene
    from rigport.operators.blender.extract import extract_mesh

    bpy = blank_blend
    mesh = _grid_mesh(True)
    mesh.normals[:4] = 0.0
    mesh.normals[4, 1] = np.nan
    obj = build_scene(bpy.context, Scene("s", meshes=[mesh])).objects[0]
    got = _corner_normals(obj.data)
    assert np.isfinite(got).all()
    assert np.allclose(got[:5], [0, 0, 1], atol=1e-6)  # a flat grid: Blender's own is +Z
    if _exact(bpy):
        assert np.array_equal(got[5:], mesh.normals[5:])
    out = extract_mesh(obj)  # unedited: the file's own values, zero and NaN included
    me = obj.data
    me.calc_loop_triangles()
    loops = np.empty(len(me.loop_triangles) * 3, np.int32)
    me.loop_triangles.foreach_get("loops", loops)
    want = mesh.normals[loops]
    if _exact(bpy):
        assert np.array_equal(out.normals, want, equal_nan=True)
    else:
        first = np.isin(loops, np.arange(5))
        assert np.array_equal(out.normals[first], want[first], equal_nan=True)


def _point_domain(mesh: Mesh) -> Mesh:
    """``mesh`` (per-vertex normals made per corner by ``_grid_mesh``) with one normal
    per vertex, as the Urho3D import gives them."""
    per_vertex = np.zeros((len(mesh.positions), 3), np.float32)
    per_vertex[mesh.corner_verts] = mesh.normals
    mesh.normals, mesh.normal_domain = per_vertex, "POINT"
    return mesh


def test_point_domain_normals_stay_per_vertex_and_read_back_per_corner(blank_blend):
    from rigport.operators.blender.build import build_scene
    from rigport.operators.blender.extract import extract_mesh

    bpy = blank_blend
    mesh = _point_domain(_grid_mesh(False))
    mesh.normals[7] *= np.float32(1.0001)  # not unit: kept as it is on 4.5+
    obj = build_scene(bpy.context, Scene("s", meshes=[mesh])).objects[0]
    me = obj.data
    got = _corner_normals(me)
    want = mesh.normals[mesh.corner_verts]
    attr = me.attributes.get("custom_normal")
    if _exact(bpy):
        assert (attr.domain, attr.data_type) == ("POINT", "FLOAT_VECTOR")
        assert np.array_equal(got, want)
    else:
        assert np.allclose(got, want, atol=TOLERANCE_42)
    out = extract_mesh(obj)
    me.calc_loop_triangles()
    loops = np.empty(len(me.loop_triangles) * 3, np.int32)
    me.loop_triangles.foreach_get("loops", loops)
    assert out.normal_domain == "CORNER"
    if _exact(bpy):
        assert np.array_equal(out.normals, want[loops])


def test_point_domain_zero_and_nan_normals_get_blenders_own_and_come_back(blank_blend):
    """A vertex's bad normal: Blender's own at its corners, the file's value (kept per
    corner) back on an unedited export."""
    from rigport.operators.blender.build import build_scene
    from rigport.operators.blender.extract import extract_mesh

    bpy = blank_blend
    mesh = _point_domain(_grid_mesh(False))
    file_normals = mesh.normals.copy()
    mesh.normals[0] = 0.0
    mesh.normals[6, 2] = np.nan
    file_normals[0], file_normals[6, 2] = 0.0, np.nan
    obj = build_scene(bpy.context, Scene("s", meshes=[mesh])).objects[0]
    me = obj.data
    cv = np.empty(len(me.loops), np.int32)
    me.loops.foreach_get("vertex_index", cv)
    got = _corner_normals(me)
    bad = np.isin(cv, [0, 6])
    assert bad.sum() == 1 + 4  # a corner vertex and an inner one
    assert np.allclose(got[bad], [0, 0, 1], atol=1e-6)  # a flat grid: Blender's own is +Z
    if _exact(bpy):
        assert np.array_equal(got[~bad], file_normals[cv[~bad]])
    out = extract_mesh(obj)
    me.calc_loop_triangles()
    loops = np.empty(len(me.loop_triangles) * 3, np.int32)
    me.loop_triangles.foreach_get("loops", loops)
    want = file_normals[cv[loops]]
    restored = np.isin(cv[loops], [0, 6])
    assert np.array_equal(out.normals[restored], want[restored], equal_nan=True)
    if _exact(bpy):
        assert np.array_equal(out.normals, want, equal_nan=True)


def test_urho3d_import_keeps_normals_per_vertex(blank_blend, tmp_path):
    """The import gives Blender one normal per vertex (nothing expanded to corners)."""
    bpy = blank_blend
    src = tmp_path / "m.mdl"
    src.write_bytes(mdl.write(u3_samples.skinned_model(n_bones=3, grid=(6, 5))))
    assert bpy.ops.import_scene.urho3d_mdl(filepath=str(src)) == {"FINISHED"}
    me = next(o for o in bpy.data.objects if o.type == "MESH").data
    model = mdl.read(src.read_bytes())
    file_normals = model.vertex_buffers[0].data["normal0"][:, [0, 2, 1]]  # Y and Z swapped
    got = _corner_normals(me)
    cv = np.empty(len(me.loops), np.int32)
    me.loops.foreach_get("vertex_index", cv)
    source = np.empty(len(me.vertices), np.int32)
    me.attributes["urho:source"].data.foreach_get("value", source)
    want = file_normals[source[cv]]
    if _exact(bpy):
        attr = me.attributes["custom_normal"]
        assert (attr.domain, attr.data_type) == ("POINT", "FLOAT_VECTOR")
        assert np.array_equal(got, want)
    else:
        assert np.allclose(got, want, atol=TOLERANCE_42)


def test_urho3d_normals_round_trip_exactly_through_blender(blank_blend, tmp_path):
    """Without the file's kept normals (``urho:normal``) the exporter writes
    Blender's: the file's own bits on 4.5+."""
    bpy = blank_blend
    model = u3_samples.skinned_model(n_bones=4, grid=(12, 8), morphs=0)
    src = tmp_path / "in.mdl"
    src.write_bytes(mdl.write(model))
    assert bpy.ops.import_scene.urho3d_mdl(filepath=str(src)) == {"FINISHED"}
    for obj in bpy.data.objects:
        if obj.type == "MESH" and NORMAL_ATTRIBUTE in obj.data.attributes:
            obj.data.attributes.remove(obj.data.attributes[NORMAL_ATTRIBUTE])
    out = tmp_path / "out.mdl"
    assert bpy.ops.export_scene.urho3d_mdl(filepath=str(out)) == {"FINISHED"}
    a = model.vertex_buffers[0].data["normal0"]
    b = mdl.read(out.read_bytes()).vertex_buffers[0].data["normal0"]
    assert a.shape == b.shape
    if _exact(bpy):
        assert np.array_equal(a, b)
    else:
        assert np.allclose(a, b, atol=TOLERANCE_42)
