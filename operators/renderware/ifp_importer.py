"""GTA IFP animation import: the animations of one package as actions on a ped armature.

The actions go on the given armature, else the active one, else the one whose
HAnim bone IDs and names match best (a ped imported from a .dff). Bones are
matched by HAnim ID first, by name second; objects that match no bone are
reported. Each action keeps its source animation (hidden custom property), so
an export writes the keys the artist did not touch back with their original
bytes. Callable without an operator: :func:`import_ifp_file` takes the
context, the path and one :class:`IfpImportOptions`, and returns a
:class:`~operators.result.Result`.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Callable
from dataclasses import dataclass

import bpy

from ...io_formats.codec import FormatError, read_file
from ...io_formats.renderware import anim_convert, ifp
from ..blender.actions import keep_actions
from ..blender.armatures import Choice, Rank, choose_armature
from ..blender.build import build_action, rest_relative
from ..common import in_file
from ..conventions import scene_fps
from ..result import Result, counted
from .anim_options import custom_fps, record_scale, scale_translations

#: Hidden action property: JSON {"source": one-animation IFP (base64),
#: "file": the .ifp's name, "index": its place there, and for a file with bytes
#: after its animations "package": the key of those bytes in PROP_ENDS}.
PROP_SOURCE = "_rw_ifp"
#: Hidden armature property: per imported file with bytes after its animations
#: (padding, trailing data) those bytes, once (``anim_convert.pack_ends``), rather
#: than copied into each of its actions.
PROP_ENDS = "_rw_ifp_ends"


@dataclass(frozen=True)
class IfpImportOptions:
    """The IFP importer's options (named and defaulted as its properties, the
    Set Scene Rate and Range the operator applies left out). ``names``: the
    animations to import, None for all."""

    names: tuple[str, ...] | None = None
    frame_rate: str = "SCENE"
    fps: float = 30.0
    global_scale: float = 1.0


def armature_bones(armature) -> list[anim_convert.Bone]:
    """(name, HAnim bone ID) of every bone, as the DFF import stored them."""
    out = []
    for b in armature.data.bones:
        bid = b.get("rw_bone_id")
        out.append((b.name, int(bid) if bid is not None else None))
    return out


def read_ifp(path: str, data: bytes | None = None) -> ifp.IfpFile:
    with in_file(path):
        return ifp.read(read_file(path, "IFP file") if data is None else data)


def ifp_rows(path: str) -> list[dict]:
    """One row per animation for the browser."""
    f = read_ifp(path)
    return [
        {
            "name": a.name,
            "frames": a.frame_count,
            "objects": len(a.objects),
            "duration": a.duration,
        }
        for a in f.animations
    ]


def best_armature(context, f: ifp.IfpFile) -> Choice:
    """The active armature, else the one most objects of the package match."""
    objects = [(o.name, o.bone_id) for a in f.animations[:8] for o in a.objects]

    def score(arm: bpy.types.Object) -> int:
        hits, _ = anim_convert.match_bones(objects, armature_bones(arm))
        return sum(h is not None for h in hits)

    tracks = counted(len(objects), "bone track")
    return choose_armature(
        context,
        rule=Rank(
            score,
            lambda n: f"the armature whose bones match ({n} of {tracks})",
            lambda _: "no armature has bones the animations name (import the .dff first)",
        ),
    )


def import_ifp_file(
    context,
    path: str,
    options: IfpImportOptions,
    armature=None,
    data: bytes | None = None,
    progress: Callable[[float], None] | None = None,
) -> Result:
    """Build the chosen animations of one .ifp (``data``, else read from
    ``path``) as actions on ``armature`` (None: :func:`best_armature`), calling
    ``progress(fraction)`` after each: key times at the options' frame rate,
    translations times their scale (recorded on each action for "As Imported").
    The result holds the actions and their armature; its ``undo`` removes them.
    FormatError leaves nothing behind."""
    f = read_ifp(path, data)
    chosen = _chosen_animations(f, options.names, path)
    if not chosen:
        raise FormatError("the package holds no animation: nothing imported", None, path)
    how = "the given armature"
    if armature is None:
        choice = best_armature(context, f)
        armature, how = choice.required(path), choice.how
    _require_fit(chosen, armature, path)
    fps = custom_fps(options) or scene_fps(context)
    package = uuid.uuid4().hex if f.tail or f.trailing else None
    made, missing = _build_actions(
        f,
        chosen,
        armature,
        path,
        fps=fps,
        scale=options.global_scale,
        progress=progress,
        package=package,
    )
    # Every action is kept as an NLA track (the rule every importer follows); the
    # first is the one that plays.
    undo = [keep_actions(armature, made, made[0] if made else None)]
    if package is not None:
        undo.append(_keep_ends(armature, package, f))
    summary = f"{counted(len(made), 'animation')} applied to {armature.name} ({how})"
    result = Result(summary=summary, armature=armature, actions=made, undo=undo)
    result.info(summary)
    if missing:
        names_text = ", ".join(sorted(missing)[:12]) + (" ..." if len(missing) > 12 else "")
        result.warn(f"no bone matches {counted(len(missing), 'bone track')}: {names_text}")
    return result


def _chosen_animations(f: ifp.IfpFile, names, path: str) -> list[tuple[int, ifp.IfpAnimation]]:
    """(place in the package, animation) of the animations ``names`` (all when
    None), in that order. The place is carried along, not looked up: two
    animations may share a name, and ``list.index`` would compare their keys."""
    if names is None:
        return list(enumerate(f.animations))
    first: dict[str, int] = {}
    for i, a in enumerate(f.animations):
        first.setdefault(a.name.lower(), i)
    chosen = []
    for n in names:
        i = first.get(n.lower())
        if i is None:
            raise FormatError(f"the package has no animation {n!r}", None, path)
        chosen.append((i, f.animations[i]))
    return chosen


def _keep_ends(armature, package: str, f: ifp.IfpFile) -> Callable[[], None]:
    """Keep ``f``'s bytes after its animations on ``armature`` under ``package``;
    returns the take-back."""
    if not hasattr(armature.get(PROP_ENDS), "keys"):
        armature[PROP_ENDS] = {}
    armature[PROP_ENDS][package] = anim_convert.pack_ends(f)

    def take_back() -> None:
        ends = armature.get(PROP_ENDS)
        if ends is not None and package in ends:
            del ends[package]

    return take_back


def _require_fit(chosen: list, armature, path: str) -> None:
    """Refuse, before anything is built, animations none of whose objects matches
    a bone of ``armature`` (by HAnim ID, else name), as every animation import
    does (``armatures.animation_fit``): an empty action would be all it made."""
    objects = list(dict.fromkeys((o.name, o.bone_id) for _, a in chosen for o in a.objects))
    if not objects:
        return
    bones = armature_bones(armature)
    hits, _ = anim_convert.match_bones(objects, bones)
    if all(h is None for h in hits):
        names = {name for name, _ in objects}
        raise FormatError(
            f"0 of {len(names)} animated bones match a bone of armature "
            f"{armature.name!r} ({counted(len(bones), 'bone')}): the animation is not for it, "
            "nothing imported",
            None,
            path,
        )


def _build_actions(
    f: ifp.IfpFile,
    chosen: list,
    armature,
    path: str,
    *,
    fps: float,
    scale: float,
    progress,
    package: str | None,
) -> tuple[list, dict[str, int]]:
    """One action per animation of ``chosen``, all or nothing; the objects that
    match no bone, with how many animations name each. With ``package`` the
    actions keep the file's bytes after its animations by that key, not a copy."""
    bones = armature_bones(armature)
    rest = rest_relative(armature.data)
    stem = os.path.splitext(os.path.basename(path))[0]
    made: list = []
    missing: dict[str, int] = {}
    try:
        for index, a in chosen:
            neutral, miss = anim_convert.ifp_to_animation(a, bones)
            for m in miss:
                missing[m] = missing.get(m, 0) + 1
            scale_translations(neutral, scale)
            action = build_action(
                armature, neutral, fps, rest, file_stem=stem, clips=len(f.animations)
            )
            made.append(action)
            record_scale(action, scale)
            kept = {
                "source": anim_convert.pack_source(f, a, whole=package is None),
                "file": os.path.basename(path),
                "index": index,
            }
            if package is not None:
                kept["package"] = package
            action[PROP_SOURCE] = json.dumps(kept)
            if progress is not None:
                progress(len(made) / len(chosen))
    except Exception:
        for action in made:
            bpy.data.actions.remove(action)
        raise
    return made, missing
