"""The triangle stripifier behind re-stripped Bin Meshes: every strip decodes (as
librw and DragonFF decode them: alternate triangles turned round, ones with a
repeated corner skipped) to exactly the triangles it was made from, winding and
duplicates included, and is smaller than the lists it replaces."""

from __future__ import annotations

import numpy as np
import pytest

from rigport.io_formats.codec import Reader
from rigport.io_formats.renderware import dff
from rigport.io_formats.renderware.geometry import (
    bin_mesh_lists,
    bin_mesh_strips,
    read_bin_mesh,
    strip_triangles,
    stripify,
)
from rigport.samples import renderware as samples


def _canonical(tris) -> list[tuple[int, int, int]]:
    """Each triangle rotated to start at its smallest corner (winding kept), sorted."""
    out = []
    for t in np.asarray(tris, np.int64).reshape(-1, 3).tolist():
        k = t.index(min(t))
        out.append(tuple(t[k:] + t[:k]))
    return sorted(out)


def _grid(rows: int, cols: int) -> np.ndarray:
    """A grid of quads, two triangles each, wound counter-clockwise."""
    i = np.arange(rows)[:, None] * (cols + 1) + np.arange(cols)[None, :]
    a, b, c, d = i, i + 1, i + cols + 2, i + cols + 1
    return np.concatenate(
        [np.stack([a, b, c], -1).reshape(-1, 3), np.stack([a, c, d], -1).reshape(-1, 3)]
    )


def _cases() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(7)
    grid = _grid(9, 13)
    shuffled = grid[rng.permutation(len(grid))]
    flipped = shuffled.copy()
    flipped[::3] = flipped[::3, [0, 2, 1]]  # mixed winding
    twin = np.concatenate([grid, grid[:5], grid[5:9, [0, 2, 1]]])  # duplicates, two-sided
    soup = rng.integers(0, 40, (300, 3))
    soup = soup[(soup != np.roll(soup, 1, axis=1)).all(axis=1)]
    geo = samples.skinned_ped("SA").clump.geometries()[0]
    return {
        "grid": grid,
        "shuffled": shuffled,
        "mixed_winding": flipped,
        "duplicates": twin,
        "soup": soup,
        "one": grid[:1],
        "ped": geo.triangles.astype(np.int64),
    }


@pytest.mark.parametrize("name", list(_cases()))
def test_strip_decodes_to_exactly_the_triangles(name):
    tris = _cases()[name]
    strip = stripify(tris)
    assert _canonical(strip_triangles(strip)) == _canonical(tris)


def test_strips_are_smaller_than_lists_on_a_connected_mesh():
    tris = _grid(20, 20)
    assert len(stripify(tris)) < 0.6 * tris.size


def test_bin_mesh_strips_per_material_and_round_trip():
    tris = _grid(8, 8)
    mats = (np.arange(len(tris)) % 64 >= 40).astype(np.int64)  # bands of rows
    degenerate = np.array([[0, 0, 5]])  # draws nothing: not in a strip
    bm = bin_mesh_strips(np.concatenate([tris, degenerate]), np.append(mats, 1), 3, 0x1803FFFF)
    assert bm.strips and [m for m, _ in bm.meshes] == [0, 1]
    for m, ix in bm.meshes:
        assert _canonical(strip_triangles(ix)) == _canonical(tris[mats == m])
    again = read_bin_mesh(Reader(bm.to_bytes()[12:]), bm.stamp)
    assert again.to_bytes() == bm.to_bytes()
    lists = bin_mesh_lists(tris, mats, 3, 0x1803FFFF)
    assert len(bm.to_bytes()) < len(lists.to_bytes())


def test_empty():
    assert len(stripify(np.zeros((0, 3), np.int64))) == 0
    assert bin_mesh_strips(np.zeros((0, 3)), np.zeros(0), 2, 0).meshes == []


def test_sample_strip_file_decodes_like_the_stripifier():
    """The sample's own strip clump: its strips and ours decode to the same triangles."""
    f = samples.skinned_ped("SA", strips=True)
    geo = dff.read(dff.write(f)).clump.geometries()[0]
    for _, ix in geo.bin_mesh.meshes:
        tris = strip_triangles(ix)
        assert _canonical(strip_triangles(stripify(tris))) == _canonical(tris)
        assert len(stripify(tris)) <= len(ix) * 1.2


@pytest.mark.parametrize(
    "make",
    [
        lambda: samples.skinned_ped("SA", split=True),
        lambda: samples.skinned_ped("SA", strips=True),
        samples.gta_map_prop,
        samples.static_clump,
    ],
    ids=["ped", "ped_strips", "gta_prop", "static"],
)
def test_unused_vertex_survives_the_codec_round_trip(make):
    """(Not strips, but the same kept-geometry rule.) A vertex no triangle uses comes
    back with its normal, UVs, prelit and night colours through import and export
    without Blender."""
    from rigport.io_formats.renderware.clump_export import export_clump, from_imported
    from rigport.io_formats.renderware.clump_import import import_dff

    data = dff.write(samples.with_unused_vertex(make()))
    imp = import_dff(dff.read(data), "x")[0]
    assert imp.scene.meshes[0].extras["rw_geometry"]["unused"]["vertices"]
    out, _ = export_clump(from_imported(imp), imp.scene.extras["rw_stamp"])
    assert dff.write(out) == data
