"""Unigine ANIM files <-> neutral animations."""

from __future__ import annotations

import json
import uuid

import numpy as np

from ..scene import Animation, Skeleton
from ..transforms import compose_trs, world_from_local
from .anim import AnimFile
from .anim_convert import clip_to_neutral, to_clip
from .common import FRAME_RATE, compute_bounds
from .mesh_export import animation_frames, skeleton_bind, skeleton_bones

SOURCE_KEY = "_unigine_source"  # the file name and a token of the import it came from
CLIP_KEY = "_unigine_clip"
BOUNDS_KEY = "unigine_bounds"


def import_anim_file(a: AnimFile, source: str, fps: float = FRAME_RATE) -> list[Animation]:
    """One neutral animation per clip; each remembers its file, place and bounds.

    ``source`` gets a random token so that the clips of one import stay together even
    when the same file is imported twice."""
    source = f"{source}#{uuid.uuid4().hex[:12]}"
    names = [b.name for b in a.bones]
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
    """An ANIM file of ``anims`` (each with its frame rate) for ``skeleton`` (file order)."""
    clips = []
    for anim, fps in anims:
        index, t, q, s, flag = animation_frames(anim, skeleton, fps)
        clips.append(to_clip(anim, index, t, q, s, flag))
    return AnimFile(
        _bounds([a for a, _ in anims], skeleton),
        skeleton_bones(skeleton),
        skeleton_bind(skeleton),
        clips,
    )
