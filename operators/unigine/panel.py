"""Unigine's lines of the RigPort panel: what the file's data kept on an object
means for the asset (``ui/report.py`` gathers every format's ``describe``)."""

from __future__ import annotations

from ...io_formats.unigine.mesh_import import ANIMATIONS_KEY
from ...io_formats.unigine.mesh_kept import KEPT_KEY, parse
from ...ui.panel import kept_mesh_rows
from ...ui.report import Report, json_value, plural
from ..blender import kept_keys
from ..blender.extract import read_prop
from . import kept as kept_names


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
    """What the kept record (bounds, weight bytes) holds, and whether the mesh is
    still the one it describes (``ui.panel.kept_mesh_rows``, by the fingerprint the
    exporter compares)."""
    kept = parse(read_prop(obj, KEPT_KEY))
    if kept is not None:
        r.kept.append(
            "the file's bounds"
            + (", weight bytes and zero-weight influences" if kept.counts is not None else "")
        )
    kept_mesh_rows(
        obj,
        r,
        kept_names.FINGERPRINT,
        "the surfaces' kept data",
        "the surfaces' vertices, bounds and weights from Blender's mesh",
    )
