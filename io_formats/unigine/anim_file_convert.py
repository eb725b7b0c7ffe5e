"""Unigine ANIM files <-> neutral animations."""

from __future__ import annotations

import base64
import json
import uuid

import numpy as np

from ..codec import FormatError
from ..scene import Animation, Skeleton
from ..transforms import compose_trs, world_from_local
from .anim import AnimFile
from .anim_convert import BOXES_KEY, boxes_record, clip_to_neutral, to_clip
from .common import FRAME_RATE, Bone, compute_bounds
from .mesh_export import animation_frames, skeleton_bind, skeleton_bones
from .mesh_import import skeleton_from_file

SOURCE_KEY = "_unigine_source"  # the file name and a token of the import it came from
CLIP_KEY = "_unigine_clip"
BOUNDS_KEY = "unigine_bounds"
#: The file's skeleton header (bones, parents, bind pose), which may list bones the
#: armature lacks ("Nub" end bones) and leave out some it has.
HEADER_KEY = "unigine_header"


def header_record(a: AnimFile) -> str:
    """The file's skeleton header as a JSON text: bone names and parents, and the
    bind pose's float32 bytes."""
    bind = np.ascontiguousarray(np.asarray(a.bind, "<f4").reshape(len(a.bones), 10))
    return json.dumps(
        {
            "bones": [[b.name, b.parent] for b in a.bones],
            "bind": base64.b64encode(bind.tobytes()).decode("ascii"),
        },
        separators=(",", ":"),
    )


def _parse_header(value) -> tuple[list[Bone], np.ndarray] | None:
    """A header record (the JSON text, or the dict the Blender side decodes it to)."""
    try:
        d = json.loads(value) if isinstance(value, str) else value
        bones = [Bone(str(n), int(p)) for n, p in d["bones"]]
        raw = base64.b64decode(str(d["bind"]).encode("ascii"), validate=True)
    except (ValueError, KeyError, TypeError):
        return None
    if len(raw) != len(bones) * 40 or any(not -1 <= b.parent < len(bones) for b in bones):
        return None
    return bones, np.frombuffer(raw, "<f4").reshape(len(bones), 10).copy()


def kept_header(anims: list[Animation]) -> tuple[list[Bone], np.ndarray, Skeleton] | None:
    """The skeleton header the animations were imported with, while it still holds:
    all of them came with the same one and it lists every bone they key. None
    otherwise (a Blender-made action, clips of several files, a bone keyed since)."""
    records = {json.dumps(a.extras.get(HEADER_KEY), sort_keys=True) for a in anims}
    if len(records) != 1 or not anims:
        return None
    parsed = _parse_header(anims[0].extras.get(HEADER_KEY))
    if parsed is None:
        return None
    bones, bind = parsed
    names = {b.name for b in bones}
    if len(names) != len(bones):
        return None
    if any(t.bone not in names for a in anims for t in a.tracks if len(t.times)):
        return None
    try:
        skeleton = skeleton_from_file(bones, bind)
    except FormatError:
        return None
    return bones, bind, skeleton


def import_anim_file(a: AnimFile, source: str, fps: float = FRAME_RATE) -> list[Animation]:
    """One neutral animation per clip; each remembers its file, place and bounds.

    ``source`` gets a random token so that the clips of one import stay together even
    when the same file is imported twice."""
    source = f"{source}#{uuid.uuid4().hex[:12]}"
    names = [b.name for b in a.bones]
    header = header_record(a)
    return [
        clip_to_neutral(
            c,
            names,
            a.bind,
            fps,
            {
                SOURCE_KEY: source,
                CLIP_KEY: i,
                BOUNDS_KEY: json.dumps([float(v) for v in a.bounds]),
                HEADER_KEY: header,
                BOXES_KEY: boxes_record(c),
            },
        )
        for i, c in enumerate(a.animations)
    ]


def _bounds(anims: list[Animation], skeleton: Skeleton) -> np.ndarray:
    for anim in anims:
        stored = anim.extras.get(BOUNDS_KEY)
        if isinstance(stored, str):
            stored = json.loads(stored)
        if isinstance(stored, list) and len(stored) == 10:
            return np.array(stored, np.float32)
    local = compose_trs(skeleton.local_translation, skeleton.local_rotation, skeleton.local_scale)
    return compute_bounds(world_from_local(local, skeleton.parents)[:, :3, 3])


def export_anim_file(anims: list[tuple[Animation, float]], skeleton: Skeleton) -> AnimFile:
    """An ANIM file of ``anims`` (each with its frame rate) for ``skeleton`` (file
    order): under the skeleton header they were imported with while it holds
    (:func:`kept_header`), else under the armature's."""
    kept = kept_header([a for a, _ in anims])
    if kept is not None:
        bones, bind, skeleton = kept
    else:
        bones, bind = skeleton_bones(skeleton), skeleton_bind(skeleton)
    clips = []
    for anim, fps in anims:
        index, t, q, s, flag = animation_frames(anim, skeleton, fps)
        clips.append(to_clip(anim, index, t, q, s, flag))
    return AnimFile(_bounds([a for a, _ in anims], skeleton), bones, bind, clips)
