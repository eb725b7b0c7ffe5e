"""RenderWare's lines of the RigPort panel: what the file's data kept on an object
means for the asset (``ui/report.py`` gathers every format's ``describe``)."""

from __future__ import annotations

from ...ui.report import Report, mesh_edited, n
from ..blender import fingerprint
from ..blender.extract import read_prop
from .build import FINGERPRINT

#: Above this many vertices the panel does not hash the mesh on every redraw.
FULL_COMPARE_LIMIT = 100_000


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
        _edits(obj, geometry, r)
    if read_prop(obj, "rw_skin") is not None:
        r.kept.append("skin layout (bone limits, used bones)")
    hanim = read_prop(obj, "rw_hanim")
    if isinstance(hanim, dict):
        r.kept.append("the bone hierarchy's IDs and flags (HAnim)")


def _edits(obj, geometry: dict, r: Report) -> None:
    """What the next export rebuilds, by the fingerprint the import stored (what the
    exporter compares; the weights, which only the export reads, left out here:
    reading them takes a depsgraph evaluation, not something to do while drawing)."""
    old = fingerprint.stored(obj, FINGERPRINT)
    if old is None:  # imported before fingerprints: by the counts
        if mesh_edited(obj):
            r.changes.append("the Bin Mesh, spheres and split data will be rebuilt")
        return
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
        r.changes.append("the Bin Mesh, spheres and split data will be rebuilt")
        if int(geometry.get("bin_mesh_flags") or 0) & 1:
            r.changes.append("the triangle strips will be made again from the edited faces")
    elif fingerprint.POSITIONS in changed:
        r.changes.append(
            "vertices moved: the bounding spheres will be recomputed; "
            "the Bin Mesh and split data are kept"
        )
    else:
        r.kept.append("the kept geometry data still matches the mesh's faces and positions")
