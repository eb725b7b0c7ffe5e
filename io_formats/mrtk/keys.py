"""Unity keyframes <-> Blender Bezier keys, exactly, in numpy.

A Unity segment from key a to key b (dt = b.time - a.time) is the cubic
Bezier with inner control points (a.time + wa*dt, a.value + a.outTangent*wa*dt)
and (b.time - wb*dt, b.value - b.inTangent*wb*dt), where wa/wb are the
weights of weighted sides and 1/3 otherwise; an infinite tangent holds the
segment at a's value. Blender's F-curve Bezier segment is the same cubic
with the handles as inner control points, so each key's FREE handles carry
Unity's tangents and weights. The handles of the first key's in side and the
last key's out side have no segment: they use the neighbouring segment's
length (one second for a single key), both ways.

Blender shortens a segment's handles when their x extents add up to more than
the segment (``wa + wb > 1``): :func:`overlong_keys` counts those, whose
shape then differs in Blender until export restores them.

Interpolation is a uint8 code per key (:data:`CONSTANT`, :data:`LINEAR`,
:data:`BEZIER`): a 10-minute recording has 14 million keys, too many for
strings. A Unity segment whose two inner sides are weighted with weight 0
(MRTK's recorder writes every key so) has its control points on its ends: it
is a straight line, and becomes LINEAR, which needs no handles in Blender.
The last key's interpolation governs no segment in Blender; a last key whose
out tangent is infinite is CONSTANT, so that an export rebuilt from Blender's
keys gives the infinite tangent back.
"""

from __future__ import annotations

import math

import numpy as np

from .recording import FULL_KEY, SIMPLE_KEY, WEIGHTED_IN, WEIGHTED_OUT

THIRD = 1.0 / 3.0
THIRD32 = np.float32(THIRD)
CONSTANT, LINEAR, BEZIER = 0, 1, 2  # interpolation codes (uint8)
INTERPOLATIONS = ("CONSTANT", "LINEAR", "BEZIER")  # code -> Blender's name


def _segment_lengths(t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per key: the length of the segment before it and of the one after it."""
    k = len(t)
    if k < 2:
        one = np.ones(k)
        return one, one
    before, after = np.empty(k), np.empty(k)
    np.subtract(t[1:], t[:-1], out=before[1:])
    before[0] = before[1]
    after[:-1] = before[1:]
    after[-1] = before[-1]
    return before, after


def _weights(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    mode = keys["weighted_mode"]
    win = np.where(mode & WEIGHTED_IN, keys["in_weight"].astype(np.float64), THIRD)
    wout = np.where(mode & WEIGHTED_OUT, keys["out_weight"].astype(np.float64), THIRD)
    return win, wout


def _pairs(x: np.ndarray, y: np.ndarray, dtype=np.float64) -> np.ndarray:
    out = np.empty((len(x), 2), dtype)
    out[:, 0] = x
    out[:, 1] = y
    return out


def _unity_sides(keys: np.ndarray, sign: float, boolean: bool, codes=None):
    """Key times, values, handle x and y (seconds, float64) and interpolation codes.
    ``codes``: :func:`_full_codes` of full keys when already known."""
    k = len(keys)
    if keys.dtype.names == SIMPLE_KEY.names:
        t, v = keys["time"].astype(np.float64), keys["value"].astype(np.float64)
        if sign != 1.0:
            v *= sign
        before, after = _segment_lengths(t)
        slope_after = np.zeros(k)
        if k > 1 and not boolean:
            with np.errstate(divide="ignore", invalid="ignore"):
                np.divide(v[1:] - v[:-1], before[1:], out=slope_after[:-1])
            slope_after[-1] = slope_after[-2]
            slope_after[~np.isfinite(slope_after)] = 0.0
        slope_before = np.empty_like(slope_after)
        if k:
            slope_before[0] = slope_after[0]
            slope_before[1:] = slope_after[:-1]
        lx, rx = t - before * THIRD, t + after * THIRD
        slope_before *= before
        slope_before *= THIRD
        slope_after *= after
        slope_after *= THIRD
        ly, ry = np.subtract(v, slope_before, out=slope_before), np.add(v, slope_after)
        interp = np.full(k, CONSTANT if boolean else LINEAR, np.uint8)
        return t, v, lx, ly, rx, ry, interp
    # field by field: numpy is many times slower on two-dimensional views of the records
    t, v, tin, tout, win, wout = (keys[name].astype(np.float64) for name in FULL_KEY.names[:6])
    interp, weighted_in, weighted_out, inf_in, inf_out = codes or _full_codes(keys)
    win[~weighted_in] = THIRD
    wout[~weighted_out] = THIRD
    if sign != 1.0:
        v *= sign
        tin *= sign
        tout *= sign
    tin[inf_in] = 0.0
    tout[inf_out] = 0.0
    before, after = _segment_lengths(t)
    tin *= win  # (tangent * weight) * length, the order the float64 results depend on
    tin *= before
    tout *= wout
    tout *= after
    win *= before
    wout *= after
    lx, rx = np.subtract(t, win, out=win), np.add(t, wout, out=wout)
    ly, ry = np.subtract(v, tin, out=tin), np.add(v, tout, out=tout)
    return t, v, lx, ly, rx, ry, interp


def _full_codes(keys: np.ndarray):
    """Interpolation codes of FULL_KEY records, with the weighted sides and the infinite
    tangents they come from: (interp, weighted in, weighted out, inf in, inf out)."""
    k = len(keys)
    mode = keys["weighted_mode"]
    weighted_in, weighted_out = (mode & WEIGHTED_IN) != 0, (mode & WEIGHTED_OUT) != 0
    # both inner control points on the segment's ends: a straight line (MRTK's recorder keys)
    straight = weighted_out[:-1] & (keys["out_weight"][:-1] == 0)
    straight &= weighted_in[1:]
    straight &= keys["in_weight"][1:] == 0
    inf_in, inf_out = np.isinf(keys["in_tangent"]), np.isinf(keys["out_tangent"])
    interp = np.full(k, BEZIER, np.uint8)
    if k:
        interp[:-1][straight] = LINEAR
        if k > 1 and straight[-1]:
            interp[-1] = LINEAR  # the last key follows its segment: the curve is all lines
        step = inf_out.copy()
        step[:-1] |= inf_in[1:]
        interp[step] = CONSTANT
    return interp, weighted_in, weighted_out, inf_in, inf_out


def unity_to_bezier(keys: np.ndarray, sign: float = 1.0, boolean: bool = False):
    """(co, handle_left, handle_right, interpolation) in seconds for Unity keys.

    ``keys`` are FULL_KEY records (Bezier keys), SIMPLE_KEY records of a float
    curve (straight segments: LINEAR keys) or of a bool curve (``boolean``:
    CONSTANT keys). ``sign`` negates the whole curve (axis conversion).
    """
    t, v, lx, ly, rx, ry, interp = _unity_sides(keys, sign, boolean)
    return _pairs(t, v), _pairs(lx, ly), _pairs(rx, ry), interp


def unity_to_frames(
    keys: np.ndarray, fps: float, sign: float = 1.0, boolean: bool = False, codes=None
):
    """:func:`unity_to_bezier` in frames as Blender stores them: float32 (K, 2) arrays.

    The same numbers as ``to_frames(*unity_to_bezier(...)[:3], fps)``, bit for bit.
    """
    t, v, lx, ly, rx, ry, interp = _unity_sides(keys, sign, boolean, codes)
    return (
        _pairs(t * fps, v, np.float32),
        _pairs(lx * fps, ly, np.float32),
        _pairs(rx * fps, ry, np.float32),
        interp,
    )


def unity_to_keyframes(
    keys: np.ndarray,
    fps: float,
    sign: float = 1.0,
    boolean: bool = False,
    constant: frozenset[str] | None = None,
    times: np.ndarray | None = None,
):
    """:func:`unity_to_frames`, with no handles (None) for a curve without Bezier keys.

    Lines and steps have no handles to set (see the module's notes), so a
    curve of only those (every simple-layout curve, MRTK's recorder keys) needs
    the key positions and codes alone: a third of the work on 14 million keys.
    The positions are the same float32 numbers, bit for bit. ``constant``: the
    keys' :func:`.key_checks.constant_fields` when already known; ``times``: their
    times as one array, when already copied out of them.
    """
    k = len(keys)
    if keys.dtype.names == SIMPLE_KEY.names:
        interp = np.full(k, CONSTANT if boolean else LINEAR, np.uint8)
    elif recorder_keys(keys, constant):
        interp = np.full(k, LINEAR, np.uint8)
    else:
        codes = _full_codes(keys)
        interp = codes[0]
        if np.any(interp == BEZIER):
            return unity_to_frames(keys, fps, sign, boolean, codes)
    # Frames and signed values: float64 products rounded once to float32, as
    # unity_to_frames computes them. Without the times at hand, time and value are
    # copied side by side as one 8-byte word per key (one pass over the records;
    # the file's little-endian floats are the native ones on every platform Blender
    # runs on) and turned into frames in place.
    co = np.empty((k, 2), np.float32)
    if times is None:
        pair = np.dtype(
            {"names": ["w"], "formats": ["<u8"], "offsets": [0], "itemsize": keys.itemsize}
        )
        co.view("<u8")[:, 0] = keys.view(pair)["w"]
        scale_once(co[:, 0], fps, co[:, 0])
        if sign != 1.0:
            scale_once(co[:, 1], sign, co[:, 1])
    else:
        scale_once(times, fps, co[:, 0])
        if sign != 1.0:  # copied and signed in one pass
            scale_once(keys["value"], sign, co[:, 1])
        else:
            co[:, 1] = keys["value"]
    return co, None, None, interp


def scale_once(x: np.ndarray, factor: float, out: np.ndarray) -> None:
    """``x * factor`` (float32 ``x``) computed in float64 and rounded once into the
    float32 ``out``. Where ``factor`` is itself a float32 number (30, 60, 24, ...)
    float32 arithmetic gives the same bits at half the cost: the exact product of
    two float32 numbers fits a float64, so both round the exact product once."""
    f32 = np.float32(factor)
    if float(f32) == factor:
        np.multiply(x, f32, out=out)
    else:
        np.multiply(x, factor, out=out, dtype=np.float64, casting="same_kind")


def divide_once(x: np.ndarray, divisor: float, out: np.ndarray) -> None:
    """``x / divisor`` (float32 ``x``) computed in float64 and rounded once into the
    float32 ``out``; in float32 where ``divisor`` is a float32 number: a quotient
    rounded to float64 and then to float32 is the correctly rounded float32 one
    (float64 has more than twice float32's precision, plus two bits)."""
    f32 = np.float32(divisor)
    if float(f32) == divisor and divisor != 0:
        np.divide(x, f32, out=out)
    else:
        np.divide(x, divisor, out=out, dtype=np.float64, casting="same_kind")


#: The fields MRTK's recorder writes the same in every key: tangents, weights, weighted mode.
RECORDER_FIELDS = FULL_KEY.names[2:]


def recorder_keys(keys: np.ndarray, constant: frozenset[str] | None = None) -> bool:
    """Full keys as MRTK's recorder writes them, more than one: every side weighted with
    weight 0 (all segments straight), no infinite tangent (no step).

    When ``constant`` (:func:`.key_checks.constant_fields`) holds every field but time and
    value, as in what the recorder writes, the first key answers for all."""
    if constant is not None and constant.issuperset(RECORDER_FIELDS):
        if len(keys) < 2:
            return False
        _, _, tin, tout, win, wout, mode = keys[0].item()  # exact Python numbers
        both = WEIGHTED_IN | WEIGHTED_OUT
        return mode == both and win == 0 and wout == 0 and not (math.isinf(tin) or math.isinf(tout))
    mode = keys["weighted_mode"]
    return bool(
        len(keys) > 1
        and (mode == WEIGHTED_IN | WEIGHTED_OUT).all()
        and not keys["in_weight"].any()
        and not keys["out_weight"].any()
        and not np.isinf(keys["in_tangent"]).any()
        and not np.isinf(keys["out_tangent"]).any()
    )


def to_frames(co: np.ndarray, hl: np.ndarray, hr: np.ndarray, fps: float):
    """Seconds -> frames, as float32 (what Blender stores)."""
    return [_pairs(a[:, 0] * fps, a[:, 1], np.float32) for a in (co, hl, hr)]


def overlong_keys(keys: np.ndarray, constant: frozenset[str] | None = None) -> int:
    """How many Bezier segments of full keys Blender shortens (weights adding up to over 1).

    ``constant``: the keys' :func:`.key_checks.constant_fields` when already known (a weight
    the same in every key is read from the first)."""
    if keys.dtype.names != FULL_KEY.names or len(keys) < 2:
        return 0

    def largest(name: str) -> float:
        column = keys[name]
        return max(
            float(column[0] if constant is not None and name in constant else column.max()), THIRD
        )

    # no two weights can add up to more than 1 (NaN fails the test): the usual case
    most = largest("out_weight") + largest("in_weight")
    if most <= 1 + 1e-6:
        return 0
    win, wout = _weights(keys)
    step = np.isinf(keys["out_tangent"][:-1]) | np.isinf(keys["in_tangent"][1:])
    return int(np.count_nonzero((wout[:-1] + win[1:] > 1 + 1e-6) & ~step))


def bezier_to_unity(co, hl, hr, interp, fps: float, sign: float = 1.0) -> np.ndarray:
    """FULL_KEY records from Blender keys in frames (float32 arrays as Blender has them).

    Weights are the handles' x extents over the segment; a side is weighted
    only where its weight differs from 1/3 by more than the float32 rounding
    of the frame numbers. A CONSTANT key's out tangent is +infinity (the
    last key's too); a LINEAR segment gets the segment's slope on both sides.
    """
    co = np.asarray(co, np.float64)
    hl = np.asarray(hl, np.float64)
    hr = np.asarray(hr, np.float64)
    interp = np.asarray(interp, np.uint8)
    k = len(co)
    out = np.zeros(k, FULL_KEY)
    if not k:
        return out
    x, y = co[:, 0], co[:, 1]
    before, after = _segment_lengths(x)
    if k < 2:
        before = after = np.full(k, float(fps))
    dxl, dxr = x - hl[:, 0], hr[:, 0] - x
    with np.errstate(divide="ignore", invalid="ignore"):
        win = np.where(before > 0, dxl / before, THIRD)
        wout = np.where(after > 0, dxr / after, THIRD)
        tin = np.where(dxl > 0, (y - hl[:, 1]) / dxl * fps, 0.0)
        tout = np.where(dxr > 0, (hr[:, 1] - y) / dxr * fps, 0.0)
    reach = np.maximum(np.abs(x), np.maximum(np.abs(hl[:, 0]), np.abs(hr[:, 0])))
    spacing = np.spacing(reach.astype(np.float32)).astype(np.float64)  # one float32 step
    tol_in = 4 * spacing / np.maximum(before, 1e-30) + 1e-7
    tol_out = 4 * spacing / np.maximum(after, 1e-30) + 1e-7
    weighted_in = np.abs(win - THIRD) > tol_in
    weighted_out = np.abs(wout - THIRD) > tol_out
    if not np.any(interp == BEZIER):  # lines and steps only: the import set no handles
        tin[:] = tout[:] = 0.0
        weighted_in[:] = weighted_out[:] = False
    if k > 1:
        linear = interp[:-1] == LINEAR
        with np.errstate(divide="ignore", invalid="ignore"):
            slope = np.diff(y) / np.diff(x) * fps
        slope = np.where(np.isfinite(slope), slope, 0.0)
        tout[:-1] = np.where(linear, slope, tout[:-1])
        tin[1:] = np.where(linear, slope, tin[1:])
        weighted_out[:-1] &= ~linear
        weighted_in[1:] &= ~linear
        # the outer sides of a curve that starts or ends with a line continue the line
        # (Blender keeps no handles for lines)
        if linear[0]:
            tin[0], weighted_in[0] = slope[0], False
        if linear[-1]:
            tout[-1], weighted_out[-1] = slope[-1], False
    step = interp == CONSTANT  # the last key's too: its infinite out tangent is kept
    weighted_out &= ~step
    out["time"] = x / fps
    out["value"] = y * sign
    out["in_tangent"] = tin * sign
    out["out_tangent"] = np.where(step, np.inf, tout * sign)  # Unity's step: +inf
    out["in_weight"] = np.where(weighted_in, win, THIRD32)
    out["out_weight"] = np.where(weighted_out, wout, THIRD32)
    out["weighted_mode"] = weighted_in * WEIGHTED_IN + weighted_out * WEIGHTED_OUT
    return out


def control_points(co, hl, hr) -> np.ndarray:
    """(K-1, 4, 2) control points of each segment, with Blender's handle shortening."""
    p0, p3 = co[:-1], co[1:]
    h1 = p0 - hr[:-1]
    h2 = p3 - hl[1:]
    total = np.abs(h1[:, 0]) + np.abs(h2[:, 0])
    span = p3[:, 0] - p0[:, 0]
    fac = np.where(total > span, span / np.where(total > 0, total, 1.0), 1.0)[:, None]
    return np.stack([p0, p0 - fac * h1, p3 - fac * h2, p3], axis=1)


def bezier_points(ctrl: np.ndarray, seg: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Points (x, y) at parameters ``u`` of segments ``seg`` (``ctrl`` from control_points)."""
    c = ctrl[seg]
    uu = u[:, None]
    a = 1.0 - uu
    return a**3 * c[:, 0] + 3 * a * a * uu * c[:, 1] + 3 * a * uu * uu * c[:, 2] + uu**3 * c[:, 3]


#: The most samples one curve's Bezier segments may become (under 1 GB of work arrays).
MAX_SAMPLES = 10_000_000


def _bezier_y_at(ctrl: np.ndarray, x: np.ndarray, iterations: int = 48) -> np.ndarray:
    """The y of each Bezier segment ``ctrl`` (N, 4, 2) at its x ``x`` (N,): the
    parameter found by bisection (x rises with it once Blender's handle shortening
    has applied, :func:`control_points`)."""
    lo, hi = np.zeros(len(x)), np.ones(len(x))
    c = ctrl[:, :, 0]
    for _ in range(iterations):
        u = (lo + hi) * 0.5
        a = 1.0 - u
        px = a**3 * c[:, 0] + 3 * a * a * u * c[:, 1] + 3 * a * u * u * c[:, 2] + u**3 * c[:, 3]
        below = px < x
        lo = np.where(below, u, lo)
        hi = np.where(below, hi, u)
    u = (lo + hi) * 0.5
    a = 1.0 - u
    c = ctrl[:, :, 1]
    return a**3 * c[:, 0] + 3 * a * a * u * c[:, 1] + 3 * a * u * u * c[:, 2] + u**3 * c[:, 3]


def _stride_errors(
    y: np.ndarray,
    ym: np.ndarray,
    j: np.ndarray,
    first: np.ndarray,
    pieces: np.ndarray,
    owner: np.ndarray,
    stride: int,
) -> np.ndarray:
    """Per segment: the largest distance of the curve from the line through every
    ``stride``-th sample (and the segment's end), probed at the samples ``y`` and at the
    midpoints ``ym`` between them. ``j``: each sample's index in its segment, ``first``:
    each segment's first sample's index in ``y``, ``owner``: each sample's segment."""
    n = pieces[owner]
    left = np.minimum((j // stride) * stride, n - 1)  # the end sample: its own piece's end
    right = np.minimum(left + stride, n)
    base = first[owner]
    y0, y1 = y[base + left], y[base + right]
    frac = (j - left) / (right - left)
    err = np.abs(y - (y0 + (y1 - y0) * frac))
    inner = j < n  # the midpoint after sample j lies in the same piece
    fm = (j[inner] + 0.5 - left[inner]) / (right[inner] - left[inner])
    errm = np.abs(ym - (y0[inner] + (y1[inner] - y0[inner]) * fm))
    worst = np.zeros(len(pieces))
    np.maximum.at(worst, owner, err)
    np.maximum.at(worst, owner[inner], errm)
    return worst


def sample_at_rate(co, hl, hr, interp, rate: float, tolerance: float):
    """Points (x, y) for a layout of straight segments (MRTK's 1.1), with the largest
    distance of their lines from the curve.

    Key times ``co[:, 0]`` are seconds (exact file times where known). Keys and
    LINEAR segments stay as they are. A Bezier segment is sampled at the
    recording's rate (``rate`` per second): split into ``round(length * rate)``
    equal pieces, at most one sample a frame; of those samples only every
    2**k-th is written, the largest step whose lines stay within ``tolerance`` of
    the curve at the samples and between them (at the rate, where even every
    sample is not within it). A CONSTANT segment becomes a hold ending one
    float32 step before the next key. Returns (points (N, 2) float64, is_key (N,)
    bool marking the original keys, the Bezier segments' count, the largest
    distance probed).
    """
    co = np.asarray(co, np.float64)
    hl = np.asarray(hl, np.float64)
    hr = np.asarray(hr, np.float64)
    interp = np.asarray(interp, np.uint8)
    k = len(co)
    if k < 2:
        return co.copy(), np.ones(k, bool), 0, 0.0
    seg = np.flatnonzero(interp[:-1] == BEZIER)
    pts, flags = [co], [np.ones(k, bool)]
    worst = 0.0
    if len(seg):
        with np.errstate(invalid="ignore", over="ignore"):
            ctrl = control_points(co, hl, hr)[seg]
            x0, dt = co[seg, 0], co[seg + 1, 0] - co[seg, 0]
            frames = np.nan_to_num(dt * rate, nan=1.0)  # a segment of no finite length: whole
            pieces = np.rint(np.clip(frames, 1.0, MAX_SAMPLES)).astype(np.int64)
        total = int(pieces.sum()) + len(seg)
        if total > MAX_SAMPLES:
            raise ValueError(
                f"{len(seg)} Bezier segments at {rate:g} samples a second need {total:,} "
                f"samples, more than {MAX_SAMPLES:,}"
            )
        first = np.zeros(len(seg), np.int64)
        np.cumsum(pieces[:-1] + 1, out=first[1:])
        owner = np.repeat(np.arange(len(seg)), pieces + 1)
        j = np.arange(total) - first[owner]
        n = pieces[owner]
        x = x0[owner] + dt[owner] * (j / n)
        y = _bezier_y_at(ctrl[owner], x)
        y[first] = co[seg, 1]  # the keys themselves, exactly
        y[first + pieces] = co[seg + 1, 1]
        inner = j < n
        xm = x0[owner[inner]] + dt[owner[inner]] * ((j[inner] + 0.5) / n[inner])
        ym = _bezier_y_at(ctrl[owner[inner]], xm)
        chosen = np.zeros(len(seg), np.int64)
        err = np.zeros(len(seg))
        stride = 1 << int(pieces.max() - 1).bit_length()
        while stride >= 1:
            e = _stride_errors(y, ym, j, first, pieces, owner, stride)
            take = (chosen == 0) & ((e <= tolerance) | (stride == 1))
            chosen[take], err[take] = stride, e[take]
            stride >>= 1
        keep = (j > 0) & (j < n) & (j % chosen[owner] == 0)
        pts.append(np.stack([x[keep], y[keep]], axis=1))
        flags.append(np.zeros(int(keep.sum()), bool))
        worst = float(err.max())
    step = np.flatnonzero(interp[:-1] == CONSTANT)
    if len(step):
        hold_x = np.nextafter(co[step + 1, 0].astype(np.float32), np.float32(-np.inf))
        keep = hold_x.astype(np.float64) > co[step, 0]
        hold = np.stack([hold_x.astype(np.float64)[keep], co[step[keep], 1]], axis=1)
        pts.append(hold)
        flags.append(np.zeros(len(hold), bool))
    allp = np.concatenate(pts)
    allf = np.concatenate(flags)
    order = np.lexsort((~allf, allp[:, 0]))
    return allp[order], allf[order], len(seg), worst
