"""Bounding boxes and spheres of vertex positions, as the formats store them.

A position that is not finite (a file's NaN or infinite vertex, written back as it
was) bounds nothing: the box and sphere are those of the finite positions, as an
engine's culling needs them, and stay finite."""

from __future__ import annotations

import numpy as np

from .finite import all_finite, finite_rows


def finite_points(points: np.ndarray) -> np.ndarray:
    """The rows of ``points`` (N, 3) whose every value is finite (``points`` itself
    when all are: one pass over the data)."""
    return points if all_finite(points) else points[finite_rows(points)]


def box(points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The lowest and highest corner of the finite ``points`` (zeros when none are)."""
    p = finite_points(points)
    if not len(p):
        return np.zeros(3, points.dtype), np.zeros(3, points.dtype)
    return p.min(axis=0), p.max(axis=0)


def box_sphere(points: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """The box of the finite ``points``, and the sphere about the box's centre that
    holds them: (lowest, highest, centre, radius), in the points' own precision."""
    p = finite_points(points)
    lo, hi = box(p)
    centre = (lo + hi) * p.dtype.type(0.5)
    radius = float(np.sqrt(((p - centre) ** 2).sum(axis=1).max())) if len(p) else 0.0
    return lo, hi, centre, radius
