"""The hash behind the one "kept data still describes this mesh" rule (no bpy).

The Blender side (``operators/blender/fingerprint.py``) reads a mesh's arrays in
bulk; this turns them, and any names that belong to them, into one short digest.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np


class Digest:
    """:func:`digest` one array at a time (``add``), so a caller can drop each
    array once it is hashed; ``hexdigest`` equals ``digest(*added, names=names)``."""

    def __init__(self, names: Sequence[str] = ()) -> None:
        self._h = hashlib.blake2b(digest_size=16)
        for name in names:
            self._h.update(name.encode("utf-8") + b"\0")

    def add(self, a: np.ndarray) -> None:
        a = np.ascontiguousarray(a)
        self._h.update(str((a.dtype.str, a.shape)).encode("ascii"))
        self._h.update(a.reshape(-1).view(np.uint8))  # the bytes in place: no copy

    def hexdigest(self) -> str:
        return self._h.hexdigest()


def digest(*arrays: np.ndarray, names: Sequence[str] = ()) -> str:
    """A 128-bit hex digest of ``names`` (in order) and ``arrays`` (their dtype,
    shape and bytes), so equal data gives equal digests on every platform."""
    h = Digest(names)
    for a in arrays:
        h.add(a)
    return h.hexdigest()


def skin_digest(joints: np.ndarray, weights: np.ndarray, names: Sequence[str]) -> str:
    """The digest of a skin, (V, K) ``joints`` into ``names`` and ``weights``, that
    does not depend on the order of ``names`` or of a vertex's slots: every
    non-zero (vertex, bone name, weight), sorted by vertex and name."""
    joints, weights = np.asarray(joints), np.asarray(weights, np.float32)
    held = weights != 0
    bones = joints[held]
    if joints.ndim == 2 and (not len(bones) or (bones.min() >= 0 and bones.max() < len(names))):
        # the same order as the general case below, by sorting each vertex's few
        # slots (stable) instead of every weight, and no sort to find the used bones
        present = np.bincount(bones.astype(np.int64), minlength=len(names)) > 0
        used = sorted({names[b] for b in np.flatnonzero(present).tolist()})
        rank = np.array([used.index(n) if n in used else -1 for n in names] or [0], np.int64)
        key = np.where(held, rank[np.where(held, joints, 0)], len(used))
        by_slot = np.argsort(key, axis=1, kind="stable")
        joints = np.take_along_axis(joints, by_slot, 1)
        weights = np.take_along_axis(weights, by_slot, 1)
        vertex, slot = np.nonzero(weights != 0)
        by_name = rank[joints[vertex, slot].astype(np.int64)]
        order = slice(None)
    else:
        vertex, slot = np.nonzero(held)
        bone = joints[vertex, slot].astype(np.int64)
        used = sorted({names[b] for b in np.unique(bone).tolist()})
        rank = np.array([used.index(n) if n in used else -1 for n in names] or [0], np.int64)
        by_name = rank[bone]
        order = np.lexsort((by_name, vertex))
    # names as bytes: a file's bone name need not be UTF-8 (kept as surrogates)
    raw = b"\0".join(name.encode("utf-8", "surrogateescape") for name in used)
    return digest(
        np.array([len(weights), len(used)], np.int64),
        np.frombuffer(raw, np.uint8),
        vertex[order].astype(np.int64),
        by_name[order],
        weights[vertex, slot][order],
    )
