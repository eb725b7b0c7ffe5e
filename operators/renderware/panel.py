"""RenderWare's lines of the RigPort panel: what the file's data kept on an object
means for the asset (``ui/report.py`` gathers every format's ``describe``)."""

from __future__ import annotations

from ...ui.panel import kept_mesh_rows
from ...ui.report import Report
from ..blender.extract import read_prop
from . import build

#: What the next RenderWare export rebuilds when the triangles changed.
REBUILT = "the Bin Mesh, spheres and split data from Blender's mesh"


def rw_version_text(version: int) -> str:
    v = int(version)
    return f"{(v >> 16) & 0xF}.{(v >> 12) & 0xF}.{(v >> 8) & 0xF}.{v & 0xFF}"


def describe(obj, r: Report) -> None:
    version = read_prop(obj, "rw_version")
    if version is not None:
        r.source.append(f"RenderWare clump, version {rw_version_text(version)}")
    geometry = read_prop(obj, "rw_geometry")
    if isinstance(geometry, dict):
        gv = geometry.get("version")
        r.source.append(
            "RenderWare atomic" + (f", geometry version {rw_version_text(gv)}" if gv else "")
        )
        parts = ["flags", "bounding spheres"]
        if geometry.get("bin_mesh"):
            parts.append("Bin Mesh (strip order)")
        if geometry.get("night_colors"):
            parts.append("night colours")
        r.kept.append(
            f"geometry data ({', '.join(parts)}), valid while the triangles are unchanged"
        )
        strips = int(geometry.get("bin_mesh_flags") or 0) & 1
        rebuilt = REBUILT + (" (triangle strips again, as the file drew them)" if strips else "")
        kept_mesh_rows(obj, r, build.FINGERPRINT, "the geometry data", rebuilt)
    if read_prop(obj, "rw_skin") is not None:
        r.kept.append("skin layout (bone limits, used bones)")
    hanim = read_prop(obj, "rw_hanim")
    if isinstance(hanim, dict):
        r.kept.append("the bone hierarchy's IDs and flags (HAnim)")
