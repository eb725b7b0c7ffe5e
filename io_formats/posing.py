"""Engine-local bone keys <-> Blender pose channels.

Blender's rest pose is rigid: a bone's rest matrix is the engine's world bind
transform with its scale ``S`` taken out. A pose matrix ``P`` then equals the
engine's world transform ``E`` times ``S^-1``, so for a bone with parent scale
``Sp`` and rest relative to its parent ``Rrel`` (rigid):

    basis = Rrel^-1 @ Sp @ L @ S^-1        L = Sp^-1 @ Rrel @ basis @ S

where ``L`` is the engine's parent-relative key. With uniform scales this has a
closed form that keeps each quaternion's sign, so keys come back exactly.
"""

from __future__ import annotations

import numpy as np

from .transforms import compose_trs, decompose_trs, quat_to_matrix


def quat_multiply(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Hamilton product of w x y z quaternions (broadcasting)."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    aw, ax, ay, az = a[..., 0], a[..., 1], a[..., 2], a[..., 3]
    bw, bx, by, bz = b[..., 0], b[..., 1], b[..., 2], b[..., 3]
    return np.stack(
        [
            aw * bw - ax * bx - ay * by - az * bz,
            aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
        ],
        axis=-1,
    )


def quat_conjugate(q: np.ndarray) -> np.ndarray:
    return np.asarray(q, np.float64) * np.array([1.0, -1.0, -1.0, -1.0])


def uniform_scale(s: np.ndarray) -> bool:
    """``np.allclose(s, s[0], rtol=1e-6, atol=0)``; without its overhead for finite scales
    (it runs for every bone of every action)."""
    s = np.asarray(s, np.float64)
    if np.isfinite(s).all():
        return bool((np.abs(s - s[0]) <= 1e-6 * abs(s[0])).all())
    return bool(np.allclose(s, s[0], rtol=1e-6, atol=0))


def local_to_basis(
    rest_t: np.ndarray,
    rest_q: np.ndarray,
    parent_scale: np.ndarray,
    own_scale: np.ndarray,
    t: np.ndarray,
    q: np.ndarray,
    s: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Engine-local keys (K, 3/4/3) of one bone -> Blender basis loc, quat, scale."""
    if uniform_scale(parent_scale) and uniform_scale(own_scale):
        sp, so = float(parent_scale[0]), float(own_scale[0])
        r_inv = quat_to_matrix(rest_q).T
        loc = (np.asarray(t, np.float64) * sp - rest_t) @ r_inv.T
        quat = quat_multiply(quat_conjugate(rest_q), q)
        return loc, quat, np.asarray(s, np.float64) * (sp / so)
    rest = compose_trs(rest_t, rest_q, np.ones(3))
    left = np.linalg.inv(rest) @ np.diag([*parent_scale, 1.0])
    right = np.diag([*(1.0 / np.asarray(own_scale, np.float64)), 1.0])
    return decompose_trs(left @ compose_trs(t, q, s) @ right)


def basis_to_local(
    rest_t: np.ndarray,
    rest_q: np.ndarray,
    parent_scale: np.ndarray,
    own_scale: np.ndarray,
    loc: np.ndarray,
    quat: np.ndarray,
    scale: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The inverse of :func:`local_to_basis`."""
    if uniform_scale(parent_scale) and uniform_scale(own_scale):
        sp, so = float(parent_scale[0]), float(own_scale[0])
        r = quat_to_matrix(rest_q)
        t = (rest_t + np.asarray(loc, np.float64) @ r.T) / sp
        q = quat_multiply(rest_q, quat)
        return t, q, np.asarray(scale, np.float64) * (so / sp)
    rest = compose_trs(rest_t, rest_q, np.ones(3))
    left = np.diag([*(1.0 / np.asarray(parent_scale, np.float64)), 1.0]) @ rest
    right = np.diag([*own_scale, 1.0])
    return decompose_trs(left @ compose_trs(loc, quat, scale) @ right)
