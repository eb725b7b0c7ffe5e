"""Unigine's lines of the RigPort panel: what the file's data kept on an object
means for the asset (``ui/report.py`` gathers every format's ``describe``)."""

from __future__ import annotations

from ...io_formats.unigine.mesh_import import ANIMATIONS_KEY
from ...io_formats.unigine.mesh_kept import KEPT_KEY, parse
from ...ui.report import Report, json_value, n, plural
from ..blender import fingerprint, kept_keys
from ..blender.extract import read_prop
from .kept import FINGERPRINT

#: Above this many vertices draw() does not hash the mesh (as the Urho3D lines).
FULL_COMPARE_LIMIT = 100_000


def describe(obj, r: Report) -> None:
    surfaces = json_value(read_prop(obj, "unigine_surfaces"))
    if isinstance(surfaces, list):
        r.source.append(f"Unigine mesh (ms11), {plural(len(surfaces), 'surface')}")
        r.kept.append(
            "each surface's name and what it holds (shape key names, UV maps, colours, tangents)"
        )
    if obj.type == "MESH":
        _exact(obj, r)
    if obj.type == "ARMATURE":
        anims = json_value(read_prop(obj, ANIMATIONS_KEY))
        if any(kept_keys.has(b, "unigine_index") for b in obj.data.bones):
            r.source.append("Unigine mesh skeleton")
            r.kept.append("the file's bone order (Unigine)")
        if isinstance(anims, list):
            r.kept.append(f"embedded animations: {plural(len(anims), 'action')}")


def _exact(obj, r: Report) -> None:
    """What the kept record (bounds, weight bytes) holds and whether the mesh is
    still the one it describes, from the fingerprint the exporter compares (only
    topology and positions are hashed here, on every redraw)."""
    kept = parse(read_prop(obj, KEPT_KEY))
    old = fingerprint.stored(obj, FINGERPRINT)
    if kept is None or old is None:
        return
    what = "the file's bounds" + (
        ", weight bytes and zero-weight influences" if kept.counts is not None else ""
    )
    r.kept.append(what)
    if len(obj.data.vertices) > FULL_COMPARE_LIMIT:
        r.kept.append(
            f"edits not checked while drawing (over {n(FULL_COMPARE_LIMIT)} vertices): "
            "export compares the mesh with the import"
        )
        return
    parts = tuple(p for p in (fingerprint.TOPOLOGY, fingerprint.POSITIONS) if p in old)
    now = fingerprint.compute(obj.data, parts)
    changed = {p for p in parts if now[p] != old[p]}
    if fingerprint.TOPOLOGY in changed:
        r.changes.append(
            "the mesh's faces changed: the next export writes weights from Blender and "
            "leaves out vertices no triangle uses"
        )
    elif fingerprint.POSITIONS in changed:
        r.changes.append("vertices moved: the moved surfaces' bounds are recomputed")
