"""BonesPro's lines of the RigPort panel: what the file's data kept on an object
means for the asset (``ui/report.py`` gathers every format's ``describe``)."""

from __future__ import annotations

from ...ui.report import Report, json_value, n, plural
from ..blender import kept_keys
from ..blender.extract import read_prop


def describe(obj, r: Report) -> None:
    if obj.type == "ARMATURE" and any(kept_keys.has(b, "_bonespro_index") for b in obj.data.bones):
        r.source.append("BonesPro structure")
        r.kept.append("the file's bone order, its node and bone matrices and bounding boxes")
    holders = [obj]
    ad = obj.animation_data
    if ad is not None and ad.action is not None:
        holders.append(ad.action)
    for h in holders:
        header = json_value(read_prop(h, "_bonespro_header"))
        if isinstance(header, dict):
            frames = plural(int(header.get("frame_count", 0)), "frame")
            r.source.append(
                f"BonesPro animation ({header.get('mode', '?')}, {header.get('system', '?')}, "
                f"{header.get('representation', '?')}), {frames}"
            )
            count = int(header.get("vertex_count", 0))
            if count and obj.type == "MESH":
                r.kept.append(
                    f"the animation's header, written back while the mesh keeps its {n(count)} "
                    "vertices"
                )
                if len(obj.data.vertices) != count:
                    r.changes.append(
                        "the animation header's vertex count will follow the edited mesh"
                    )
            break
