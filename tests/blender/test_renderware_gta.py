"""GTA files through Blender (issue 13): what real files hold comes back, edits drop
only what they invalidate, and what a clump cannot hold is left out with a warning."""

from __future__ import annotations

import numpy as np
import pytest

from rigport.io_formats.renderware import clump_import, dff, gta
from rigport.io_formats.renderware.chunks import RawChunk
from rigport.io_formats.urho3d import mdl
from rigport.samples import renderware as samples
from rigport.samples import urho3d as urho_samples
from rigport.tests.support import run_batch


def _import(bpy, tmp_path, f: dff.DffFile, name: str = "in.dff"):
    path = tmp_path / name
    path.write_bytes(dff.write(f))
    from rigport.operators.renderware.clump_importer import ClumpImportOptions, import_clump_file

    options = ClumpImportOptions(use_transform=False)
    warnings = import_clump_file(bpy.context, str(path), options).warnings
    return path, warnings


def _export(bpy, tmp_path, **kw) -> tuple[dff.DffFile, list[str], bytes]:
    from rigport.operators.renderware.clump_exporter import ClumpExportOptions, export_clump_file

    out = tmp_path / "out.dff"
    objects = [o for o in bpy.context.scene.objects if o.type == "MESH"]
    options = ClumpExportOptions(use_transform=False, **kw)
    warnings = export_clump_file(bpy.context, str(out), options, objects).warnings
    data = out.read_bytes()
    return dff.read(data), warnings, data


def _mesh(bpy):
    return next(o for o in bpy.data.objects if o.type == "MESH")


@pytest.mark.parametrize("name", ["gta_ped", "gta_map_prop"])
def test_gta_files_round_trip_byte_identical(blank_blend, tmp_path, name):
    """A skinned atomic on a bone frame, triangle material IDs all 0, zero-area triangles,
    equal weights and bones in empty slots, texture name padding; 2dfx, night colours
    and a breakable model: all come back as they were."""
    bpy = blank_blend
    src = getattr(samples, name)()
    path, warnings = _import(bpy, tmp_path, src)
    if name == "gta_ped":
        assert any("11 zero-area triangles" in w for w in warnings)
    back, exported, data = _export(bpy, tmp_path)
    assert data == path.read_bytes()
    assert not exported
    again = clump_import.import_dff(back, "again")[0]
    assert not any("inverse bind" in w for w in again.warnings)


def test_night_colours_are_a_colour_attribute(blank_blend, tmp_path):
    bpy = blank_blend
    src = samples.gta_map_prop()
    _import(bpy, tmp_path, src)
    me = _mesh(bpy).data
    assert [a.name for a in me.color_attributes] == ["prelit", gta.NIGHT_ATTRIBUTE]
    geo = src.clump.geometries()[0]
    raw = next(c for c in geo.extension.items if getattr(c, "type", 0) == gta.NIGHT_COLORS)
    night = gta.read_night_colors(raw.payload, geo.num_vertices)
    attr = me.color_attributes[gta.NIGHT_ATTRIBUTE]
    col = np.empty(len(attr.data) * 4, np.float32)
    attr.data.foreach_get("color_srgb", col)
    corner = np.empty(len(me.loops), np.int32)
    me.loops.foreach_get("vertex_index", corner)
    np.testing.assert_array_equal(np.rint(col.reshape(-1, 4) * 255), night[corner])


def _delete_faces(bpy, obj, faces: list[int]) -> None:
    import bmesh

    bm = bmesh.new()
    bm.from_mesh(obj.data)
    bm.faces.ensure_lookup_table()
    bmesh.ops.delete(bm, geom=[bm.faces[i] for i in faces], context="FACES_ONLY")
    bm.to_mesh(obj.data)
    bm.free()


def test_deleting_a_face_keeps_2dfx_breakable_and_night_colours(blank_blend, tmp_path):
    bpy = blank_blend
    src = samples.gta_map_prop()
    geo = src.clump.geometries()[0]
    raw = {c.type: c.payload for c in geo.extension.items if isinstance(c, RawChunk)}
    _import(bpy, tmp_path, src)
    obj = _mesh(bpy)
    _delete_faces(bpy, obj, [0])
    # the night colour of one vertex painted over: the edit reaches the file
    attr = obj.data.color_attributes[gta.NIGHT_ATTRIBUTE]
    corner = np.empty(len(obj.data.loops), np.int32)
    obj.data.loops.foreach_get("vertex_index", corner)
    col = np.empty(len(attr.data) * 4, np.float32)
    attr.data.foreach_get("color_srgb", col)
    col = col.reshape(-1, 4)
    col[corner == corner[0]] = (1.0, 0.0, 0.0, 1.0)
    attr.data.foreach_set("color_srgb", col.ravel())
    back, warnings, _ = _export(bpy, tmp_path)
    assert not any("dropped" in w for w in warnings)
    bg = back.clump.geometries()[0]
    assert len(bg.triangles) == len(geo.triangles) - 1
    got = {c.type: c.payload for c in bg.extension.items if isinstance(c, RawChunk)}
    assert got[gta.TWO_DFX] == raw[gta.TWO_DFX]
    assert got[gta.BREAKABLE] == raw[gta.BREAKABLE]
    night = gta.read_night_colors(got[gta.NIGHT_COLORS], bg.num_vertices)
    before = gta.read_night_colors(raw[gta.NIGHT_COLORS], geo.num_vertices)
    red = np.all(night == (255, 0, 0, 255), axis=1)
    assert red.sum() == 1
    # every other vertex keeps its colour (vertices are found by position and prelit)
    pa, pb = geo.morph_targets[0].positions, bg.morph_targets[0].positions
    match = np.all(np.isclose(pa[None], pb[:, None], atol=1e-6), axis=2) & np.all(
        geo.colors[None] == bg.colors[:, None], axis=2
    )
    assert match.any(axis=1).all()
    np.testing.assert_array_equal(night[~red], before[np.argmax(match, axis=1)][~red])


def test_morph_targets_option(blank_blend, tmp_path):
    """As imported by default: a file with one morph target gets one, and the shape key
    added in Blender is left out with a warning; "Every shape key" writes it."""
    bpy = blank_blend
    _import(bpy, tmp_path, samples.gta_ped())
    obj = _mesh(bpy)
    obj.shape_key_add(name="Basis")
    key = obj.shape_key_add(name="smile")
    co = np.empty(len(key.data) * 3, np.float32)
    key.data.foreach_get("co", co)
    key.data.foreach_set("co", co + 0.01)
    back, warnings, _ = _export(bpy, tmp_path)
    assert len(back.clump.geometries()[0].morph_targets) == 1
    assert any("1 shape key left out" in w and "as imported" in w for w in warnings)
    back, warnings, _ = _export(bpy, tmp_path, morph_targets="ALL")
    targets = back.clump.geometries()[0].morph_targets
    assert len(targets) == 2
    np.testing.assert_allclose(targets[1].positions - targets[0].positions, 0.01, atol=1e-6)
    assert not any("left out" in w for w in warnings)
    out = tmp_path / "op.dff"
    assert bpy.ops.export_scene.rw_dff(filepath=str(out), morph_targets="BASE") == {"FINISHED"}
    assert len(dff.read(out.read_bytes()).clump.geometries()[0].morph_targets) == 1


def _lod_model(tmp_path):
    model = urho_samples.skinned_model(n_bones=4, morphs=0, lods=3)
    path = tmp_path / "lods.mdl"
    path.write_bytes(mdl.write(model))
    return path


def test_lods_are_not_written_on_top_of_each_other(blank_blend, tmp_path):
    bpy = blank_blend
    assert bpy.ops.import_scene.urho3d_mdl(filepath=str(_lod_model(tmp_path)), lods="ALL") == {
        "FINISHED"
    }
    meshes = [o for o in bpy.data.objects if o.type == "MESH"]
    assert len(meshes) == 3
    back, warnings, _ = _export(bpy, tmp_path)
    assert len(back.clump.atomics) == 1
    assert any("2 mesh(es) of other LOD levels left out" in w for w in warnings)
    lod0 = next(o for o in meshes if o["urho_lod"] == 0)
    assert back.clump.geometries()[0].num_vertices >= len(lod0.data.vertices)
    # one level alone (Selected Only) is written as it is; levels after 0 come in
    # hidden, and a hidden object cannot be selected: show it first, as an artist would
    for o in meshes:
        o.hide_set(o["urho_lod"] != 2)
        o.select_set(o["urho_lod"] == 2)
    out = tmp_path / "lod2.dff"
    assert bpy.ops.export_scene.rw_dff(filepath=str(out), use_selection=True) == {"FINISHED"}
    assert len(dff.read(out.read_bytes()).clump.atomics) == 1


def test_batch_convert_of_a_model_with_lods_warns(tmp_path):
    out = tmp_path / "lods.dff"
    proc = run_batch("convert", _lod_model(tmp_path), out)
    assert proc.returncode == 0, proc.stderr
    assert "other LOD levels left out" in proc.stdout + proc.stderr
    assert len(dff.read(out.read_bytes()).clump.atomics) == 1


def test_line_primitives_are_left_out_with_a_warning(blank_blend, tmp_path):
    """A Urho3D model with a line list: the triangles are written, the lines are not."""
    bpy = blank_blend
    path = tmp_path / "all.mdl"
    path.write_bytes(mdl.write(urho_samples.all_elements_model()))
    assert bpy.ops.import_scene.urho3d_mdl(filepath=str(path)) == {"FINISHED"}
    assert any(len(o.data.edges) > 0 for o in bpy.data.objects if o.type == "MESH")
    back, warnings, _ = _export(bpy, tmp_path)
    assert any("loose edges (line primitives) left out" in w for w in warnings)
    assert len(back.clump.atomics) >= 1
    assert all(len(g.triangles) for g in back.clump.geometries())


def test_only_lines_is_refused_with_a_sentence(blank_blend, tmp_path):
    bpy = blank_blend
    me = bpy.data.meshes.new("wire")
    me.from_pydata([(0, 0, 0), (1, 0, 0), (1, 1, 0)], [(0, 1), (1, 2)], [])
    obj = bpy.data.objects.new("wire", me)
    bpy.context.collection.objects.link(obj)
    out = tmp_path / "wire.dff"
    with pytest.raises(RuntimeError, match="a clump holds triangles only"):
        bpy.ops.export_scene.rw_dff(filepath=str(out))
    assert not out.exists()
    from rigport.io_formats.codec import FormatError

    with pytest.raises(FormatError, match="a clump holds triangles only"):
        _export(bpy, tmp_path)
