"""Helpers of the edit tests (``test_edits_*.py``, ``test_edit_matrix.py``):
``from rigport.tests.edits import ...``. What an edited mesh is (world positions
and triangles of its evaluated copy, shape-key offsets, weights) and how a file
read back is compared with it; the artist's edits, made through bmesh."""

from __future__ import annotations

import numpy as np


def evaluated(bpy, obj) -> tuple[np.ndarray, np.ndarray]:
    """World positions and triangle vertex indices of ``obj`` as its modifiers
    (not the Armature's) make it."""
    saved = [(m, m.show_viewport) for m in obj.modifiers if m.type == "ARMATURE"]
    for m, _ in saved:
        m.show_viewport = False
    try:
        depsgraph = bpy.context.evaluated_depsgraph_get()
        ev = obj.evaluated_get(depsgraph)
        me = ev.to_mesh()
        try:
            return surface(obj, me)
        finally:
            ev.to_mesh_clear()
    finally:
        for m, shown in saved:
            m.show_viewport = shown


def surface(obj, me) -> tuple[np.ndarray, np.ndarray]:
    """World positions and triangle vertex indices of ``me`` placed as ``obj``."""
    n = len(me.vertices)
    co = np.empty(n * 3, np.float32)
    me.vertices.foreach_get("co", co)
    m = np.array(obj.matrix_world, np.float64)
    world = co.reshape(n, 3) @ m[:3, :3].T + m[:3, 3]
    me.calc_loop_triangles()
    tris = np.empty(len(me.loop_triangles) * 3, np.int32)
    me.loop_triangles.foreach_get("vertices", tris)
    return world, tris.reshape(-1, 3)


def area(world: np.ndarray, tris: np.ndarray) -> float:
    a, b, c = (world[tris[:, k]] for k in range(3))
    return float(0.5 * np.linalg.norm(np.cross(b - a, c - a), axis=1).sum())


def nearest(points: np.ndarray, onto: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(distance, index) of the nearest point of ``onto`` for each of ``points``."""
    from mathutils.kdtree import KDTree

    tree = KDTree(len(onto))
    for i, p in enumerate(onto):
        tree.insert(p, i)
    tree.balance()
    found = [tree.find(p) for p in points]
    return np.array([f[2] for f in found]), np.array([f[1] for f in found], np.int64)


def assert_same_surface(expected: tuple, got: tuple) -> None:
    """Every used vertex of the edit is in the file and the other way round, and
    the triangulated surface areas agree."""
    (pos_e, tris_e), (pos_g, tris_g) = expected, got
    used_e = pos_e[np.unique(tris_e)]
    used_g = pos_g[np.unique(tris_g)]
    scale = max(1.0, float(np.abs(used_e).max()))
    tol = 1e-5 * scale
    missing = nearest(used_e, used_g)[0]
    extra = nearest(used_g, used_e)[0]
    assert missing.max() <= tol, (
        f"{int((missing > tol).sum())} of {len(used_e)} edited vertices are missing in the file "
        f"(off by up to {missing.max():.4g})"
    )
    assert extra.max() <= tol, (
        f"the file holds {int((extra > tol).sum())} vertices not in the edit "
        f"(off by up to {extra.max():.4g})"
    )
    area_e, area_g = area(pos_e, tris_e), area(pos_g, tris_g)
    assert abs(area_g - area_e) <= 1e-4 * area_e, (area_e, area_g)


def offsets(obj) -> dict[str, np.ndarray]:
    """Each shape key's offset from the basis, per vertex, in world space."""
    keys = obj.data.shape_keys
    if keys is None:
        return {}
    n = len(obj.data.vertices)
    base = np.empty(n * 3, np.float32)
    keys.key_blocks[0].data.foreach_get("co", base)
    out = {}
    m = np.array(obj.matrix_world, np.float64)[:3, :3]
    for kb in keys.key_blocks[1:]:
        co = np.empty(n * 3, np.float32)
        kb.data.foreach_get("co", co)
        out[kb.name] = (co - base).reshape(n, 3) @ m.T
    return out


def assert_same_offsets(pos_e, expected: dict, pos_g, got: dict) -> None:
    """The same shape keys, each vertex read back moved as the edited vertex at
    its place."""
    assert set(got) == set(expected)
    if not got:
        return
    _, at = nearest(pos_g, pos_e)
    for name, moved in got.items():
        assert np.abs(moved - expected[name][at]).max() <= 1e-4, name


def bm_edit(obj, edit) -> None:
    """Run ``edit(bm)`` on ``obj``'s mesh through bmesh (shape keys follow)."""
    import bmesh

    bm = bmesh.new()
    bm.from_mesh(obj.data)
    bm.verts.ensure_lookup_table()
    bm.faces.ensure_lookup_table()
    bm.edges.ensure_lookup_table()
    edit(bm)
    bm.to_mesh(obj.data)
    bm.free()
    obj.data.update()


def extrude(bm) -> None:
    """Every 20th face's region pushed out."""
    import bmesh

    faces = bm.faces[: max(1, len(bm.faces) // 20)]
    made = bmesh.ops.extrude_face_region(bm, geom=list(faces))
    verts = [g for g in made["geom"] if isinstance(g, bmesh.types.BMVert)]
    bmesh.ops.translate(bm, vec=(0.0, 0.0, 0.05), verts=verts)


def dissolve(bm) -> None:
    """Inner vertices dissolved: n-gons."""
    import bmesh

    inner = [v for v in bm.verts if len(v.link_faces) >= 5 and not v.is_boundary and v.is_manifold]
    bmesh.ops.dissolve_verts(bm, verts=inner[: max(1, len(inner) // 50)])
    assert max(len(f.verts) for f in bm.faces) > 4  # an n-gon


def cut_edges(bm) -> None:
    import bmesh

    edges = [e for e in bm.edges if not e.is_boundary][:: max(1, len(bm.edges) // 40)]
    bmesh.ops.subdivide_edges(bm, edges=edges, cuts=1, use_grid_fill=True)


def delete_faces(bm) -> None:
    import bmesh

    bmesh.ops.delete(bm, geom=list(bm.faces[: len(bm.faces) // 10]), context="FACES")


def cube(bpy, arm, body):
    """A new cube above ``body``, parented to ``arm`` and weighted to its first bone."""
    import bmesh
    from mathutils import Vector

    me = bpy.data.meshes.new("cube")
    bm = bmesh.new()
    bmesh.ops.create_cube(bm, size=0.3)
    bm.to_mesh(me)
    bm.free()
    obj = bpy.data.objects.new("cube", me)
    bpy.context.scene.collection.objects.link(obj)
    obj.location = body.matrix_world @ Vector((0.0, 0.0, 0.5))
    if arm is not None:
        obj.parent = arm
        obj.matrix_parent_inverse = arm.matrix_world.inverted()
        group = obj.vertex_groups.new(name=arm.data.bones[0].name)
        group.add(list(range(len(me.vertices))), 1.0, "REPLACE")
        obj.modifiers.new("Armature", "ARMATURE").object = arm
    return obj


def join(bpy, into, other) -> None:
    """``other`` joined into ``into`` as Ctrl+J does."""
    for o in bpy.context.view_layer.objects:
        o.select_set(o in (into, other))
    bpy.context.view_layer.objects.active = into
    assert bpy.ops.object.join() == {"FINISHED"}


def panel_lines(obj) -> list[str]:
    """The RigPort panel's report of ``obj``, a line per row."""
    from rigport.ui.report import report_kept

    return report_kept(obj)


def extrude_first_face(obj) -> None:
    """Extrude the mesh's first face 0.5 up, as an artist would in edit mode."""
    import bmesh

    bm = bmesh.new()
    bm.from_mesh(obj.data)
    bm.faces.ensure_lookup_table()
    out = bmesh.ops.extrude_face_region(bm, geom=[bm.faces[0]])
    moved = [g for g in out["geom"] if isinstance(g, bmesh.types.BMVert)]
    bmesh.ops.translate(bm, verts=moved, vec=(0.0, 0.0, 0.5))
    bm.to_mesh(obj.data)
    bm.free()
