"""The RigPort panel follows the artist's edits in every format that keeps mesh
data (issue 24 item 5), through the one shared piece (``ui.panel.kept_mesh_rows``):
unedited, it says the kept data still matches; after a vertex moves, that it is
kept and the bounds recomputed; after a face is extruded, what the next export
rebuilds; and again that it matches once the edit is undone. By the fingerprint
a format stores at import, else (no fingerprint) by the import's counts."""

from __future__ import annotations

import pytest

from rigport.io_formats.renderware import dff
from rigport.io_formats.unigine import mesh as gmesh
from rigport.samples import renderware as rsamples
from rigport.samples import unigine as gsamples
from rigport.tests import edits

#: format -> (importer, file bytes, kept module, what is kept, what is rebuilt)
FORMATS = {
    "unigine": (
        "unigine_mesh",
        ".mesh",
        lambda: gmesh.write(gsamples.skinned_mesh(animations=0)),
        "rigport.operators.unigine.kept",
        "the surfaces' kept data",
        "the surfaces' vertices, bounds and weights from Blender's mesh",
    ),
    "renderware": (
        "rw_dff",
        ".dff",
        lambda: dff.write(rsamples.gta_ped()),
        "rigport.operators.renderware.build",
        "the geometry data",
        "the Bin Mesh, spheres and split data from Blender's mesh",
    ),
}


def _import(bpy, tmp_path, fmt: str):
    importer, ext, build, *_ = FORMATS[fmt]
    path = tmp_path / f"model{ext}"
    path.write_bytes(build())
    assert getattr(bpy.ops.import_scene, importer)(filepath=str(path)) == {"FINISHED"}
    return max(
        (o for o in bpy.data.objects if o.type == "MESH"), key=lambda o: len(o.data.vertices)
    )


@pytest.mark.parametrize("fmt", list(FORMATS))
@pytest.mark.parametrize("stored", [True, False], ids=["fingerprint", "counts"])
def test_panel_follows_move_extrude_and_revert(blank_blend, tmp_path, monkeypatch, fmt, stored):
    import importlib

    from rigport.operators.blender import fingerprint

    bpy = blank_blend
    _, _, _, module, kept, rebuilt = FORMATS[fmt]
    kept_module = importlib.import_module(module)
    key = getattr(kept_module, "FINGERPRINT", None)
    obj = _import(bpy, tmp_path, fmt)
    if stored and key is None:  # the format's import stores none yet: as it would
        key = "_rigport_test_fingerprint"
        monkeypatch.setattr(kept_module, "FINGERPRINT", key, raising=False)
        fingerprint.store(obj, key)
    if not stored:
        if key is not None:
            del obj[key]
        monkeypatch.setattr(kept_module, "FINGERPRINT", None, raising=False)
    how = "faces and positions" if stored else "vertex and face counts"
    matches = f"Kept: {kept} still matches the mesh's {how}"
    moved = f"Export: vertices moved: {kept} is kept, bounds recomputed from the mesh"
    changed = f"Export: the mesh's faces changed: the next export rebuilds {rebuilt}"
    saved = obj.data.copy()  # what undo would bring back

    lines = edits.panel_lines(obj)
    assert matches in lines
    assert changed not in lines and moved not in lines

    obj.data.vertices[0].co.x += 1.0
    lines = edits.panel_lines(obj)
    if stored:
        assert moved in lines and matches not in lines
    else:  # without a fingerprint only the counts are compared
        assert matches in lines
    obj.data.vertices[0].co.x -= 1.0

    edits.extrude_first_face(obj)
    lines = edits.panel_lines(obj)
    assert changed in lines
    assert matches not in lines and moved not in lines

    edited = obj.data
    obj.data = saved
    bpy.data.meshes.remove(edited)
    lines = edits.panel_lines(obj)
    assert matches in lines and changed not in lines


def test_panel_draw_hashes_topology_and_positions_only(blank_blend, tmp_path, monkeypatch):
    """Drawing the panel for a mesh with a fingerprint hashes its topology and
    positions, never the parts that need a depsgraph evaluation (weights) or
    more reads (UVs), and nothing at all above ``FULL_COMPARE_LIMIT`` vertices:
    what keeps a draw cheap, checked by what it reads (speed is never a timed
    test)."""
    from rigport.operators.blender import fingerprint
    from rigport.operators.unigine import kept as kept_module
    from rigport.ui import panel

    bpy = blank_blend
    key = getattr(kept_module, "FINGERPRINT", None) or "_rigport_test_fingerprint"
    monkeypatch.setattr(kept_module, "FINGERPRINT", key, raising=False)
    path = tmp_path / "big.mesh"
    path.write_bytes(gmesh.write(gsamples.large_mesh(rings=250, segments=399)))
    assert bpy.ops.import_scene.unigine_mesh(filepath=str(path)) == {"FINISHED"}
    obj = next(o for o in bpy.data.objects if o.type == "MESH")
    assert 50_000 < len(obj.data.vertices) <= panel.FULL_COMPARE_LIMIT
    fingerprint.store(obj, key)
    asked: list[tuple] = []
    compute = fingerprint.compute

    def counting(mesh, parts=None, *args, **kwargs):
        asked.append(tuple(parts) if parts is not None else None)
        return compute(mesh, parts, *args, **kwargs)

    monkeypatch.setattr(fingerprint, "compute", counting)
    lines = edits.panel_lines(obj)
    assert asked == [(fingerprint.TOPOLOGY, fingerprint.POSITIONS)]
    assert any("still matches" in line for line in lines), lines
    asked.clear()
    monkeypatch.setattr(panel, "FULL_COMPARE_LIMIT", len(obj.data.vertices) - 1)
    lines = edits.panel_lines(obj)
    assert asked == []
    assert any("not checked while drawing" in line for line in lines), lines
