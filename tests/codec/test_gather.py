"""``gather.rows_at``: the same rows as numpy's take, bit for bit, for every row
width, over several blocks of indices."""

from __future__ import annotations

import numpy as np
import pytest

from io_formats import gather
from io_formats.gather import rows_at


@pytest.mark.parametrize(
    "shape,dtype",
    [((3,), np.float32), ((2,), np.float32), ((4,), np.float32), ((), np.int32), ((3,), np.int64)],
)
def test_rows_at_equals_take(monkeypatch, shape, dtype):
    monkeypatch.setattr(gather, "BLOCK", 7)  # several blocks and a short last one
    rng = np.random.default_rng(1)
    values = rng.integers(0, 1 << 30, (50, *shape)).astype(dtype)
    if values.dtype.kind == "f":  # odd bits survive: a signalling NaN and -0
        values.reshape(50, -1)[3, 0:1].view(np.uint32)[...] = 0x7FA00001
        values.reshape(50, -1)[4, 0] = -0.0
    idx = rng.integers(0, 50, 103).astype(np.int32)
    got = rows_at(values, idx)
    want = np.take(values, idx.astype(np.intp), axis=0)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.tobytes() == want.tobytes()


def test_rows_at_of_nothing():
    assert rows_at(np.zeros((0, 3), np.float32), np.zeros(0, np.int32)).shape == (0, 3)
    assert rows_at(np.ones((4, 2), np.float32), np.zeros(0, np.int32)).shape == (0, 2)
