"""``skin_digest`` sorts each vertex's slots instead of every weight: the digest
must equal the one of every non-zero (vertex, name, weight) sorted by vertex and
name (the order stored fingerprints were made in), on skins with shuffled
slots, zero slots, one bone twice on a vertex and names given in any order."""

from __future__ import annotations

import numpy as np
import pytest

from rigport.io_formats.fingerprint import digest, skin_digest


def _reference(joints: np.ndarray, weights: np.ndarray, names: list[str]) -> str:
    weights = weights.astype(np.float32)
    vertex, slot = np.nonzero(weights != 0)
    bone = joints[vertex, slot].astype(np.int64)
    used = sorted({names[b] for b in bone.tolist()})
    by_name = np.array([used.index(names[b]) for b in bone.tolist()], np.int64)
    order = np.lexsort((by_name, vertex))
    raw = b"\0".join(n.encode("utf-8", "surrogateescape") for n in used)
    return digest(
        np.array([len(weights), len(used)], np.int64),
        np.frombuffer(raw, np.uint8),
        vertex[order].astype(np.int64),
        by_name[order],
        weights[vertex, slot][order],
    )


@pytest.mark.parametrize("seed", range(6))
def test_slot_sort_equals_full_sort(seed):
    rng = np.random.default_rng(seed)
    n_bones, nv, k = 12, 500, 4
    names = [f"bone{i:02d}" for i in rng.permutation(n_bones)]
    joints = rng.integers(0, n_bones, (nv, k)).astype(np.int32)
    weights = rng.random((nv, k)).astype(np.float32)
    weights[rng.random((nv, k)) < 0.3] = 0
    joints[::7, 1] = joints[::7, 0]  # one bone twice on a vertex
    assert skin_digest(joints, weights, names) == _reference(joints, weights, names)


def test_empty_and_out_of_range_skins():
    names = ["a", "b", "c"]
    zero = np.zeros((5, 4), np.float32)
    assert skin_digest(np.zeros((5, 4), np.int32), zero, names) == _reference(
        np.zeros((5, 4), np.int32), zero, names
    )
    joints = np.array([[0, 2], [1, 0]], np.int32)
    weights = np.array([[0.5, 0.5], [1.0, 0.0]], np.float32)
    assert skin_digest(joints, weights, names) == _reference(joints, weights, names)
    assert skin_digest(joints[:, ::-1], weights[:, ::-1], names) == skin_digest(
        joints, weights, names
    )
