"""Urho3D animation files (``UANI`` and rbfx's ``UAN2``): lossless read and write.

``UAN2`` adds a uint32 version after the magic. Version 2 appends a list of
variant tracks (animated attribute values of any Variant type); version 3
adds a float weight to every bone track and every variant track.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

import numpy as np

from ..codec import FormatError, Reader, Writer

MAGIC = b"UANI"
MAGIC_V2 = b"UAN2"
UAN2_VERSIONS = (1, 2, 3)
VARIANT_TRACK_VERSION = 2
TRACK_WEIGHT_VERSION = 3
CHANNEL_POSITION = 1
CHANNEL_ROTATION = 2
CHANNEL_SCALE = 4
INTERPOLATION_TANGENT_SPLINE = 3

# rbfx VariantType values whose binary form has a fixed size, and that size.
VARIANT_SIZES = {
    1: 4,  # int
    2: 1,  # bool
    3: 4,  # float
    4: 8,  # Vector2
    5: 12,  # Vector3
    6: 16,  # Vector4
    7: 16,  # Quaternion
    8: 16,  # Color
    16: 16,  # IntRect
    17: 8,  # IntVector2
    19: 36,  # Matrix3
    20: 48,  # Matrix3x4
    21: 64,  # Matrix4
    22: 8,  # double
    24: 16,  # Rect
    25: 12,  # IntVector3
    26: 8,  # int64
}
VARIANT_STRING = 9
VARIANT_NAMES = {
    1: "Int",
    2: "Bool",
    3: "Float",
    4: "Vector2",
    5: "Vector3",
    6: "Vector4",
    7: "Quaternion",
    8: "Color",
    9: "String",
    16: "IntRect",
    17: "IntVector2",
    19: "Matrix3",
    20: "Matrix3x4",
    21: "Matrix4",
    22: "Double",
    24: "Rect",
    25: "IntVector3",
    26: "Int64",
}


@functools.lru_cache(maxsize=16)
def keyframe_dtype(mask: int) -> np.dtype:
    """Record layout of one keyframe for a track's channel mask (made once per
    mask: a file has a handful of masks and many tracks)."""
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
    weight: float = 1.0  # UAN2 version 3+


@dataclass
class VariantTrack:
    """An animated attribute value (UAN2 version 2+).

    ``values`` holds one value per key: raw little-endian bytes, shape
    (keys, size), for fixed-size types, or a list of str for strings.
    ``tangents`` (tangent-spline interpolation only) holds an in and an out
    tangent per key in the same form, interleaved: in0, out0, in1, out1, ...
    """

    name: str
    value_type: int
    interpolation: int
    tension: float
    times: np.ndarray  # float32
    values: np.ndarray | list[str]
    tangents: np.ndarray | list[str] | None = None
    weight: float = 1.0  # version 3+


@dataclass
class Animation:
    name: str
    length: float
    tracks: list[Track]
    version: int | None = None  # None: UANI; else the UAN2 version
    variant_tracks: list[VariantTrack] = field(default_factory=list)

    @property
    def magic(self) -> bytes:
        return MAGIC if self.version is None else MAGIC_V2


def read(data: bytes) -> Animation:
    r = Reader(data)
    magic = r.bytes(4) if r.remaining >= 4 else r.rest()
    if magic not in (MAGIC, MAGIC_V2):
        raise FormatError(f"not an Urho3D animation: magic {magic!r}, expected UANI or UAN2", 0)
    version = None
    if magic == MAGIC_V2:
        version = r.u32()
        if version not in UAN2_VERSIONS:
            raise r.error(f"unsupported UAN2 version {version}, expected 1, 2 or 3", 4)
    weights = (version or 0) >= TRACK_WEIGHT_VERSION
    name = r.cstring()
    length = r.f32_exact()
    tracks = []
    for _ in range(r.count(r.u32(), 10 if weights else 6, "track")):
        tname = r.cstring()
        mask_at = r.pos
        mask = r.u8()
        if mask & ~7:
            raise r.error(f"track mask 0x{mask:02X} has unknown bits", mask_at)
        weight = r.f32_exact() if weights else 1.0
        dtype = keyframe_dtype(mask)
        n = r.count(r.u32(), dtype.itemsize, "keyframe")
        tracks.append(Track(tname, mask, _keys(r, mask, n), weight))
    anim = Animation(name, length, tracks, version)
    if (version or 0) >= VARIANT_TRACK_VERSION:
        anim.variant_tracks = read_variant_tracks(r, weights)
    if r.remaining:
        raise r.error(f"{r.remaining} unexpected bytes after the last track")
    return anim


def _keys(r: Reader, mask: int, n: int) -> np.ndarray:
    """``n`` keyframes of channel ``mask`` (little-endian) as a native copy:
    ``Reader.array`` without working out its dtype and shape again for every track."""
    dtype = keyframe_dtype(mask)
    size = n * dtype.itemsize
    r.need(size, "keyframes")
    keys = np.frombuffer(r.data, dtype, n, r.pos)
    native = _native(mask)
    keys = keys.copy() if native is dtype else keys.astype(native)
    r.pos += size
    return keys


@functools.lru_cache(maxsize=16)
def _native(mask: int) -> np.dtype:
    """:func:`keyframe_dtype` in native byte order (itself on a little-endian machine)."""
    dtype = keyframe_dtype(mask)
    native = dtype.newbyteorder("=")
    return dtype if native == dtype else native


def read_variant_tracks(r: Reader, weights: bool) -> list[VariantTrack]:
    out = []
    for _ in range(r.count(r.u32(), 15 if weights else 11, "variant track")):
        name = r.cstring()
        type_at = r.pos
        vtype = r.u8()
        if vtype not in VARIANT_SIZES and vtype != VARIANT_STRING:
            raise r.error(f"variant track {name!r}: value type {vtype} is not supported", type_at)
        interpolation = r.u8()
        tension = r.f32_exact()
        weight = r.f32_exact() if weights else 1.0
        size = VARIANT_SIZES.get(vtype, 1)
        n = r.count(r.u32(), 4 + size, "variant keyframe")
        spline = interpolation == INTERPOLATION_TANGENT_SPLINE
        if vtype == VARIANT_STRING:
            times = np.zeros(n, np.float32)
            values: np.ndarray | list[str] = []
            for k in range(n):
                times[k] = r.f32_exact()
                values.append(r.cstring())
            tangents = [r.cstring() for _ in range(2 * n)] if spline else None
        else:
            keys = r.array(np.dtype([("time", "<f4"), ("value", "u1", (size,))]), n, "keyframes")
            times, values = keys["time"].copy(), keys["value"].copy()
            tangents = r.array("u1", (2 * n, size), "tangents") if spline else None
        out.append(
            VariantTrack(name, vtype, interpolation, tension, times, values, tangents, weight)
        )
    return out


def write_variant_tracks(w: Writer, tracks: list[VariantTrack], weights: bool) -> None:
    w.u32(len(tracks))
    for t in tracks:
        w.cstring(t.name)
        w.u8(t.value_type)
        w.u8(t.interpolation)
        w.f32(t.tension)
        if weights:
            w.f32(t.weight)
        w.u32(len(t.times))
        if t.value_type == VARIANT_STRING:
            for time, value in zip(t.times, t.values, strict=True):
                w.f32(np.float32(time))
                w.cstring(value)
            if t.interpolation == INTERPOLATION_TANGENT_SPLINE:
                for value in t.tangents or []:
                    w.cstring(value)
        else:
            size = VARIANT_SIZES[t.value_type]
            keys = np.zeros(len(t.times), np.dtype([("time", "<f4"), ("value", "u1", (size,))]))
            keys["time"] = t.times
            keys["value"] = t.values
            w.bytes(keys.tobytes())
            if t.interpolation == INTERPOLATION_TANGENT_SPLINE:
                w.bytes(np.ascontiguousarray(t.tangents, np.uint8).tobytes())


def write(anim: Animation) -> bytes:
    w = Writer()
    w.bytes(anim.magic)
    if anim.version is not None:
        if anim.version not in UAN2_VERSIONS:
            raise ValueError(f"cannot write UAN2 version {anim.version}")
        w.u32(anim.version)
    weights = (anim.version or 0) >= TRACK_WEIGHT_VERSION
    w.cstring(anim.name)
    w.f32(anim.length)
    w.u32(len(anim.tracks))
    for t in anim.tracks:
        w.cstring(t.name)
        w.u8(t.mask)
        if weights:
            w.f32(t.weight)
        w.u32(len(t.keys))
        w.bytes(np.ascontiguousarray(t.keys, keyframe_dtype(t.mask)).tobytes())
    if (anim.version or 0) >= VARIANT_TRACK_VERSION:
        write_variant_tracks(w, anim.variant_tracks, weights)
    elif anim.variant_tracks:
        raise ValueError("variant tracks need UAN2 version 2 or later")
    return w.getvalue()
