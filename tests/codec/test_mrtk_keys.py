"""Unity keyframes <-> Bezier handles, axis conversion and simple-layout sampling (no bpy).

``unity_eval`` (tests/support.py) is an independent evaluator of Unity's
keyframe semantics.
"""

from __future__ import annotations

import numpy as np
import pytest

from rigport.io_formats.mrtk import convert as C
from rigport.io_formats.mrtk import keys as K
from rigport.io_formats.mrtk import recording as R
from rigport.io_formats.mrtk.key_checks import constant_fields
from rigport.samples import mrtk as samples
from rigport.tests.support import unity_eval


def bezier_eval(co, hl, hr, interp, x: np.ndarray) -> np.ndarray:
    """The Bezier keys evaluated the way an F-curve does (bisection on the parameter)."""
    i = np.clip(np.searchsorted(co[:, 0], x, "right") - 1, 0, len(co) - 2)
    ctrl = K.control_points(co, hl, hr)
    lo, hi = np.zeros(len(x)), np.ones(len(x))
    for _ in range(60):
        u = (lo + hi) / 2
        px = K.bezier_points(ctrl, i, u)[:, 0]
        lo, hi = np.where(px < x, u, lo), np.where(px < x, hi, u)
    y = K.bezier_points(ctrl, i, (lo + hi) / 2)[:, 1]
    lin = co[i, 1] + (co[i + 1, 1] - co[i, 1]) * (x - co[i, 0]) / (co[i + 1, 0] - co[i, 0])
    y = np.where(interp[i] == K.LINEAR, lin, y)
    return np.where(interp[i] == K.CONSTANT, co[i, 1], y)


def _keys(modes, weights=0.3, n=6, seed=1, infinite=False) -> np.ndarray:
    c = samples.full_curve(np.random.default_rng(seed), n, infinite=infinite)
    c.keys["weighted_mode"] = modes
    c.keys["in_weight"] = weights
    c.keys["out_weight"] = np.float32(0.45)
    return c.keys


CASES = {
    "unweighted": lambda: _keys(0),
    "weighted": lambda: _keys(3),
    "in_only": lambda: _keys(1),
    "out_only": lambda: _keys(2),
    "mixed": lambda: _keys(np.array([0, 1, 2, 3, 1, 2])),
    "broken_stepped": lambda: samples.full_curve(np.random.default_rng(3), 40, infinite=True).keys,
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bezier_handles_reproduce_unity_curves(case: str) -> None:
    keys = CASES[case]()
    co, hl, hr, interp = K.unity_to_bezier(keys)
    x = np.linspace(keys["time"][0], keys["time"][-1], 4001)
    want = unity_eval(keys, x)
    got = bezier_eval(co, hl, hr, interp, x)
    span = float(np.ptp(keys["value"])) or 1.0
    assert np.max(np.abs(got - want)) <= 1e-7 * span  # both solve by bisection


@pytest.mark.parametrize("case", sorted(CASES))
def test_handles_come_back_as_the_same_keys(case: str) -> None:
    """Through float32 frames (what Blender stores): keys, tangents, weights, modes."""
    keys = CASES[case]()
    fps = 60.0
    co, hl, hr = K.to_frames(*K.unity_to_bezier(keys)[:3], fps)
    interp = K.unity_to_bezier(keys)[3]
    back = K.bezier_to_unity(co, hl, hr, interp, fps)
    # seconds -> float32 frames -> seconds: within one float32 step (the stored times
    # make the Blender round trip exact, see test_export_of_unchanged_curves_is_byte_exact)
    assert np.all(np.abs(back["time"] - keys["time"]) <= np.spacing(keys["time"]))
    assert np.array_equal(back["value"], keys["value"])
    step_out = np.zeros(len(keys), bool)
    step_out[:-1] = interp[:-1] == K.CONSTANT
    step_in = np.zeros(len(keys), bool)
    step_in[1:] = step_out[:-1]
    finite_out = np.isfinite(keys["out_tangent"]) & ~step_out
    finite_in = np.isfinite(keys["in_tangent"]) & ~step_in
    assert np.all(np.isinf(back["out_tangent"][step_out]))
    for field, ok in (("in_tangent", finite_in), ("out_tangent", finite_out)):
        a, b = back[field][ok].astype(np.float64), keys[field][ok].astype(np.float64)
        assert np.max(np.abs(a - b) / np.maximum(np.abs(b), 1.0)) < 2e-5, field
    wm = keys["weighted_mode"]
    ins = ((wm & 1) != 0) & finite_in
    outs = ((wm & 2) != 0) & finite_out
    # a weight is a handle's x extent over the segment, both in float32 frames
    assert np.max(np.abs(back["in_weight"][ins] - keys["in_weight"][ins]), initial=0) < 1e-5
    assert np.max(np.abs(back["out_weight"][outs] - keys["out_weight"][outs]), initial=0) < 1e-5
    # a weighted side with a weight other than 1/3 stays weighted, and only those
    real_in = ins & (np.abs(keys["in_weight"] - 1 / 3) > 1e-5)
    assert np.array_equal((back["weighted_mode"] & 1)[finite_in] != 0, real_in[finite_in])


def test_whole_curve_negation_is_exact() -> None:
    keys = CASES["mixed"]()
    co, hl, hr, _ = K.unity_to_bezier(keys, 1.0)
    nco, nhl, nhr, _ = K.unity_to_bezier(keys, -1.0)
    assert np.array_equal(nco[:, 1], -co[:, 1]) and np.array_equal(nhl[:, 0], hl[:, 0])
    assert np.array_equal(nhr[:, 1], -hr[:, 1])


def test_axis_conversion_is_a_proper_change_of_basis() -> None:
    """Positions (x, z, y) and quaternions (w, -x, -z, -y): R_blender = P R_unity P."""
    rng = np.random.default_rng(4)
    q = rng.normal(size=4)
    q /= np.linalg.norm(q)
    x, y, z, w = q

    def mat(w, x, y, z):
        return np.array(
            [
                [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
            ]
        )

    unity = {0: 0.0, 1: 0.0, 2: 0.0, 3: x, 4: y, 5: z, 6: w}
    blender = [0.0] * 4
    for path, index, src, sign in C.POSE_BLENDER:
        if path == C.ROT:
            blender[index] = sign * unity[src]
    p = np.array([[1, 0, 0], [0, 0, 1], [0, 1, 0]], float)
    assert np.allclose(mat(*blender), p @ mat(w, x, y, z) @ p, atol=1e-12)
    loc = {index: src for path, index, src, _ in C.POSE_BLENDER if path == C.LOC}
    assert loc == {0: 0, 1: 2, 2: 1}


def _sampled(rate: float, tolerance: float):
    keys = samples.full_curve(np.random.default_rng(8), 30, duration=6.0, infinite=True).keys
    co, hl, hr, interp = K.unity_to_bezier(keys)
    return keys, (co, hl, hr, interp), K.sample_at_rate(co, hl, hr, interp, rate, tolerance)


@pytest.mark.parametrize("rate", [30.0, 60.0, 240.0])
@pytest.mark.parametrize("tolerance", [1e-2, 1e-3, 1e-5])
def test_simple_layout_samples_bezier_segments_at_the_rate(rate: float, tolerance: float) -> None:
    """Keys stay; a Bezier segment gets at most one sample a frame; the lines are within
    the tolerance where the rate allows it, and within the reported distance always
    (probed at the samples and between them: 10 % margin between the probes)."""
    keys, (co, hl, hr, interp), (pts, is_key, bezier, worst) = _sampled(rate, tolerance)
    assert bezier == int(np.count_nonzero(interp[:-1] == K.BEZIER))
    assert np.array_equal(pts[is_key], co)
    assert np.all(np.diff(pts[:, 0]) >= 0)
    seg = np.searchsorted(co[:, 0], pts[~is_key, 0]) - 1
    on_bezier = interp[seg] == K.BEZIER
    per_segment = np.bincount(seg[on_bezier], minlength=len(co))
    frames = np.rint((co[1:, 0] - co[:-1, 0]) * rate)
    assert np.all(per_segment[:-1] <= np.maximum(frames - 1, 0))
    pts32 = pts.astype(np.float32).astype(np.float64)  # the file stores float32
    x = np.linspace(co[0, 0], co[-1, 0], 20001)
    x = x[~np.isin(np.searchsorted(co[:, 0], x), np.flatnonzero(interp == K.CONSTANT) + 1)]
    err = np.max(np.abs(np.interp(x, pts32[:, 0], pts32[:, 1]) - unity_eval(keys, x)))
    assert err <= 1.1 * worst + 1e-6, (err, worst)
    # beyond the tolerance only where every sample of the rate is beyond it too
    _, _, (every, _, _, at_rate) = _sampled(rate, 0.0)
    assert worst <= max(tolerance, at_rate) and len(pts) <= len(every)


def test_a_tolerance_the_lines_meet_adds_no_samples_and_a_fine_one_every_frame() -> None:
    keys, (co, _, _, interp), (pts, is_key, _, worst) = _sampled(60.0, 10.0)
    holds = np.count_nonzero(interp[:-1] == K.CONSTANT)
    assert len(pts) - len(co) <= holds and worst <= 10.0
    _, _, (pts, is_key, _, _) = _sampled(60.0, 0.0)
    bez = np.flatnonzero(interp[:-1] == K.BEZIER)
    frames = np.rint(np.maximum((co[bez + 1, 0] - co[bez, 0]) * 60.0, 1.0))
    assert np.count_nonzero(~is_key) - holds == int(np.sum(frames - 1))


def test_linear_simple_curves_add_no_samples() -> None:
    c = samples.simple_curve(np.random.default_rng(2), 20)
    co, hl, hr, interp = K.unity_to_bezier(c.keys)
    assert set(interp) == {K.LINEAR}
    pts, is_key, bezier, worst = K.sample_at_rate(co, hl, hr, interp, 60.0, 1e-6)
    assert is_key.all() and np.array_equal(pts, co)
    assert (bezier, worst) == (0, 0.0)


def test_segments_without_a_finite_length_are_not_sampled() -> None:
    co = np.array([[0.0, 0.0], [np.nan, 1.0], [np.inf, 2.0]])
    hl, hr = co - [0.1, 0.0], co + [0.1, 0.0]
    pts, is_key, bezier, _ = K.sample_at_rate(co, hl, hr, np.full(3, K.BEZIER, np.uint8), 60, 0)
    assert bezier == 2 and len(pts) == 3 and is_key.all()


def test_a_sampling_beyond_the_limit_is_refused() -> None:
    co = np.array([[0.0, 0.0], [1e9, 1.0]])
    hl, hr = co - [1.0, 0.0], co + [1.0, 0.0]
    with pytest.raises(ValueError, match="more than"):
        K.sample_at_rate(co, hl, hr, np.full(2, K.BEZIER, np.uint8), 60.0, 1e-4)


def test_import_plan_has_one_curve_per_unity_curve() -> None:
    rec = samples.sample_recording()
    plan = C.import_recording(rec)
    n_float = len(list(rec.float_curves()))
    assert len(plan.curves) == n_float + 4
    keys = {(c.curve.target, c.curve.data_path, c.curve.index) for c in plan.curves}
    assert len(keys) == len(plan.curves)
    assert len(plan.roles) == 1 + 2 * 28 + 1


def _as_blender(plan: C.ImportPlan, fps: float, keep_records: bool):
    out = {}
    for item in plan.curves:
        c = item.curve
        co, hl, hr = K.to_frames(c.co, c.handle_left, c.handle_right, fps)
        out[(c.target, c.data_path, c.index)] = C.BlenderCurve(
            co, hl, hr, c.interpolation, c.cycle_before, c.cycle_after,
            item.record if keep_records else None,
        )  # fmt: skip
    return out


@pytest.mark.parametrize("version,layout", [((1, 0), R.FULL), ((1, 1), R.FULL), ((1, 1), R.SIMPLE)])
def test_export_of_unchanged_curves_is_byte_exact(version, layout) -> None:
    rec = samples.sample_recording(version, layout)
    data = R.write(rec)
    plan = C.import_recording(R.read(data))
    opts = C.ExportOptions(*version, layout, True, 60.0)
    back, warnings = C.export_recording(
        _as_blender(plan, 60.0, True), set(plan.roles), rec.markers, opts
    )
    assert R.write(back) == data
    # the documented 1.1 full layout says that MRTK 2.x cannot read it; nothing else warns
    full11 = (version, layout) == ((1, 1), R.FULL)
    assert warnings == ([C.FULL_LAYOUT_WARNING] if full11 else [])


def test_export_without_stored_data_is_within_float32_rounding() -> None:
    rec = samples.sample_recording((1, 1), R.FULL, keys=20)
    plan = C.import_recording(rec)
    opts = C.ExportOptions(1, 1, R.FULL, True, 60.0)
    back, _ = C.export_recording(_as_blender(plan, 60.0, False), set(plan.roles), [], opts)
    for (name, a), (_, b) in zip(rec.float_curves(), back.float_curves(), strict=True):
        assert len(a.keys) == len(b.keys), name
        if not len(a.keys):
            continue
        ta, tb = a.keys["time"].astype(np.float64), b.keys["time"].astype(np.float64)
        assert np.max(np.abs(ta - tb) / np.maximum(np.abs(ta), 1e-3)) < 2e-7, name
        assert np.array_equal(np.abs(a.keys["value"]), np.abs(b.keys["value"])), name
        x = np.linspace(ta[0], ta[-1], 2001)
        span = float(np.ptp(a.keys["value"])) or 1.0
        err = np.max(np.abs(unity_eval(a.keys, x) - unity_eval(b.keys, x)))
        assert err <= 1e-5 * span, (name, err)


def test_unedited_simple_curves_export_as_full_keys_mrtk_reads_the_same() -> None:
    """Simple keys as full ones: weighted both sides, zero tangents and weights (straight)."""
    rec = samples.sample_recording((1, 1), R.SIMPLE, keys=6)
    plan = C.import_recording(rec)
    opts = C.ExportOptions(1, 1, R.FULL, True, 60.0)
    back, _ = C.export_recording(_as_blender(plan, 60.0, True), set(plan.roles), [], opts)
    for (name, a), (_, b) in zip(rec.float_curves(), back.float_curves(), strict=True):
        assert b.keys.dtype == R.FULL_KEY, name
        assert np.array_equal(a.keys["time"], b.keys["time"]), name
        assert np.array_equal(a.keys["value"], b.keys["value"]), name
        assert np.all(b.keys["weighted_mode"] == 3) and not b.keys["in_weight"].any()
        if len(a.keys) > 1:
            x = np.linspace(a.keys["time"][0], a.keys["time"][-1], 501)
            straight = np.interp(x, a.keys["time"], a.keys["value"])
            assert np.allclose(unity_eval(b.keys, x), straight, atol=1e-6), name


def test_keys_next_to_an_edit_are_derived_the_rest_kept() -> None:
    """Delete one key: its two neighbours come from their handles, every other key is exact."""
    rec = samples.sample_recording((1, 1), R.FULL, hands=False, gaze=False, keys=12)
    k = rec.camera[0].keys
    for field in ("in_tangent", "out_tangent"):
        k[field][~np.isfinite(k[field])] = 0.5
    plan = C.import_recording(rec)
    curves = _as_blender(plan, 60.0, True)
    key = ("camera", "location", 0)  # Unity position x
    bc = curves[key]
    drop = 5
    curves[key] = C.BlenderCurve(
        np.delete(bc.co, drop, 0),
        np.delete(bc.handle_left, drop, 0),
        np.delete(bc.handle_right, drop, 0),
        np.delete(bc.interpolation, drop),
        bc.cycle_before,
        bc.cycle_after,
        bc.record,
    )
    opts = C.ExportOptions(1, 1, R.FULL, True, 60.0)
    back, _ = C.export_recording(curves, set(plan.roles), [], opts)
    a = np.delete(rec.camera[0].keys, drop)
    b = back.camera[0].keys
    kept = [i for i in range(len(a)) if i not in (drop - 1, drop)]
    assert a[kept].tobytes() == b[kept].tobytes()
    assert np.array_equal(a["time"], b["time"]) and np.array_equal(a["value"], b["value"])
    # the neighbours' handles now span a longer segment: their weights are smaller
    for i, side, bit in ((drop - 1, "out", 2), (drop, "in", 1)):
        wa = a[i][f"{side}_weight"] if a[i]["weighted_mode"] & bit else 1 / 3
        wb = b[i][f"{side}_weight"] if b[i]["weighted_mode"] & bit else 1 / 3
        assert wb < wa


def test_lines_and_steps_need_no_handles() -> None:
    """Recorder keys (weighted both sides, weight 0) are lines; from Blender keys of lines
    and steps only, whatever their handles, the export writes lines, holds and no weights."""
    keys = np.zeros(5, R.FULL_KEY)
    keys["time"] = [0.0, 0.5, 1.0, 1.5, 2.0]
    keys["value"] = [0.0, 1.0, 3.0, 2.0, 2.5]
    keys["weighted_mode"] = 3
    keys["out_tangent"][2] = np.inf  # a hold from 1.0 to 1.5
    co, hl, hr, interp = K.unity_to_frames(keys, 60.0)
    assert list(interp) == [K.LINEAR, K.LINEAR, K.CONSTANT, K.LINEAR, K.LINEAR]
    junk = np.zeros_like(hl)  # the handles Blender gives keys it was not given handles for
    back = K.bezier_to_unity(co, junk, junk, interp, 60.0)
    assert not back["weighted_mode"].any()
    np.testing.assert_allclose(back["out_tangent"][[0, 1, 3, 4]], [2.0, 4.0, 1.0, 1.0])
    np.testing.assert_allclose(back["in_tangent"][[0, 1, 2, 4]], [2.0, 2.0, 4.0, 1.0])
    assert back["out_tangent"][2] == np.inf and back["in_tangent"][3] == 0.0


def _recorder_keys(n: int = 7) -> np.ndarray:
    keys = np.zeros(n, R.FULL_KEY)
    keys["time"] = np.cumsum(np.linspace(0.01, 0.5, n)).astype(np.float32) / 3
    keys["value"] = np.sin(np.arange(n) * 1.7).astype(np.float32)
    keys["weighted_mode"] = 3
    return keys


def _with(name: str, index, value) -> np.ndarray:
    """Recorder keys with one field changed."""
    keys = _recorder_keys()
    keys[name][index] = value
    return keys


KEYFRAME_CASES = {
    "recorder": _recorder_keys,
    "recorder_one_key": lambda: _recorder_keys(1),
    "recorder_negative_zero_weights": lambda: _with("in_weight", slice(None), -0.0),
    "recorder_nan_tangent": lambda: _with("in_tangent", 3, np.nan),
    "recorder_with_a_step": lambda: _with("out_tangent", 2, np.inf),
    "recorder_step_from_the_right": lambda: _with("in_tangent", 4, -np.inf),
    "recorder_one_bezier_side": lambda: _with("out_weight", 3, 0.2),
    "recorder_one_bezier_unweighted": lambda: _with("weighted_mode", 0, 1),
    "full_mixed": lambda: samples.full_curve(np.random.default_rng(5), 200, infinite=True).keys,
    "simple": lambda: samples.simple_curve(np.random.default_rng(6), 50).keys,
    "empty": lambda: np.zeros(0, R.FULL_KEY),
}


@pytest.mark.parametrize("sign", [1.0, -1.0])
@pytest.mark.parametrize("case", sorted(KEYFRAME_CASES))
def test_keyframes_without_handles_are_the_same_numbers(case: str, sign: float) -> None:
    """unity_to_keyframes (the import's fast path) gives unity_to_frames' keys bit for bit,
    and leaves out the handles exactly when no key is Bezier."""
    keys = np.frombuffer(KEYFRAME_CASES[case]().tobytes(), KEYFRAME_CASES[case]().dtype)
    co, hl, hr, interp = K.unity_to_keyframes(keys, 59.94, sign)
    want = K.unity_to_frames(keys, 59.94, sign)
    assert co.dtype == np.float32 and co.shape == (len(keys), 2)
    assert co.tobytes() == want[0].tobytes()
    assert interp.tobytes() == want[3].tobytes()
    if np.any(want[3] == K.BEZIER):
        assert hl.tobytes() == want[1].tobytes() and hr.tobytes() == want[2].tobytes()
    else:
        assert hl is None and hr is None
    lines = case.startswith("recorder") and "bezier" not in case and "one_key" not in case
    assert lines == (hl is None) or case in ("simple", "empty")
    # the import's shortcut: the recorder test answered from the fields known constant
    if keys.dtype == R.FULL_KEY:
        constant = constant_fields(keys)
        quick = K.unity_to_keyframes(keys, 59.94, sign, False, constant)
        assert quick[0].tobytes() == co.tobytes() and quick[3].tobytes() == interp.tobytes()
        assert (quick[1] is None) == (hl is None)


def test_constant_fields_compare_bits() -> None:
    """A field is constant when every key has its first key's bits: -0 differs from 0,
    a NaN equals only the same NaN."""
    keys = _recorder_keys(5)
    assert constant_fields(keys) == set(R.FULL_KEY.names[2:])
    assert constant_fields(keys[:1]) == frozenset()
    same = keys.copy()
    same["value"] = -0.0  # every field but time
    assert constant_fields(same) == set(R.FULL_KEY.names[1:])
    same["weighted_mode"][3] = 1
    assert constant_fields(same) == set(R.FULL_KEY.names[1:-1])
    keys["in_weight"][4] = -0.0
    keys["out_tangent"] = np.nan
    keys["out_tangent"].view("<i4")[2] = 0x7FC00123
    keys["value"] = 1.5
    keys["value"][1] = 2.0  # the second key differs, the rest equal the first
    keys["time"][1] = keys["time"][0]  # the second key alone is not enough to tell
    assert constant_fields(keys) == {"in_tangent", "out_weight", "weighted_mode"}


@pytest.mark.parametrize("case", sorted(CASES))
def test_overlong_keys_counts_segments_over_one(case: str) -> None:
    """The quick bound in overlong_keys gives the count of the full test."""
    keys = CASES[case]().copy()
    keys["in_weight"] = np.linspace(0.2, 0.9, len(keys))
    win, wout = K._weights(keys)
    step = np.isinf(keys["out_tangent"][:-1]) | np.isinf(keys["in_tangent"][1:])
    want = int(np.count_nonzero((wout[:-1] + win[1:] > 1 + 1e-6) & ~step))
    assert K.overlong_keys(keys) == want
    assert K.overlong_keys(keys, constant_fields(keys)) == want
    keys["out_weight"] = 0.9  # a constant weight is read from the first key alone
    assert K.overlong_keys(keys, constant_fields(keys)) == K.overlong_keys(keys)
    keys["in_weight"] = 0.5
    keys["out_weight"] = 0.5
    assert K.overlong_keys(keys) == 0


def _stored_cases() -> dict[str, R.Curve]:
    rec = _recorder_keys(9)
    odd = _recorder_keys(9)
    odd["in_tangent"] = np.float32(-0.0)
    odd["out_tangent"] = np.float32(np.nan)
    odd["out_tangent"].view("<i4")[:] = 0x7FC00123  # a NaN with payload bits
    odd["value"] = 2.5  # a constant value, varying weights
    odd["in_weight"] = np.linspace(0, 1, 9)
    full = samples.full_curve(np.random.default_rng(9), 30, infinite=True)
    return {
        "recorder": R.Curve(8, 8, rec),
        "odd_bits": R.Curve(2, 4, odd),
        "full": full,
        "one_key": R.Curve(1, 0, _recorder_keys(1)),
        "empty": R.Curve(8, 8, np.zeros(0, R.FULL_KEY)),
        "simple": samples.simple_curve(np.random.default_rng(2), 20),
    }


@pytest.mark.parametrize("case", sorted(_stored_cases()))
def test_stored_curves_come_back_bit_for_bit(case: str) -> None:
    """Each imported curve's stored record gives its keys back, every bit; fields the same
    in every key (MRTK's recorder: 20 of 28 bytes) are stored once."""
    c = _stored_cases()[case]
    data = C.pack_record(c)
    back = C.unpack_record(data)
    assert back is not None and (back.pre_wrap, back.post_wrap) == (c.pre_wrap, c.post_wrap)
    assert back.keys.dtype == c.keys.dtype and back.keys.tobytes() == c.keys.tobytes()
    if case == "recorder":
        assert len(data) == 9 + 5 + 5 * 4 + 8 * len(c.keys)  # time and value per key
    # what the export's shortcut reads from the record: the fields held once
    want = constant_fields(c.keys) if c.keys.dtype == R.FULL_KEY else frozenset()
    assert (C.record_constants(data) or frozenset()) == want
    assert C.pack_record(c, want) == data
    if case == "odd_bits":
        assert data[:1] == b"C"


def test_damaged_stored_curves_are_ignored() -> None:
    data = C.pack_record(R.Curve(8, 8, _recorder_keys(9)))
    assert data[:1] == b"C"
    for bad in (data[:-1], data + b"\0", data[:13], data[:13] + b"\xff" + data[14:]):
        assert C.unpack_record(bad) is None
    old = C.pack_record(R.Curve(8, 8, samples.full_curve(np.random.default_rng(1), 5).keys))
    assert old[:1] == b"F" and C.unpack_record(old[:-3]) is None
