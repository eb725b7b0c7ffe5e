"""What real GTA files hold and the round trip without Blender must keep (issue 13)."""

from __future__ import annotations

import numpy as np
import pytest

from rigport.io_formats.renderware import clump_export, clump_import, dff, gta
from rigport.io_formats.renderware.chunks import RawChunk
from rigport.io_formats.renderware.extension import Extension
from rigport.samples import renderware as samples


def _round_trip(f: dff.DffFile, **kw) -> tuple[dff.DffFile, list[str], list[str]]:
    imp = clump_import.import_dff(f, "x")[0]
    out, warnings = clump_export.export_clump(
        clump_export.from_imported(imp), imp.scene.extras["rw_stamp"], **kw
    )
    return out, imp.warnings, warnings


def test_gta_ped_round_trip_is_byte_identical():
    f = samples.gta_ped()
    out, imported, exported = _round_trip(f)
    assert dff.write(out) == dff.write(f)
    assert not exported
    assert any("zero-area triangles" in w for w in imported)
    assert not any("inverse bind" in w for w in imported)


def test_gta_map_prop_round_trip_is_byte_identical():
    f = samples.gta_map_prop()
    out, imported, exported = _round_trip(f)
    assert dff.write(out) == dff.write(f)
    assert not exported


def test_triangle_material_ids_as_the_file_has_them():
    f = samples.gta_ped()
    geo = f.clump.geometries()[0]
    assert not geo.tri_materials.any()  # the Bin Mesh alone splits the materials
    imp = clump_import.import_dff(f, "x")[0]
    assert imp.scene.meshes[0].face_materials.any()
    out, _, _ = _round_trip(f)
    assert not out.clump.geometries()[0].tri_materials.any()
    # non-zero IDs that differ from the Bin Mesh are kept as well
    geo.tri_materials[::3] = 1
    out, _, _ = _round_trip(f)
    np.testing.assert_array_equal(out.clump.geometries()[0].tri_materials, geo.tri_materials)


def test_texture_name_and_mask_padding_kept():
    f = samples.gta_ped()
    out, _, _ = _round_trip(f)
    tex = out.clump.geometries()[0].material_list.materials[0].texture
    assert tex.name.raw == b"ped_skin\0\xcd\xcd\xcd"
    assert tex.mask.raw == b"m\0\x12\x34"


def test_skin_slots_as_stored():
    """Equal weights keep their order, zero-weight slots the bones the file named."""
    f = samples.gta_ped()
    skin = f.clump.geometries()[0].skin
    assert (skin.indices[:12, 0] > skin.indices[:12, 1]).all()
    assert (skin.indices[:12, 2:] != 0).all()
    out, _, _ = _round_trip(f)
    back = out.clump.geometries()[0].skin
    np.testing.assert_array_equal(back.indices, skin.indices)
    np.testing.assert_array_equal(back.weights, skin.weights)


def test_changed_weights_are_written_strongest_first():
    f = samples.gta_ped()
    imp = clump_import.import_dff(f, "x")[0]
    mesh = imp.scene.meshes[0]
    mesh.skin.weights[:12] = (0.25, 0.75, 0.0, 0.0)  # no longer an order the file had
    out, _ = clump_export.export_clump(clump_export.from_imported(imp), "SA")
    s = out.clump.geometries()[0].skin
    assert (np.diff(s.weights, axis=1) <= 0).all()
    np.testing.assert_array_equal(s.indices[:12, 2:], 0)


def test_normals_at_zero_area_triangles_as_stored():
    f = samples.gta_ped()
    geo = f.clump.geometries()[0]
    flat = clump_import.zero_area(geo.morph_targets[0].positions, geo.triangles)
    assert flat.sum() == 11
    imp = clump_import.import_dff(f, "x")[0]
    # per corner, as an export reads them from Blender (the import gives them per vertex)
    mesh = imp.scene.meshes[0] = imp.scene.meshes[0].with_corner_normals()
    # Blender's custom normals there: zero or some other length (what it gives back)
    mesh.normals[np.repeat(flat, 3)] *= 0.66
    out, _ = clump_export.export_clump(clump_export.from_imported(imp), "SA")
    back = out.clump.geometries()[0]
    assert back.num_vertices == geo.num_vertices
    np.testing.assert_array_equal(back.morph_targets[0].normals, geo.morph_targets[0].normals)


@pytest.mark.parametrize("where", ["none", "two"])
def test_clump_extensions_as_the_file_has_them(where):
    f = samples.static_clump("SA")
    clump = f.clump
    exts = [i for i in clump.items if isinstance(i, Extension)]
    assert len(exts) == 1
    if where == "none":
        clump.items.remove(exts[0])
    else:  # a second, empty extension at the end, with an older stamp
        clump.items.append(Extension(0x0C02FFFF))
    data = dff.write(f)
    out, _, _ = _round_trip(dff.read(data))
    assert dff.write(out) == data
    kinds = [type(i).__name__ if not isinstance(i, RawChunk) else i.type for i in out.clump.items]
    assert kinds.count("Extension") == (0 if where == "none" else 2)


def _without_last_triangle(imp: clump_import.ImportedClump) -> None:
    mesh = imp.scene.meshes[0]
    n = len(mesh.corner_verts) - 3
    mesh.corner_verts = mesh.corner_verts[:n]
    mesh.face_starts = mesh.face_starts[:-1]
    mesh.face_materials = mesh.face_materials[:-1]
    mesh.normals = mesh.normals[:n]
    for u in mesh.uv_sets:
        u.uv = u.uv[:n]
    for c in mesh.colors:
        c.color = c.color[:n]


def test_an_edit_keeps_2dfx_breakable_and_night_colours():
    f = samples.gta_map_prop()
    geo = f.clump.geometries()[0]
    raw = {c.type: c for c in geo.extension.items if isinstance(c, RawChunk)}
    imp = clump_import.import_dff(f, "x")[0]
    mesh = imp.scene.meshes[0]
    assert [c.name for c in mesh.colors] == ["prelit", gta.NIGHT_ATTRIBUTE]
    _without_last_triangle(imp)
    out, warnings = clump_export.export_clump(clump_export.from_imported(imp), "SA")
    assert not any("dropped" in w for w in warnings)
    back = out.clump.geometries()[0]
    assert len(back.triangles) == len(geo.triangles) - 1
    got = {c.type: c for c in back.extension.items if isinstance(c, RawChunk)}
    for kind in (gta.TWO_DFX, gta.BREAKABLE):
        assert got[kind].payload == raw[kind].payload
    night = gta.read_night_colors(raw[gta.NIGHT_COLORS].payload, geo.num_vertices)
    again = gta.read_night_colors(got[gta.NIGHT_COLORS].payload, back.num_vertices)
    # the same colour at the same position, vertex by vertex
    pa, pb = geo.morph_targets[0].positions, back.morph_targets[0].positions
    match = np.all(pa[None, :, :] == pb[:, None, :], axis=2) & np.all(
        geo.colors[None, :, :] == back.colors[:, None, :], axis=2
    )
    src = np.argmax(match, axis=1)
    assert match.any(axis=1).all()
    np.testing.assert_array_equal(again, night[src])
    # an unknown per-vertex plugin is still dropped, with the reason
    geo.extension.items.append(RawChunk(samples.UNKNOWN_PLUGIN, geo.stamp, b"1234"))
    imp = clump_import.import_dff(f, "x")[0]
    _without_last_triangle(imp)
    _, warnings = clump_export.export_clump(clump_export.from_imported(imp), "SA")
    assert any("0x253F2F0" in w and "dropped" in w for w in warnings)


def test_night_colours_chunk_without_colours_stays_raw():
    payload = (0).to_bytes(4, "little")
    assert gta.read_night_colors(payload, 10) is None
    assert gta.read_night_colors(gta.night_colors_payload(np.zeros((3, 4))), 4) is None


@pytest.mark.parametrize(
    ("mode", "count"), [("AUTO", 3), ("BASE", 1), ("ALL", 4)], ids=["auto", "base", "all"]
)
def test_morph_targets_option(mode, count):
    f = samples.skinned_ped("SA", morphs=2)
    imp = clump_import.import_dff(f, "x")[0]
    mesh = imp.scene.meshes[0]
    mesh.morphs.append(type(mesh.morphs[0])("added", mesh.morphs[0].position_offsets * 2))
    out, warnings = clump_export.export_clump(clump_export.from_imported(imp), "SA", mode)
    assert len(out.clump.geometries()[0].morph_targets) == count
    left = [w for w in warnings if "left out (Shape Keys: " in w]
    assert len(left) == (0 if mode == "ALL" else 1)


def test_a_new_mesh_gets_one_morph_target_by_default():
    f = samples.static_clump("SA")  # built with a shape key on its first mesh ("ALL")
    assert len(f.clump.geometries()[0].morph_targets) == 2
    imp = clump_import.import_dff(f, "x")[0]
    for m in imp.scene.meshes:
        m.extras.pop("rw_geometry")
    out, warnings = clump_export.export_clump(clump_export.from_imported(imp), "SA")
    assert [len(g.morph_targets) for g in out.clump.geometries()] == [1, 1, 1]
    assert any("1 shape key left out" in w for w in warnings)
