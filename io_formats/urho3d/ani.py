"""Urho3D animation files (``UANI``): lossless read and write."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..codec import FormatError, Reader, Writer

MAGIC = b"UANI"
CHANNEL_POSITION = 1
CHANNEL_ROTATION = 2
CHANNEL_SCALE = 4


def keyframe_dtype(mask: int) -> np.dtype:
    """Record layout of one keyframe for a track's channel mask."""
    fields: list[tuple] = [("time", "<f4")]
    if mask & CHANNEL_POSITION:
        fields.append(("position", "<f4", (3,)))
    if mask & CHANNEL_ROTATION:
        fields.append(("rotation", "<f4", (4,)))  # w x y z
    if mask & CHANNEL_SCALE:
        fields.append(("scale", "<f4", (3,)))
    return np.dtype(fields)


@dataclass
class Track:
    name: str
    mask: int
    keys: np.ndarray  # structured, see keyframe_dtype


@dataclass
class Animation:
    name: str
    length: float
    tracks: list[Track]


def read(data: bytes) -> Animation:
    r = Reader(data)
    magic = r.bytes(4) if r.remaining >= 4 else r.rest()
    if magic != MAGIC:
        if magic == b"UAN2":
            raise FormatError("UAN2 (rbfx) animations are not supported yet", 0)
        raise FormatError(f"not an Urho3D animation: magic {magic!r}, expected UANI", 0)
    name = r.cstring()
    length = r.f32()
    tracks = []
    for _ in range(r.count(r.u32(), 6, "track")):
        tname = r.cstring()
        mask_at = r.pos
        mask = r.u8()
        if mask & ~7:
            raise r.error(f"track mask 0x{mask:02X} has unknown bits", mask_at)
        dtype = keyframe_dtype(mask)
        n = r.count(r.u32(), dtype.itemsize, "keyframe")
        tracks.append(Track(tname, mask, r.array(dtype, n, "keyframes")))
    if r.remaining:
        raise r.error(f"{r.remaining} unexpected bytes after the last track")
    return Animation(name, length, tracks)


def write(anim: Animation) -> bytes:
    w = Writer()
    w.bytes(MAGIC)
    w.cstring(anim.name)
    w.f32(anim.length)
    w.u32(len(anim.tracks))
    for t in anim.tracks:
        w.cstring(t.name)
        w.u8(t.mask)
        w.u32(len(t.keys))
        w.bytes(np.ascontiguousarray(t.keys, keyframe_dtype(t.mask)).tobytes())
    return w.getvalue()
