"""The hash behind the one "kept data still describes this mesh" rule (no bpy).

The Blender side (``operators/blender/fingerprint.py``) reads a mesh's arrays in
bulk; this turns them, and any names that belong to them, into one short digest.

Two hashes, by version: 1, BLAKE2b (128 bits), what builds before 2026-11-25
stored, digests of 32 hex digits; 2 (:data:`VERSION`, what new fingerprints
use), SHA-256 cut to 128 bits, about twice as fast here (OpenSSL with the CPU's
SHA instructions), written with the prefix ``v2:``. A stored digest says its
version (:func:`version_of`), so a fingerprint saved in an older .blend file is
compared by hashing the mesh again with its hash, not called edited.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

from .finite import all_finite
from .scene import Mesh

#: The hash new digests are made with (see the module's docstring).
VERSION = 2
#: The parts of a mesh's fingerprint (``operators/blender/fingerprint.py``) that
#: :func:`given_parts` hashes from a neutral mesh's arrays.
TOPOLOGY = "topology"
POSITIONS = "positions"
UVS = "uvs"
_PREFIX = {1: "", 2: "v2:"}


def version_of(stored: str) -> int:
    """The version of the hash that made ``stored`` (a digest of this module):
    2 for a ``v2:`` digest, else 1 (the BLAKE2b digests of older builds, and
    the empty text a format stores for "nothing to hash")."""
    return 2 if stored.startswith(_PREFIX[2]) else 1


class Digest:
    """:func:`digest` one array at a time (``add``), so a caller can drop each
    array once it is hashed; ``hexdigest`` equals ``digest(*added, names=names,
    version=version)``."""

    def __init__(self, names: Sequence[str] = (), version: int = VERSION) -> None:
        if version not in _PREFIX:
            raise ValueError(f"no fingerprint hash version {version}")
        self._version = version
        self._h = hashlib.blake2b(digest_size=16) if version == 1 else hashlib.sha256()
        for name in names:
            self._h.update(name.encode("utf-8") + b"\0")

    def add(self, a: np.ndarray) -> None:
        a = np.ascontiguousarray(a)
        self._h.update(str((a.dtype.str, a.shape)).encode("ascii"))
        self._h.update(a.reshape(-1).view(np.uint8))  # the bytes in place: no copy

    def hexdigest(self) -> str:
        return _PREFIX[self._version] + self._h.hexdigest()[:32]


def digest(*arrays: np.ndarray, names: Sequence[str] = (), version: int = VERSION) -> str:
    """A 128-bit hex digest of ``names`` (in order) and ``arrays`` (their dtype,
    shape and bytes), so equal data gives equal digests on every platform;
    ``version``: the hash (see the module's docstring)."""
    h = Digest(names, version)
    for a in arrays:
        h.add(a)
    return h.hexdigest()


def given_parts(mesh: Mesh, version: int = VERSION) -> dict[str, str] | None:
    """The :data:`TOPOLOGY`, :data:`POSITIONS` and :data:`UVS` digests (with the
    hash ``version``) of the mesh a build gives Blender, from its arrays: what the
    Blender side's read-back gives for a mesh holding them. None where Blender
    would not hold the positions bit for bit (one not finite). An import hashes
    these instead of reading the new mesh back (``operators/blender/fingerprint.py``)."""
    positions = np.ascontiguousarray(mesh.positions, np.float32).reshape(-1)
    if not all_finite(positions):
        return None
    nv, nl, nf = len(mesh.positions), len(mesh.corner_verts), len(mesh.face_starts)
    uvs = [np.ascontiguousarray(uv.uv, np.float32).reshape(-1) for uv in mesh.uv_sets]
    return {
        TOPOLOGY: digest(
            np.array([nv, nl, nf], np.int64),
            np.ascontiguousarray(mesh.corner_verts, np.int32).reshape(-1),
            np.ascontiguousarray(mesh.face_starts, np.int32).reshape(-1),
            version=version,
        ),
        POSITIONS: digest(positions, version=version),
        UVS: digest(np.array([len(uvs)], np.int64), *uvs, version=version),
    }


def skin_digest(
    joints: np.ndarray, weights: np.ndarray, names: Sequence[str], version: int = VERSION
) -> str:
    """The digest of a skin, (V, K) ``joints`` into ``names`` and ``weights``, that
    does not depend on the order of ``names`` or of a vertex's slots: every
    non-zero (vertex, bone name, weight), sorted by vertex and name; ``version``:
    the hash."""
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
        version=version,
    )
