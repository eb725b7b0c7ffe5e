"""Is every value finite: one pass over the data where it is (no bpy).

A NaN or an infinity makes a sum NaN or infinite, so one sum answers for a whole
array where ``np.isfinite`` would write a boolean per value; a finite array
whose sum overflows takes the exact check, so the answer is never wrong."""

from __future__ import annotations

import numpy as np


def _sum_finite(a: np.ndarray) -> bool:
    """True: every value of ``a`` is finite (an integer or empty array always is);
    False: maybe not."""
    if a.dtype.kind != "f" or not a.size:
        return True
    with np.errstate(over="ignore", invalid="ignore"):
        return bool(np.isfinite(np.sum(a)))


def all_finite(a: np.ndarray) -> bool:
    """Every value of ``a`` finite."""
    a = np.asarray(a)
    return _sum_finite(a) or bool(np.isfinite(a).all())


def finite_rows(a: np.ndarray) -> np.ndarray:
    """Per row of ``a``: every value finite."""
    a = np.asarray(a)
    if _sum_finite(a):
        return np.ones(len(a), bool)
    return np.isfinite(a.reshape(len(a), -1)).all(axis=1)
