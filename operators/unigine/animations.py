"""Which actions an export writes ("Active Action", "All Actions", "NLA Tracks"),
and the file names when each goes to a file of its own.

Nothing here is Unigine's: the choice names are the ones every RigPort exporter
that writes animations offers (issue 14, "Animations out").
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import bpy

from ...io_formats.codec import FormatError
from ..blender import compat

ACTIVE_ITEM = ("ACTIVE", "Active Action", "The armature's current action")
ACTIONS_ITEM = (
    "ACTIONS",
    "All Actions",
    "Every action that animates the armature's bones (the imported ones stashed in "
    "its NLA tracks included)",
)
NLA_ITEM = (
    "NLA",
    "NLA Tracks",
    "The action of each strip of the armature's NLA tracks, named after its track",
)

_BONE_PATH = 'pose.bones["'


@dataclass
class Chosen:
    """An action to write, and the name to write it under (None: the action's)."""

    action: bpy.types.Action
    name: str | None = None

    @property
    def label(self) -> str:
        return self.name if self.name is not None else self.action.name


def _animated_bone(path: str) -> str | None:
    if not path.startswith(_BONE_PATH):
        return None
    name = path[len(_BONE_PATH) :].partition('"]')[0]
    return name.replace('\\"', '"').replace("\\\\", "\\")


def bone_actions(armature: bpy.types.Object) -> list[bpy.types.Action]:
    """The blend file's actions that key at least one bone of ``armature``, in
    the blend file's order (by name)."""
    bones = {b.name for b in armature.data.bones}
    return [
        action
        for action in bpy.data.actions
        if any(_animated_bone(fc.data_path) in bones for fc in compat.fcurves(action))
    ]


def nla_actions(armature: bpy.types.Object) -> list[Chosen]:
    """Each strip's action of the armature's NLA tracks, bottom track first, named
    after its track (``track_strip`` where a track holds several strips)."""
    ad = armature.animation_data
    out = []
    for track in ad.nla_tracks if ad is not None else ():
        strips = [s for s in track.strips if s.action is not None]
        for strip in strips:
            name = track.name if len(strips) == 1 else f"{track.name}_{strip.name}"
            out.append(Chosen(strip.action, name))
    return out


def chosen_actions(armature: bpy.types.Object, which: str) -> list[Chosen]:
    """The actions ``which`` (ACTIVE, ACTIONS or NLA) names on ``armature``."""
    if which == "ACTIVE":
        ad = armature.animation_data
        return [Chosen(ad.action)] if ad is not None and ad.action is not None else []
    if which == "ACTIONS":
        return [Chosen(a) for a in bone_actions(armature)]
    if which == "NLA":
        return nla_actions(armature)
    raise ValueError(f"unknown animation choice {which!r}")


def none_message(armature: bpy.types.Object, which: str) -> str:
    """Why ``which`` found nothing to write on ``armature``."""
    return {
        "ACTIVE": f"armature {armature.name!r} has no action to export",
        "ACTIONS": f"no action animates a bone of armature {armature.name!r}: nothing exported",
        "NLA": f"armature {armature.name!r} has no NLA track with an action: nothing exported",
    }.get(which, f"armature {armature.name!r} has no animation to export")


def action_paths(path: str, names: list[str], use_action_names: bool) -> list[str]:
    """One file per name beside ``path``: ``<stem>_<name><ext>``, or ``<name><ext>``
    with ``use_action_names``; names made safe with ``bpy.path.clean_name``, and
    those that would still clash (letter case ignored, as on Windows and macOS)
    numbered ``_2``, ``_3`` ..."""
    folder, base = os.path.split(path)
    stem, ext = os.path.splitext(base)
    out, used = [], set()
    for name in names:
        clean = bpy.path.clean_name(name)
        wanted = clean if use_action_names else f"{stem}_{clean}"
        candidate, k = wanted, 2
        while candidate.lower() in used:
            candidate, k = f"{wanted}_{k}", k + 1
        used.add(candidate.lower())
        out.append(os.path.join(folder, candidate + ext))
    if not out:
        raise FormatError("no animation to export")
    return out
