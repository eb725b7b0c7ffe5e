"""``weights._sorted_entries``: the packed-integer sort gives the same (vertex,
bone, weight) entries in the same order as the stable argsort it replaces where
everything fits in 63 bits, so the groups get the same calls in the same order."""

from __future__ import annotations

import numpy as np


def _argsort_reference(joints, weights, n_groups):
    nv, k = joints.shape
    verts = np.repeat(np.arange(nv, dtype=np.int64), k)
    j = joints.reshape(-1).astype(np.int64)
    w = weights.reshape(-1)
    keep = (w > 0) & (j >= 0) & (j < n_groups)
    verts, j, w = verts[keep], j[keep], w[keep]
    order = np.argsort((j << 32) | w.view(np.uint32).astype(np.int64), kind="stable")
    return verts[order], j[order], w[order]


def test_packed_sort_equals_stable_argsort(blank_blend):
    from rigport.operators.blender.weights import _sorted_entries

    rng = np.random.default_rng(7)
    nv = 5000
    joints = rng.integers(-2, 70, (nv, 4)).astype(np.int32)
    joints[:10, 1] = joints[:10, 0]  # one bone twice on a vertex, same weight
    weights = (np.round(rng.random((nv, 4)) * 8) / 8 - 0.125).astype(np.float32)
    weights[:10, 1] = weights[:10, 0] = 0.5
    weights[10:20] = rng.random((10, 4)).astype(np.float32)  # distinct weights
    for n_groups in (64, 1 << 30):  # packed, and too wide to pack: the argsort
        got = _sorted_entries(joints, weights, n_groups)
        want = _argsort_reference(joints, weights, n_groups)
        assert len(want[0]) > 0
        for a, b in zip(got, want, strict=True):
            assert a.dtype == b.dtype
            np.testing.assert_array_equal(a, b)
