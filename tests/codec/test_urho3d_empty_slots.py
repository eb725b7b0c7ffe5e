"""Material slots with no faces, through the codec's export (no Blender): a slot no
LOD level draws gets no geometry (the engine refuses a geometry with no LOD
levels) and the export says so; a slot empty on one level only keeps its place
there with a draw of no indices, so its other levels keep their numbers."""

from __future__ import annotations

import numpy as np

from rigport.io_formats.urho3d import engine_rules, mdl
from rigport.io_formats.urho3d import model_export as export
from rigport.io_formats.urho3d import model_import as imp
from rigport.samples import urho3d as samples


def _emptied() -> tuple[list, list[int], object]:
    """The sample's two levels (three slots each), read by the codec's import, with
    slot 2's faces moved into slot 1 on both levels and slot 0's on level 0 only;
    each level's face count; the skeleton."""
    model = mdl.read(mdl.write(samples.skinned_model(geometries=3, lods=2, grid=(12, 6))))
    scene = imp.import_model(model, "m", all_lods=True)
    lods = [(m.extras["urho_lod"], m) for m in scene.meshes]
    for lod, m in lods:
        assert np.bincount(m.face_materials).tolist()[2] > 0
        m.face_materials = np.where(m.face_materials == 2, 1, m.face_materials)
        if lod == 0:
            m.face_materials = np.where(m.face_materials == 0, 1, m.face_materials)
    return lods, [len(m.face_materials) for _, m in lods], scene.skeleton


def test_empty_slots_are_left_out_or_keep_their_level():
    lods, faces, skeleton = _emptied()
    opts = export.ExportOptions(
        slot_names=("object 'A', material 'a'", "", "object 'A', material 'c'")
    )
    model, warnings = export.export_model(lods, export.file_order(skeleton), opts)
    assert engine_rules.check(model) == []
    assert [len(g.lods) for g in model.geometries] == [2, 2]
    assert [d.index_count for d in model.geometries[0].lods][0] == 0
    assert model.geometries[0].lods[1].index_count > 0
    left_out = [w for w in warnings if "left out" in w]
    assert left_out == [
        "object 'A', material 'c': no faces or edges use it, so it is left out of the model"
    ]

    again = imp.import_model(mdl.read(mdl.write(model)), "m", all_lods=True)
    assert [len(m.face_materials) for m in again.meshes] == faces
    level1 = again.meshes[1]
    assert np.bincount(level1.face_materials).tolist() == [faces[1] // 3, 2 * faces[1] // 3]


def test_unnamed_empty_slot_is_named_by_number():
    lods, _, skeleton = _emptied()
    _, warnings = export.export_model(lods, export.file_order(skeleton), export.ExportOptions())
    assert any(w.startswith("material slot 2") and "left out" in w for w in warnings), warnings


def test_loose_edges_in_a_slot_with_faces_are_left_out_with_a_sentence():
    """Delete Faces (faces only) leaves the face's edges loose in a slot that still
    has faces: a geometry draws one primitive per level, so the edges are left out
    and said, never written as a second LOD level of the geometry."""
    model = mdl.read(mdl.write(samples.skinned_model(grid=(8, 6))))
    scene = imp.import_model(model, "m")
    mesh = scene.meshes[0]
    edges = mesh.corner_verts[:6].reshape(3, 2)
    mesh.loose_edges = np.concatenate([mesh.loose_edges.reshape(-1, 2), edges]).astype(
        mesh.loose_edges.dtype
    )
    out, warnings = export.export_model(
        [(0, mesh)], export.file_order(scene.skeleton), export.ExportOptions()
    )
    assert [len(g.lods) for g in out.geometries] == [1]
    assert out.geometries[0].lods[0].primitive_type == mdl.PRIMITIVE_TRIANGLES
    assert out.geometries[0].lods[0].index_count == 3 * len(mesh.face_materials)
    assert any("3 loose edges left out" in w for w in warnings), warnings
