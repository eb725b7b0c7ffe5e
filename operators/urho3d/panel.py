"""Urho3D's lines of the RigPort panel: what the file's data kept on an object
means for the asset (``ui/report.py`` gathers every format's ``describe``)."""

from __future__ import annotations

from ...ui.panel import kept_mesh_rows
from ...ui.report import Report, n, plural
from ..blender import kept_keys
from ..blender.extract import read_prop
from .kept import FINGERPRINT


def describe(obj, r: Report) -> None:
    layout = read_prop(obj, "urho_layout")
    fmt = read_prop(obj, "rigport_format")
    if isinstance(layout, dict):
        magic = layout.get("magic", "?")
        version = layout.get("version")
        r.source.append(
            "Urho3D model "
            + f"({magic}"
            + (f", version {version}" if version is not None else "")
            + f"), LOD {int(obj.get('urho_lod', 0))}"
        )
        vbs = layout.get("vertex_buffers") or []
        total = sum(int(v.get("count", 0)) for v in vbs)
        lod = int(obj.get("urho_lod", 0))
        r.kept.append(
            f"original buffers ({plural(len(vbs), 'vertex buffer')}, "
            f"{plural(len(layout.get('index_buffers') or []), 'index buffer')}, "
            f"{plural(len(layout.get('geometries') or []), 'geometry', 'geometries')})"
            + (f", valid while the vertex count is {n(total)}" if lod == 0 else "")
        )
        if obj.type == "MESH" and lod == 0 and len(obj.data.vertices) != total:
            r.changes.append("vertex order and buffers will be rebuilt")
        if obj.type == "MESH":
            _fingerprint(obj, r)
        if layout.get("morphs"):
            r.kept.append(
                f"which vertices each of {plural(len(layout['morphs']), 'shape key')} moves "
                "(the file's morph ranges)"
            )
    elif fmt == "urho3d" and obj.type == "ARMATURE":
        lods = read_prop(obj, "urho_lod_count")
        r.source.append(
            "Urho3D model" + (f", {plural(int(lods), 'LOD')} in the file" if lods else "")
        )
    if obj.type == "ARMATURE" and any(kept_keys.has(b, "urho_index") for b in obj.data.bones):
        r.kept.append("the file's bone order (Urho3D)")


def _fingerprint(obj, r: Report) -> None:
    """Whether the layout kept at import still describes the mesh, from the
    fingerprint stored then (what the exporter itself compares)."""
    kept_mesh_rows(
        obj,
        r,
        FINGERPRINT,
        "the kept layout",
        "the vertex buffers from Blender's mesh",
        moved="vertices moved: the layout is kept, the bounding box recomputed if a vertex left it",
        counts=False,  # the vertex count is compared above
    )
