"""3ds Max static-axis Euler angles in all nine BonesPro orders, vectorised.

E0 turns about the order's first axis, then E1 about the second, then E2 about
the third, all about fixed (world) axes. In 3ds Max's row-vector form the
rotation is ``R = Ra(E0) Rb(E1) Rc(E2)``; in column-vector form (Blender's)
it is the transpose, ``Rc(E2) Rb(E1) Ra(E0)``. For the Tait-Bryan orders this
is exactly Blender's Euler with the same order string; Blender cannot hold the
proper-Euler orders XYX, YZY and ZXZ.
"""

from __future__ import annotations

import numpy as np

ORDERS = ("XYZ", "XZY", "YZX", "YXZ", "ZXY", "ZYX", "XYX", "YZY", "ZXZ")
_AXIS = {"X": 0, "Y": 1, "Z": 2}


def axis_rotation(axis: int, angle: np.ndarray) -> np.ndarray:
    """(..., 3, 3) column-vector rotation by ``angle`` radians about a world axis."""
    angle = np.asarray(angle, np.float64)
    c, s = np.cos(angle), np.sin(angle)
    out = np.zeros(angle.shape + (3, 3))
    i, j = (axis + 1) % 3, (axis + 2) % 3
    out[..., axis, axis] = 1.0
    out[..., i, i] = c
    out[..., j, j] = c
    out[..., j, i] = s
    out[..., i, j] = -s
    return out


def _axes(order: str) -> tuple[int, int, int]:
    if order not in ORDERS:
        raise ValueError(f"unknown Euler order {order!r} (expected one of {ORDERS})")
    a, b, c = (_AXIS[ch] for ch in order)
    return a, b, c


def euler_to_matrix(angles: np.ndarray, order: str) -> np.ndarray:
    """(..., 3) angles in radians -> (..., 3, 3) column-vector rotation matrices."""
    a, b, c = _axes(order)
    angles = np.asarray(angles, np.float64)
    return (
        axis_rotation(c, angles[..., 2])
        @ axis_rotation(b, angles[..., 1])
        @ axis_rotation(a, angles[..., 0])
    )


def matrix_to_euler(m: np.ndarray, order: str) -> np.ndarray:
    """(..., 3, 3) column-vector rotation matrices -> (..., 3) angles in radians.

    E1 is in [-pi/2, pi/2] (Tait-Bryan) or [0, pi] (proper Euler); at gimbal lock
    E0 is 0 and E2 carries the whole turn.
    """
    a, b, c = _axes(order)
    m = np.asarray(m, np.float64)
    out = np.empty(m.shape[:-2] + (3,))
    if a != c:
        # C = Rc(z) Rb(y) Ra(x); sign is +1 when (a, b, c) is a cyclic order of X Y Z.
        sign = 1.0 if (b - a) % 3 == 1 else -1.0
        sin_y = np.clip(-sign * m[..., c, a], -1.0, 1.0)
        cos_y = np.hypot(m[..., a, a], m[..., b, a])
        locked = cos_y < 1e-9
        out[..., 1] = np.arctan2(sin_y, cos_y)
        out[..., 0] = np.where(locked, 0.0, np.arctan2(sign * m[..., c, b], m[..., c, c]))
        out[..., 2] = np.where(
            locked,
            np.arctan2(-sign * m[..., a, b], m[..., b, b]),
            np.arctan2(sign * m[..., b, a], m[..., a, a]),
        )
        return out
    # Proper Euler: C = Ra(z) Rb(y) Ra(x), k the remaining axis.
    k = 3 - a - b
    sign = 1.0 if (b - a) % 3 == 1 else -1.0
    cos_y = np.clip(m[..., a, a], -1.0, 1.0)
    sin_y = np.hypot(m[..., a, b], m[..., a, k])
    locked = sin_y < 1e-9
    out[..., 1] = np.arctan2(sin_y, cos_y)
    out[..., 0] = np.where(locked, 0.0, np.arctan2(m[..., a, b], sign * m[..., a, k]))
    out[..., 2] = np.where(
        locked,
        np.arctan2(sign * m[..., k, b], m[..., b, b]),
        np.arctan2(m[..., b, a], -sign * m[..., k, a]),
    )
    return out
