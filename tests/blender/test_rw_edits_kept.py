"""RenderWare's kept geometry data under the shared fingerprint rule, edited as an
artist edits: what still describes the mesh is written back exactly, what does not
is rebuilt (split data after a weight edit, strips after a topology edit), and the
output is read back (by our codec, and by librw and DragonFF where they are here)."""

from __future__ import annotations

import numpy as np
import pytest

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


def _stats(bpy, obj) -> dict:
    """What an artist sees of ``obj``'s evaluated mesh: used vertex positions, the
    triangulated area in all and per material slot, and each used vertex's weights
    (by group name; the 4 strongest, normalised, as a clump holds them), keyed by
    rounded position."""
    depsgraph = bpy.context.evaluated_depsgraph_get()
    ev = obj.evaluated_get(depsgraph)
    me = ev.to_mesh()
    try:
        nv, nt = len(me.vertices), len(me.loop_triangles)
        co = np.empty(nv * 3, np.float32)
        me.vertices.foreach_get("co", co)
        co = co.reshape(-1, 3).astype(np.float64)
        tv = np.empty(nt * 3, np.int64)
        me.loop_triangles.foreach_get("vertices", tv)
        tv = tv.reshape(-1, 3)
        mi = np.empty(nt, np.int64)
        me.loop_triangles.foreach_get("material_index", mi)
        a, b, c = co[tv[:, 0]], co[tv[:, 1]], co[tv[:, 2]]
        area = 0.5 * np.linalg.norm(np.cross(b - a, c - a), axis=1)
        per_material = {k: float(area[mi == k].sum()) for k in range(len(obj.material_slots))}
        used = np.unique(tv)
        groups = {g.index: g.name for g in obj.vertex_groups}
        weights = {}
        for v in used.tolist():
            key = tuple(np.round(co[v], 4).tolist())
            w = sorted(((g.weight, groups[g.group]) for g in me.vertices[v].groups), reverse=True)
            w = [(x, n) for x, n in w[:4] if x > 0]  # a clump holds 4, normalised
            total = sum(x for x, _ in w)
            weights.setdefault(key, {n: round(x / total, 4) for x, n in w})
        return {
            "positions": np.unique(np.round(co[used], 4), axis=0),
            "area": float(area.sum()),
            "per_material": per_material,
            "weights": weights,
        }
    finally:
        ev.to_mesh_clear()


def _same_stats(a: dict, b: dict) -> None:
    np.testing.assert_allclose(a["positions"], b["positions"], atol=2e-4)
    assert a["area"] == pytest.approx(b["area"], rel=1e-5)
    assert sorted(a["per_material"]) == sorted(b["per_material"])
    for k, v in a["per_material"].items():
        assert b["per_material"][k] == pytest.approx(v, rel=1e-5, abs=1e-9)
    assert a["weights"].keys() == b["weights"].keys()
    for k, w in a["weights"].items():
        assert w.keys() == b["weights"][k].keys()
        for g, x in w.items():
            assert b["weights"][k][g] == pytest.approx(x, abs=2e-4)


def _bmesh_edit(obj, edit) -> None:
    import bmesh

    bm = bmesh.new()
    bm.from_mesh(obj.data)
    bm.faces.ensure_lookup_table()
    bm.verts.ensure_lookup_table()
    edit(bm)
    bm.to_mesh(obj.data)
    bm.free()
    obj.data.update()


def _extrude(bpy, obj) -> None:
    import bmesh

    def edit(bm):
        faces = [bm.faces[i] for i in (3, 4, 30)]
        out = bmesh.ops.extrude_face_region(bm, geom=faces)
        verts = [g for g in out["geom"] if isinstance(g, bmesh.types.BMVert)]
        bmesh.ops.translate(bm, vec=(0.0, 0.05, 0.02), verts=verts)

    _bmesh_edit(obj, edit)


def _delete(bpy, obj) -> None:
    """Two vertices deleted with their faces (the vertices after them renumbered)."""
    import bmesh

    def edit(bm):
        n = len(bm.verts)
        bmesh.ops.delete(bm, geom=[bm.verts[n // 2], bm.verts[n - 30]], context="VERTS")

    _bmesh_edit(obj, edit)


def _move(bpy, obj) -> None:
    co = np.empty(len(obj.data.vertices) * 3, np.float32)
    obj.data.vertices.foreach_get("co", co)
    co = co.reshape(-1, 3)
    co[::7] += (0.01, -0.02, 0.03)
    obj.data.vertices.foreach_set("co", co.ravel())
    obj.data.update()


def _subdivide(bpy, obj) -> None:
    mod = obj.modifiers.new("Subdivision", "SUBSURF")
    mod.levels = 1
    mod.subdivision_type = "SIMPLE"


EDITS = {"move": _move, "extrude": _extrude, "delete": _delete, "subdivide": _subdivide}


SOURCES = {
    "ped_strips_SA": lambda: samples.skinned_ped("SA", split=True, strips=True),
    "ped_strips_III": lambda: samples.skinned_ped("III", strips=True, uv_sets=2),
    "gta_ped": samples.gta_ped,
    "gta_prop": samples.gta_map_prop,
    "teapot.dff": None,
    "clump.dff": None,
}


def _source(request, name: str) -> bytes:
    """A corpus file's bytes (skipped without ../shared), else a sample's."""
    if SOURCES[name] is None:
        return (request.getfixturevalue("corpus_dir") / "renderware" / name).read_bytes()
    return dff.write(SOURCES[name]())


def _first_atomic(bpy):
    return next(
        o for o in bpy.context.scene.objects if o.type == "MESH" and o.get("_rw_atomic_index") == 0
    )


@pytest.mark.parametrize("edit", list(EDITS))
@pytest.mark.parametrize("name", list(SOURCES))
def test_edited_clump_reads_back_as_edited(blank_blend, tmp_path, request, name, edit):
    """A clump edited as an artist does: the file read back into an empty scene shows
    the edited mesh (used positions, area per material, weights). Where the file drew
    strips the Bin Mesh is strips again (the file's own while the triangles are
    unchanged), smaller than lists; every Bin Mesh decodes to exactly the geometry's
    drawn triangles and their materials."""
    bpy = blank_blend
    source = _source(request, name)
    had_strips = dff.read(source).clump.geometries()[0].bin_mesh.strips
    _import(bpy, tmp_path, source)
    obj = _first_atomic(bpy)
    EDITS[edit](bpy, obj)
    want = _stats(bpy, obj)
    data, _ = _export(bpy, tmp_path)
    clump = dff.read(data).clump
    geo = clump.atomic_geometry(clump.atomics[0])
    assert geo.bin_mesh.strips == had_strips == bool(geo.flags & TRISTRIP)
    tri = geo.triangles.astype(np.int64)
    drawn = (tri != np.roll(tri, 1, axis=1)).all(axis=1)
    listed = []
    for mat, t in zip(geo.tri_materials[drawn].tolist(), tri[drawn].tolist(), strict=True):
        k = t.index(min(t))
        listed.append((mat, tuple(t[k:] + t[:k])))
    # the triangles; the materials too unless the geometry keeps the file's own IDs
    # (gta_ped's are all 0: there the Bin Mesh alone says, as the re-import checks)
    assert sorted(t for _, t in _decoded(geo)) == sorted(t for _, t in listed)
    if edit != "move" or name != "gta_ped":
        assert _decoded(geo) == sorted(listed)
    if had_strips and edit in ("extrude", "delete", "subdivide"):
        assert len(geo.bin_mesh.to_bytes()) < len(samples_lists(geo))

    bpy.ops.wm.read_factory_settings(use_empty=True)
    _import(bpy, tmp_path, data, "again.dff")
    _same_stats(want, _stats(bpy, _first_atomic(bpy)))


def samples_lists(geo) -> bytes:
    """The Bin Mesh the export wrote before strips were kept: lists."""
    from rigport.io_formats.renderware.geometry import bin_mesh_lists

    n = len(geo.material_list.slot_materials())
    return bin_mesh_lists(geo.triangles, geo.tri_materials, n, geo.stamp).to_bytes()


def _faces_by_position(summary: dict) -> list:
    """DragonFF's faces of its one mesh as (material, corner positions), sorted."""
    mesh = next(o for o in summary["objects"].values() if o["type"] == "MESH")
    pos = np.array(mesh["positions"]).reshape(-1, 3)
    corners = np.array(mesh["corners"]).reshape(-1, 3)
    return sorted(
        (m, tuple(sorted(map(tuple, pos[c].tolist()))))
        for m, c in zip(mesh["face_materials"], corners.tolist(), strict=True)
    )


@pytest.mark.parametrize("edit", ["extrude", "delete"])
def test_clients_read_the_restripped_bin_mesh_as_the_triangles(blank_blend, tmp_path, edit):
    """DragonFF reading the re-stripped Bin Mesh ("Read Material Split") sees the faces
    and materials it sees in the geometry's triangle list; librw reads the file, and
    its own re-write holds the same triangles and materials."""
    from rigport.io_formats.renderware.clump_import import import_dff
    from rigport.tests.clients import dragonff_import, run_rwinfo

    bpy = blank_blend
    _import(bpy, tmp_path, samples.skinned_ped("SA", split=True, strips=True))
    EDITS[edit](bpy, _mesh(bpy))
    data, _ = _export(bpy, tmp_path)
    out = tmp_path / "out.dff"
    assert dff.read(data).clump.geometries()[0].bin_mesh.strips
    from_list = _faces_by_position(dragonff_import(out))
    from_strips = _faces_by_position(dragonff_import(out, mat_split=True))
    assert from_strips == from_list

    info = run_rwinfo(out)
    assert "meshes 2" in info
    rewritten = tmp_path / "librw.dff"
    run_rwinfo(out, rewritten, gta_raw=True)
    ours = import_dff(dff.read(data), "a")[0].scene.meshes[0]
    theirs = import_dff(dff.read(rewritten.read_bytes()), "a")[0].scene.meshes[0]
    np.testing.assert_array_equal(ours.corner_verts, theirs.corner_verts)
    np.testing.assert_array_equal(ours.face_materials, theirs.face_materials)


def _with_duplicate(strips: bool) -> dff.DffFile:
    """The sample ped with triangle 0 once more, the other way round (two-sided), and
    triangle 1 once more as it is; in the Bin Mesh too."""
    src = samples.skinned_ped("SA", strips=strips, split=False)
    geo = src.clump.geometries()[0]
    twins = np.stack([geo.triangles[0, [0, 2, 1]], geo.triangles[1]])
    geo.triangles = np.concatenate([geo.triangles, twins]).astype(geo.triangles.dtype)
    geo.tri_materials = np.concatenate([geo.tri_materials, geo.tri_materials[:2]])
    meshes = geo.bin_mesh.meshes
    for t, m in zip(twins, geo.tri_materials[:2].tolist(), strict=True):
        k = next(k for k, (mat, _) in enumerate(meshes) if mat == m)
        ix = meshes[k][1]
        extra = [ix[-1], t[0], t[0], t[1], t[2]] if strips else list(t)
        if strips and len(ix) % 2:  # keep the next triangle at an even place
            extra = [ix[-1], t[0], t[0], t[0], t[1], t[2]]
        meshes[k] = (m, np.concatenate([ix, extra]).astype(ix.dtype))
    return src


def _twins(geo) -> int:
    """How many triangles have the same three positions as another."""
    pos = geo.morph_targets[0].positions
    keys = [tuple(sorted(map(tuple, pos[t].tolist()))) for t in geo.triangles.tolist()]
    return len(keys) - len(set(keys))


@pytest.mark.parametrize("strips", [False, True], ids=["lists", "strips"])
@pytest.mark.parametrize("edit", ["extrude", "delete"])
def test_duplicates_kept_when_the_vertex_count_changes(blank_blend, tmp_path, edit, strips):
    """Faces extruded (vertices added) or deleted with their vertices (the rest
    renumbered): the file's duplicate triangles are still written, in the triangle
    list and in the Bin Mesh, with no warning about them."""
    bpy = blank_blend
    src = _with_duplicate(strips)
    original = _import(bpy, tmp_path, src)
    assert _export(bpy, tmp_path)[0] == original
    obj = _mesh(bpy)
    nv = len(obj.data.vertices)
    EDITS[edit](bpy, obj)
    assert len(obj.data.vertices) != nv
    data, warnings = _export(bpy, tmp_path)
    assert not any("duplicate" in w for w in warnings)
    geo = dff.read(data).clump.geometries()[0]
    assert _twins(geo) == 2
    assert len(geo.triangles) == len(obj.data.loop_triangles) + 2
    assert len(_decoded(geo)) == len(geo.triangles)


def _unused_sources(corpus_dir) -> dict:
    out = {
        "ped_SA": lambda: samples.skinned_ped("SA", split=True),
        "ped_strips_III": lambda: samples.skinned_ped("III", strips=True, prelit=True),
        "gta_ped": samples.gta_ped,
        "gta_prop": samples.gta_map_prop,
        "static": samples.static_clump,
    }
    return out


UNUSED = ["ped_SA", "ped_strips_III", "gta_ped", "gta_prop", "static", "teapot.dff"]


@pytest.mark.parametrize("name", UNUSED)
def test_unused_vertex_round_trips_byte_identical(blank_blend, tmp_path, request, name):
    """A vertex no triangle uses is kept, with its normal, UVs and colours: the unedited
    round trip through Blender gives the file back byte for byte; after moving other
    vertices it is still written, at its position."""
    bpy = blank_blend
    if name.endswith(".dff"):
        corpus = request.getfixturevalue("corpus_dir")
        f = dff.read((corpus / "renderware" / name).read_bytes())
    else:
        f = _unused_sources(None)[name]()
    src = samples.with_unused_vertex(f)
    original = _import(bpy, tmp_path, src)
    assert _export(bpy, tmp_path)[0] == original

    before = src.clump.geometries()[0]
    was_used = np.zeros(before.num_vertices, bool)
    was_used[before.triangles.astype(np.int64).ravel()] = True
    obj = next(
        o for o in bpy.context.scene.objects if o.type == "MESH" and o.get("_rw_atomic_index") == 0
    )
    obj.data.vertices[0].co.x += 0.01
    obj.data.update()
    geo = dff.read(_export(bpy, tmp_path)[0]).clump.geometries()[0]
    used = np.zeros(geo.num_vertices, bool)
    used[geo.triangles.astype(np.int64).ravel()] = True
    assert int((~used).sum()) == 1
    np.testing.assert_array_equal(
        geo.morph_targets[0].positions[~used], before.morph_targets[0].positions[~was_used]
    )


def test_panel_says_what_the_next_export_rebuilds(blank_blend, tmp_path):
    """The panel follows the edits by the same fingerprint the export compares."""
    from rigport.ui.report import report_kept

    bpy = blank_blend
    _import(bpy, tmp_path, samples.skinned_ped("SA", split=True, strips=True))
    obj = _mesh(bpy)
    assert "Kept: the geometry data still matches the mesh's faces and positions" in (
        report_kept(obj)
    )
    _move(bpy, obj)
    lines = report_kept(obj)
    assert (
        "Export: vertices moved: the geometry data is kept, bounds recomputed from the mesh"
    ) in lines
    _extrude(bpy, obj)
    lines = report_kept(obj)
    assert (
        "Export: the mesh's faces changed: the next export rebuilds the Bin Mesh, spheres and "
        "split data from Blender's mesh (triangle strips again, as the file drew them)"
    ) in lines


def test_duplicates_under_applied_modifiers_go_with_a_warning(blank_blend, tmp_path):
    """A Subdivision modifier applied on export: the evaluated mesh has none of the
    file's duplicate triangles, and the export says so."""
    bpy = blank_blend
    _import(bpy, tmp_path, _with_duplicate(False))
    _subdivide(bpy, _mesh(bpy))
    _, warnings = _export(bpy, tmp_path)
    assert any("duplicate or repeated-vertex triangles are left out" in w for w in warnings)


@pytest.mark.parametrize("name", ["gta_prop", "ped_strips_III"])
def test_unused_vertex_keeps_its_values_after_a_topology_edit(blank_blend, tmp_path, name):
    """Faces extruded elsewhere: the vertex no triangle uses is written with the file's
    normal, UVs, prelit and night colours (found by its position)."""
    from rigport.io_formats.renderware.gta import NIGHT_COLORS, read_night_colors

    bpy = blank_blend
    src = samples.with_unused_vertex(_unused_sources(None)[name]())
    before = dff.read(dff.write(src)).clump.geometries()[0]
    _import(bpy, tmp_path, src)
    _extrude(bpy, _first_atomic(bpy))
    geo = dff.read(_export(bpy, tmp_path)[0]).clump.geometries()[0]

    def lone(g) -> int:
        used = np.zeros(g.num_vertices, bool)
        used[g.triangles.astype(np.int64).ravel()] = True
        (k,) = np.flatnonzero(~used)
        return int(k)

    a, b = lone(before), lone(geo)
    assert geo.num_vertices > before.num_vertices
    np.testing.assert_array_equal(
        geo.morph_targets[0].positions[b], before.morph_targets[0].positions[a]
    )
    if before.morph_targets[0].normals is not None:
        np.testing.assert_array_equal(
            geo.morph_targets[0].normals[b], before.morph_targets[0].normals[a]
        )
    for u, v in zip(geo.uvs, before.uvs, strict=True):
        np.testing.assert_array_equal(u[b], v[a])
    if before.colors is not None:
        np.testing.assert_array_equal(geo.colors[b], before.colors[a])

    def night(g):
        chunk = next(
            (c for c in g.extension.items if getattr(c, "type", None) == NIGHT_COLORS), None
        )
        return None if chunk is None else read_night_colors(chunk.payload, g.num_vertices)

    if night(before) is not None:
        np.testing.assert_array_equal(night(geo)[b], night(before)[a])


def test_weights_fingerprint_follows_weights_not_group_order(blank_blend):
    """The shared fingerprint's weights part: equal for the same weights whatever the
    order of the vertex groups, different after one weight changes or a group is
    renamed; asked for without the object, it says it needs it."""
    from rigport.operators.blender import fingerprint

    bpy = blank_blend
    bpy.ops.mesh.primitive_cube_add()
    obj = bpy.context.active_object
    a, b = obj.vertex_groups.new(name="a"), obj.vertex_groups.new(name="b")
    a.add([0, 1, 2], 0.5, "REPLACE")
    b.add([2, 3], 0.25, "REPLACE")
    first = fingerprint.compute(obj.data, (fingerprint.WEIGHTS,), obj)

    bpy.ops.wm.read_factory_settings(use_empty=True)
    bpy.ops.mesh.primitive_cube_add()
    obj = bpy.context.active_object
    b, a = obj.vertex_groups.new(name="b"), obj.vertex_groups.new(name="a")
    b.add([2, 3], 0.25, "REPLACE")
    a.add([0, 1, 2], 0.5, "REPLACE")
    assert fingerprint.compute(obj.data, (fingerprint.WEIGHTS,), obj) == first
    a.add([1], 0.75, "REPLACE")
    assert fingerprint.compute(obj.data, (fingerprint.WEIGHTS,), obj) != first
    a.add([1], 0.5, "REPLACE")
    assert fingerprint.compute(obj.data, (fingerprint.WEIGHTS,), obj) == first
    a.name = "c"
    assert fingerprint.compute(obj.data, (fingerprint.WEIGHTS,), obj) != first
    with pytest.raises(ValueError, match="needs the object"):
        fingerprint.compute(obj.data, (fingerprint.WEIGHTS,))
