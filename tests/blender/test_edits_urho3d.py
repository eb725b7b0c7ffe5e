"""Urho3D edits as an artist makes them (Subdivision applied on export, extrude,
dissolve into an n-gon, cut edges, delete faces, join a new mesh), exported with
default options and read back into an empty scene: the file holds the edited,
evaluated mesh (every used vertex position, the triangulated surface area, the
shape-key offsets) and passes the engine's rules. Unedited models still come back
byte for byte; a fresh cylinder (n-gon caps) exports to Urho3D and Unigine."""

from __future__ import annotations

import numpy as np
import pytest

from rigport.io_formats.unigine import mesh as unigine_mesh
from rigport.io_formats.urho3d import engine_rules, mdl
from rigport.samples import urho3d as samples

#: 66 bones (a bone mapping per geometry), two morphs, two UV sets, three geometries.
SAMPLE = {"n_bones": 66, "morphs": 2, "geometries": 3, "grid": (24, 10)}


@pytest.fixture(params=["jack", "sample"])
def source(request, corpus_dir_or_none) -> bytes:
    """The rigged model an edit starts from: the corpus's Jack, or the sample."""
    if request.param == "jack":
        if corpus_dir_or_none is None:
            pytest.skip("../shared/corpus not present")
        return (corpus_dir_or_none / "urho3d" / "Jack.mdl").read_bytes()
    return mdl.write(samples.skinned_model(**SAMPLE))


@pytest.fixture
def corpus_dir_or_none(request):
    """`corpus_dir`, or None where the corpus is absent (the sample still runs)."""
    try:
        return request.getfixturevalue("corpus_dir")
    except pytest.skip.Exception:
        return None


def _import(bpy, path) -> tuple:
    before = set(bpy.data.objects)
    assert bpy.ops.import_scene.urho3d_mdl(filepath=str(path)) == {"FINISHED"}
    new = [o for o in bpy.data.objects if o not in before]
    body = min(
        (o for o in new if o.type == "MESH" and int(o.get("urho_lod", 0)) == 0),
        key=lambda o: o.name,
    )
    arm = next((o for o in new if o.type == "ARMATURE"), None)
    return arm, body


def _export(bpy, path, objects, idname: str = "urho3d_mdl") -> None:
    for o in bpy.context.view_layer.objects:
        o.select_set(o in objects)
    bpy.context.view_layer.objects.active = objects[-1]
    op = getattr(bpy.ops.export_scene, idname)
    assert op(filepath=str(path), use_selection=True) == {"FINISHED"}


def _evaluated(bpy, obj) -> tuple[np.ndarray, np.ndarray]:
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
            return _surface(obj, me)
        finally:
            ev.to_mesh_clear()
    finally:
        for m, shown in saved:
            m.show_viewport = shown


def _surface(obj, me) -> tuple[np.ndarray, np.ndarray]:
    n = len(me.vertices)
    co = np.empty(n * 3, np.float32)
    me.vertices.foreach_get("co", co)
    m = np.array(obj.matrix_world, np.float64)
    world = co.reshape(n, 3) @ m[:3, :3].T + m[:3, 3]
    me.calc_loop_triangles()
    tris = np.empty(len(me.loop_triangles) * 3, np.int32)
    me.loop_triangles.foreach_get("vertices", tris)
    return world, tris.reshape(-1, 3)


def _assert_tangent_frames(model: mdl.Model, orthogonal: bool = False) -> None:
    """Every written tangent is a unit vector with a bitangent sign of +-1;
    ``orthogonal``: at right angles to its normal too (a mesh with usable UVs
    everywhere and no vertex merged across corners: not Jack's degenerate UVs)."""
    for vb in model.vertex_buffers:
        names = vb.data.dtype.names
        normal = next((n for n in names if n.lower().startswith("normal")), None)
        tangent = next((n for n in names if n.lower().startswith("tangent")), None)
        if normal is None or tangent is None:
            continue
        t = vb.data[tangent].astype(np.float64)
        n = vb.data[normal].astype(np.float64)
        assert np.allclose(np.linalg.norm(t[:, :3], axis=1), 1.0, atol=1e-3)
        if orthogonal:
            assert np.abs(np.einsum("ij,ij->i", t[:, :3], n)).max() < 1e-2
        assert np.allclose(np.abs(t[:, 3]), 1.0)


def _area(world: np.ndarray, tris: np.ndarray) -> float:
    a, b, c = (world[tris[:, k]] for k in range(3))
    return float(0.5 * np.linalg.norm(np.cross(b - a, c - a), axis=1).sum())


def _nearest(points: np.ndarray, onto: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(distance, index) of the nearest point of ``onto`` for each of ``points``."""
    from mathutils.kdtree import KDTree

    tree = KDTree(len(onto))
    for i, p in enumerate(onto):
        tree.insert(p, i)
    tree.balance()
    found = [tree.find(p) for p in points]
    return np.array([f[2] for f in found]), np.array([f[1] for f in found], np.int64)


def _assert_same_surface(expected: tuple, got: tuple) -> None:
    (pos_e, tris_e), (pos_g, tris_g) = expected, got
    used_e = pos_e[np.unique(tris_e)]
    used_g = pos_g[np.unique(tris_g)]
    scale = max(1.0, float(np.abs(used_e).max()))
    tol = 1e-5 * scale
    assert _nearest(used_e, used_g)[0].max() <= tol, "an edited vertex is missing in the file"
    assert _nearest(used_g, used_e)[0].max() <= tol, "the file holds a vertex not in the edit"
    area_e, area_g = _area(pos_e, tris_e), _area(pos_g, tris_g)
    assert abs(area_g - area_e) <= 1e-4 * area_e, (area_e, area_g)


def _offsets(obj) -> dict[str, np.ndarray]:
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


def _assert_same_offsets(pos_e, expected: dict, pos_g, got: dict) -> None:
    """The same shape keys, each vertex read back moved as the edited vertex at
    its place."""
    assert set(got) == set(expected)
    if not got:
        return
    _, at = _nearest(pos_g, pos_e)
    for name, offsets in got.items():
        assert np.abs(offsets - expected[name][at]).max() <= 1e-4, name


# -- edits --------------------------------------------------------------------


def _bm_edit(bpy, obj, edit) -> None:
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


def _subdivide(bpy, arm, body):
    mod = body.modifiers.new("Subdivision", "SUBSURF")
    mod.levels = 1
    return body, False  # its shape keys cannot be carried through a changed vertex count


def _extrude(bpy, arm, body):
    import bmesh

    def edit(bm):
        faces = bm.faces[: max(1, len(bm.faces) // 20)]
        made = bmesh.ops.extrude_face_region(bm, geom=list(faces))
        verts = [g for g in made["geom"] if isinstance(g, bmesh.types.BMVert)]
        bmesh.ops.translate(bm, vec=(0.0, 0.0, 0.05), verts=verts)

    _bm_edit(bpy, body, edit)
    return body, True


def _dissolve(bpy, arm, body):
    import bmesh

    def edit(bm):
        inner = [
            v for v in bm.verts if len(v.link_faces) >= 5 and not v.is_boundary and v.is_manifold
        ]
        bmesh.ops.dissolve_verts(bm, verts=inner[: max(1, len(inner) // 50)])
        assert max(len(f.verts) for f in bm.faces) > 4  # an n-gon

    _bm_edit(bpy, body, edit)
    return body, True


def _cut_edges(bpy, arm, body):
    import bmesh

    def edit(bm):
        edges = [e for e in bm.edges if not e.is_boundary][:: max(1, len(bm.edges) // 40)]
        bmesh.ops.subdivide_edges(bm, edges=edges, cuts=1, use_grid_fill=True)

    _bm_edit(bpy, body, edit)
    return body, True


def _delete_faces(bpy, arm, body):
    import bmesh

    def edit(bm):
        bmesh.ops.delete(bm, geom=list(bm.faces[: len(bm.faces) // 10]), context="FACES")

    _bm_edit(bpy, body, edit)
    return body, True


def _cube(bpy, arm, body):
    """A new cube above ``body``, parented to ``arm`` and weighted to its first bone."""
    import bmesh
    from mathutils import Vector

    me = bpy.data.meshes.new("cube")
    bm = bmesh.new()
    bmesh.ops.create_cube(bm, size=0.3)
    bm.to_mesh(me)
    bm.free()
    cube = bpy.data.objects.new("cube", me)
    bpy.context.scene.collection.objects.link(cube)
    cube.location = body.matrix_world @ Vector((0.0, 0.0, 0.5))
    if arm is not None:
        cube.parent = arm
        cube.matrix_parent_inverse = arm.matrix_world.inverted()
        group = cube.vertex_groups.new(name=arm.data.bones[0].name)
        group.add(list(range(len(me.vertices))), 1.0, "REPLACE")
        cube.modifiers.new("Armature", "ARMATURE").object = arm
    return cube


def _join(bpy, into, other) -> None:
    for o in bpy.context.view_layer.objects:
        o.select_set(o in (into, other))
    bpy.context.view_layer.objects.active = into
    assert bpy.ops.object.join() == {"FINISHED"}


def _join_cube(bpy, arm, body):
    _join(bpy, body, _cube(bpy, arm, body))
    return body, True


def _join_into_new(bpy, arm, body):
    """The imported mesh joined into a new one: its ``urho:*`` data comes along
    without the layout and fingerprint, which stay on the imported object."""
    cube = _cube(bpy, arm, body)
    _join(bpy, cube, body)
    return cube, False


EDITS = {
    "subdivision": _subdivide,
    "extrude": _extrude,
    "dissolve-ngon": _dissolve,
    "cut-edges": _cut_edges,
    "delete-faces": _delete_faces,
    "join-cube": _join_cube,
    "join-into-new": _join_into_new,
}


@pytest.mark.parametrize("edit", list(EDITS))
def test_edit_exports_the_edited_mesh(blank_blend, tmp_path, source, edit):
    bpy = blank_blend
    src = tmp_path / "in.mdl"
    src.write_bytes(source)
    arm, body = _import(bpy, src)
    body, keeps_keys = EDITS[edit](bpy, arm, body)
    expected = _evaluated(bpy, body)
    offsets = _offsets(body) if keeps_keys else {}
    out = tmp_path / "out.mdl"
    _export(bpy, out, [o for o in (arm, body) if o is not None])
    written = mdl.read(out.read_bytes())
    assert engine_rules.check(written) == []
    _assert_tangent_frames(written)

    bpy.ops.wm.read_factory_settings(use_empty=True)
    _, again = _import(bpy, out)
    got = _surface(again, again.data)
    _assert_same_surface(expected, got)
    if keeps_keys:
        _assert_same_offsets(expected[0], offsets, got[0], _offsets(again))


def test_rebuilt_layout_is_said(blank_blend, tmp_path):
    from rigport.operators.urho3d.model_exporter import ModelExportOptions, export_mdl

    bpy = blank_blend
    src = tmp_path / "in.mdl"
    src.write_bytes(mdl.write(samples.skinned_model(**SAMPLE)))
    arm, body = _import(bpy, src)
    body, _ = _extrude(bpy, arm, body)
    result = export_mdl(bpy.context, str(tmp_path / "o.mdl"), [body], ModelExportOptions())
    assert any("topology changed" in m.text for m in result.messages)
    assert not result.warnings


@pytest.mark.parametrize("which", ["jack", "sample"])
def test_unedited_model_is_byte_identical(blank_blend, tmp_path, corpus_dir_or_none, which):
    """Byte for byte: the corpus's Jack (every LOD) and the sample without morphs
    (the sample's morph offsets are not float32 differences of absolute
    positions, which is what Blender's shape keys hold)."""
    bpy = blank_blend
    if which == "jack":
        if corpus_dir_or_none is None:
            pytest.skip("../shared/corpus not present")
        source = (corpus_dir_or_none / "urho3d" / "Jack.mdl").read_bytes()
    else:
        source = mdl.write(samples.skinned_model(**{**SAMPLE, "morphs": 0}))
    src = tmp_path / "in.mdl"
    src.write_bytes(source)
    arm, body = _import(bpy, src)
    out = tmp_path / "out.mdl"
    assert bpy.ops.export_scene.urho3d_mdl(filepath=str(out)) == {"FINISHED"}
    assert out.read_bytes() == source


@pytest.mark.parametrize("target", ["urho3d_mdl", "unigine_mesh"])
def test_fresh_cylinder_with_ngon_caps(blank_blend, tmp_path, target):
    """n-gon caps: tangents computed on their triangles."""
    bpy = blank_blend
    bpy.ops.mesh.primitive_cylinder_add(vertices=12, radius=0.5, depth=2.0)
    cyl = bpy.context.active_object
    assert max(len(p.vertices) for p in cyl.data.polygons) == 12
    expected = _evaluated(bpy, cyl)
    ext = ".mdl" if target == "urho3d_mdl" else ".mesh"
    out = tmp_path / f"cylinder{ext}"
    _export(bpy, out, [cyl], target)
    if target == "urho3d_mdl":
        written = mdl.read(out.read_bytes())
        assert engine_rules.check(written) == []
        _assert_tangent_frames(written, orthogonal=True)
        assert any("tangent" in n.lower() for n in written.vertex_buffers[0].data.dtype.names)
    else:
        unigine_mesh.read(out.read_bytes())
    bpy.ops.wm.read_factory_settings(use_empty=True)
    importer = getattr(bpy.ops.import_scene, target)
    assert importer(filepath=str(out)) == {"FINISHED"}
    again = next(o for o in bpy.data.objects if o.type == "MESH")
    _assert_same_surface(expected, _surface(again, again.data))


def test_fingerprint_names_what_changed(blank_blend, tmp_path):
    """The import's fingerprint: nothing changed, then positions alone (moving a
    vertex), then the topology (extruding); a fresh mesh has none."""
    from rigport.operators.blender import fingerprint
    from rigport.operators.urho3d.kept import FINGERPRINT

    bpy = blank_blend
    src = tmp_path / "in.mdl"
    src.write_bytes(mdl.write(samples.skinned_model(**SAMPLE)))
    arm, body = _import(bpy, src)
    assert fingerprint.changed(body, FINGERPRINT) == set()
    body.data.vertices[0].co.x += 0.5
    assert fingerprint.changed(body, FINGERPRINT) == {fingerprint.POSITIONS}
    assert not fingerprint.topology_changed(body, FINGERPRINT)
    _extrude(bpy, arm, body)
    assert fingerprint.topology_changed(body, FINGERPRINT)
    assert fingerprint.TOPOLOGY in fingerprint.changed(body, FINGERPRINT)
    bpy.ops.mesh.primitive_cube_add()
    assert fingerprint.changed(bpy.context.active_object, FINGERPRINT) is None
