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
from rigport.tests import edits

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


# -- edits --------------------------------------------------------------------


def _subdivide(bpy, arm, body):
    mod = body.modifiers.new("Subdivision", "SUBSURF")
    mod.levels = 1
    return body, False  # its shape keys cannot be carried through a changed vertex count


def _extrude(bpy, arm, body):
    edits.bm_edit(body, edits.extrude)
    return body, True


def _dissolve(bpy, arm, body):
    edits.bm_edit(body, edits.dissolve)
    return body, True


def _cut_edges(bpy, arm, body):
    edits.bm_edit(body, edits.cut_edges)
    return body, True


def _delete_faces(bpy, arm, body):
    edits.bm_edit(body, edits.delete_faces)
    return body, True


def _join_cube(bpy, arm, body):
    edits.join(bpy, body, edits.cube(bpy, arm, body))
    return body, True


def _join_into_new(bpy, arm, body):
    """The imported mesh joined into a new one: its ``urho:*`` data comes along
    without the layout and fingerprint, which stay on the imported object."""
    cube = edits.cube(bpy, arm, body)
    edits.join(bpy, cube, body)
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
    expected = edits.evaluated(bpy, body)
    offsets = edits.offsets(body) if keeps_keys else {}
    out = tmp_path / "out.mdl"
    _export(bpy, out, [o for o in (arm, body) if o is not None])
    written = mdl.read(out.read_bytes())
    assert engine_rules.check(written) == []
    _assert_tangent_frames(written)

    bpy.ops.wm.read_factory_settings(use_empty=True)
    _, again = _import(bpy, out)
    got = edits.surface(again, again.data)
    edits.assert_same_surface(expected, got)
    if keeps_keys:
        edits.assert_same_offsets(expected[0], offsets, got[0], edits.offsets(again))


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
    expected = edits.evaluated(bpy, cyl)
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
    edits.assert_same_surface(expected, edits.surface(again, again.data))


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
