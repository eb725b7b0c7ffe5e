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


#: Per case of :func:`matrix_to_quat` (the largest of w, x, y, z), where each
#: component comes from: 0 the largest's ``s / 4``, 1 to 3 the differences
#: ``m21 - m12``, ``m02 - m20``, ``m10 - m01``, 4 to 6 the sums ``m01 + m10``,
#: ``m02 + m20``, ``m12 + m21`` (each over ``s``).
_QUAT_CASES = np.array([[0, 1, 2, 3], [1, 0, 4, 5], [2, 4, 0, 6], [3, 5, 6, 0]])


def matrix_to_quat(m: np.ndarray) -> np.ndarray:
    """(N, 3, 3) rotation matrices -> (N, 4) w x y z with w >= 0.

    The largest component comes from the square root of its trace term, the others
    from sums and differences of the matrix over it. All seven terms are worked out
    for every matrix and each row picks its case's four: the same float64
    operations per element as a pass per case, so the same bits (kept records hold
    digests of rests worked out this way), in a few calls where the passes' masks
    cost most for the tens of bones of a skeleton."""
    m = np.asarray(m, np.float64)
    lead = m.shape[:-2]
    m00, m01, m02, m10, m11, m12, m20, m21, m22 = m.reshape(-1, 9).T
    t = np.stack(
        [
            1 + m00 + m11 + m22,
            1 + m00 - m11 - m22,
            1 - m00 + m11 - m22,
            1 - m00 - m11 + m22,
        ],
        axis=-1,
    )
    best = np.argmax(t, axis=-1)
    rows = np.arange(len(t))
    s = np.sqrt(np.maximum(t[rows, best], 1e-300)) * 2
    terms = np.stack(
        [s / 4, m21 - m12, m02 - m20, m10 - m01, m01 + m10, m02 + m20, m12 + m21], axis=-1
    )
    terms[:, 1:] /= s[:, None]
    q = terms[rows[:, None], _QUAT_CASES[best]]
    q *= np.where(q[:, :1] < 0, -1.0, 1.0)
    q /= np.sqrt(np.add.reduce(q * q, axis=-1, keepdims=True))  # np.linalg.norm's own sum
    return q.reshape(lead + (4,))


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
