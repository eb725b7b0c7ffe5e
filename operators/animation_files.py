"""Animations out: which actions an export writes, and the files they go to.

Every exporter that writes animations offers the same choice
(``export_animations``): the active action, every action of the armature
(:func:`bone_actions`), or the actions of its NLA tracks, named after the
track. A format may add choices of its own (Unigine's "As Imported" and "None",
MRTK's recordings). A format whose file holds one animation writes one file per
animation next to the chosen path, ``<chosen stem>_<name><ext>``, or
``<name><ext>`` with "Name Files by Action" (``use_action_names``).
"""

from __future__ import annotations

import os

import bpy
from bpy.props import BoolProperty, EnumProperty

from ..io_formats.codec import FormatError
from .blender import compat
from .common import current_action

ACTIVE_ITEM = ("ACTIVE", "Active Action", "The action the armature plays")
ACTIONS_ITEM = (
    "ACTIONS",
    "All Actions",
    "Every action of the armature: the one it plays, those of its NLA tracks (where an "
    "import puts its actions) and those made for it; never one of another armature "
    "with the same bone names",
)
NLA_ITEM = (
    "NLA",
    "NLA Tracks",
    "The action of each strip of the armature's NLA tracks, named after its track",
)
EXPORT_ANIMATIONS_ITEMS = (ACTIVE_ITEM, ACTIONS_ITEM, NLA_ITEM)

_BONE_PATH = 'pose.bones["'


def export_animations_property(
    items=EXPORT_ANIMATIONS_ITEMS,
    default: str = "ACTIVE",
    description: str = "Which animations to export: with more than one, one file each next "
    "to the chosen path",
):
    """The ``export_animations`` enum: the shared items, or a format's list of them
    with its own added."""
    return EnumProperty(name="Animations", items=items, default=default, description=description)


def use_action_names_property(what: str = "action"):
    """The ``use_action_names`` switch ("Name Files by Action")."""
    return BoolProperty(
        name="Name Files by Action",
        default=False,
        description=f"Name each file after its {what} alone (else the chosen file name, "
        f"an underscore and the {what}'s name)",
    )


def draw_animation_choice(layout, op, several: tuple[str, ...] = ("ACTIONS", "NLA")) -> None:
    """``export_animations`` and, active where the choice ``several`` writes a file per
    animation, ``use_action_names``."""
    layout.prop(op, "export_animations")
    row = layout.row()
    row.active = op.export_animations in several
    row.prop(op, "use_action_names")


def _animated_bone(path: str) -> str | None:
    if not path.startswith(_BONE_PATH):
        return None
    name = path[len(_BONE_PATH) :].partition('"]')[0]
    return name.replace('\\"', '"').replace("\\\\", "\\")


def _claimed(obj: bpy.types.Object) -> set[bpy.types.Action]:
    """The actions ``obj`` plays or holds in its NLA tracks (an import stashes every
    action it makes there: ``blender.actions.keep_actions``)."""
    ad = obj.animation_data
    if ad is None:
        return set()
    out = {s.action for t in ad.nla_tracks for s in t.strips if s.action is not None}
    if ad.action is not None:
        out.add(ad.action)
    return out


def _animated_bones(action: bpy.types.Action) -> set[str]:
    return {b for fc in compat.fcurves(action) if (b := _animated_bone(fc.data_path)) is not None}


def bone_actions(armature: bpy.types.Object) -> list[bpy.types.Action]:
    """The actions of ``armature`` that animate one of its bones, by name: the one it
    plays, those of its NLA tracks, those whose slot is for it (4.4+), and an action
    no object plays, holds or has a slot for only when no other armature has a bone
    it animates. Never an action of another object merely because bone names match
    (two characters of one rig share them)."""
    bones = {b.name for b in armature.data.bones}
    objects = list(bpy.data.objects)
    names = {o.name for o in objects}
    claims = {o: _claimed(o) for o in objects}
    others = [o for o in objects if o.type == "ARMATURE" and o != armature]
    found = []
    for action in bpy.data.actions:
        animated = _animated_bones(action)
        if not animated & bones:
            continue
        slot_for = compat.slot_object_names(action) & names
        if action in claims.get(armature, ()) or armature.name in slot_for:
            found.append(action)
        elif slot_for or any(action in c for c in claims.values()):
            continue  # another object's
        elif not any(animated & {b.name for b in o.data.bones} for o in others):
            found.append(action)
    return sorted(found, key=lambda a: a.name)


def nla_actions(armature: bpy.types.Object) -> list[tuple[str, bpy.types.Action]]:
    """(name, action) per strip with an action of ``armature``'s NLA tracks, bottom
    track first: the track's name, ``<track>.<n>`` for its second and later strips."""
    ad = armature.animation_data
    out: list[tuple[str, bpy.types.Action]] = []
    for track in ad.nla_tracks if ad is not None else ():
        strips = [s for s in track.strips if s.action is not None]
        for k, strip in enumerate(strips):
            out.append((track.name if k == 0 else f"{track.name}.{k}", strip.action))
    return out


def chosen_actions(armature: bpy.types.Object, which: str) -> list[tuple[str, bpy.types.Action]]:
    """(name to write, action) per animation the choice ``which`` (ACTIVE, ACTIONS,
    NLA) names on ``armature``; empty when there is none (see :func:`none_message`)."""
    if which == "ACTIVE":
        action = current_action(armature)
        return [(action.name, action)] if action is not None else []
    if which == "ACTIONS":
        return [(a.name, a) for a in bone_actions(armature)]
    if which == "NLA":
        return nla_actions(armature)
    raise ValueError(f"unknown animation choice {which!r}")


def written_message(armature: bpy.types.Object, chosen: list[tuple[str, bpy.types.Action]]) -> str:
    """The INFO line of an animation export: how many actions of ``armature`` it
    wrote, and which (under the names written)."""
    names = ", ".join(name for name, _ in chosen)
    count = f"{len(chosen)} action" + ("" if len(chosen) == 1 else "s")
    return f"{count} of armature {armature.name!r} written: {names}"


def none_message(armature: bpy.types.Object, which: str) -> str:
    """The refusal when ``which`` finds nothing to write on ``armature``."""
    return {
        "ACTIVE": f"armature {armature.name!r} has no action to export",
        "ACTIONS": f"no action animates a bone of armature {armature.name!r}: nothing exported",
        "NLA": f"armature {armature.name!r} has no NLA track with an action: nothing exported",
    }.get(which, f"armature {armature.name!r} has no animation to export")


def action_paths(path: str, names: list[str], use_action_names: bool) -> list[str]:
    """One file per animation name next to ``path``: ``<stem>_<name><ext>``, or
    ``<name><ext>`` with ``use_action_names`` (names made safe with
    ``bpy.path.clean_name``). FormatError, before anything is written, when two
    names give one file, letter case ignored as on Windows and macOS."""
    folder, base = os.path.split(path)
    stem, ext = os.path.splitext(base)
    out: list[str] = []
    seen: dict[str, str] = {}
    for name in names:
        clean = bpy.path.clean_name(name)
        file = f"{clean}{ext}" if use_action_names else f"{stem}_{clean}{ext}"
        key = file.lower()
        if key in seen:
            raise FormatError(
                f"animations {seen[key]!r} and {name!r} would both be written to {file}: "
                "rename one of them; nothing exported",
                None,
                path,
            )
        seen[key] = name
        out.append(os.path.join(folder, file))
    return out


def chosen_files(
    armature: bpy.types.Object, which: str, path: str, use_action_names: bool
) -> list[tuple[str, str, bpy.types.Action]]:
    """(file, name, action) per animation the choice ``which`` names on ``armature``
    for a format of one animation per file: the active action to ``path`` itself,
    the others one file each beside it (:func:`action_paths`). FormatError naming
    ``path`` when there is nothing to write or two would share a file."""
    chosen = chosen_actions(armature, which)
    if not chosen:
        raise FormatError(none_message(armature, which), None, path)
    names = [name for name, _ in chosen]
    paths = [path] if which == "ACTIVE" else action_paths(path, names, use_action_names)
    return [(p, name, action) for p, (name, action) in zip(paths, chosen, strict=True)]
