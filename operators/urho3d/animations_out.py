"""Which actions an animation export writes, and the file each one goes to.

The choice names are every format's (``export_animations``): the active action,
every action that animates the armature's bones (the ones an import stashed
included), or the actions of the armature's NLA tracks named after the track.
A format that holds one animation per file writes each to its own file next
to the chosen path.
"""

from __future__ import annotations

import os

import bpy
from bpy.props import BoolProperty, EnumProperty

from ...io_formats.codec import FormatError
from ..blender import compat

EXPORT_ANIMATIONS_ITEMS = (
    ("ACTIVE", "Active Action", "The action the armature plays"),
    (
        "ACTIONS",
        "All Actions",
        "Every action that animates the armature's bones (those an import stashed "
        "in the NLA included), one file each",
    ),
    (
        "NLA",
        "NLA Tracks",
        "The actions of the armature's NLA tracks, one file each, named after the track",
    ),
)


class AnimationChoice:
    """Mixin for exporters of one animation per file: ``export_animations`` and
    ``use_action_names``."""

    export_animations: EnumProperty(
        name="Animations",
        items=EXPORT_ANIMATIONS_ITEMS,
        default="ACTIVE",
        description="Which animations to export",
    )
    use_action_names: BoolProperty(
        name="Name Files by Action",
        default=False,
        description="With several animations, name each file exactly after its action or "
        "NLA track (else the chosen file name, an underscore and the action's name)",
    )

    def draw_animation_choice(self, layout) -> None:
        layout.prop(self, "export_animations")
        row = layout.row()
        row.active = self.export_animations != "ACTIVE"
        row.prop(self, "use_action_names")


def _animates_bones(action: bpy.types.Action, bones: set[str]) -> bool:
    for fc in compat.fcurves(action):
        path = fc.data_path
        if path.startswith('pose.bones["'):
            name = path[len('pose.bones["') :].partition('"]')[0]
            if name.replace('\\"', '"').replace("\\\\", "\\") in bones:
                return True
    return False


def armature_actions(armature: bpy.types.Object, choice: str) -> list[tuple[str, bpy.types.Action]]:
    """``(name, action)`` per animation to export for ``choice`` (ACTIVE, ACTIONS,
    NLA); FormatError naming the armature when there is none."""
    ad = armature.animation_data
    if choice == "ACTIVE":
        action = ad.action if ad is not None else None
        if action is None:
            raise FormatError(f"armature {armature.name!r} has no action to export")
        return [(action.name, action)]
    if choice == "ACTIONS":
        bones = {b.name for b in armature.data.bones}
        out = [(a.name, a) for a in bpy.data.actions if _animates_bones(a, bones)]
        if not out:
            raise FormatError(
                f"no action animates a bone of armature {armature.name!r}: nothing exported"
            )
        return out
    out = []
    for track in ad.nla_tracks if ad is not None else ():
        actions = list(dict.fromkeys(s.action for s in track.strips if s.action is not None))
        for action in actions:
            name = track.name if len(actions) == 1 else f"{track.name}_{action.name}"
            out.append((name, action))
    if not out:
        raise FormatError(
            f"armature {armature.name!r} has no NLA track with an action: nothing exported"
        )
    return out


def action_paths(path: str, names: list[str], use_action_names: bool) -> list[str]:
    """One file per name next to ``path``: ``<stem>_<name><ext>``, or
    ``<name><ext>`` with ``use_action_names`` (names made safe for file names).
    FormatError when two names give one file (nothing is written then)."""
    folder, base = os.path.split(path)
    stem, ext = os.path.splitext(base)
    taken: dict[str, str] = {}
    out = []
    for name in names:
        clean = bpy.path.clean_name(name)
        file = f"{clean}{ext}" if use_action_names else f"{stem}_{clean}{ext}"
        if file.lower() in taken:  # one file on case-insensitive file systems too
            raise FormatError(
                f"the animations {taken[file.lower()]!r} and {name!r} would both be written "
                f"to {file}: rename one of them; nothing exported",
                None,
                path,
            )
        taken[file.lower()] = name
        out.append(os.path.join(folder, file))
    return out
