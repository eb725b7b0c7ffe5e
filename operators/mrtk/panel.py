"""MRTK's lines of the RigPort panel: what the file's data kept on an object
means for the asset (``ui/report.py`` gathers every format's ``describe``)."""

from __future__ import annotations

from ...ui.report import Report, json_value, plural
from ..blender import kept_keys
from ..blender.extract import read_prop


def describe(obj, r: Report) -> None:
    role = kept_keys.get(obj, "_mrtk_role")
    for coll in obj.users_collection:
        meta = json_value(read_prop(coll, "_mrtk_meta"))
        if isinstance(meta, dict):
            r.source.append(
                f"MRTK input recording {meta.get('version', '?')}, {meta.get('layout', '?')} "
                f"curves, recording collection {coll.name!r}"
            )
            markers = meta.get("markers") or []
            r.kept.append(
                f"recording settings (axes {meta.get('axes', '?')}, "
                f"{float(meta.get('fps', 0)):g} fps), {plural(len(markers), 'marker')}"
            )
            break
    if isinstance(role, str):
        r.source.append(f"MRTK role: {role}")
    ad = obj.animation_data
    action = ad.action if ad is not None else None
    curves = kept_keys.get(action, "_mrtk_curves") if action is not None else None
    if curves is not None:
        r.kept.append(
            f"the file's curves for {plural(len(curves.keys()), 'channel')} (exact Unity keys), "
            "each valid while its keys are unchanged"
        )
