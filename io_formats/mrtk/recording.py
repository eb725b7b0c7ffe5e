"""MRTK input animation recordings (binary, versions 1.0 and 1.1): lossless read and write.

Layout (little-endian, .NET BinaryWriter): int64 magic, int32 major, int32
minor; then (1.1 only) three 1-byte presence flags for camera, hands and eye
gaze; the camera pose curves; the four hand state bool curves and 27 x 7
joint curves per hand; (1.1 only) the six gaze ray curves; and a marker list
(int32 count, then per marker a float32 time and a .NET string).

Version 1.1 float curves come in two layouts that the header does not tell
apart: "simple" (time and value per key; what MRTK's own serializer writes)
and "full" (time, value, tangents, weights and weighted mode; what the
documentation describes). :func:`read` parses the whole file in both and keeps
the layout that consumes it exactly.
"""

from __future__ import annotations

import os
import stat
import struct
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import partial
from typing import BinaryIO

import numpy as np

from ..codec import FileReader, FormatError, Reader, Writer
from .key_checks import TailCheck, constant_fields, times_in_order

MAGIC = 0x6A8FAF6E0F9E42C6
SUPPORTED = ((1, 0), (1, 1))

FULL = "full"
SIMPLE = "simple"

#: Unity's AnimationCurve keyframe as the documentation describes it (28 bytes).
FULL_KEY = np.dtype(
    [
        ("time", "<f4"),
        ("value", "<f4"),
        ("in_tangent", "<f4"),
        ("out_tangent", "<f4"),
        ("in_weight", "<f4"),
        ("out_weight", "<f4"),
        ("weighted_mode", "<i4"),
    ]
)
#: (time, value): bool curves in every version, float curves in simple 1.1 files.
SIMPLE_KEY = np.dtype([("time", "<f4"), ("value", "<f4")])

#: Unity WrapMode values.
WRAP_DEFAULT, WRAP_ONCE, WRAP_LOOP, WRAP_PINGPONG, WRAP_CLAMP_FOREVER = 0, 1, 2, 4, 8
WRAP_MODES = (WRAP_DEFAULT, WRAP_ONCE, WRAP_LOOP, WRAP_PINGPONG, WRAP_CLAMP_FOREVER)
#: Unity WeightedMode bits: 1 = the in side is weighted, 2 = the out side.
WEIGHTED_IN, WEIGHTED_OUT = 1, 2

JOINTS = (
    "None",
    "Wrist",
    "Palm",
    "ThumbMetacarpalJoint",
    "ThumbProximalJoint",
    "ThumbDistalJoint",
    "ThumbTip",
    *(
        f"{finger}{part}"
        for finger in ("Index", "Middle", "Ring", "Pinky")
        for part in ("Metacarpal", "Knuckle", "MiddleJoint", "DistalJoint", "Tip")
    ),
)
POSE_CURVES = ("position.x", "position.y", "position.z", "rotation.x", "rotation.y",
               "rotation.z", "rotation.w")  # fmt: skip
RAY_CURVES = ("origin.x", "origin.y", "origin.z", "direction.x", "direction.y", "direction.z")
HAND_STATES = ("tracked.left", "tracked.right", "pinch.left", "pinch.right")


class KeysLater:
    """``count`` keys of ``dtype`` that ``make()`` makes when they are needed: for an
    export when the file is written, for an import of :func:`opened` when the build
    reaches the curve (:meth:`Curve.loaded`).

    A 10-minute recording has 390 MB of keys: made one curve at a time, each
    curve's keys take the memory the previous curve's left, instead of 390 MB of
    new pages (a page fault each) that are all held at once.
    """

    def __init__(self, count: int, dtype: np.dtype, make: Callable[[], np.ndarray]):
        self.count = count
        self.dtype = dtype
        self.make = make

    def __len__(self) -> int:
        return self.count

    def keys(self) -> np.ndarray:
        """The keys, checked to be the ``count`` keys of ``dtype`` promised."""
        keys = self.make()
        if keys.dtype != self.dtype or len(keys) != self.count:
            raise ValueError(f"curve keys made late are not {self.count} keys of {self.dtype}")
        return keys


class Loading:
    """What the curves of one import, loaded one after another (:meth:`Curve.loaded`),
    share: the curve loaded last, whose times array a curve keyed alike takes, and
    the buffer of :class:`.key_checks.TailCheck`."""

    def __init__(self) -> None:
        self.last: Curve | None = None
        self.tails = TailCheck()


@dataclass
class Curve:
    """One Unity AnimationCurve: wrap modes and keys (FULL_KEY or SIMPLE_KEY records;
    read-only views of the file's bytes after :func:`read`; :class:`KeysLater` from
    :func:`read_open` until :meth:`loaded`, and from an export, which
    :func:`write_parts` and :func:`write` take as they are)."""

    pre_wrap: int
    post_wrap: int
    keys: np.ndarray | KeysLater
    offset: int | None = field(default=None, compare=False)  # where it starts in the file
    #: what :func:`read` found while the keys were in the CPU's cache (None: not
    #: looked at): times in order (:func:`.key_checks.times_in_order`), fields the
    #: same in every key (:func:`.key_checks.constant_fields`)
    ordered: bool | None = field(default=None, compare=False, repr=False)
    constant: frozenset[str] | None = field(default=None, compare=False, repr=False)
    #: the keys' times as one contiguous float32 array, for keys :meth:`loaded` (the
    #: checks copy them out of the records once; each later pass over them then reads
    #: 4 bytes a key instead of a record's cache line)
    times: np.ndarray | None = field(default=None, compare=False, repr=False)

    @classmethod
    def empty(cls, dtype: np.dtype = FULL_KEY) -> Curve:
        return cls(WRAP_CLAMP_FOREVER, WRAP_CLAMP_FOREVER, np.zeros(0, dtype))

    def loaded(self, loading: Loading | None = None) -> Curve:
        """This curve with its keys in memory and checked as :func:`read` checks them
        (itself when they are).

        ``loading``: what the curves of one import share. Where the times of the
        curve loaded before are this curve's, bit for bit, the two share one times
        array (``times is loading.last.times``) and its order check: MRTK's
        recorder keys the curves of a frame at the same times, and what is worked
        out from the times alone is then worked out once."""
        if not isinstance(self.keys, KeysLater):
            return self
        keys = self.keys.keys()
        at = None if self.offset is None else self.offset + 12
        tails = None if loading is None else loading.tails
        like = None if loading is None else loading.last
        shared = like.times if like is not None and like.ordered else None
        if shared is not None and len(shared) != len(keys):
            shared = None
        times = ordered = None
        alike = False
        tried = shared is not None and tails is not None and tails.holds(shared)
        if tried:
            # one comparison: the curve before's times, and every key's other fields
            # the first key's (the recorder's curves, the usual case)
            alike = _tails_alike(keys, shared, tails)
            if alike:
                times, ordered = shared, True
        if times is None:
            times = np.ascontiguousarray(keys["time"])
            # compared once copied out: a pass over 4 bytes a key, not the records
            if shared is not None and (times.view("<u4") == shared.view("<u4")).all():
                times, ordered = shared, True
            if not (tried and times is shared):  # else that comparison has answered
                alike = _tails_alike(keys, times, tails)
        out = replace(self, keys=keys, times=times).checked(at, ordered, alike)
        if loading is not None:
            loading.last = out
        return out

    def checked(self, at: int | None, ordered: bool | None = None, alike: bool = False) -> Curve:
        """This curve with :func:`check_keys`' findings (``at``: where its keys start;
        ``ordered``: whether its times are in order, when already known; ``alike``:
        see :func:`check_keys`)."""
        self.ordered, self.constant = check_keys(self.keys, at, self.times, ordered, alike)
        return self

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Curve):
            return NotImplemented
        return (
            (self.pre_wrap, self.post_wrap) == (other.pre_wrap, other.post_wrap)
            and self.keys.dtype == other.keys.dtype
            and self.keys.tobytes() == other.keys.tobytes()
        )


@dataclass
class Hands:
    """Hand tracking: four bool curves and 27 joints x 7 pose curves per hand."""

    tracked_left: Curve
    tracked_right: Curve
    pinch_left: Curve
    pinch_right: Curve
    left: list[list[Curve]]  # [joint][pose curve]
    right: list[list[Curve]]

    def states(self) -> list[Curve]:
        return [self.tracked_left, self.tracked_right, self.pinch_left, self.pinch_right]


@dataclass
class Marker:
    time: float  # float32 value
    name: str  # invalid UTF-8 survives as surrogate escapes


@dataclass
class Recording:
    major: int
    minor: int
    layout: str  # FULL or SIMPLE: how float curves store keys
    camera: list[Curve] | None  # 7 pose curves
    hands: Hands | None
    gaze: list[Curve] | None  # 6 ray curves (1.1 only)
    markers: list[Marker] = field(default_factory=list)

    @property
    def version(self) -> tuple[int, int]:
        return (self.major, self.minor)

    def float_curves(self) -> Iterator[tuple[str, Curve]]:
        """Every float curve with a dotted name, in file order."""
        if self.camera is not None:
            for name, c in zip(POSE_CURVES, self.camera, strict=True):
                yield f"camera.{name}", c
        if self.hands is not None:
            for side, joints in (("left", self.hands.left), ("right", self.hands.right)):
                for joint, curves in zip(JOINTS, joints, strict=True):
                    for name, c in zip(POSE_CURVES, curves, strict=True):
                        yield f"hand.{side}.{joint}.{name}", c
        if self.gaze is not None:
            for name, c in zip(RAY_CURVES, self.gaze, strict=True):
                yield f"gaze.{name}", c

    def bool_curves(self) -> Iterator[tuple[str, Curve]]:
        if self.hands is not None:
            yield from zip(HAND_STATES, self.hands.states(), strict=True)


# --------------------------------------------------------------------------
# reading


def _wrap(r: Reader, what: str) -> int:
    at = r.pos
    mode = r.i32()
    if mode not in WRAP_MODES:
        raise r.error(f"{what} wrap mode {mode} is not a Unity WrapMode {WRAP_MODES}", at)
    return mode


def check_keys(
    keys: np.ndarray,
    at: int | None = None,
    times: np.ndarray | None = None,
    ordered: bool | None = None,
    alike: bool = False,
) -> tuple[bool, frozenset[str]]:
    """Whether the keys' times are in order, and which fields every key has the same
    (:mod:`.key_checks`); a FormatError for a weighted mode out of 0..3. ``at``: the
    file offset of the first key, for the error; ``times``: the keys' times, when
    already copied out of them; ``ordered``: whether they are in order, when known;
    ``alike``: full keys known to have the first key's fields after time and value
    (:func:`_tails_alike`)."""
    n = len(keys)
    known = {}
    if "weighted_mode" in keys.dtype.names and n:
        # a negative mode is a large number unsigned; one pass tells whether every
        # key has the first one's mode (MRTK's recorder: all Both), and then the
        # first answers for all
        mode = keys["weighted_mode"].view("<u4")
        first = int(mode[0])
        if alike:  # the first key's mode, weights and tangents in every key
            known = dict.fromkeys(FULL_KEY.names[2:], True)
            same = True
        else:
            same = n > 1 and int(mode[1]) == first and bool((mode == first).all())
            known["weighted_mode"] = same
        if first > 3 if same else (mode > 3).any():
            i = int(np.flatnonzero(mode > 3)[0])
            raise FormatError(
                f"weighted mode {int(keys['weighted_mode'][i])} of key {i} is not 0..3",
                None if at is None else at + i * keys.dtype.itemsize + 24,
            )
    if ordered is None:
        ordered = times_in_order(keys["time"] if times is None else times)
    return ordered, constant_fields(keys, known)


def _tails_alike(keys: np.ndarray, times: np.ndarray | None, tails: TailCheck | None) -> bool:
    """Whether ``tails`` finds that the keys are ``times`` and their values, every key
    with the first one's fields after those (full keys in one block); False where
    it cannot tell, or where the second key already differs."""
    return (
        tails is not None
        and times is not None
        and len(keys) > 1
        and keys.dtype == FULL_KEY
        and keys.flags.c_contiguous
        and keys[:1].tobytes()[8:] == keys[1:2].tobytes()[8:]
        and tails.alike(keys, times)
    )


def _curve(r: Reader, dtype: np.dtype) -> Curve:
    start = r.pos
    pre = _wrap(r, "pre")
    post = _wrap(r, "post")
    n = r.count(r.i32(), dtype.itemsize, "keyframe")
    keys_at = r.pos
    r.need(n * dtype.itemsize, "keyframes")
    r.pos += n * dtype.itemsize
    if isinstance(r, FileReader):  # read and checked by Curve.loaded
        return Curve(pre, post, KeysLater(n, dtype, partial(r.array_at, keys_at, dtype, n)), start)
    keys = np.frombuffer(r.data, dtype, n, keys_at)  # a read-only view: 14 M keys, no copy
    return Curve(pre, post, keys, start).checked(keys_at)


def _curves(r: Reader, n: int, dtype: np.dtype) -> list[Curve]:
    return [_curve(r, dtype) for _ in range(n)]


def _flag(r: Reader, what: str) -> bool:
    at = r.pos
    v = r.u8()
    if v > 1:
        raise r.error(f"{what} presence flag is {v}, expected 0 or 1", at)
    return v == 1


def _marker(r: Reader) -> Marker:
    time = r.f32_exact()
    n = r.uleb7()
    r.need(n, "marker name")
    return Marker(time, r.bytes(n).decode("utf-8", "surrogateescape"))


def read_header(r: Reader) -> tuple[int, int]:
    if r.remaining < 8:
        raise r.error(f"file of {r.remaining} bytes is too short for the 8-byte magic")
    magic = r.u64()
    if magic != MAGIC:
        raise r.error(
            f"not an MRTK input animation recording: magic 0x{magic:016X}, expected 0x{MAGIC:016X}",
            0,
        )
    major, minor = r.i32(), r.i32()
    if (major, minor) not in SUPPORTED:
        newer = (major, minor) > SUPPORTED[-1]
        raise r.error(
            f"recording version {major}.{minor} is {'newer than 1.1' if newer else 'unknown'}; "
            "supported: 1.0 and 1.1",
            8,
        )
    return major, minor


def _body(r: Reader, layout: str) -> Recording:
    major, minor = read_header(r)
    fdt = FULL_KEY if layout == FULL else SIMPLE_KEY
    if minor == 0:
        has_camera = has_hands = True
        has_gaze = False
    else:
        has_camera = _flag(r, "camera")
        has_hands = _flag(r, "hand")
        has_gaze = _flag(r, "eye gaze")
    camera = _curves(r, 7, fdt) if has_camera else None
    hands = None
    if has_hands:
        states = _curves(r, 4, SIMPLE_KEY)
        left = [_curves(r, 7, fdt) for _ in JOINTS]
        right = [_curves(r, 7, fdt) for _ in JOINTS]
        hands = Hands(*states, left, right)
    gaze = _curves(r, 6, fdt) if has_gaze else None
    n = r.count(r.i32(), 5, "marker")
    markers = [_marker(r) for _ in range(n)]
    if r.remaining:
        raise r.error(f"{r.remaining} bytes after the marker list, expected the end of the file")
    return Recording(major, minor, layout, camera, hands, gaze, markers)


def read(data: bytes) -> Recording:
    """Parse a recording; raises FormatError (with the byte offset) for anything else."""
    return _parse(lambda: Reader(data))


def read_open(fh: BinaryIO) -> Recording:
    """:func:`read` of an open file, with every curve's keys left in the file:
    :class:`KeysLater` keys that :meth:`Curve.loaded` reads and checks (the
    structure, counts and markers are read and checked now)."""
    return _parse(lambda: FileReader(fh))


@contextmanager
def opened(path: str) -> Iterator[Recording]:
    """The recording in ``path`` as :func:`read_open` gives it, the file open until
    the block ends; anything but a regular file is read whole (:func:`read`).

    A 10-minute recording holds 390 MB of keys. An import that reads them one
    curve at a time into memory the previous curve left works on keys in the
    CPU's cache, and never holds the whole file."""
    try:
        fh = open(path, "rb")  # closed by the with block below, after the yield
    except OSError as exc:
        raise FormatError(f"cannot read file: {exc.strerror or exc}", None, path) from exc
    with fh:
        try:
            regular = stat.S_ISREG(os.fstat(fh.fileno()).st_mode)
            data = None if regular else fh.read()
        except OSError as exc:
            raise FormatError(f"cannot read file: {exc.strerror or exc}", None, path) from exc
        yield read_open(fh) if data is None else read(data)


def _parse(reader: Callable[[], Reader]) -> Recording:
    """The recording a new reader from ``reader()`` gives; 1.1 files in both layouts."""
    _major, minor = read_header(reader())
    if minor == 0:
        return _body(reader(), FULL)
    errors: list[FormatError] = []
    for layout in (SIMPLE, FULL):  # the reference serializer's layout first
        try:
            return _body(reader(), layout)
        except FormatError as err:
            errors.append(err)
    best, other = sorted(errors, key=lambda e: e.offset or 0, reverse=True)
    which = "simple (time, value)" if best is errors[0] else "full keyframe"
    raise FormatError(
        f"neither 1.1 float curve layout reads this file; as {which} keys: {best.message} "
        f"(the other layout failed at offset {other.offset}: {other.message})",
        best.offset,
    )


# --------------------------------------------------------------------------
# writing


def _write_curve(parts: list, c: Curve, dtype: np.dtype) -> None:
    if c.keys.dtype.names != dtype.names:
        raise ValueError(f"curve keys have fields {c.keys.dtype.names}, expected {dtype.names}")
    parts.append(struct.pack("<iii", c.pre_wrap, c.post_wrap, len(c.keys)))
    if isinstance(c.keys, KeysLater):
        later = c.keys
        parts.append(lambda: memoryview(np.ascontiguousarray(later.keys(), dtype)).cast("B"))
    else:
        parts.append(memoryview(np.ascontiguousarray(c.keys, dtype)).cast("B"))


def write(rec: Recording) -> bytes:
    """The file's bytes."""
    return b"".join(chunk() if callable(chunk) else chunk for chunk in write_parts(rec))


def write_parts(rec: Recording) -> list:
    """The file's bytes in order, as chunks that view the keys without copying
    them (a 10-minute recording is 390 MB): ``write_atomic`` writes them one by
    one. The chunk of :class:`KeysLater` keys is a function that makes it."""
    if rec.version not in SUPPORTED:
        raise ValueError(f"cannot write version {rec.major}.{rec.minor}")
    if rec.layout not in (FULL, SIMPLE) or (rec.minor == 0 and rec.layout != FULL):
        raise ValueError(f"version {rec.major}.{rec.minor} cannot have {rec.layout} float curves")
    fdt = FULL_KEY if rec.layout == FULL else SIMPLE_KEY
    w = Writer()
    w.u64(MAGIC)
    w.i32(rec.major)
    w.i32(rec.minor)
    if rec.minor == 0:
        if rec.camera is None or rec.hands is None or rec.gaze is not None:
            raise ValueError("version 1.0 always has camera and hands and never eye gaze")
    else:
        for present in (rec.camera, rec.hands, rec.gaze):
            w.bool8(present is not None)
    if rec.camera is not None and len(rec.camera) != 7:
        raise ValueError("the camera has 7 pose curves")
    if rec.gaze is not None and len(rec.gaze) != 6:
        raise ValueError("eye gaze has 6 ray curves")
    parts: list = [w.getvalue()]
    for c in rec.camera or ():
        _write_curve(parts, c, fdt)
    if rec.hands is not None:
        for c in rec.hands.states():
            _write_curve(parts, c, SIMPLE_KEY)
        for joints in (rec.hands.left, rec.hands.right):
            if len(joints) != len(JOINTS) or any(len(j) != 7 for j in joints):
                raise ValueError("a hand has 27 joints of 7 curves each")
            for curves in joints:
                for c in curves:
                    _write_curve(parts, c, fdt)
    for c in rec.gaze or ():
        _write_curve(parts, c, fdt)
    w = Writer()
    w.i32(len(rec.markers))
    for m in rec.markers:
        w.f32(m.time)
        raw = m.name.encode("utf-8", "surrogateescape")
        w.uleb7(len(raw))
        w.bytes(raw)
    parts.append(w.getvalue())
    return parts
