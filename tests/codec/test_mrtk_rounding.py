"""Float32 shortcuts of the MRTK key conversion give the float64 path's bits."""

from __future__ import annotations

import numpy as np
import pytest

from rigport.io_formats.mrtk import keys as kc

RATES = [60.0, 30.0, 24.0, 25.0, 50.0, 90.0, 120.0, 1000.0, 0.5, 30000 / 1001, 24000 / 1001]


def _values() -> np.ndarray:
    rng = np.random.default_rng(7)
    bits = rng.integers(0, 2**32, 400_000, dtype=np.uint64).astype(np.uint32)
    x = bits.view(np.float32)
    x = x[np.isfinite(x)]  # every exponent: tiny, huge, subnormal, negative
    times = (np.arange(36_000, dtype=np.float32) / np.float32(60)).astype(np.float32)
    return np.concatenate([x, times, np.float32([0.0, -0.0, 1e-45, 3.4e38])])


@pytest.mark.parametrize("fps", RATES)
def test_scale_once_is_the_float64_product_rounded_once(fps):
    x = _values()
    want = np.empty(len(x), np.float32)
    with np.errstate(over="ignore"):
        np.multiply(x, fps, out=want, dtype=np.float64, casting="same_kind")
        got = np.empty(len(x), np.float32)
        kc.scale_once(x, fps, got)
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32))


@pytest.mark.parametrize("fps", RATES)
def test_divide_once_is_the_float64_quotient_rounded_once(fps):
    x = _values()
    want = np.empty(len(x), np.float32)
    with np.errstate(under="ignore", over="ignore"):
        np.divide(x, fps, out=want, dtype=np.float64, casting="same_kind")
        got = np.empty(len(x), np.float32)
        kc.divide_once(x, fps, got)
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32))


def test_strided_columns_take_the_same_path():
    """The import scales a field of the 28-byte key records into a column of co."""
    keys = np.zeros(1000, np.dtype([("time", "<f4"), ("value", "<f4"), ("pad", "<f4", 5)]))
    keys["time"] = np.linspace(0, 17, 1000, dtype=np.float32)
    co = np.empty((1000, 2), np.float32)
    kc.scale_once(keys["time"], 60.0, co[:, 0])
    want = (keys["time"].astype(np.float64) * 60.0).astype(np.float32)
    assert np.array_equal(co[:, 0], want)
