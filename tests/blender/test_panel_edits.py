"""The RigPort panel follows the artist's edits (issue 24 item 5): from the
fingerprint stored at import it says whether the kept Urho3D layout still
matches the mesh and what the next export rebuilds, and says it again once the
edit is reverted."""

from __future__ import annotations

from rigport.io_formats.urho3d import mdl
from rigport.samples import urho3d as usamples
from rigport.tests import edits

MATCHES = "Kept: the kept layout still matches the mesh's faces and positions"
MOVED = (
    "Export: vertices moved: the layout is kept, the bounding box recomputed if a vertex left it"
)
REBUILT = (
    "Export: the mesh's faces changed: the next export rebuilds the vertex buffers "
    "from Blender's mesh"
)


def test_panel_follows_move_extrude_and_revert(blank_blend, tmp_path):
    bpy = blank_blend
    path = tmp_path / "model.mdl"
    path.write_bytes(mdl.write(usamples.skinned_model(n_bones=5, grid=(16, 8), morphs=2)))
    assert bpy.ops.import_scene.urho3d_mdl(filepath=str(path)) == {"FINISHED"}
    mesh = next(o for o in bpy.data.objects if o.type == "MESH")
    saved = mesh.data.copy()  # what undo would bring back

    lines = edits.panel_lines(mesh)
    assert MATCHES in lines
    assert not [x for x in lines if x.startswith("Export:")]

    v = mesh.data.vertices[0]
    v.co.x += 1.0
    lines = edits.panel_lines(mesh)
    assert MOVED in lines
    assert MATCHES not in lines and REBUILT not in lines

    v.co.x -= 1.0
    assert MATCHES in edits.panel_lines(mesh)

    edits.extrude_first_face(mesh)
    lines = edits.panel_lines(mesh)
    assert REBUILT in lines
    assert MATCHES not in lines and MOVED not in lines

    edited = mesh.data
    mesh.data = saved
    bpy.data.meshes.remove(edited)
    lines = edits.panel_lines(mesh)
    assert MATCHES in lines
    assert not [x for x in lines if x.startswith("Export:")]
