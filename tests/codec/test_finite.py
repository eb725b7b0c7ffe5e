"""``io_formats.finite``: the one-pass answers equal ``np.isfinite``'s, where a
value is not finite, where the sum overflows though every value is finite, and
for integer, empty and many-column arrays."""

from __future__ import annotations

import numpy as np
import pytest

from io_formats.bounds import finite_points
from io_formats.finite import all_finite, finite_rows

BIG = np.finfo(np.float32).max


def _cases():
    rng = np.random.default_rng(3)
    plain = rng.normal(size=(40, 3)).astype(np.float32)
    yield "plain", plain
    for bad in (np.nan, np.inf, -np.inf):
        a = plain.copy()
        a[7, 2] = bad
        yield f"one {bad}", a
    snan = plain.copy()
    snan[5:6, 1:2].view(np.uint32)[...] = 0x7FA00001  # a signalling NaN
    yield "signalling NaN", snan
    yield "sum overflows", np.full((6, 3), BIG, np.float32)  # all finite
    yield "+inf and -inf", np.array([[np.inf, 1, 1], [-np.inf, 1, 1]], np.float32)
    yield "float64 rows of 4", rng.normal(size=(9, 4))
    yield "empty", np.zeros((0, 3), np.float32)
    yield "integers", np.arange(12, dtype=np.int32).reshape(4, 3)


@pytest.mark.parametrize("name,a", list(_cases()), ids=[n for n, _ in _cases()])
def test_answers_equal_isfinite(name, a):
    want_rows = np.isfinite(a).all(axis=tuple(range(1, a.ndim)))
    assert finite_rows(a).tolist() == want_rows.tolist()
    assert all_finite(a) is bool(np.isfinite(a).all())
    kept = finite_points(a)
    assert kept.tobytes() == a[want_rows].tobytes()
    if want_rows.all():
        assert kept is a  # no copy where every row is finite
