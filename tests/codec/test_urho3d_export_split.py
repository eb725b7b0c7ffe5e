"""The Urho3D exporter's corner split and bone lists give what the plain
``np.unique`` formulation gives (issue 16: the fast paths change no byte)."""

from __future__ import annotations

import numpy as np
import pytest

from rigport.io_formats.scene import Mesh, Skin
from rigport.io_formats.urho3d import model_export


def _split_by_unique(verts, corners, keys, cols):
    """The split written plainly: every corner compared with its vertex's first
    corner under the tolerance, the others grouped by (vertex, bytes), vertices
    numbered by first appearance."""
    nv = int(verts.max()) + 1
    n = len(corners)
    first_corner = np.empty(nv, np.int64)
    first_corner[verts[::-1]] = np.arange(n - 1, -1, -1)
    ref = first_corner[verts]
    same = np.ones(n, bool)
    for k in keys:
        a = cols[k][corners]
        tol = 2e-4 if k.startswith(("normal", "tangent")) else 1e-6
        if a.dtype.kind == "f":
            same &= np.all(np.abs(a - a[ref]) <= tol, axis=1)
        else:
            same &= np.all(a == a[ref], axis=1)
    ids = verts.astype(np.int64)
    diff = np.nonzero(~same)[0]
    if len(diff):
        rows = [verts[diff].astype("<i8").view(np.uint8).reshape(-1, 8)]
        rows += [np.ascontiguousarray(cols[k][corners[diff]]).view(np.uint8) for k in keys]
        rows = np.concatenate([r.reshape(len(diff), -1) for r in rows], axis=1)
        void = np.ascontiguousarray(rows).view(np.dtype((np.void, rows.shape[1]))).reshape(-1)
        ids[diff] = nv + np.unique(void, return_inverse=True)[1].reshape(-1)
    _, first, inverse = np.unique(ids, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    pick = first[order]
    return corners[pick], verts[pick], rank[inverse.reshape(-1)]


def _corner_data(rng, nv: int, n_corners: int):
    """Corner columns as the exporter builds them: normals with encoding noise
    below and above the tolerance, UVs with seams, byte colours, signed zeros
    and NaN/inf in a few corners."""
    verts = rng.integers(0, nv, n_corners).astype(np.int32)
    per_vertex = rng.normal(size=(nv, 3)).astype(np.float32)
    normals = per_vertex[verts] + rng.normal(scale=5e-5, size=(n_corners, 3)).astype(np.float32)
    normals[rng.random(n_corners) < 0.05] += np.float32(0.01)  # beyond the tolerance
    uv_base = rng.random((nv, 2)).astype(np.float32)
    uv = uv_base[verts].copy()
    seam = rng.random(n_corners) < 0.1
    uv[seam] = rng.integers(0, 3, (int(seam.sum()), 2)).astype(np.float32)  # repeated seams
    uv[rng.random(n_corners) < 0.02] = np.float32(-0.0)
    uv[rng.random(n_corners) < 0.02] = np.float32(0.0)
    normals[rng.random(n_corners) < 0.01] = np.nan
    normals[rng.random(n_corners) < 0.01] = np.inf
    colors = rng.integers(0, 2, (nv, 4)).astype(np.uint8)[verts]
    colors[rng.random(n_corners) < 0.05, 0] = 7
    cols = {"normal0_t3": normals, "texcoord0_t2": uv, "color0_t5": colors}
    return verts, cols


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("whole", [True, False])
def test_split_corners_matches_the_plain_split(seed, whole):
    rng = np.random.default_rng(seed)
    n_tris = 3000
    verts_all, cols = _corner_data(rng, 700, n_tris * 3)
    tri = np.arange(n_tris) if whole else np.sort(rng.choice(n_tris, n_tris // 2, replace=False))
    corners = (tri[:, None] * 3 + np.arange(3)).reshape(-1)
    verts = verts_all[corners]
    keys = list(cols)
    with np.errstate(invalid="ignore"):  # inf - inf in the tolerance test
        got = model_export._split_corners(verts, corners, keys, cols)
        want = _split_by_unique(verts, corners, keys, cols)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)
    assert len(got[1]) > len(np.unique(verts))  # there were seams to split


def test_split_corners_of_an_unsplit_mesh_is_one_vertex_per_vertex():
    rng = np.random.default_rng(7)
    verts = rng.permutation(np.repeat(np.arange(50, dtype=np.int32), 6))
    cols = {"normal0_t3": rng.normal(size=(50, 3)).astype(np.float32)[verts]}
    corners = np.arange(len(verts))
    rep_corner, rep_vert, indices = model_export._split_corners(verts, corners, list(cols), cols)
    _, first = np.unique(verts, return_index=True)
    np.testing.assert_array_equal(rep_corner, np.sort(first))
    np.testing.assert_array_equal(rep_vert[indices], verts)


def test_first_seen_orders_by_first_appearance():
    ids = np.array([5, 2, 5, 9, 2, 0, 9], np.int64)
    pick, rank = model_export._first_seen(ids, 10)
    np.testing.assert_array_equal(pick, [0, 1, 3, 5])
    np.testing.assert_array_equal(rank, [0, 1, 0, 2, 1, 3, 2])
    pick, rank = model_export._first_seen(np.zeros(0, np.int64), 0)
    assert len(pick) == 0 and len(rank) == 0


def test_used_bones_are_the_weighted_ones_of_the_chosen_vertices():
    rng = np.random.default_rng(3)
    nv = 400
    joints = rng.integers(0, 90, (nv, 4)).astype(np.int32)
    weights = rng.random((nv, 4)).astype(np.float32)
    weights[rng.random((nv, 4)) < 0.3] = 0
    mesh = Mesh(
        "m",
        np.zeros((nv, 3), np.float32),
        np.zeros(0, np.int32),
        np.zeros(0, np.int32),
        np.zeros(0, np.int32),
    )
    mesh.skin = Skin(joints, weights)
    verts = rng.integers(0, nv // 2, 900)  # corners: vertices repeated, half of them unused
    got = model_export._used_bones(mesh, verts)
    want = np.unique(joints[verts][weights[verts] > 0])
    np.testing.assert_array_equal(got, want)
    assert got.dtype == np.int64
    weights[:] = 0
    assert len(model_export._used_bones(mesh, verts)) == 0


@pytest.mark.parametrize("seed", range(3))
def test_split_corners_with_per_vertex_columns_matches_the_plain_split(seed):
    """A column the exporter marks as the vertex's own value at some corners (kept
    normals: the corners that agree) is compared only where needed, with the
    same result as comparing everything."""
    rng = np.random.default_rng(seed)
    n_tris, nv = 3000, 700
    verts, cols = _corner_data(rng, nv, n_tris * 3)
    stored = rng.normal(size=(nv, 3)).astype(np.float32)
    kept_at = rng.random(len(verts)) < 0.9
    cols["normal0_t3"] = np.where(kept_at[:, None], stored[verts], cols["normal0_t3"])
    corners = np.arange(len(verts))
    keys = list(cols)
    with np.errstate(invalid="ignore"):
        got = model_export._split_corners(verts, corners, keys, cols, {"normal0_t3": kept_at})
        want = _split_by_unique(verts, corners, keys, cols)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)
