"""The RigPort panel follows the artist's edits (issue 24 item 5): from the
fingerprint stored at import it says whether the kept Urho3D layout still
matches the mesh and what the next export rebuilds, and says it again once the
edit is reverted."""

from __future__ import annotations

from rigport.io_formats.urho3d import mdl
from rigport.samples import urho3d as usamples

MATCHES = "Kept: the kept layout still matches the mesh's faces and positions"
MOVED = (
    "Export: vertices moved: the layout is kept, the bounding box recomputed if a vertex left it"
)
REBUILT = (
    "Export: the mesh's faces changed: the next export rebuilds the vertex buffers "
    "from Blender's mesh"
)


def _lines(obj) -> list[str]:
    from rigport.ui.report import report_kept

    return report_kept(obj)


def _extrude_first_face(obj) -> None:
    import bmesh

    bm = bmesh.new()
    bm.from_mesh(obj.data)
    bm.faces.ensure_lookup_table()
    out = bmesh.ops.extrude_face_region(bm, geom=[bm.faces[0]])
    moved = [g for g in out["geom"] if isinstance(g, bmesh.types.BMVert)]
    bmesh.ops.translate(bm, verts=moved, vec=(0.0, 0.0, 0.5))
    bm.to_mesh(obj.data)
    bm.free()


def test_panel_follows_move_extrude_and_revert(blank_blend, tmp_path):
    bpy = blank_blend
    path = tmp_path / "model.mdl"
    path.write_bytes(mdl.write(usamples.skinned_model(n_bones=5, grid=(16, 8), morphs=2)))
    assert bpy.ops.import_scene.urho3d_mdl(filepath=str(path)) == {"FINISHED"}
    mesh = next(o for o in bpy.data.objects if o.type == "MESH")
    saved = mesh.data.copy()  # what undo would bring back

    lines = _lines(mesh)
    assert MATCHES in lines
    assert not [x for x in lines if x.startswith("Export:")]

    v = mesh.data.vertices[0]
    v.co.x += 1.0
    lines = _lines(mesh)
    assert MOVED in lines
    assert MATCHES not in lines and REBUILT not in lines

    v.co.x -= 1.0
    assert MATCHES in _lines(mesh)

    _extrude_first_face(mesh)
    lines = _lines(mesh)
    assert REBUILT in lines
    assert MATCHES not in lines and MOVED not in lines

    edited = mesh.data
    mesh.data = saved
    bpy.data.meshes.remove(edited)
    lines = _lines(mesh)
    assert MATCHES in lines
    assert not [x for x in lines if x.startswith("Export:")]
