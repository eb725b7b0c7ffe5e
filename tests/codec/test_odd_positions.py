"""Non-finite vertex positions in the shared helpers: morph offsets from such a
base are from the origin (so a file's target position survives Blender's stand-in
0 and comes back bit for bit), and bounds are those of the finite positions."""

from __future__ import annotations

import numpy as np
import pytest

from io_formats.bounds import box, box_sphere
from io_formats.scene import morph_offsets, morph_positions
from io_formats.unigine.common import compute_bounds

BASE = np.array([[0.0, 0, 0], [1, 2, 3], [np.nan, 1, 1], [4, np.inf, 5]], np.float32)
TARGET = np.array([[0.5, 0, 0], [1, 2, 4], [0.25, 1, 1], [4, 7, 5]], np.float32)


def test_offsets_round_trip_bit_for_bit():
    off = morph_offsets(BASE, TARGET)
    assert np.isfinite(off).all()
    assert off[2:].tobytes() == TARGET[2:].tobytes()  # from the origin at a non-finite base
    assert off[:2].tolist() == (TARGET[:2] - BASE[:2]).tolist()
    assert morph_positions(BASE, off).tobytes() == TARGET.tobytes()


def test_signalling_nan_base_keeps_the_target():
    base = BASE.copy()
    base[2:3, 0:1].view(np.uint32)[...] = 0x7FA00001
    with np.errstate(all="raise"):
        off = morph_offsets(base, TARGET)
        assert morph_positions(base, off).tobytes() == TARGET.tobytes()


def test_non_finite_target_stays_non_finite():
    target = TARGET.copy()
    target[2, 1] = np.nan
    assert np.isnan(morph_offsets(BASE, target)[2, 1])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_bounds_are_the_finite_positions(dtype):
    p = BASE.astype(dtype)
    lo, hi = box(p)
    assert lo.tolist() == [0, 0, 0] and hi.tolist() == [1, 2, 3]
    lo, hi, centre, radius = box_sphere(p)
    assert centre.tolist() == [0.5, 1, 1.5]
    assert radius == pytest.approx(np.linalg.norm([0.5, 1, 1.5]))
    assert np.isfinite(compute_bounds(p)).all()


def test_bounds_of_nothing_finite_are_zero():
    p = np.full((2, 3), np.nan, np.float32)
    assert [a.tolist() for a in box(p)] == [[0, 0, 0], [0, 0, 0]]
    assert box_sphere(p)[3] == 0.0
    assert compute_bounds(np.zeros((0, 3))).tolist() == [0.0] * 10
