"""Turns, scales and offsets baked into MRTK curves and BonesPro structures."""

from __future__ import annotations

import numpy as np
import pytest

from rigport.io_formats.bonespro.placement import bake_structure
from rigport.io_formats.codec import FormatError
from rigport.io_formats.mrtk import keys as kc
from rigport.io_formats.mrtk.convert import BlenderCurve
from rigport.io_formats.mrtk.placement import bake_curves
from rigport.samples import bonespro as bp_samples


def _linear(times, values) -> BlenderCurve:
    co = np.stack([times, values], axis=1).astype(np.float32)
    return BlenderCurve(
        co, co.copy(), co.copy(), np.full(len(co), kc.LINEAR, np.uint8), record=b"x"
    )


def _quarter_turn_z() -> np.ndarray:
    m = np.eye(4)
    m[:3, :3] = [[0, -1, 0], [1, 0, 0], [0, 0, 1]]
    return m


def test_scale_and_offset_keep_times_and_drop_the_kept_bytes() -> None:
    curves = {("camera", "location", i): _linear([0, 10, 20], [1, 2, 3]) for i in range(3)}
    m = np.diag([2.0, 2.0, 2.0, 1.0])
    m[:3, 3] = (0, 0, 5)
    out = bake_curves(curves, m)
    for i, offset in enumerate((0, 0, 5)):
        c = out[("camera", "location", i)]
        np.testing.assert_array_equal(c.co[:, 0], [0, 10, 20])
        np.testing.assert_array_equal(c.co[:, 1], np.array([2, 4, 6]) + offset)
        assert c.record is None


def test_untouched_curves_keep_their_bytes() -> None:
    curves = {("camera", "location", i): _linear([0, 10], [1, 2]) for i in range(3)}
    m = np.eye(4)
    m[:3, 3] = (0, 0, 1)
    out = bake_curves(curves, m)
    assert out[("camera", "location", 0)] is curves[("camera", "location", 0)]
    assert out[("camera", "location", 2)].record is None


def test_a_turn_mixes_straight_lines_at_the_union_of_their_times() -> None:
    w = _linear([0, 8], [1.0, 0.0])
    x = _linear([0, 4, 8], [0.0, 1.0, 0.0])
    y = _linear([0, 8], [0.0, 0.0])
    z = _linear([2, 6], [0.0, 1.0])
    curves = {("camera", "rotation_quaternion", i): c for i, c in enumerate((w, x, y, z))}
    out = bake_curves(curves, _quarter_turn_z())
    q = np.sqrt(0.5) * np.array([1.0, 0.0, 0.0, 1.0])  # the turn
    for t in (0.0, 1.0, 3.0, 4.0, 5.5, 8.0):
        before = np.array([np.interp(t, c.co[:, 0], c.co[:, 1]) for c in (w, x, y, z)])
        after = np.array(
            [
                np.interp(t, out[("camera", "rotation_quaternion", i)].co[:, 0],
                          out[("camera", "rotation_quaternion", i)].co[:, 1])
                for i in range(4)
            ]
        )  # fmt: skip
        qw, qx, qy, qz = q
        bw, bx, by, bz = before
        want = [
            qw * bw - qx * bx - qy * by - qz * bz,
            qw * bx + qx * bw + qy * bz - qz * by,
            qw * by - qx * bz + qy * bw + qz * bx,
            qw * bz + qx * by - qy * bx + qz * bw,
        ]
        np.testing.assert_allclose(after, want, atol=1e-6)


def test_a_turn_of_bezier_curves_at_other_times_is_refused() -> None:
    a = _linear([0, 8], [1.0, 0.0])
    b = _linear([0, 3, 8], [0.0, 1.0, 0.0])
    b.interpolation[:] = kc.BEZIER
    curves = {("gaze", "location", 0): a, ("gaze", "location", 1): b}
    curves[("gaze", "location", 2)] = _linear([0, 8], [0.0, 0.0])
    c, s = np.cos(0.5), np.sin(0.5)
    turn = np.eye(4)
    turn[:2, :2] = [[c, -s], [s, c]]
    with pytest.raises(FormatError, match=r"gaze location\[0\]: the transform mixes"):
        bake_curves(curves, turn)
    out = bake_curves(curves, _quarter_turn_z())  # a quarter turn only swaps and flips
    np.testing.assert_array_equal(out[("gaze", "location", 0)].co[:, 1], -b.co[:, 1])


def test_bonespro_structure_scale_goes_into_translations() -> None:
    s = bp_samples.structure(n_vertices=10, scaled=False, seed=2)
    assert bake_structure(s, np.eye(4)) is s
    got = bake_structure(s, np.diag([3.0, 3.0, 3.0, 1.0]))
    np.testing.assert_allclose(got.positions, 3 * s.positions)
    np.testing.assert_allclose(got.bone_transforms[:, :3], s.bone_transforms[:, :3], atol=1e-12)
    np.testing.assert_allclose(got.bone_transforms[:, 3], 3 * s.bone_transforms[:, 3])
    np.testing.assert_allclose(got.boxes, 3 * s.boxes)
    turned = bake_structure(s, _quarter_turn_z())
    np.testing.assert_allclose(turned.positions[:, 0], -s.positions[:, 1], atol=1e-12)
