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

import math

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
    (it runs for every bone of every action): the same float64 comparisons on
    Python floats, which for three values beat numpy's per-call cost. Rounding is
    monotonic, so ``|v - s0| <= tol`` for every ``v`` is ``max - s0 <= tol`` and
    ``s0 - min <= tol``."""
    values = np.asarray(s, np.float64).ravel().tolist()
    if math.isfinite(sum(values)):  # else (or on overflow) numpy's own test
        first = values[0]
        tol = 1e-6 * abs(first)
        return max(values) - first <= tol and first - min(values) <= tol
    return bool(np.allclose(s, s[0], rtol=1e-6, atol=0))


def uniform_rests(rests: list[Rest]) -> list[bool]:
    """Per rest (``build.rest_relative``'s tuples): whether its parent and own bind
    scales are both uniform (:func:`uniform_scale`), worked out once for callers
    that need it twice. Bone by bone on Python floats: for the tens of bones of a
    character that beats numpy's first calls in a fresh process (the import's)."""
    return [uniform_scale(r[2]) and uniform_scale(r[3]) for r in rests]


#: A bone's rest as ``build.rest_relative`` gives it: translation and rotation
#: relative to the parent, parent and own bind scale.
Rest = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]
#: Keys of one bone: translation (K, 3), rotation (K, 4), scale (K, 3).
Keys = tuple[np.ndarray, np.ndarray, np.ndarray]


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
    return locals_to_bases([(rest_t, rest_q, parent_scale, own_scale)], [(t, q, s)])[0]


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
    return bases_to_locals([(rest_t, rest_q, parent_scale, own_scale)], [(loc, quat, scale)])[0]


def locals_to_bases(
    rests: list[Rest], keys: list[Keys], uniform: list[bool] | None = None
) -> list[Keys]:
    """:func:`local_to_basis` of many bones (``rests[i]`` with ``keys[i]``), the
    bones of uniform scales and equal key counts in one (B, K, .) product each:
    the same float64 operations per element, so the same bits. ``uniform``:
    :func:`uniform_rests` of ``rests`` when the caller has it."""
    return _grouped(rests, keys, _to_basis_uniform, _to_basis_general, uniform)


def bases_to_locals(rests: list[Rest], keys: list[Keys]) -> list[Keys]:
    """:func:`basis_to_local` of many bones, grouped as :func:`locals_to_bases`."""
    return _grouped(rests, keys, _to_local_uniform, _to_local_general)


def _grouped(
    rests: list[Rest], keys: list[Keys], uniform, general, flags: list[bool] | None = None
) -> list[Keys]:
    out: list = [None] * len(rests)
    groups: dict[tuple[int, ...], list[int]] = {}
    flags = uniform_rests(rests) if flags is None else flags
    for i, (key, flag) in enumerate(zip(keys, flags, strict=True)):
        if flag:
            groups.setdefault(tuple(len(c) for c in key), []).append(i)
        else:
            out[i] = general(*rests[i], *keys[i])
    for (k, *_), same in groups.items():
        step = max(1, BATCH_KEYS // max(k, 1))
        for start in range(0, len(same), step):
            _convert(rests, keys, same[start : start + step], uniform, out)
    return out


#: Keys per bone times bones in one product of :func:`_grouped`, at most: each
#: temporary stays in the CPU cache. At 100 bones x 2,000 keys one product of
#: all is as slow as one per bone (20 ms on a loaded machine); 8 bones each, 9 ms.
BATCH_KEYS = 16384


def _convert(rests: list[Rest], keys: list[Keys], bones: list[int], uniform, out: list) -> None:
    rest_t = np.array([rests[i][0] for i in bones], np.float64)
    rest_q = np.array([rests[i][1] for i in bones], np.float64)
    sp = np.array([float(rests[i][2][0]) for i in bones])[:, None, None]
    so = np.array([float(rests[i][3][0]) for i in bones])[:, None, None]
    stacked = [np.array([keys[i][c] for i in bones], np.float64) for c in range(3)]
    loc, quat, scale = uniform(rest_t, rest_q, sp, so, *stacked)
    for j, i in enumerate(bones):
        out[i] = (loc[j], quat[j], scale[j])


def _to_basis_uniform(rest_t, rest_q, sp, so, t, q, s) -> Keys:
    """The closed form of uniform scales for (B, K, .) keys; ``sp``, ``so``: (B, 1, 1)."""
    r_inv = np.swapaxes(quat_to_matrix(rest_q), -1, -2)
    loc = (t * sp - rest_t[:, None, :]) @ np.swapaxes(r_inv, -1, -2)
    quat = quat_multiply(quat_conjugate(rest_q)[:, None, :], q)
    return loc, quat, s * (sp / so)


def _to_local_uniform(rest_t, rest_q, sp, so, loc, quat, scale) -> Keys:
    r = quat_to_matrix(rest_q)
    t = (rest_t[:, None, :] + loc @ np.swapaxes(r, -1, -2)) / sp
    q = quat_multiply(rest_q[:, None, :], quat)
    return t, q, scale * (so / sp)


def _to_basis_general(rest_t, rest_q, parent_scale, own_scale, t, q, s) -> Keys:
    rest = compose_trs(rest_t, rest_q, np.ones(3))
    left = np.linalg.inv(rest) @ np.diag([*parent_scale, 1.0])
    right = np.diag([*(1.0 / np.asarray(own_scale, np.float64)), 1.0])
    return decompose_trs(left @ compose_trs(t, q, s) @ right)


def _to_local_general(rest_t, rest_q, parent_scale, own_scale, loc, quat, scale) -> Keys:
    rest = compose_trs(rest_t, rest_q, np.ones(3))
    left = np.diag([*(1.0 / np.asarray(parent_scale, np.float64)), 1.0]) @ rest
    right = np.diag([*own_scale, 1.0])
    return decompose_trs(left @ compose_trs(loc, quat, scale) @ right)
