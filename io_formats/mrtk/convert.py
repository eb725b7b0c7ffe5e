"""Recordings <-> neutral Bezier float curves, one F-curve per Unity curve.

Objects are named by role: ``camera``, ``hand.L`` / ``hand.R`` (bool state
curves), ``joint.L.<i>`` / ``joint.R.<i>`` (27 joints per hand) and ``gaze``.
Unity's left-handed Y-up axes become Blender's by swapping Y and Z: positions
and directions are (x, z, y) and rotations (w, -x, -z, -y). That is a
permutation and sign change of whole curves, so tangents and weights carry
over exactly (``convert=False`` keeps Unity's axes).

Each imported curve also keeps its file bytes (:func:`pack_record`): on export
a curve whose Blender keys are still what the import made is written back
verbatim, so unedited full-keyframe recordings come back byte for byte. A
straight curve (simple keys, MRTK's recorder keys) keeps only what Blender's
keys cannot give back (:mod:`.line_records`).
"Still what the import made" allows for what a Blender version itself does to
keys (``BlenderCurve.handle_min_x``: 4.5 and later move handles shorter than
0.001 frame to that length), so the answer is the same on every version.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field, replace
from functools import cached_property

import numpy as np

from ..codec import FormatError
from ..codec.errors import counted
from ..scene import FloatCurve
from . import keys as kc
from .key_checks import constant_fields, times_in_order
from .line_records import KeptTimes, pack_line_record, straight_code, unpack_line_record
from .recording import (
    FULL,
    FULL_KEY,
    HAND_STATES,
    JOINTS,
    SIMPLE,
    SIMPLE_KEY,
    WRAP_CLAMP_FOREVER,
    WRAP_LOOP,
    WRAP_PINGPONG,
    Curve,
    Hands,
    KeysLater,
    Loading,
    Marker,
    Recording,
)

SIDES = (("left", "L"), ("right", "R"))
LOC, ROT = "location", "rotation_quaternion"
TRACKED, PINCH, DIRECTION = '["tracked"]', '["pinch"]', '["direction"]'

# (data path, index, Unity curve index, sign) for pose (7 curves) and ray (6 curves) sets.
POSE_BLENDER = ((LOC, 0, 0, 1.0), (LOC, 1, 2, 1.0), (LOC, 2, 1, 1.0), (ROT, 0, 6, 1.0),
                (ROT, 1, 3, -1.0), (ROT, 2, 5, -1.0), (ROT, 3, 4, -1.0))  # fmt: skip
POSE_UNITY = ((LOC, 0, 0, 1.0), (LOC, 1, 1, 1.0), (LOC, 2, 2, 1.0), (ROT, 0, 6, 1.0),
              (ROT, 1, 3, 1.0), (ROT, 2, 4, 1.0), (ROT, 3, 5, 1.0))  # fmt: skip
RAY_BLENDER = ((LOC, 0, 0, 1.0), (LOC, 1, 2, 1.0), (LOC, 2, 1, 1.0),
               (DIRECTION, 0, 3, 1.0), (DIRECTION, 1, 5, 1.0), (DIRECTION, 2, 4, 1.0))  # fmt: skip
RAY_UNITY = ((LOC, 0, 0, 1.0), (LOC, 1, 1, 1.0), (LOC, 2, 2, 1.0),
             (DIRECTION, 0, 3, 1.0), (DIRECTION, 1, 4, 1.0), (DIRECTION, 2, 5, 1.0))  # fmt: skip

WRAP_TO_CYCLE = {WRAP_LOOP: "REPEAT", WRAP_PINGPONG: "MIRROR"}
FULL_LAYOUT_WARNING = (
    "1.1 with full keyframes is the documented layout, which MRTK 2.x cannot read (its 1.1 "
    "reader takes every pose and ray curve as time + value); export 1.1 (MRTK) for MRTK"
)


def joint_role(side: str, index: int) -> str:
    return f"joint.{side}.{index}"


def hand_role(side: str) -> str:
    return f"hand.{side}"


# --------------------------------------------------------------------------
# stored file curves


def pack_record(c: Curve, constant: frozenset[str] | None = None) -> bytes:
    """A curve as bytes: layout letter, wrap modes, keys.

    ``S`` and ``F``: the raw keys. ``C``: full keys with some field the same in
    every key (MRTK's recorder writes tangents and weights 0 and weighted mode
    Both, 20 of each key's 28 bytes): the key count (uint32), a bit per field
    (bit i: field i is constant), the constant fields' 4 bytes, then the other
    fields of every key, key by key. ``constant``: the keys'
    :func:`.key_checks.constant_fields` when already known.
    """
    wraps = struct.pack("<ii", c.pre_wrap, c.post_wrap)
    full = c.keys.dtype.names == FULL_KEY.names
    if not full:
        same = []
    else:
        constant = constant_fields(c.keys) if constant is None else constant
        same = [name for name in FULL_KEY.names if name in constant]
    if not same:
        keys = np.ascontiguousarray(c.keys)
        return b"".join((b"F" if full else b"S", wraps, memoryview(keys).cast("B")))
    names = FULL_KEY.names
    mask = sum(1 << names.index(name) for name in same)
    first = np.ascontiguousarray(c.keys[:1]).view("<i4")
    consts = np.array([first[names.index(name)] for name in same], "<i4")
    rest = [name for name in names if name not in same]
    rows = np.empty(len(c.keys), [(name, FULL_KEY.fields[name][0]) for name in rest])
    for name in rest:
        rows[name] = c.keys[name]
    head = struct.pack("<IB", len(c.keys), mask)
    return b"".join((b"C", wraps, head, consts.tobytes(), memoryview(rows).cast("B")))


def _unpack_columns(data: bytes) -> np.ndarray | None:
    """The full keys of a ``C`` record (see :func:`pack_record`); None if malformed."""
    if len(data) < 14:
        return None
    n, mask = struct.unpack_from("<IB", data, 9)
    names = FULL_KEY.names
    if mask >= 1 << len(names):
        return None
    same = [name for i, name in enumerate(names) if mask >> i & 1]
    rest = [name for name in names if name not in same]
    at = 14 + 4 * len(same)
    if len(data) != at + 4 * len(rest) * n:
        return None
    keys = np.empty(n, FULL_KEY)
    consts = np.frombuffer(data, "<i4", len(same), 14)
    for name, value in zip(same, consts, strict=True):
        keys[name].view("<i4")[:] = value
    rows = np.frombuffer(data, [(name, FULL_KEY.fields[name][0]) for name in rest], n, at)
    for name in rest:
        keys[name] = rows[name]
    return keys


def record_constants(data: bytes) -> frozenset[str] | None:
    """The fields a ``C`` record holds once for every key (what the keys of a valid
    record, :func:`unpack_record`, have in common); None for other records."""
    if len(data) < 14 or data[:1] != b"C":
        return None
    mask = data[13]
    return frozenset(name for i, name in enumerate(FULL_KEY.names) if mask >> i & 1)


def unpack_record(data: bytes) -> Curve | None:
    """The curve :func:`pack_record` stored; None for anything else."""
    if len(data) < 9 or data[:1] not in (b"F", b"S", b"C"):
        return None
    pre, post = struct.unpack_from("<ii", data, 1)
    if data[:1] == b"C":
        keys = _unpack_columns(data)
        return None if keys is None else Curve(pre, post, keys)
    dtype = FULL_KEY if data[:1] == b"F" else SIMPLE_KEY
    if (len(data) - 9) % dtype.itemsize:
        return None
    return Curve(pre, post, np.frombuffer(data, dtype, offset=9))  # read-only view


# --------------------------------------------------------------------------
# import


@dataclass
class ImportedCurve:
    """One file curve and where it goes; its keys are converted when asked (14 M keys)."""

    target: str  # role
    data_path: str
    index: int
    source: Curve
    sign: float = 1.0
    boolean: bool = False
    what: str = ""  # the curve in errors: "camera curve 3", "tracked left"

    @property
    def cycle_before(self) -> str:
        return WRAP_TO_CYCLE.get(self.source.pre_wrap, "NONE")

    @property
    def cycle_after(self) -> str:
        return WRAP_TO_CYCLE.get(self.source.post_wrap, "NONE")

    @property
    def wraps(self) -> tuple[int, int]:
        return self.source.pre_wrap, self.source.post_wrap

    @cached_property
    def constant(self) -> frozenset[str]:
        """The key fields the same in every key, found once for :attr:`record` and
        :meth:`frames`."""
        if self.source.keys.dtype.names != FULL_KEY.names:
            return frozenset()
        if self.source.constant is not None:  # found by the read
            return self.source.constant
        return constant_fields(self.source.keys)

    @property
    def record(self) -> bytes:
        """The file curve as bytes (:func:`pack_record`)."""
        return pack_record(self.source, self.constant)

    def stored(
        self, co: np.ndarray, fps: float, copied: bool = False, kept: KeptTimes | None = None
    ) -> bytes:
        """What the import keeps of the curve whose Blender keys are ``co`` (float32
        frames at ``fps``): a line record where the curve is straight lines or steps
        (:mod:`.line_records`), else :attr:`record`. ``copied``: ``co`` is
        :meth:`frames`' own, so its values are the file's bits; ``kept``: the plan's
        (:attr:`ImportPlan.kept`)."""
        line = pack_line_record(self.source, co, fps, self.sign, self.constant, copied, kept)
        return self.record if line is None else line

    @property
    def curve(self) -> FloatCurve:
        """The neutral curve, in seconds."""
        return curve_to_bezier(
            self.source, self.target, self.data_path, self.index, self.sign, self.boolean
        )

    def frames(self, fps: float):
        """(co, handle_left, handle_right, interpolation codes) as Blender stores them;
        the handles are None for a curve without Bezier keys (nothing to set)."""
        keys = self.source.keys
        return kc.unity_to_keyframes(
            keys, fps, self.sign, self.boolean, self.constant, self.source.times
        )


@dataclass
class ImportPlan:
    roles: list[str]
    curves: list[ImportedCurve]
    markers: list[Marker]
    meta: dict
    overlong: int = 0  # curve segments Blender shortens, of the curves checked so far
    #: line records' kept times, found once for curves that share their times
    kept: KeptTimes = field(default_factory=KeptTimes, compare=False, repr=False)
    loading: Loading = field(default_factory=Loading, compare=False, repr=False)

    @property
    def warnings(self) -> list[str]:
        if not self.overlong:
            return []
        return [
            f"{self.overlong} curve segments have weights adding up to more than 1: Blender "
            "shortens their handles, so they look different in Blender (export restores "
            "the file's keys while they are not edited)"
        ]

    def loaded(self, c: ImportedCurve) -> ImportedCurve:
        """``c`` with its keys in memory and checked (a recording of
        :func:`.recording.read_open` is read one curve at a time as the build reaches
        it; others are checked by :func:`import_recording`)."""
        if not isinstance(c.source.keys, KeysLater):
            return c
        c = replace(c, source=c.source.loaded(self.loading))
        self.check(c)
        return c

    def check(self, c: ImportedCurve) -> None:
        """A FormatError unless ``c``'s times are finite and in order; its segments
        Blender shortens counted."""
        _check_times(c.source, c.what)
        self.overlong += kc.overlong_keys(c.source.keys, c.constant)


def curve_to_bezier(
    c: Curve, role: str, path: str, index: int, sign: float, boolean: bool
) -> FloatCurve:
    co, hl, hr, interp = kc.unity_to_bezier(c.keys, sign, boolean)
    return FloatCurve(
        role,
        path,
        index,
        co,
        hl,
        hr,
        interp,
        WRAP_TO_CYCLE.get(c.pre_wrap, "NONE"),
        WRAP_TO_CYCLE.get(c.post_wrap, "NONE"),
    )


def _check_times(c: Curve, what: str) -> None:
    if c.ordered if c.ordered is not None else times_in_order(c.keys["time"]):
        return
    t = c.keys["time"]
    bad = np.flatnonzero(~np.isfinite(t))
    if not len(bad) and len(t) > 1:
        bad = np.flatnonzero(np.diff(t) < 0) + 1
    if len(bad):
        i = int(bad[0])
        size = c.keys.dtype.itemsize
        at = None if c.offset is None else c.offset + 12 + i * size
        raise FormatError(f"{what}: key {i} time {float(t[i])} is not finite and increasing", at)


def import_recording(rec: Recording, convert: bool = True) -> ImportPlan:
    """The Blender-side plan of a recording: roles, one curve per Unity curve. Curves
    whose keys are in memory are checked now; those of :func:`.recording.read_open`
    by :meth:`ImportPlan.loaded`."""
    pose = POSE_BLENDER if convert else POSE_UNITY
    ray = RAY_BLENDER if convert else RAY_UNITY
    # Marker times are float32 scalars with their exact bits (for the codec): the plan
    # gets Python floats.
    markers = [replace(m, time=float(m.time)) for m in rec.markers]
    meta = {
        "version": f"{rec.major}.{rec.minor}",
        "layout": rec.layout,
        "axes": "BLENDER" if convert else "UNITY",
    }
    plan = ImportPlan([], [], markers, meta)

    def add(curve: ImportedCurve) -> None:
        if not isinstance(curve.source.keys, KeysLater):
            plan.check(curve)
        plan.curves.append(curve)

    def add_set(role: str, table, curves: list[Curve], name: str) -> None:
        for path, index, src, sign in table:
            add(ImportedCurve(role, path, index, curves[src], sign, what=f"{name} curve {src}"))

    if rec.camera is not None:
        plan.roles.append("camera")
        add_set("camera", pose, rec.camera, "camera")
    if rec.hands is not None:
        states = dict(zip(HAND_STATES, rec.hands.states(), strict=True))
        for side, s in SIDES:
            role = hand_role(s)
            plan.roles.append(role)
            for path, state in ((TRACKED, "tracked"), (PINCH, "pinch")):
                c = states[f"{state}.{side}"]
                add(ImportedCurve(role, path, 0, c, 1.0, True, what=f"{state} {side}"))
            joints = rec.hands.left if side == "left" else rec.hands.right
            for i, curves in enumerate(joints):
                plan.roles.append(joint_role(s, i))
                add_set(joint_role(s, i), pose, curves, f"{side} {JOINTS[i]}")
    if rec.gaze is not None:
        plan.roles.append("gaze")
        add_set("gaze", ray, rec.gaze, "gaze")
    return plan


# --------------------------------------------------------------------------
# export


@dataclass
class BlenderCurve:
    """An F-curve as Blender holds it: keys in frames (float32), Cycles modes, stored bytes.

    ``wraps`` are the file's wrap modes, kept apart from the key bytes (Blender
    has no place for Once or Default). ``handle_min_x`` is the shortest handle
    x extent (frames) the Blender version keeps: a handle that the file had
    shorter sits at about that length after Blender recalculates the curve.
    """

    co: np.ndarray  # (K, 2)
    handle_left: np.ndarray
    handle_right: np.ndarray
    interpolation: np.ndarray  # (K,) uint8 codes (keys.CONSTANT, LINEAR, BEZIER)
    cycle_before: str = "NONE"
    cycle_after: str = "NONE"
    record: bytes | None = None
    wraps: tuple[int, int] | None = None
    handle_min_x: float = 0.0


@dataclass
class ExportOptions:
    major: int = 1
    minor: int = 1
    layout: str = SIMPLE
    convert: bool = True
    fps: float = 60.0
    tolerance: float = 1e-4  # simple layout: largest distance of the samples' lines to the curve
    rate: float = 0.0  # simple layout: Bezier segments' samples per second (0: sampling_rate)
    # straight curves rebuilt from their line records get recording.KeysLater keys, made
    # while the file is written (for write_parts and write only)
    keys_later: bool = False


@dataclass
class ExportStats:
    """What an export wrote: keys in all, and what sampling Bezier segments into the
    straight segments of the simple layout added (:func:`keys.sample_at_rate`)."""

    rate: float = 0.0  # samples per second
    keys: int = 0
    bezier_segments: int = 0
    samples: int = 0
    deviation: float = 0.0  # the largest distance of the written lines from the curves

    def line(self) -> str:
        """The sentence an export reports."""
        text = f"{self.keys:,} keys written"
        if self.bezier_segments:
            text += (
                f" ({self.bezier_segments:,} Bezier segments sampled at {self.rate:.4g} per "
                f"second: {self.samples:,} keys added, at most {self.deviation:.2g} from the "
                "curves)"
            )
        return text


def sampling_rate(curves: dict[tuple[str, str, int], BlenderCurve], fps: float) -> float:
    """The recording's own rate (keys per second), what a Bezier segment is sampled at
    in the simple layout: the median step between the keys of its float curves, as a
    recorder takes one key a frame; never fewer than ``fps`` (sparse keys drawn by hand
    are sampled at the frame rate)."""
    steps = [
        np.diff(bc.co[:, 0])
        for (_, path, _), bc in curves.items()
        if path not in (TRACKED, PINCH) and len(bc.co) > 1
    ]
    step = np.concatenate(steps) if steps else np.zeros(0)
    step = step[step > 0]
    if not len(step):
        return fps
    return max(fps, fps / float(np.median(step)))


def _wrap(cycle: str, stored: int | None, warnings: list[str], what: str) -> int:
    if cycle == "REPEAT":
        return WRAP_LOOP
    if cycle == "MIRROR":
        return WRAP_PINGPONG
    if cycle == "REPEAT_OFFSET":
        warnings.append(f"{what}: Unity has no repeat with offset; written as Loop")
        return WRAP_LOOP
    if stored is not None and stored not in (WRAP_LOOP, WRAP_PINGPONG):
        return stored
    return WRAP_CLAMP_FOREVER


def _handles_match(
    expected: np.ndarray, got: np.ndarray, key_x: np.ndarray, side: float, min_x: float
) -> np.ndarray:
    """Per key: the handle is what the import set, allowing for the version's own nudge.

    With ``min_x`` (4.5 and later), a handle the import set closer than
    ``min_x`` frames to its key (in x) also matches when Blender has moved it
    out to ``min_x`` or one float32 step (whichever is more), y unchanged.
    """
    level = _held_same(np.ascontiguousarray(expected[:, 1]), np.ascontiguousarray(got[:, 1]))
    same = (expected[:, 0] == got[:, 0]) & level
    if not min_x or same.all():
        return same
    x = key_x.astype(np.float64)
    reach = np.maximum(np.abs(key_x), np.abs(got[:, 0])).astype(np.float32)
    step = np.spacing(reach).astype(np.float64)  # one float32 step where the handle is
    was = (expected[:, 0] - x) * side
    now = (got[:, 0] - x) * side
    nudged = (
        (was < min_x + 2 * step)
        & (now >= min_x - 2 * step)
        & (now <= np.maximum(min_x, step) + 2 * step)
        & level
    )
    return same | nudged


def _shaping_handles(interp: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per key: whether its left and right handles shape the curve (Bezier keys and the
    side of a Bezier segment); the handles of lines and steps shape nothing, and the
    import sets none for curves without Bezier keys."""
    bez = np.asarray(interp) == kc.BEZIER
    left = bez.copy()
    left[1:] = bez[:-1]
    if len(bez):
        left[0] = bez[0]
    return left, bez


def _expected(
    stored: Curve, fps: float, sign: float, boolean: bool, constant: frozenset[str] | None
):
    """What the import put into Blender for ``stored``: float32 frames and codes (no
    handles, None, for a curve without Bezier keys: the import set none)."""
    return kc.unity_to_keyframes(stored.keys, fps, sign, boolean, constant)


def _held_same(expected: np.ndarray, held: np.ndarray) -> np.ndarray:
    """Per element: Blender's float32 ``held`` is the ``expected`` number, or where that
    is NaN, a NaN with the same bits (NaN equals nothing as a number)."""
    same = expected == held
    if same.all():
        return same
    nan = ~same & np.isnan(expected) & np.isnan(held)
    if nan.any():
        same[nan] = expected[nan].view("<u4") == held[nan].view("<u4")
    return same


def _held_equal(expected: np.ndarray, held: np.ndarray) -> bool:
    """:func:`_held_same` for every element."""
    return expected.shape == held.shape and bool(_held_same(expected, held).all())


def _unchanged(bc: BlenderCurve, expected) -> bool:
    eco, ehl, ehr, interp = expected
    if len(eco) != len(bc.co):
        return False
    if not (_held_equal(eco, bc.co) and np.array_equal(interp, bc.interpolation)):
        return False
    if ehl is None:  # lines and steps only, as imported: no handle shapes anything
        return True
    left, right = _shaping_handles(interp)
    x = eco[:, 0]
    return bool(
        (_handles_match(ehl, bc.handle_left, x, -1.0, bc.handle_min_x) | ~left).all()
        and (_handles_match(ehr, bc.handle_right, x, 1.0, bc.handle_min_x) | ~right).all()
    )


def _kept_keys(bc: BlenderCurve, expected):
    """(current, stored) indices of keys that are still exactly what the import made.

    A key counts when its position, handles and interpolation, the previous key's
    interpolation and both neighbours' times are unchanged: its tangents and
    weights depend on nothing else, so the stored record is still right for it.
    """
    eco, ehl, ehr, interp = expected
    k, n = len(bc.co), len(eco)
    none = np.zeros(0, np.int64)
    if not k or not n or np.any(np.diff(eco[:, 0]) < 0):
        return none, none
    pos = np.minimum(np.searchsorted(eco[:, 0], bc.co[:, 0]), n - 1)
    cur_interp = np.asarray(bc.interpolation)
    same = np.all(eco[pos] == bc.co, axis=1) & (interp[pos] == cur_interp)
    # Without stored handles (the import made lines and steps only), a key whose handle
    # now shapes a Bezier segment fails anyway: its own interpolation (right side) or
    # its previous key's (left side, ``prev_ok``) differs from the import's.
    if ehl is not None:
        x = bc.co[:, 0]
        left, right = _shaping_handles(cur_interp)
        same &= _handles_match(ehl[pos], bc.handle_left, x, -1.0, bc.handle_min_x) | ~left
        same &= _handles_match(ehr[pos], bc.handle_right, x, 1.0, bc.handle_min_x) | ~right
    prev_ok = np.zeros(k, bool)
    prev_ok[0] = pos[0] == 0
    prev_ok[1:] = (
        (eco[pos[:-1], 0] == bc.co[:-1, 0])
        & (pos[:-1] == pos[1:] - 1)
        & (interp[pos[:-1]] == cur_interp[:-1])
    )
    next_ok = np.zeros(k, bool)
    next_ok[-1] = pos[-1] == n - 1
    next_ok[:-1] = (eco[pos[1:], 0] == bc.co[1:, 0]) & (pos[1:] == pos[:-1] + 1)
    ok = np.flatnonzero(same & prev_ok & next_ok)
    return ok, pos[ok]


def _exact_times(bc: BlenderCurve, stored: Curve | None, fps: float, sign: float):
    """Key times (s) and values: the file's exact ones where a key still sits there."""
    t = bc.co[:, 0].astype(np.float64) / fps
    v = bc.co[:, 1].astype(np.float64) * sign
    if stored is None or not len(stored.keys) or not len(t):
        return t, v
    st = stored.keys["time"]
    sv = stored.keys["value"]
    if np.any(np.diff(st) < 0):
        return t, v
    sx = (st.astype(np.float64) * fps).astype(np.float32)
    sy = (sv.astype(np.float64) * sign).astype(np.float32)
    pos = np.minimum(np.searchsorted(sx, bc.co[:, 0]), len(sx) - 1)
    hit = (sx[pos] == bc.co[:, 0]) & (sy[pos] == bc.co[:, 1])
    t[hit] = st[pos[hit]]
    v[hit] = sv[pos[hit]]
    return t, v


def curve_from_blender(
    bc: BlenderCurve | None,
    opts: ExportOptions,
    sign: float,
    boolean: bool,
    warnings: list[str],
    what: str,
    stats: ExportStats | None = None,
) -> Curve:
    """One Unity curve from one F-curve (an empty curve for a missing one). In the
    simple layout, Bezier segments are sampled at the recording's rate (``opts.fps``)
    and ``stats`` counts what that added."""
    dtype = SIMPLE_KEY if boolean or opts.layout == SIMPLE else FULL_KEY
    if bc is None:
        return Curve.empty(dtype)
    line = unpack_line_record(bc.record) if bc.record else None
    stored = unpack_record(bc.record) if bc.record and line is None else None
    held = line if line is not None else stored
    kept = (held.pre_wrap, held.post_wrap) if held is not None else bc.wraps
    pre = _wrap(bc.cycle_before, kept[0] if kept else None, warnings, what)
    post = _wrap(bc.cycle_after, kept[1] if kept else None, warnings, what)
    expected = None
    if stored is not None:
        expected = _expected(stored, opts.fps, sign, boolean, record_constants(bc.record))
    if expected is not None and _unchanged(bc, expected):
        if stored.keys.dtype == dtype:
            return Curve(pre, post, stored.keys)
        if dtype == FULL_KEY:  # a simple curve's keys as MRTK reads them: straight segments
            keys = np.zeros(len(stored.keys), FULL_KEY)
            keys["time"] = stored.keys["time"]
            keys["value"] = stored.keys["value"]
            keys["weighted_mode"] = kc.WEIGHTED_IN | kc.WEIGHTED_OUT
            return Curve(pre, post, keys)
    if line is not None:
        if len(bc.co) and np.all(bc.interpolation == straight_code(boolean)):
            if opts.keys_later:
                co, fps = bc.co, opts.fps
                later = KeysLater(len(co), dtype, lambda: line.keys_for(co, fps, sign, dtype))
                return Curve(pre, post, later)
            return Curve(pre, post, line.keys_for(bc.co, opts.fps, sign, dtype))
        t, v = line.times_for(bc.co[:, 0], opts.fps), bc.co[:, 1].astype(np.float64) * sign
    else:
        t, v = _exact_times(bc, stored, opts.fps, sign)
    if dtype == FULL_KEY:
        keys = kc.bezier_to_unity(
            bc.co, bc.handle_left, bc.handle_right, bc.interpolation, opts.fps, sign
        )
        keys["time"], keys["value"] = t, v
        if expected is not None and stored.keys.dtype == FULL_KEY:
            cur, old = _kept_keys(bc, expected)
            keys[cur] = stored.keys[old]
        return Curve(pre, post, keys)
    if boolean:
        keys = np.zeros(len(t), SIMPLE_KEY)
        keys["time"], keys["value"] = t, v
        return Curve(pre, post, keys)
    co = np.stack([t, v * sign], axis=1)
    scale = np.array([1.0 / opts.fps, 1.0])
    hl = bc.handle_left.astype(np.float64) * scale
    hr = bc.handle_right.astype(np.float64) * scale
    try:
        pts, is_key, bezier, worst = kc.sample_at_rate(
            co, hl, hr, bc.interpolation, opts.rate or opts.fps, opts.tolerance
        )
    except ValueError as err:
        raise FormatError(f"{what}: cannot sample the curve: {err}") from None
    if stats is not None and bezier:
        stats.bezier_segments += bezier
        stats.samples += len(pts) - len(co)
        stats.deviation = max(stats.deviation, worst)
    keys = np.zeros(len(pts), SIMPLE_KEY)
    keys["time"] = pts[:, 0]
    keys["value"] = pts[:, 1] * sign
    keys["value"][is_key] = v  # exact file values (the sampled keys come in order)
    return Curve(pre, post, keys)


def export_recording(
    curves: dict[tuple[str, str, int], BlenderCurve],
    roles: set[str],
    markers: list[Marker],
    opts: ExportOptions,
    stats: ExportStats | None = None,
) -> tuple[Recording, list[str]]:
    """A recording from F-curves keyed by (role, data path, index); ``stats`` (when
    given) gets the keys written and what sampling added."""
    warnings: list[str] = []
    v10 = (opts.major, opts.minor) == (1, 0)
    if v10:
        opts = replace(opts, layout=FULL)
    bezier = any(np.any(bc.interpolation == kc.BEZIER) for bc in curves.values())
    if opts.layout == SIMPLE and not opts.rate and bezier:  # only a Bezier key is sampled
        opts = replace(opts, rate=sampling_rate(curves, opts.fps))
    if stats is not None:
        stats.rate = opts.rate or opts.fps
    pose = POSE_BLENDER if opts.convert else POSE_UNITY
    ray = RAY_BLENDER if opts.convert else RAY_UNITY

    used: set[tuple[str, str, int]] = set()

    def take(key: tuple[str, str, int]) -> BlenderCurve | None:
        used.add(key)
        return curves.get(key)

    def curve_set(role: str, table, n: int) -> list[Curve]:
        out: list[Curve | None] = [None] * n
        for path, index, src, sign in table:
            bc = take((role, path, index))
            out[src] = curve_from_blender(bc, opts, sign, False, warnings, f"{role} {path}", stats)
        return out  # type: ignore[return-value]

    hands_there = any(hand_role(s) in roles for _, s in SIDES)
    camera = curve_set("camera", pose, 7) if "camera" in roles or v10 else None
    hands = None
    if hands_there or v10:
        states = {}
        for side, s in SIDES:
            for path, state in ((TRACKED, "tracked"), (PINCH, "pinch")):
                bc = take((hand_role(s), path, 0))
                states[f"{state}_{side}"] = curve_from_blender(
                    bc, opts, 1.0, True, warnings, f"{state} {side}"
                )
        joints = {
            side: [curve_set(joint_role(s, i), pose, 7) for i in range(len(JOINTS))]
            for side, s in SIDES
        }
        hands = Hands(**states, left=joints["left"], right=joints["right"])
    gaze = curve_set("gaze", ray, 6) if "gaze" in roles else None
    if v10:
        if "camera" not in roles:
            warnings.append("no camera: version 1.0 always has one, written with empty curves")
        if not hands_there:
            warnings.append("no hands: version 1.0 always has them, written with empty curves")
        if gaze is not None:
            warnings.append("version 1.0 has no eye gaze: the gaze curves are not written")
            gaze = None
    rest = sorted(f"{role} {path}[{index}]" for role, path, index in set(curves) - used)
    if rest:
        warnings.append(
            f"{counted(len(rest), 'F-curve')} with no place in a recording, not written: "
            + ", ".join(rest[:5])
            + (" ..." if len(rest) > 5 else "")
        )
    if (opts.major, opts.minor) == (1, 1) and opts.layout == FULL:
        warnings.append(FULL_LAYOUT_WARNING)
    rec = Recording(opts.major, opts.minor, opts.layout, camera, hands, gaze, list(markers))
    if stats is not None:
        stats.keys = sum(len(c.keys) for _, c in [*rec.float_curves(), *rec.bool_curves()])
    return rec, warnings
