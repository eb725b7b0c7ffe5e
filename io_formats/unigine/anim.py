"""Unigine ANIM files (``an10``): read and write every field, byte for byte.

Layout (unigine-mesh-anim.txt, FORMAT-NOTES): magic, bounds, bones (name,
int16 parent), animation names, magic, bind pose per bone, then per animation
its bone indices, a translation box and a scale box (minimum and size, float[3]
each), the animation's flag byte and the frame records, whose translations and
scales are uint16 in the boxes (``min + size * q / 65535``); closing magic.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..codec import Reader, Writer
from .common import (
    Bone,
    Frames,
    expect_magic,
    read_anim_bones,
    read_bind,
    read_bones,
    read_bounds,
    read_frames,
    read_names,
    write_anim_bones,
    write_bones,
    write_bounds,
    write_frames,
    write_names,
)

MAGIC = b"an10"


@dataclass
class AnimClip:
    name: str
    bones: np.ndarray  # (B,) int16 indices into the file's bones
    translation_min: np.ndarray  # (3,) float32
    translation_size: np.ndarray  # (3,) float32
    scale_min: np.ndarray  # (3,) float32
    scale_size: np.ndarray  # (3,) float32
    flag: int
    frames: Frames  # uint16 translations and scales in the boxes


@dataclass
class AnimFile:
    bounds: np.ndarray  # (10,) float32
    bones: list[Bone]
    bind: np.ndarray  # (N, 10) float32: position, rotation x y z w, scale
    animations: list[AnimClip]


def read(data: bytes) -> AnimFile:
    """Parse a whole an10 file; a FormatError names the offset of what is wrong."""
    r = Reader(data)
    expect_magic(r, MAGIC, "animation")
    bounds = read_bounds(r, "animation")
    bones = read_bones(r)
    names = read_names(r, "animation")
    r.expect(MAGIC, "second an10 magic")
    bind = read_bind(r, len(bones))
    clips = []
    for i, name in enumerate(names):
        what = f"animation {i} ({name!r})"
        idx = read_anim_bones(r, len(bones), what)
        boxes = r.array("<f4", (4, 3), f"{what} boxes")
        flag = r.u8()
        frames = read_frames(r, len(idx), "<u2", what)
        clips.append(AnimClip(name, idx, boxes[0], boxes[1], boxes[2], boxes[3], flag, frames))
    r.expect(MAGIC, "closing an10 magic")
    if not r.at_end():
        raise r.error(f"{r.remaining} bytes after the closing an10 magic")
    return AnimFile(bounds, bones, bind, clips)


def write(anim: AnimFile) -> bytes:
    w = Writer()
    w.bytes(MAGIC)
    write_bounds(w, anim.bounds)
    write_bones(w, anim.bones)
    write_names(w, [c.name for c in anim.animations])
    w.bytes(MAGIC)
    w.array(np.asarray(anim.bind).reshape(len(anim.bones), 10), "<f4")
    for c in anim.animations:
        write_anim_bones(w, c.bones)
        for box in (c.translation_min, c.translation_size, c.scale_min, c.scale_size):
            w.array(box, "<f4")
        w.u8(c.flag)
        write_frames(w, c.frames, "<u2")
    w.bytes(MAGIC)
    return w.getvalue()
