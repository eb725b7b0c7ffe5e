"""Hostile Urho3D files without Blender (issue 26), built by our own writers."""

from __future__ import annotations

import tracemalloc

import numpy as np

from rigport.io_formats.urho3d import mdl
from rigport.io_formats.urho3d.model_import import MORPH_LISTED, MORPH_NORMAL, import_model
from rigport.io_formats.urho3d.vertex_layout import MASK_NORMAL, MASK_POSITION
from rigport.samples import urho3d as u3_samples


def sparse_morph_model(n_morphs: int, n_vertices: int = 2000) -> mdl.Model:
    """The tentacle with ``n_morphs`` morphs, each moving one vertex (every third
    one with a normal offset too)."""
    model = u3_samples.skinned_model(n_bones=4, n_vertices=n_vertices, morphs=0)
    vb = model.vertex_buffers[0]
    count = len(vb.data)
    for i in range(n_morphs):
        mask = MASK_POSITION | (MASK_NORMAL if i % 3 == 0 else 0)
        data = np.zeros(1, mdl.morph_dtype(mask))
        data["index"] = i % count
        data["position"] = (0.0, 0.0, 0.1 + i)
        if mask & MASK_NORMAL:
            data["normal"] = (0.5, 0.0, 0.0)
        model.morphs.append(mdl.Morph(f"Sparse{i:05d}", [mdl.MorphBuffer(0, mask, data)]))
    vb.morph_start, vb.morph_count = 0, min(n_morphs, count)
    return model


def test_sparse_morphs_stay_sparse():
    """Finding 16: each morph holds its one vertex, not a row per vertex; a dense
    view gives the offsets the file has."""
    model = mdl.read(mdl.write(sparse_morph_model(30)))
    mesh = import_model(model, "m").meshes[0]
    n = len(mesh.positions)
    for i, m in enumerate(mesh.morphs):
        assert m.vertices is not None and len(m.vertices) == 1
        dense = m.dense(n)
        assert np.count_nonzero(dense.any(axis=1)) == 1
        assert dense[m.vertices[0], 1] == np.float32(0.1 + i)  # file z is Blender's y
    attrs = {a.name: a for a in mesh.attributes}
    assert len(attrs[MORPH_LISTED.format(0)].data) == 1
    assert MORPH_NORMAL.format(0) in attrs and MORPH_NORMAL.format(1) not in attrs


def test_sparse_morph_memory_follows_the_file():
    """Finding 16: the neutral scene of 1,000 one-vertex morphs on 2,000 vertices
    takes memory in proportion to the file (it took 1,000 x 2,000 x 40 bytes)."""
    data = mdl.write(sparse_morph_model(1000))
    model = mdl.read(data)
    tracemalloc.start()
    scene = import_model(model, "m")
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert len(scene.meshes[0].morphs) == 1000
    assert peak < 20 * len(data), (peak, len(data))
