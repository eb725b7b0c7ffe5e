"""Unigine's lines of the RigPort panel: what the file's data kept on an object
means for the asset (``ui/report.py`` gathers every format's ``describe``)."""

from __future__ import annotations

from ...io_formats.unigine.mesh_import import ANIMATIONS_KEY
from ...ui.panel import kept_mesh_rows
from ...ui.report import Report, json_value, plural
from ..blender import kept_keys
from ..blender.extract import read_prop
from . import kept


def describe(obj, r: Report) -> None:
    surfaces = json_value(read_prop(obj, "unigine_surfaces"))
    if isinstance(surfaces, list):
        r.source.append(f"Unigine mesh (ms11), {plural(len(surfaces), 'surface')}")
        r.kept.append(
            "each surface's name and what it holds (shape key names, UV maps, colours, tangents)"
        )
        kept_mesh_rows(
            obj,
            r,
            getattr(kept, "FINGERPRINT", None),
            "the surfaces' kept data",
            "the surfaces' vertices, bounds and weights from Blender's mesh",
        )
    if obj.type == "ARMATURE":
        anims = json_value(read_prop(obj, ANIMATIONS_KEY))
        if any(kept_keys.has(b, "unigine_index") for b in obj.data.bones):
            r.source.append("Unigine mesh skeleton")
            r.kept.append("the file's bone order (Unigine)")
        if isinstance(anims, list):
            r.kept.append(f"embedded animations: {plural(len(anims), 'action')}")
