"""The Urho3D engine-rules check: real files pass, each broken rule is named."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from rigport.io_formats.urho3d import engine_rules, mdl
from rigport.io_formats.urho3d.vertex_layout import (
    MASK_NORMAL,
    MASK_POSITION,
    MASK_TANGENT,
    SEM_TANGENT,
    vertex_dtype,
)
from rigport.samples import urho3d as samples


def _corpus_models(corpus_dir) -> list:
    return (
        sorted(corpus_dir.glob("urho3d/*.mdl"))
        + sorted(corpus_dir.glob("urho3d/*/*.mdl"))
        + (sorted(corpus_dir.glob("rbfx/*.mdl")))
    )


def test_engine_files_pass(corpus_dir):
    paths = _corpus_models(corpus_dir)
    assert len(paths) >= 16
    for path in paths:
        assert engine_rules.check(mdl.read(path.read_bytes())) == [], path.name


@pytest.mark.parametrize(
    "kwargs",
    [{}, {"n_bones": 70}, {"legacy": True, "lods": 3}, {"n_bones": 0, "geometries": 2}],
)
def test_generated_models_pass(kwargs):
    assert engine_rules.check(samples.skinned_model(**kwargs)) == []


def _morphed() -> mdl.Model:
    return samples.skinned_model(n_bones=4, morphs=2)


def test_empty_morph_range():
    model = _morphed()
    model.vertex_buffers[0].morph_start = model.vertex_buffers[0].morph_count = 0
    (only,) = {s.split(":")[1] for s in engine_rules.check(model)}
    assert "morph range is empty (count 0), so the engine never applies" in only


def test_morph_vertex_outside_range():
    model = _morphed()
    vb = model.vertex_buffers[0]
    lo = int(min(mb.data["index"].min() for m in model.morphs for mb in m.buffers))
    vb.morph_start, vb.morph_count = lo + 1, vb.morph_count - 1
    broken = engine_rules.check(model)
    assert broken and all("outside the buffer's morph range" in s for s in broken)
    assert f"e.g. {lo})" in broken[0]


def test_morph_range_beyond_buffer():
    model = _morphed()
    vb = model.vertex_buffers[0]
    vb.morph_count = vb.count
    assert any("goes beyond its" in s for s in engine_rules.check(model))


def test_morph_mask_not_in_buffer():
    model = samples.skinned_model(n_bones=4, morphs=1)
    assert model.morphs[0].buffers[0].mask == MASK_POSITION | MASK_NORMAL | MASK_TANGENT
    vb = model.vertex_buffers[0]
    vb.elements = [e for e in vb.elements if e.semantic != SEM_TANGENT]
    data = np.zeros(vb.count, vertex_dtype(vb.elements, False))
    for name in data.dtype.names:
        data[name] = vb.data[name]
    vb.data = data
    assert engine_rules.morph_mask_of(vb) == MASK_POSITION | MASK_NORMAL
    (msg,) = engine_rules.check(model)
    assert "which the buffer lacks (0x80)" in msg
    model.morphs[0].buffers[0].mask |= 0x4  # colour: morphs carry no colour data
    assert any("morphs hold only positions" in s for s in engine_rules.check(model))


def test_too_many_bones_without_mapping():
    model = samples.skinned_model(n_bones=70)
    assert all(len(g.bone_mapping) for g in model.geometries)
    flat = copy.deepcopy(model)
    vb = flat.vertex_buffers[0]
    for geo in flat.geometries:  # blend indices back to global, mappings dropped
        for d in geo.lods:
            idx = np.unique(
                flat.index_buffers[d.index_buffer].indices[
                    d.index_start : d.index_start + d.index_count
                ]
            )
            vb.data["blendindices0"][idx] = geo.bone_mapping[vb.data["blendindices0"][idx]]
    for geo in flat.geometries:
        geo.bone_mapping = np.zeros(0, np.uint32)
    (msg,) = engine_rules.check(flat)
    assert "70 bones and no bone mappings" in msg and "more than the 64" in msg
    assert engine_rules.check(flat, engine_rules.SKIN_MATRICES_GL3_D3D11) == []


def test_mapping_rules():
    model = samples.skinned_model(n_bones=70)
    assert len(model.geometries) >= 2
    lone = copy.deepcopy(model)
    lone.geometries[1].bone_mapping = np.zeros(0, np.uint32)
    assert any("has no bone mapping while other" in s for s in engine_rules.check(lone))
    short = copy.deepcopy(model)
    short.geometries[0].bone_mapping = short.geometries[0].bone_mapping[:2]
    assert any("beyond its bone mapping's 2 bones" in s for s in engine_rules.check(short))
    wide = copy.deepcopy(model)
    wide.geometries[0].bone_mapping = np.arange(70, dtype=np.uint32)
    msgs = engine_rules.check(wide)
    assert any("bone mapping has 70 bones, more than the 64" in s for s in msgs)
    assert engine_rules.check(wide, 128) == []


def test_index_and_draw_range_rules():
    model = samples.skinned_model(n_bones=4, morphs=0)
    d = model.geometries[0].lods[0]
    bad = copy.deepcopy(model)
    bad.geometries[0].lods[0].index_count = d.index_count - 1
    assert any("not whole primitives of 3" in s for s in engine_rules.check(bad))
    bad = copy.deepcopy(model)
    bad.geometries[0].lods[0].index_count = len(bad.index_buffers[0].indices) + 3
    assert any("beyond the" in s and "of index buffer 0" in s for s in engine_rules.check(bad))
    bad = copy.deepcopy(model)
    bad.index_buffers[0].indices = bad.index_buffers[0].indices.astype(np.uint32)
    bad.index_buffers[0].indices[d.index_start] = model.vertex_buffers[0].count
    assert any("beyond the" in s and "of vertex buffer 0" in s for s in engine_rules.check(bad))
    bad = copy.deepcopy(model)
    bad.index_buffers[0].indices = bad.index_buffers[0].indices.astype(np.uint8)
    assert any("1-byte indices" in s for s in engine_rules.check(bad))
    bad = copy.deepcopy(model)
    bad.geometries[0].lods = []
    assert any("has no LOD levels" in s for s in engine_rules.check(bad))


def test_inspect_summary_names_the_problems():
    """``batch.py inspect`` (the registry summary) lists what the engine would draw wrong."""
    from rigport.io_formats.urho3d.formats import summarize_model

    model = _morphed()
    assert summarize_model(model)["engine_problems"] == []
    model.vertex_buffers[0].morph_count = 0
    problems = summarize_model(model)["engine_problems"]
    assert problems and "never applies the morph" in problems[0]
