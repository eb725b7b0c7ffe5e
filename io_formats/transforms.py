"""Vectorised transform maths shared by all formats (quaternions are w x y z)."""

from __future__ import annotations

import numpy as np


def quat_to_matrix(q: np.ndarray) -> np.ndarray:
    """(N, 4) w x y z -> (N, 3, 3); quaternions are normalised first."""
    q = np.asarray(q, np.float64)
    q = q / np.maximum(np.linalg.norm(q, axis=-1, keepdims=True), 1e-300)
    w, x, y, z = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    m = np.empty(q.shape[:-1] + (3, 3))
    m[..., 0, 0] = 1 - 2 * (y * y + z * z)
    m[..., 0, 1] = 2 * (x * y - z * w)
    m[..., 0, 2] = 2 * (x * z + y * w)
    m[..., 1, 0] = 2 * (x * y + z * w)
    m[..., 1, 1] = 1 - 2 * (x * x + z * z)
    m[..., 1, 2] = 2 * (y * z - x * w)
    m[..., 2, 0] = 2 * (x * z - y * w)
    m[..., 2, 1] = 2 * (y * z + x * w)
    m[..., 2, 2] = 1 - 2 * (x * x + y * y)
    return m


def matrix_to_quat(m: np.ndarray) -> np.ndarray:
    """(N, 3, 3) rotation matrices -> (N, 4) w x y z with w >= 0."""
    m = np.asarray(m, np.float64)
    t = np.stack(
        [
            1 + m[..., 0, 0] + m[..., 1, 1] + m[..., 2, 2],
            1 + m[..., 0, 0] - m[..., 1, 1] - m[..., 2, 2],
            1 - m[..., 0, 0] + m[..., 1, 1] - m[..., 2, 2],
            1 - m[..., 0, 0] - m[..., 1, 1] + m[..., 2, 2],
        ],
        axis=-1,
    )
    best = np.argmax(t, axis=-1)
    s = np.sqrt(np.maximum(np.take_along_axis(t, best[..., None], -1)[..., 0], 1e-300)) * 2
    q = np.empty(m.shape[:-2] + (4,))
    c0 = best == 0
    c1 = best == 1
    c2 = best == 2
    c3 = best == 3
    q[c0] = np.stack(
        [
            s[c0] / 4,
            (m[c0, 2, 1] - m[c0, 1, 2]) / s[c0],
            (m[c0, 0, 2] - m[c0, 2, 0]) / s[c0],
            (m[c0, 1, 0] - m[c0, 0, 1]) / s[c0],
        ],
        -1,
    )
    q[c1] = np.stack(
        [
            (m[c1, 2, 1] - m[c1, 1, 2]) / s[c1],
            s[c1] / 4,
            (m[c1, 0, 1] + m[c1, 1, 0]) / s[c1],
            (m[c1, 0, 2] + m[c1, 2, 0]) / s[c1],
        ],
        -1,
    )
    q[c2] = np.stack(
        [
            (m[c2, 0, 2] - m[c2, 2, 0]) / s[c2],
            (m[c2, 0, 1] + m[c2, 1, 0]) / s[c2],
            s[c2] / 4,
            (m[c2, 1, 2] + m[c2, 2, 1]) / s[c2],
        ],
        -1,
    )
    q[c3] = np.stack(
        [
            (m[c3, 1, 0] - m[c3, 0, 1]) / s[c3],
            (m[c3, 0, 2] + m[c3, 2, 0]) / s[c3],
            (m[c3, 1, 2] + m[c3, 2, 1]) / s[c3],
            s[c3] / 4,
        ],
        -1,
    )
    q *= np.where(q[..., :1] < 0, -1.0, 1.0)
    return q / np.linalg.norm(q, axis=-1, keepdims=True)


def compose_trs(t: np.ndarray, q: np.ndarray, s: np.ndarray) -> np.ndarray:
    """(N, 4, 4) matrices T @ R @ S."""
    t = np.asarray(t, np.float64)
    out = np.zeros(t.shape[:-1] + (4, 4))
    out[..., :3, :3] = quat_to_matrix(q) * np.asarray(s, np.float64)[..., None, :]
    out[..., :3, 3] = t
    out[..., 3, 3] = 1
    return out


def decompose_trs(m: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(N, 4, 4) -> translation, w x y z rotation, scale (a negative determinant
    goes into the scale's x)."""
    m = np.asarray(m, np.float64)
    t = m[..., :3, 3].copy()
    basis = m[..., :3, :3]
    s = np.linalg.norm(basis, axis=-2)
    s[..., 0] *= np.where(np.linalg.det(basis) < 0, -1.0, 1.0)
    rot = basis / np.where(s == 0, 1.0, s)[..., None, :]
    return t, matrix_to_quat(rot), s


def world_from_local(local: np.ndarray, parents: np.ndarray) -> np.ndarray:
    """Chain local matrices along ``parents`` (-1 = root, any order)."""
    order = parent_first_order(parents)
    world = np.empty_like(local)
    for i in order:
        p = parents[i]
        world[i] = local[i] if p < 0 else world[p] @ local[i]
    return world


def parent_first_order(parents: np.ndarray) -> list[int]:
    """Bone indices ordered so every parent comes before its children.

    Raises ValueError on a cycle or a parent index out of range.
    """
    n = len(parents)
    children: list[list[int]] = [[] for _ in range(n)]
    roots = []
    for i, p in enumerate(np.asarray(parents).tolist()):
        if p < 0:
            roots.append(i)
        elif p >= n:
            raise ValueError(f"bone {i} has parent {p} of {n} bones")
        else:
            children[p].append(i)
    order: list[int] = []
    stack = list(reversed(roots))
    while stack:
        i = stack.pop()
        order.append(i)
        stack.extend(reversed(children[i]))
    if len(order) != n:
        placed = np.zeros(n, bool)
        placed[order] = True
        first = int(np.argmin(placed))
        raise ValueError(
            f"the bone hierarchy has a cycle: bone {first} (parent {int(parents[first])}) "
            f"and {n - len(order) - 1} more bones reach no root"
        )
    return order


def remove_scale(m: np.ndarray) -> np.ndarray:
    """Matrices with their basis columns normalised (rigid part only)."""
    out = np.array(m, np.float64, copy=True)
    basis = out[..., :3, :3]
    norms = np.linalg.norm(basis, axis=-2, keepdims=True)
    out[..., :3, :3] = basis / np.where(norms == 0, 1.0, norms)
    return out
