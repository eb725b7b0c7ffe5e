"""Fixed-point conversions shared by formats that quantise floats."""

from __future__ import annotations

import numpy as np


def dequantize_unorm(q: np.ndarray, bits: int) -> np.ndarray:
    """Unsigned normalised integers (0..2^bits-1) to floats in [0, 1]."""
    return q.astype(np.float64) / float((1 << bits) - 1)


def quantize_unorm(x: np.ndarray, bits: int) -> np.ndarray:
    """Floats in [0, 1] to the nearest unsigned normalised integer, clamped."""
    top = (1 << bits) - 1
    return np.clip(np.rint(np.asarray(x, np.float64) * top), 0, top).astype(np.int64)


def dequantize_snorm(q: np.ndarray, bits: int) -> np.ndarray:
    """Signed normalised integers (divided by 2^(bits-1)-1) to floats in [-1, 1]."""
    return q.astype(np.float64) / float((1 << (bits - 1)) - 1)


def quantize_snorm(x: np.ndarray, bits: int) -> np.ndarray:
    top = (1 << (bits - 1)) - 1
    return np.clip(np.rint(np.asarray(x, np.float64) * top), -top, top).astype(np.int64)


def dequantize_box(q: np.ndarray, lo: np.ndarray, size: np.ndarray, bits: int = 16) -> np.ndarray:
    """Box-quantised values: ``lo + size * q / (2^bits-1)``."""
    return np.asarray(lo, np.float64) + np.asarray(size, np.float64) * dequantize_unorm(q, bits)


def quantize_box(x: np.ndarray, lo: np.ndarray, size: np.ndarray, bits: int = 16) -> np.ndarray:
    size = np.asarray(size, np.float64)
    safe = np.where(size == 0, 1.0, size)
    t = (np.asarray(x, np.float64) - lo) / safe
    return quantize_unorm(np.where(size == 0, 0.0, t), bits)


def normalize_weights_to_sum(weights: np.ndarray, total: int) -> np.ndarray:
    """Integer weights per row that sum exactly to ``total`` (largest-remainder rounding).

    Rows whose weights are all zero stay zero.
    """
    w = np.asarray(weights, np.float64)
    sums = w.sum(axis=1, keepdims=True)
    scaled = np.divide(w * total, sums, out=np.zeros_like(w), where=sums > 0)
    base = np.floor(scaled).astype(np.int64)
    short = np.where(sums[:, 0] > 0, total - base.sum(axis=1), 0)
    frac = scaled - base
    order = np.argsort(-frac, axis=1, kind="stable")
    rank = np.empty_like(order)
    np.put_along_axis(rank, order, np.arange(w.shape[1])[None, :].repeat(len(w), 0), axis=1)
    base += rank < short[:, None]
    return base
