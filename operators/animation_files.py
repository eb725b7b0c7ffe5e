"""Animations out: which animations an export writes, and the files they go to.

The same choice names in every format (``export_animations``): the active
action, every action of the armature, or its NLA tracks. A format whose file
holds one animation writes one file per animation next to the chosen path,
``<chosen stem>_<name><ext>``, or ``<name><ext>`` with "Name Files by Action".
"""

from __future__ import annotations

import os

import bpy
from bpy.props import BoolProperty, EnumProperty

from ..io_formats.codec import FormatError
from .blender import compat

EXPORT_ANIMATIONS_ITEMS = (
    ("ACTIVE", "Active Action", "The action the armature plays"),
    ("ACTIONS", "All Actions", "Every action that animates the armature's bones"),
    ("NLA", "NLA Tracks", "The actions of the armature's NLA tracks, named after the track"),
)


def export_animations_property(items=EXPORT_ANIMATIONS_ITEMS, default: str = "ACTIVE"):
    return EnumProperty(
        name="Animations",
        items=items,
        default=default,
        description="Which animations to export: with more than one, one file each next "
        "to the chosen path",
    )


def use_action_names_property(what: str = "action"):
    return BoolProperty(
        name="Name Files by Action",
        default=False,
        description=f"Name each file after its {what} alone (else the chosen file name, "
        f"an underscore and the {what}'s name)",
    )


def animation_paths(filepath: str, names: list[str], use_action_names: bool) -> list[str]:
    """One path per animation name beside ``filepath`` (names made file-safe with
    ``bpy.path.clean_name``); FormatError when two animations would share a file."""
    folder = os.path.dirname(filepath)
    stem, ext = os.path.splitext(os.path.basename(filepath))
    paths: list[str] = []
    seen: dict[str, str] = {}
    for name in names:
        clean = bpy.path.clean_name(name)
        base = clean if use_action_names else f"{stem}_{clean}"
        path = os.path.join(folder, base + ext)
        key = os.path.normcase(path)
        if key in seen:
            raise FormatError(
                f"animations {seen[key]!r} and {name!r} would both be written to "
                f"{os.path.basename(path)!r}: rename one of them",
                None,
                filepath,
            )
        seen[key] = name
        paths.append(path)
    return paths


def bone_actions(armature) -> list:
    """Every action in the blend file with an F-curve on one of ``armature``'s bones,
    by name."""
    names = {b.name for b in armature.data.bones}
    out = []
    for action in bpy.data.actions:
        for fc in compat.fcurves(action):
            path = fc.data_path
            if path.startswith('pose.bones["'):
                bone = path[len('pose.bones["') :].partition('"]')[0]
                if bone.replace('\\"', '"').replace("\\\\", "\\") in names:
                    out.append(action)
                    break
    return sorted(out, key=lambda a: a.name)


def nla_actions(armature) -> list[tuple[str, object]]:
    """(track name, action) for every NLA track of ``armature`` with a strip action
    (the first strip's)."""
    ad = armature.animation_data
    if ad is None:
        return []
    out = []
    for track in ad.nla_tracks:
        action = next((s.action for s in track.strips if s.action is not None), None)
        if action is not None:
            out.append((track.name, action))
    return out
