"""Stored records of straight-line curves: only the key times Blender cannot give back.

A curve of lines or steps whose other fields are the same in every key (a 1.1
simple curve, a hand's bool state, MRTK's recorder keys: tangents and weights 0,
weighted mode Both) is given by its key times and values alone. Blender holds
each value exactly (a float32, at most negated) and each time as the float32
frame ``time * fps``; ``frame / fps`` gives the file's time back for about 94 %
of keys. The record keeps the others, by index, and the constant fields once: a
10-minute recording's records are a few MB instead of 111 MB, and an export
rebuilds the file's keys from Blender's without comparing every key first. Any
edit that keeps the curve straight is written as the same kind of keys.

Layout: ``L``; pre and post wrap (int32); key count (uint32); 1 for full keys,
else 0 (uint8); for full keys the bits of the five constant fields (int32:
in and out tangent, in and out weight, weighted mode); the count of keys whose
time is kept (uint32), their indices (uint32, increasing) and times (float32).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np

from . import keys as kc
from .recording import FULL_KEY, Curve

TAG = b"L"
_HEAD = struct.Struct("<iiIB")


def _frames_back(x: np.ndarray, fps: float) -> np.ndarray:
    """Float32 seconds of float32 frames, computed in float64 and rounded once."""
    out = np.empty(len(x), np.float32)
    kc.divide_once(x, fps, out)
    return out


def _values_held(co: np.ndarray, sign: float, values: np.ndarray, copied: bool = False) -> bool:
    """Whether Blender's values ``co[:, 1]``, times ``sign``, are the file's
    ``values`` bit for bit. ``copied``: ``co``'s values are ``values`` times ``sign``
    as ``keys.unity_to_keyframes`` makes them; negated twice, every number but a
    NaN (whose bits the products may change) comes back as it was."""
    if copied and sign == -1.0 and not np.isnan(co[:, 1]).any():
        return True
    back = co[:, 1]
    if sign != 1.0:
        back = np.empty(len(co), np.float32)
        kc.scale_once(co[:, 1], sign, back)
    return bool((back.view("<i4") == values.view("<i4")).all())


def _kept_part(times: np.ndarray, back: np.ndarray) -> bytes:
    """The record's count, indices and times of the keys whose ``times`` are not the
    ``back`` Blender's frames give."""
    kept = np.flatnonzero(back.view("<i4") != times.view("<i4"))
    return b"".join(
        (
            struct.pack("<I", len(kept)),
            kept.astype("<u4").tobytes(),
            times[kept].astype("<f4").tobytes(),
        )
    )


def kept_times(times: np.ndarray, fps: float) -> bytes:
    """The part of a line record that keeps the times of keys at ``times`` (float32)
    imported as frames at ``fps`` that ``frame / fps`` does not give back."""
    back = np.empty(len(times), np.float32)
    kc.scale_once(times, fps, back)
    kc.divide_once(back, fps, back)
    return _kept_part(times, back)


class KeptTimes:
    """:func:`kept_times` of the times array asked for last, remembered: curves that
    share one times array (``recording.Curve.loaded`` with a ``recording.Loading``)
    need it once."""

    def __init__(self) -> None:
        self._last: tuple[np.ndarray, float, bytes] | None = None

    def __call__(self, times: np.ndarray, fps: float) -> bytes:
        last = self._last
        if last is None or last[0] is not times or last[1] != fps:
            last = self._last = (times, fps, kept_times(times, fps))
        return last[2]


def pack_line_record(
    c: Curve,
    co: np.ndarray,
    fps: float,
    sign: float,
    constant: frozenset[str],
    copied: bool = False,
    kept: KeptTimes | None = None,
) -> bytes | None:
    """The line record of ``c`` as imported to Blender keys ``co`` (float32 frames), or
    None when the curve is not one (Bezier keys, fields that vary, values Blender
    would not give back bit for bit). ``copied``: ``co`` is what
    ``keys.unity_to_keyframes`` made of ``c``, whose values with sign 1 are the
    keys' own float32 bits, so they need no comparing; ``kept``: remembers the
    kept times of the curve before when ``c`` shares its times array."""
    keys = c.keys
    k = len(keys)
    full = keys.dtype.names == FULL_KEY.names
    if not k or len(co) != k:
        return None
    if full and not (constant.issuperset(kc.RECORDER_FIELDS) and kc.recorder_keys(keys, constant)):
        return None
    if not (sign == 1.0 and copied) and not _values_held(co, sign, keys["value"], copied):
        return None
    parts = [TAG, _HEAD.pack(c.pre_wrap, c.post_wrap, k, int(full))]
    if full:
        parts.append(keys[:1].tobytes()[8:])  # the five fields after time and value
    if copied and c.times is not None:
        # co's frames are the times scaled (scale_once): made again from the times,
        # which sit side by side, rather than read from between co's values
        parts.append((kept or kept_times)(c.times, fps))
    else:
        parts.append(_kept_part(keys["time"], _frames_back(co[:, 0], fps)))
    return b"".join(parts)


@dataclass
class LineRecord:
    pre_wrap: int
    post_wrap: int
    count: int  # keys at import
    constants: np.ndarray | None  # int32 bits of the five constant fields (full keys)
    index: np.ndarray  # keys whose exact time is kept
    times: np.ndarray  # their times (float32)

    def times_for(self, x: np.ndarray, fps: float) -> np.ndarray:
        """Float64 seconds of Blender's key frames ``x``: the file's exact time where
        a key still sits where the import put it, else ``frame / fps``."""
        t = x.astype(np.float64) / fps
        self._kept_times(t, x, fps)
        return t

    def _kept_times(self, t: np.ndarray, x: np.ndarray, fps: float) -> None:
        """The file's exact times into ``t`` (seconds of Blender's frames ``x``) where a
        key still sits where the import put it."""
        if not len(self.index) or not len(x):
            return
        at = (self.times.astype(np.float64) * fps).astype(np.float32)
        if len(x) == self.count:  # keys neither added nor removed: by index
            hit = x[self.index] == at
            t[self.index[hit]] = self.times[hit]
            return
        if np.any(np.diff(at) < 0):
            return
        pos = np.minimum(np.searchsorted(at, x), len(at) - 1)
        hit = at[pos] == x
        t[hit] = self.times[pos[hit]]

    def keys_for(self, co: np.ndarray, fps: float, sign: float, dtype: np.dtype) -> np.ndarray:
        """Unity keys of ``dtype`` for Blender keys ``co`` that are all straight: exact
        times where kept, the values Blender holds, the constant fields; simple keys
        as full ones are straight too (weighted both sides, weights 0)."""
        k = len(co)
        out = np.empty(k, dtype)
        if dtype == FULL_KEY:
            consts = self.constants
            if consts is None:  # simple keys as MRTK reads them: straight segments
                consts = np.array([0, 0, 0, 0, kc.WEIGHTED_IN | kc.WEIGHTED_OUT], "<i4")
            for name, bits in zip(kc.RECORDER_FIELDS, consts, strict=True):
                out[name].view("<i4")[:] = bits  # field by field: five times faster than rows
        # straight into the float32 field: float64 quotients rounded once, as times_for
        # gives them, with no float64 copy of the curve
        x, t = co[:, 0], out["time"]
        np.divide(x, fps, out=t, dtype=np.float64, casting="same_kind")
        self._kept_times(t, x, fps)
        if sign == 1.0:  # the bits Blender holds, a signalling NaN's too
            out["value"] = co[:, 1]
        else:
            kc.scale_once(co[:, 1], sign, out["value"])
        return out


def unpack_line_record(data: bytes) -> LineRecord | None:
    """The record :func:`pack_line_record` made; None for anything else or a damaged one."""
    if len(data) < 1 + _HEAD.size or data[:1] != TAG:
        return None
    pre, post, count, full = _HEAD.unpack_from(data, 1)
    at = 1 + _HEAD.size
    constants = None
    if full == 1:
        if len(data) < at + 20:
            return None
        constants = np.frombuffer(data, "<i4", 5, at).copy()
        at += 20
    elif full != 0:
        return None
    if len(data) < at + 4:
        return None
    (m,) = struct.unpack_from("<I", data, at)
    at += 4
    if m > count or len(data) != at + 8 * m:
        return None
    index = np.frombuffer(data, "<u4", m, at).astype(np.int64)
    times = np.frombuffer(data, "<f4", m, at + 4 * m)
    if m and (index[-1] >= count or np.any(np.diff(index) <= 0)):
        return None
    return LineRecord(pre, post, count, constants, index, times)


def straight_code(boolean: bool) -> int:
    """The interpolation an import gives every key of a line record's curve."""
    return kc.CONSTANT if boolean else kc.LINEAR
