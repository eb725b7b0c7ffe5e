"""Exact animation keys on an action (the Blender side of ``io_formats/exact_keys.py``).

:func:`keep` runs right after ``build.build_action`` has keyed an action: it
reads the action back with the export's own ``extract.extract_animation`` (the
same rest and frame rate an export uses) and keeps, in one hidden property,
what differs from the file's tracks (version 4: the file's arrays of the
tracks given to Blender as shared frames, with digests of what it was given),
plus the whole tracks of bones the armature lacks. ``extract_animation`` calls
:func:`restore`, so every animation exporter writes the file's keys for
unedited tracks, Blender's for edited ones, and the carried tracks in the
file's order.
"""

from __future__ import annotations

import bpy

from ...io_formats import exact_keys
from ...io_formats.scene import Animation, BoneTrack
from ..result import Result, counted
from . import guard
from .guard import blender_name

#: Hidden action property: the encoded :class:`~io_formats.exact_keys.KeptTrack` list.
PROP = "_rigport_exact_keys"


def keep(
    action: bpy.types.Action,
    armature: bpy.types.Object,
    anim: Animation,
    rest: dict,
    missing: set[str],
    made: list[BoneTrack] | None = None,
    lossy: set[int] | None = None,
    given: dict[int, exact_keys.KeptTrack] | None = None,
) -> None:
    """Keep on ``action`` what its export needs to give back ``anim``'s tracks
    exactly (the tracks of the ``missing`` bones whole). ``given``: by index in
    ``anim.tracks``, the version-4 records ``build_action`` made of the tracks it
    gave Blender as shared ascending frames (the file's arrays and digests of
    Blender's keys: nothing to rebuild). ``made``: the tracks the export will
    read for the other keyed bones, converted from the keys ``build_action``
    gave Blender (else read back from the action). ``lossy``: the indices in
    ``anim.tracks`` of the tracks the guard took NaN/Inf keys from, as
    ``build_action`` found them (else each track is checked here)."""
    from .extract import extract_animation  # extract imports build, which calls this

    given = given or {}
    if made is None and not given:
        made = extract_animation(armature, action, rest=rest).tracks
    rebuilt = {t.bone: t for t in made or ()}
    kept: list[exact_keys.KeptTrack] = []
    seen: set[str] = set()
    for i, track in enumerate(anim.tracks):
        name = blender_name(track.bone)  # the guard's name for it, as build_action keys it
        if name in seen:  # a repeated bone: build_action keys the first only
            continue
        seen.add(name)
        if name in missing:  # as the file has it, NaN/Inf keys and all
            whole = exact_keys.settled_whole(track, anim.settle)
            kept.append(exact_keys.KeptTrack(track.bone, whole=whole))
        elif i in given:
            kept.append(given[i])
        elif (i in lossy) if lossy is not None else guard.guard_track(track)[1]:
            # NaN/Inf keys: the guard's note and the format's
            continue
        elif (made := rebuilt.get(track.bone, rebuilt.get(name))) is not None:
            kept.append(exact_keys.residue(track, made, anim.settle))
    if kept:
        action[PROP] = exact_keys.encode(kept)


def record(action: bpy.types.Action) -> list[exact_keys.KeptTrack] | None:
    """The kept keys of ``action`` (None when it has none), decoded; a damaged
    record raises a ``FormatError`` naming the action."""
    data = action.get(PROP)
    if not isinstance(data, bytes | str):
        return None
    return exact_keys.decode(data, f"the kept keys of action {action.name!r} ({PROP})")


def legacy_rest(kept: list[exact_keys.KeptTrack] | None) -> bool:
    """Whether ``kept`` (:func:`record`) hashed tracks rebuilt with the LAPACK rest
    of older builds (``build.rest_relative(legacy=True)``)."""
    return bool(kept) and kept[0].version in exact_keys.LEGACY_REST


def restore(
    action: bpy.types.Action,
    tracks: list[BoneTrack],
    result: Result | None = None,
    kept: list[exact_keys.KeptTrack] | None = None,
    given: dict[str, frozenset[str] | None] | None = None,
) -> list[BoneTrack]:
    """``tracks`` (read from ``action``'s F-curves) with the file's exact keys for
    the unedited ones and the kept tracks of bones the armature lacks, in the
    file's order; ``result`` gets a line on the carried tracks and edited ones.
    ``kept``: the action's :func:`record` when the caller has read it; ``given``:
    what ``extract`` found of its version-4 given tracks (``exact_keys.restore``)."""
    kept = record(action) if kept is None else kept
    if kept is None:
        return tracks
    done = exact_keys.restore(tracks, kept, given)
    if result is not None:
        if done.carried:
            result.info(
                f"{action.name}: carried {counted(len(done.carried), 'track')} of bones the "
                f"armature lacks through from the imported file ({', '.join(done.carried)})"
            )
        if done.edited:
            result.info(
                f"{action.name}: {counted(done.edited, 'edited track')} written from Blender's "
                f"keys, {counted(done.exact, 'unedited one')} as the file had them"
            )
    return done.tracks
