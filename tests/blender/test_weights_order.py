"""``weights._sorted_entries``: the packed-integer sort gives the same (vertex,
bone, weight) entries in the same order as the stable argsort it replaces where
everything fits in 63 bits, so the groups get the same calls in the same order."""

from __future__ import annotations

import numpy as np
import pytest

from rigport.tests.support import group_table


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


@pytest.mark.parametrize("k", [1, 3, 4, 8])
def test_entries_for_any_slot_count(blank_blend, k):
    """Both sorts for skins of ``k`` slots a vertex (a shift finds a power of two's
    vertices, a division the others), with every bone in range (the bones are then
    not compared one by one) and with some out of range."""
    from rigport.operators.blender.weights import _bone_entries, _sorted_entries

    rng = np.random.default_rng(k)
    nv = 3000
    weights = (np.round(rng.random((nv, k)) * 8) / 8 - 0.125).astype(np.float32)
    for low, high in ((0, 64), (-3, 70)):
        joints = rng.integers(low, high, (nv, k)).astype(np.int32)
        want = _argsort_reference(joints, weights, 64)
        assert len(want[0]) > 0
        for a, b in zip(_sorted_entries(joints, weights, 64), want, strict=True):
            np.testing.assert_array_equal(a, b)
        verts = np.repeat(np.arange(nv, dtype=np.int64), k)
        j, w = joints.reshape(-1), weights.reshape(-1)
        keep = (w > 0) & (j >= 0) & (j < 64)
        order = np.argsort(j[keep], kind="stable")  # each bone's entries in file order
        for a, b in zip(
            _bone_entries(joints, weights, 64),
            (verts[keep][order], j[keep][order], w[keep][order]),
            strict=True,
        ):
            np.testing.assert_array_equal(a, b)


def test_bone_entries_are_the_entries_by_bone_then_vertex(blank_blend):
    """``weights._bone_entries``: the same entries as the full sort, grouped by bone
    with each bone's vertices ascending (a stable radix sort of the bones alone);
    none for more groups than 16 bits hold."""
    from rigport.operators.blender.weights import _bone_entries

    rng = np.random.default_rng(5)
    nv = 4000
    joints = rng.integers(-2, 300, (nv, 4)).astype(np.int32)
    weights = (np.round(rng.random((nv, 4)) * 8) / 8 - 0.125).astype(np.float32)
    for n_groups in (64, 300):  # 8-bit and 16-bit bone keys
        verts = np.repeat(np.arange(nv, dtype=np.int64), 4)
        j, w = joints.reshape(-1), weights.reshape(-1)
        keep = (w > 0) & (j >= 0) & (j < n_groups)
        verts, j, w = verts[keep], j[keep], w[keep]
        order = np.argsort(j, kind="stable")  # file order within a bone: vertices ascending
        got = _bone_entries(joints, weights, n_groups)
        for a, b in zip(got, (verts[order], j[order], w[order]), strict=True):
            np.testing.assert_array_equal(a, b)
    assert _bone_entries(joints, weights, (1 << 16) + 1) is None


def _skin_object(bpy, nv: int):
    me = bpy.data.meshes.new("skin")
    me.vertices.add(nv)
    obj = bpy.data.objects.new("skin", me)
    bpy.context.collection.objects.link(obj)
    obj.shape_key_add(name="Basis")  # one add per run, never Geometry Nodes
    return obj


def _dense(joints, weights, n_groups):
    out = np.zeros((len(joints), n_groups), np.float32)
    rows = np.repeat(np.arange(len(joints)), joints.shape[1]).reshape(joints.shape)
    out[rows, joints] = weights
    return out


@pytest.mark.parametrize("pattern", ["rings", "alternating"])
def test_runs_of_neighbours_need_no_weight_sort(blank_blend, monkeypatch, pattern):
    """Rings sharing their weights: one ``add`` per ring and bone, without the full
    sort; weights that recur apart (alternating vertices) are sorted to merge them."""
    from rigport.operators.blender import weights as module

    bpy = blank_blend
    n_bones, nv = 8, 600
    ring = np.arange(nv) // 50
    joints = np.stack([ring % n_bones, (ring + 1) % n_bones], axis=1).astype(np.int32)
    if pattern == "rings":
        w0 = ((ring % 3 + 1) / 4).astype(np.float32)
    else:
        w0 = np.where(np.arange(nv) % 2, 0.25, 0.75).astype(np.float32)
    given = np.stack([w0, 1 - w0], axis=1).astype(np.float32)
    obj = _skin_object(bpy, nv)
    sorts = []
    real_sort = module._sorted_entries
    monkeypatch.setattr(module, "_sorted_entries", lambda *a: sorts.append(1) or real_sort(*a))
    names = [f"b{i}" for i in range(n_bones)]
    module.assign_vertex_groups(bpy.context, obj, joints, given, names)
    np.testing.assert_array_equal(group_table(obj, n_bones), _dense(joints, given, n_bones))
    assert bool(sorts) == (pattern == "alternating")
