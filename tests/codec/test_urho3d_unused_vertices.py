"""Vertices no draw uses, through the codec's import and export (no Blender): each
becomes a loose vertex of the LOD that first draws from its buffer, keeps every
element, and goes back to its place; a fresh layout still writes it."""

from __future__ import annotations

import numpy as np
import pytest

from rigport.io_formats.urho3d import mdl
from rigport.io_formats.urho3d import model_export as export
from rigport.io_formats.urho3d import model_import as imp
from rigport.samples import urho3d as samples


def _cases() -> dict[str, tuple[mdl.Model, int, int]]:
    return {
        "geometry": (samples.with_unused_vertex(samples.skinned_model(morphs=2), 0, 214), 0, 214),
        "lod-buffer": (samples.with_unused_vertex(samples.lod_buffer_model(), 1, 5), 1, 5),
    }


def _round_trip(model: mdl.Model, keep_layout: bool = True) -> tuple[bytes, bytes, list]:
    data = mdl.write(model)
    scene = imp.import_model(mdl.read(data), "m", all_lods=True)
    lods = [(m.extras["urho_lod"], m) for m in scene.meshes]
    layout = scene.meshes[0].extras["urho_layout"] if keep_layout else None
    opts = export.ExportOptions(layout=layout)
    out, warnings = export.export_model(lods, export.file_order(scene.skeleton), opts)
    return data, mdl.write(out), scene.meshes


@pytest.mark.parametrize("case", ["geometry", "lod-buffer"])
def test_unused_vertex_kept_byte_for_byte(case):
    model, k, at = _cases()[case]
    data, out, meshes = _round_trip(model)
    assert out == data
    base = np.cumsum([0] + [vb.count for vb in model.vertex_buffers])
    owner = meshes[k]  # LOD k draws from buffer k first
    unused = imp.unused_by_lod(mdl.read(data))
    assert list(unused) == [k] and unused[k].tolist() == [base[k] + at]
    used = np.zeros(len(owner.positions), bool)
    used[owner.corner_verts] = True
    assert int((~used).sum()) == 1
    kept = {a.name: a for a in owner.attributes if a.vertices is not None and "morph" not in a.name}
    assert kept and all(np.array_equal(a.vertices, np.flatnonzero(~used)) for a in kept.values())


def test_unused_vertex_in_a_fresh_layout():
    model, k, at = _cases()["geometry"]
    _, out, _ = _round_trip(model, keep_layout=False)
    written = mdl.read(out)
    orphan = model.vertex_buffers[k].data["position0"][at]
    positions = np.concatenate([vb.data["position0"] for vb in written.vertex_buffers])
    assert np.any(np.all(positions == orphan, axis=1))
    drawn = np.unique(np.concatenate([ib.indices for ib in written.index_buffers]))
    assert len(drawn) == len(positions) - 1


def test_bounding_box_is_the_drawn_vertices():
    model, _, _ = _cases()["geometry"]
    _, out, _ = _round_trip(model, keep_layout=False)
    written = mdl.read(out)
    assert np.array_equal(written.bbox_min, model.bbox_min)
    assert np.array_equal(written.bbox_max, model.bbox_max)
