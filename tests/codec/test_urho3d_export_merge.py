"""The Urho3D exporter's vertex merge and skin comparison give what the plain
sorting formulations give (issue 28: the faster paths change no byte)."""

from __future__ import annotations

import numpy as np
import pytest

from rigport.io_formats.urho3d import mdl, model_export
from rigport.io_formats.urho3d.model_import import import_model
from rigport.samples import urho3d as samples


def _merged_by_unique(recs: np.ndarray, srcs: np.ndarray):
    """The merge written plainly: records of one source take its first copy's
    bytes, then (source, bytes) are grouped by sorting the byte strings."""
    raw = np.ascontiguousarray(recs).view(np.uint8).reshape(len(recs), -1)
    _, src_first, src_inv = np.unique(srcs, return_index=True, return_inverse=True)
    raw = np.where((srcs >= 0)[:, None], raw[src_first[src_inv.reshape(-1)]], raw)
    keyed = np.concatenate([srcs.astype("<i8").view(np.uint8).reshape(-1, 8), raw], axis=1)
    void = np.ascontiguousarray(keyed).view(np.dtype((np.void, keyed.shape[1]))).reshape(-1)
    _, first, inverse = np.unique(void, return_index=True, return_inverse=True)
    return first, inverse.reshape(-1)


def _buffer(merge, recs, srcs, morphed):
    """The vertex buffer's bytes and each record's place in it, as
    ``_assemble_vertex_buffers`` makes them from a merge."""
    first, inverse = merge(recs, srcs)
    order = model_export._vertex_order(srcs[first], first, morphed[first])
    place = np.empty_like(order)
    place[order] = np.arange(len(order))
    return recs[first[order]].tobytes(), place[inverse]


_RECORD = np.dtype([("position", "<f4", 3), ("normal", "<f4", 3), ("uv", "<f4", 2), ("j", "u1", 4)])


@pytest.mark.parametrize("seed", range(12))
def test_merge_matches_sorting_the_bytes(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 4000))
    recs = np.zeros(n, _RECORD)
    recs["position"] = rng.integers(0, 4, (n, 3))  # few distinct values: many equal records
    recs["normal"][rng.random(n) < 0.05] = np.float32(-0.0)  # -0 and 0 are different bytes
    recs["normal"][rng.random(n) < 0.02] = np.nan
    recs["uv"] = rng.integers(0, 2, (n, 2))
    recs["j"] = rng.integers(0, 2, (n, 4))
    srcs = rng.integers(-2 if seed % 2 else -1, n // 3 + 1, n).astype(np.int64)
    if seed % 4 == 0:
        srcs[:] = -1  # a rebuilt layout: no record has a source
    morphed = rng.random(n) < 0.2
    want = _buffer(_merged_by_unique, recs, srcs, morphed)
    got = _buffer(model_export._merged_records, recs, srcs, morphed)
    assert got[0] == want[0]
    np.testing.assert_array_equal(got[1], want[1])


def test_same_rows_groups_equal_bytes_only():
    rng = np.random.default_rng(5)
    rows = rng.integers(0, 3, (3000, 13)).astype(np.uint8)  # 13 bytes: padded words
    got = model_export._same_rows(rows)
    want = np.unique(rows.view(np.dtype((np.void, 13))).reshape(-1), return_inverse=True)[1]
    want = want.reshape(-1)
    # the same partition (numbers may differ)
    pairs = np.unique(np.stack([got, want], 1), axis=0)
    assert len(pairs) == len(np.unique(got)) == len(np.unique(want))


def test_same_rows_falls_back_on_a_hash_collision(monkeypatch):
    """Rows that share a hash but differ are told apart (every hash made equal)."""
    rows = np.array([[1, 2, 3], [1, 2, 3], [4, 5, 6], [1, 2, 4]], np.uint8)
    real_unique = np.unique

    def one_hash(a, *args, **kwargs):
        if a.dtype == np.uint64:
            a = np.zeros_like(a)
        return real_unique(a, *args, **kwargs)

    monkeypatch.setattr(model_export.np, "unique", one_hash)
    got = model_export._same_rows(rows)
    assert got[0] == got[1] and len({int(got[0]), int(got[2]), int(got[3])}) == 3


def _canonical_same(wa, ja, wb, jb):
    def canon(w, j):
        held = np.where(w > 0, j.astype(np.int64), 1 << 20)
        order = np.argsort(held, axis=1, kind="stable")
        return np.take_along_axis(held, order, 1), np.take_along_axis(w, order, 1)

    a_j, a_w = canon(wa, ja)
    b_j, b_w = canon(wb, jb)
    return np.all(a_j == b_j, axis=1) & np.all(np.abs(a_w - b_w) <= 1e-6, axis=1)


@pytest.mark.parametrize("seed", range(6))
def test_same_influences_matches_sorting_every_vertex(seed):
    rng = np.random.default_rng(seed)
    n = 20000
    values = np.array([0, 0.25, 0.5, -0.1, np.nan, 0.2500001], np.float32)
    wa = rng.choice(values, (n, 4))
    ja = rng.integers(0, 5, (n, 4)).astype(np.uint8)  # repeated joints: ties in the sort
    perm = np.argsort(rng.random((n, 4)), axis=1)
    wb = np.take_along_axis(wa, perm, 1).copy()
    jb = np.take_along_axis(ja, perm, 1).astype(np.int32)
    wb[rng.random(n) < 0.3, 0] += np.float32(1e-7)
    jb[rng.random(n) < 0.1, 1] = 3
    keep = rng.random(n) < 0.4  # slot for slot the same (the unedited case)
    wb[keep], jb[keep] = wa[keep], ja[keep]
    got = model_export._same_influences(wa, ja, wb, jb)
    np.testing.assert_array_equal(got, _canonical_same(wa, ja, wb, jb))
    assert got.any() and not got.all()


def test_sample_model_without_sources_round_trips():
    """A model our writer builds, exported with no kept layout (every vertex new:
    the hashed merge), keeps its vertex count and triangle count."""
    model = samples.skinned_model(8, n_vertices=3000, morphs=1, uv_sets=2, color=False)
    scene = import_model(mdl.read(mdl.write(model)), "sample")
    mesh = scene.meshes[0]
    mesh.attributes = [a for a in mesh.attributes if not a.name.startswith("urho:")]
    out, _ = model_export.export_model(
        [(0, mesh)], scene.skeleton, model_export.ExportOptions(layout=None)
    )
    again = mdl.read(mdl.write(out))
    n_in = sum(len(vb.data) for vb in model.vertex_buffers)
    n_out = sum(len(vb.data) for vb in again.vertex_buffers)
    tris_in = sum(g.lods[0].index_count for g in model.geometries)
    tris_out = sum(g.lods[0].index_count for g in again.geometries)
    assert tris_out == tris_in
    assert n_out == n_in
