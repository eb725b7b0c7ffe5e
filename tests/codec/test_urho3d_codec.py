"""Urho3D .mdl / .ani codecs: byte-exact round trips and read-back values.

Real files come from ``../shared/corpus`` (skipped when absent); generated files
come from :mod:`rigport.samples.urho3d` and cover what the corpus
lacks (morphs, 32-bit indices, every UMD2 element, every legacy bit, ...).
"""

from __future__ import annotations

import dataclasses
import functools
import math
import os
from pathlib import Path

import numpy as np
import pytest

from rigport.io_formats import transforms
from rigport.io_formats.urho3d import ani, mdl
from rigport.io_formats.urho3d.vertex_layout import (
    LEGACY_ELEMENTS,
    SEM_BLENDINDICES,
    TYPE_UBYTE4_NORM,
)
from rigport.samples import urho3d as samples

CORPUS = Path(
    os.environ.get(
        "RIGPORT_CORPUS", Path(__file__).resolve().parents[2].parent / "shared" / "corpus"
    )
)
NO_CORPUS = f"real-file corpus not found at {CORPUS}"


def corpus_params(*patterns: str):
    files = sorted({p for pat in patterns for p in CORPUS.glob(pat)}) if CORPUS.is_dir() else []
    if not files:
        return [pytest.param(None, id="no-corpus", marks=pytest.mark.skip(reason=NO_CORPUS))]
    return [
        pytest.param(p, id=f"{p.parent.name}/{p.name}", marks=pytest.mark.corpus) for p in files
    ]


def corpus_bytes(name: str) -> bytes:
    path = CORPUS / name
    if not path.is_file():
        pytest.skip(NO_CORPUS if not CORPUS.is_dir() else f"{path} missing")
    return path.read_bytes()


@functools.cache
def corpus_model(name: str) -> mdl.Model:
    return mdl.read(corpus_bytes(name))


def assert_same(a, b, path: str = "model") -> None:
    """Field-by-field equality of native objects, values compared as the file stores them."""
    if dataclasses.is_dataclass(a):
        assert type(a) is type(b), path
        for f in dataclasses.fields(a):
            assert_same(getattr(a, f.name), getattr(b, f.name), f"{path}.{f.name}")
    elif isinstance(a, list | tuple):
        assert len(a) == len(b), f"{path}: {len(a)} != {len(b)}"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            assert_same(x, y, f"{path}[{i}]")
    elif isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        if b.dtype.names:
            assert a.dtype.names == b.dtype.names, path
            for name in b.dtype.names:
                assert_same(a[name], b[name], f"{path}[{name!r}]")
        else:
            assert a.shape == b.shape, f"{path}: shape {a.shape} != {b.shape}"
            assert np.array_equal(a.astype(b.dtype), b), f"{path} differs"
    elif isinstance(a, float) or isinstance(b, float):
        assert np.float32(a) == np.float32(b), f"{path}: {a} != {b}"
    else:
        assert a == b, f"{path}: {a!r} != {b!r}"


def parents_of(bones) -> np.ndarray:
    parents = np.array([b.parent for b in bones])
    return np.where(parents == np.arange(len(bones)), -1, parents)


def world_binds(bones) -> np.ndarray:
    local = transforms.compose_trs(
        np.array([b.position for b in bones]),
        np.array([b.rotation for b in bones]),
        np.array([b.scale for b in bones]),
    )
    return transforms.world_from_local(local, parents_of(bones))


def offsets_4x4(bones) -> np.ndarray:
    out = np.tile(np.eye(4), (len(bones), 1, 1))
    out[:, :3, :] = np.array([b.offset_matrix for b in bones], np.float64)
    return out


def triangles(model: mdl.Model, geometry: int = 0, level: int = 0) -> tuple[np.ndarray, np.ndarray]:
    lod = model.geometries[geometry].lods[level]
    idx = model.index_buffers[lod.index_buffer].indices[
        lod.index_start : lod.index_start + lod.index_count
    ]
    return model.vertex_buffers[lod.vertex_buffer].data, idx.astype(np.int64).reshape(-1, 3)


def conventions(model: mdl.Model, geometry: int = 0) -> tuple[float, float]:
    """Share of triangles whose winding agrees with the vertex normals, and share
    whose tangent w agrees with the UV layout (see samples' module docstring)."""
    vb, tri = triangles(model, geometry)
    p = vb["position0"][tri].astype(np.float64)
    e1, e2 = p[:, 1] - p[:, 0], p[:, 2] - p[:, 0]
    face = np.cross(e1, e2)
    winding = float(np.mean(np.sum(face * vb["normal0"][tri].sum(axis=1), axis=1) > 0))
    uv = vb["texcoord0"][tri].astype(np.float64)
    d1, d2 = uv[:, 1] - uv[:, 0], uv[:, 2] - uv[:, 0]
    det = d1[:, 0] * d2[:, 1] - d2[:, 0] * d1[:, 1]
    ok = np.abs(det) > 1e-12
    dp_dv = (e2[ok] * d1[ok, :1] - e1[ok] * d2[ok, :1]) / det[ok, None]
    t = vb["tangent0"][tri[ok, 0]]
    n = vb["normal0"][tri[ok, 0]]
    handed = np.sign(np.sum(np.cross(n, t[:, :3]) * dp_dv, axis=1)) == t[:, 3]
    return winding, float(np.mean(handed))


# --------------------------------------------------------------------------
# real files
# --------------------------------------------------------------------------
@pytest.mark.parametrize("path", corpus_params("*/*.mdl"))
def test_corpus_model_round_trip(path):
    data = path.read_bytes()
    model = mdl.read(data)
    assert mdl.write(model) == data
    assert_same(mdl.read(mdl.write(model)), model)


@pytest.mark.parametrize("path", corpus_params("*/*.ani"))
def test_corpus_animation_round_trip(path):
    data = path.read_bytes()
    anim = ani.read(data)
    assert ani.write(anim) == data
    assert_same(ani.read(ani.write(anim)), anim)


@pytest.mark.corpus
def test_jack_model_facts():
    m = corpus_model("urho3d/Jack.mdl")
    assert m.magic == b"UMDL"
    assert len(m.bones) == 67
    assert m.bones[0].name == "Bip01" and m.bones[0].parent == 0
    assert all(b.parent < i for i, b in enumerate(m.bones) if i)  # parent-first here
    assert len(m.geometries) == 2
    assert [len(g.lods) for g in m.geometries] == [7, 7]
    assert [len(g.bone_mapping) for g in m.geometries] == [52, 5]
    assert (len(m.vertex_buffers), m.vertex_buffers[0].count) == (1, 4640)
    vb = m.vertex_buffers[0]
    assert vb.legacy_mask == 779 == 0x1 | 0x2 | 0x8 | 0x100 | 0x200
    assert vb.data.dtype.names == (
        "position0",
        "normal0",
        "texcoord0",
        "blendweights0",
        "blendindices0",
    )
    assert [ib.index_size for ib in m.index_buffers] == [2]
    for g in m.geometries:
        distances = [lod.distance for lod in g.lods]
        assert distances == sorted(distances) and distances[0] == 0
        assert all(lod.vertex_buffer == 0 and lod.primitive_type == 0 for lod in g.lods)
        # blend indices of the vertices a geometry draws are local to its mapping
        lo, hi = g.lods[0].index_start, g.lods[0].index_start + g.lods[0].index_count
        used = np.unique(m.index_buffers[0].indices[lo:hi])
        weights = vb.data["blendweights0"][used]
        local = vb.data["blendindices0"][used][weights > 0]
        assert local.max() < len(g.bone_mapping)
    assert np.allclose(vb.data["blendweights0"].sum(axis=1), 1, atol=1e-5)
    assert m.geometry_centers is not None and m.geometry_centers.shape == (2, 3)
    assert not m.morphs
    assert {b.collision_mask for b in m.bones} == {0, 3}
    pts = vb.data["position0"]
    assert np.all(pts >= m.bbox_min - 1e-6) and np.all(pts <= m.bbox_max + 1e-6)


@pytest.mark.corpus
def test_jack_offset_matrices_invert_world_binds():
    bones = corpus_model("urho3d/Jack.mdl").bones
    err = np.abs(offsets_4x4(bones) @ world_binds(bones) - np.eye(4)).max()
    assert err < 1e-5


@pytest.mark.corpus
def test_jack_walk_facts():
    a = ani.read(corpus_bytes("urho3d/Jack_Walk.ani"))
    assert a.name == "Walk"
    assert len(a.tracks) == 54
    assert math.isclose(a.length, 1.0666699, rel_tol=1e-6)
    assert {t.mask for t in a.tracks} == {ani.CHANNEL_POSITION | ani.CHANNEL_ROTATION}
    bone_names = {b.name for b in corpus_model("urho3d/Jack.mdl").bones}
    assert {t.name for t in a.tracks} <= bone_names
    for t in a.tracks:
        assert np.all(np.diff(t.keys["time"]) > 0)
        assert t.keys["time"][0] >= 0 and t.keys["time"][-1] <= a.length + 1e-6
        assert np.allclose(np.linalg.norm(t.keys["rotation"], axis=1), 1, atol=1e-3)


@pytest.mark.corpus
def test_line_primitives_have_no_geometry_centres():
    data = corpus_bytes("urho3d/LinePrimitives_Basis.mdl")
    m = mdl.read(data)
    assert m.geometry_centers is None
    assert m.geometries[0].lods[0].primitive_type == mdl.PRIMITIVE_LINES
    assert mdl.write(m) == data  # and the writer leaves them out again
    m.geometry_centers = np.zeros((1, 3), np.float32)
    assert len(mdl.write(m)) == len(data) + 12


@pytest.mark.corpus
def test_rbfx_plane_is_umd2_with_two_uv_sets_and_normalised_colour():
    m = corpus_model("rbfx/Plane.mdl")
    assert m.magic == b"UMD2"
    (vb,) = m.vertex_buffers
    assert vb.legacy_mask is None
    texcoords = [e for e in vb.elements if e.semantic == 4]
    assert [e.index for e in texcoords] == [0, 1]
    (colour,) = [e for e in vb.elements if e.semantic == 5]
    assert colour.type == TYPE_UBYTE4_NORM
    assert vb.data["color0"].dtype == np.uint8
    assert vb.count == 4 and len(m.index_buffers[0].indices) == 6


@pytest.mark.corpus
def test_corpus_facts_of_other_models():
    assert [len(g.lods) for g in corpus_model("urho3d/Mushroom.mdl").geometries] == [5]
    assert len(corpus_model("urho3d/TeaPot.mdl").geometries) == 2
    assert len(corpus_model("urho3d/LinePrimitives_CubicBezier.mdl").bones) == 5


@pytest.mark.corpus
@pytest.mark.parametrize("name", ["urho3d/Sphere.mdl", "urho3d/Box.mdl", "rbfx/Box.mdl"])
def test_corpus_conventions(name):
    """The winding and tangent conventions the samples copy, measured on engine files."""
    winding, handed = conventions(corpus_model(name))
    assert winding == 1.0
    assert handed > 0.99


# --------------------------------------------------------------------------
# generated files
# --------------------------------------------------------------------------
SAMPLES = {
    "skinned": lambda: samples.skinned_model(),
    "skinned_legacy": lambda: samples.skinned_model(legacy=True, lods=3),
    "skinned_mapped": lambda: samples.skinned_model(
        n_bones=100, grid=(240, 6), lods=3, morphs=4, uv_sets=4, color=False
    ),
    "skinned_32bit_no_centres": lambda: samples.skinned_model(
        n_bones=3, geometries=3, index_size=4, centers=False, collision=False, lods=2
    ),
    "skinned_scaled_root": lambda: samples.skinned_model(n_bones=6, root_scale=1.5, morphs=0),
    "static_tube": lambda: samples.skinned_model(n_bones=0, uv_sets=0, color=False, morphs=1),
    "all_elements": samples.all_elements_model,
    "legacy_all_bits": samples.legacy_all_bits_model,
}


@functools.cache
def sample(name: str) -> mdl.Model:
    return SAMPLES[name]()


@pytest.mark.parametrize("name", SAMPLES)
def test_generated_model_round_trip(name):
    model = sample(name)
    data = mdl.write(model)
    back = mdl.read(data)
    assert mdl.write(back) == data
    assert_same(model, back)


@pytest.mark.parametrize("name", [n for n in SAMPLES if n != "static_tube"])
def test_generated_offset_matrices_invert_world_binds(name):
    bones = mdl.read(mdl.write(sample(name))).bones
    assert bones
    world = world_binds(bones)
    assert np.allclose(samples.world_bind_matrices(bones), world)
    assert np.abs(offsets_4x4(bones) @ world - np.eye(4)).max() < 2e-5
    assert np.allclose(offsets_4x4(bones), np.linalg.inv(world), atol=2e-5)


@pytest.mark.parametrize("name", [n for n in SAMPLES if n.startswith(("skinned", "static"))])
def test_generated_tentacle_is_sound(name):
    m = mdl.read(mdl.write(sample(name)))
    (vb,) = m.vertex_buffers
    d = vb.data
    assert np.allclose(np.linalg.norm(d["normal0"], axis=1), 1, atol=1e-5)
    assert np.allclose(np.linalg.norm(d["tangent0"][:, :3], axis=1), 1, atol=1e-5)
    assert np.abs(np.sum(d["normal0"] * d["tangent0"][:, :3], axis=1)).max() < 1e-5
    assert set(np.unique(d["tangent0"][:, 3])) <= {-1.0, 1.0}
    pts = d["position0"]
    assert np.array_equal(m.bbox_min, pts.min(axis=0))
    assert np.array_equal(m.bbox_max, pts.max(axis=0))
    for g in range(len(m.geometries)):
        if "texcoord0" in d.dtype.names:
            assert conventions(m, g) == (1.0, 1.0)
        lods = m.geometries[g].lods
        assert [lod.distance for lod in lods] == sorted({lod.distance for lod in lods})
        counts = [lod.index_count for lod in lods]
        assert all(a >= b for a, b in zip(counts, counts[1:], strict=False))
    if m.geometry_centers is not None:
        assert m.geometry_centers.shape == (len(m.geometries), 3)
        assert np.all(m.geometry_centers >= m.bbox_min) and np.all(m.geometry_centers <= m.bbox_max)


@pytest.mark.parametrize(
    "name", ["skinned", "skinned_legacy", "skinned_mapped", "skinned_32bit_no_centres"]
)
def test_generated_skinning(name):
    m = mdl.read(mdl.write(sample(name)))
    d = m.vertex_buffers[0].data
    w, idx = d["blendweights0"], d["blendindices0"].astype(np.int64)
    assert w.shape[1] == 4 and np.all(w >= 0)
    assert np.abs(w.sum(axis=1) - 1).max() < 1e-6
    assert np.all(np.diff(w, axis=1) <= 0), "weights sorted, largest first"
    n_bones = len(m.bones)
    for g in m.geometries:
        lo = g.lods[0].index_start
        used = np.unique(m.index_buffers[0].indices[lo : lo + g.lods[0].index_count])
        live = idx[used][w[used] > 0]
        if n_bones > samples.MAX_SKIN_BONES:
            assert 0 < len(g.bone_mapping) <= samples.MAX_SKIN_BONES
            assert np.all(np.diff(g.bone_mapping.astype(np.int64)) > 0)
            assert live.max() < len(g.bone_mapping)
            assert set(g.bone_mapping[live].tolist()) == set(g.bone_mapping.tolist())
        else:
            assert len(g.bone_mapping) == 0
            assert live.max() < n_bones
    # each bone's collision shapes hold the vertices it moves most
    for j, bone in enumerate(m.bones):
        if not bone.collision_mask:
            continue
        glob = idx if n_bones <= samples.MAX_SKIN_BONES else None
        if glob is None:
            continue  # local indices: checked through the mappings above
        mine = np.any((glob == j) & (w > 0.33), axis=1)
        local = d["position0"][mine] @ bone.offset_matrix[:, :3].T + bone.offset_matrix[:, 3]
        if bone.collision_mask & 1:
            assert np.linalg.norm(local, axis=1).max() <= bone.radius * (1 + 1e-5) + 1e-6
        if bone.collision_mask & 2:
            assert np.all(local >= bone.bbox_min - 1e-5) and np.all(local <= bone.bbox_max + 1e-5)


def test_generated_bone_mapping_rule():
    few = sample("skinned")
    many = sample("skinned_mapped")
    assert len(few.bones) <= samples.MAX_SKIN_BONES
    assert all(len(g.bone_mapping) == 0 for g in few.geometries)
    assert len(many.bones) == 100 and len(many.geometries) >= 2
    covered = np.unique(np.concatenate([g.bone_mapping for g in many.geometries]))
    assert np.array_equal(covered, np.arange(100))


def test_generated_collision_masks_cover_spheres_and_boxes():
    masks = {b.collision_mask for name in SAMPLES for b in sample(name).bones}
    assert masks == {0, 1, 2, 3}
    assert {b.collision_mask for b in sample("skinned_32bit_no_centres").bones} == {0}


def test_generated_morphs():
    m = mdl.read(mdl.write(sample("skinned_mapped")))
    assert [mo.name for mo in m.morphs] == ["Bulge", "Curl", "Pinch", "Bulge1"]
    assert [mo.buffers[0].mask for mo in m.morphs] == [0x83, 0x3, 0x1, 0x83]
    vb = m.vertex_buffers[0]
    every = np.concatenate([mb.data["index"] for mo in m.morphs for mb in mo.buffers])
    assert vb.morph_start == every.min()
    assert vb.morph_count == every.max() - every.min() + 1
    for mo in m.morphs:
        (mb,) = mo.buffers
        assert len(mb.data) > 0
        assert np.all(np.diff(mb.data["index"].astype(np.int64)) > 0)
        assert np.abs(mb.data["position"]).max() > 1e-3
        if mb.mask & 0x2:
            assert np.abs(mb.data["normal"]).max() > 1e-4
    # morphing keeps normals unit length
    bulge = m.morphs[0].buffers[0].data
    normals = vb.data["normal0"][bulge["index"]] + bulge["normal"]
    assert np.allclose(np.linalg.norm(normals, axis=1), 1, atol=1e-5)


def test_generated_lods_share_one_vertex_buffer():
    m = sample("skinned_legacy")
    for g in m.geometries:
        assert [lod.distance for lod in g.lods] == [0.0, 10.0, 20.0]
        assert {(lod.vertex_buffer, lod.index_buffer) for lod in g.lods} == {(0, 0)}
    ranges = sorted((lod.index_start, lod.index_count) for g in m.geometries for lod in g.lods)
    assert all(a[0] + a[1] <= b[0] for a, b in zip(ranges, ranges[1:], strict=False))


def test_generated_legacy_mask_and_uv_sets():
    legacy = sample("skinned_legacy")
    assert legacy.magic == b"UMDL"
    assert (
        legacy.vertex_buffers[0].legacy_mask == 0x1 | 0x2 | 0x4 | 0x8 | 0x10 | 0x80 | 0x100 | 0x200
    )
    four = sample("skinned_mapped").vertex_buffers[0]
    assert [e.index for e in four.elements if e.semantic == 4] == [0, 1, 2, 3]
    with pytest.raises(ValueError):
        samples.skinned_model(legacy=True, uv_sets=3)


def test_generated_index_sizes():
    assert sample("skinned").index_buffers[0].index_size == 2
    assert sample("skinned_32bit_no_centres").index_buffers[0].index_size == 4
    assert sample("skinned_32bit_no_centres").geometry_centers is None
    big = samples.skinned_model(n_vertices=70_000, n_bones=4, morphs=0)
    assert big.vertex_buffers[0].count > 0xFFFF
    assert big.index_buffers[0].index_size == 4
    assert big.index_buffers[0].indices.max() > 0xFFFF
    with pytest.raises(ValueError):
        samples.skinned_model(n_vertices=70_000, index_size=2)


def test_generated_million_vertices():
    """The bench's content: speed is measured in bench/, never as a timed test."""
    m = samples.skinned_model(n_vertices=1_000_000, n_bones=120, lods=2, morphs=2)
    count = m.vertex_buffers[0].count
    assert abs(count - 1_000_000) < 20_000
    assert len(m.geometries) >= 2 and all(len(g.bone_mapping) <= 64 for g in m.geometries)


def test_all_elements_model_covers_the_format():
    m = sample("all_elements")
    assert m.magic == b"UMD2"
    elements = [e for vb in m.vertex_buffers for e in vb.elements]
    assert {e.type for e in elements} == set(range(7))
    assert {e.semantic for e in elements} == set(range(9))
    assert {e.index for e in elements if e.semantic == 4} >= {0, 1, 2, 3}
    assert len(m.vertex_buffers) == 3
    assert sorted(ib.index_size for ib in m.index_buffers) == [2, 2, 4]
    (wide,) = [ib for ib in m.index_buffers if ib.index_size == 4]
    assert wide.indices.max() > 0xFFFF
    assert {lod.primitive_type for g in m.geometries for lod in g.lods} == {0, 1}
    assert any(len(mo.buffers) == 2 for mo in m.morphs)
    assert {b.collision_mask for b in m.bones} == {0, 1, 2, 3}
    assert m.geometry_centers is not None
    # blend indices are local to geometry 0's mapping
    vb0 = m.vertex_buffers[0].data
    assert vb0["blendindices0"].max() < len(m.geometries[0].bone_mapping)
    assert any(e.semantic == SEM_BLENDINDICES for e in m.vertex_buffers[0].elements)


def test_legacy_all_bits_model_covers_every_bit():
    data = mdl.write(sample("legacy_all_bits"))
    m = mdl.read(data)
    assert m.magic == b"UMDL"
    assert m.vertex_buffers[0].legacy_mask == 0x3FFF
    assert m.vertex_buffers[0].elements == list(LEGACY_ELEMENTS)
    assert int.from_bytes(data[12:16], "little") == 0x3FFF
    assert m.geometry_centers is None
    assert data.endswith(np.concatenate([m.bbox_min, m.bbox_max]).astype("<f4").tobytes())
    assert {lod.primitive_type for g in m.geometries for lod in g.lods} == {0, 1}
    assert conventions(m) == (1.0, 1.0)
    assert m.morphs[0].buffers[0].mask == 0x81


# --------------------------------------------------------------------------
# animation
# --------------------------------------------------------------------------
def check_walk(anim: ani.Animation, names: list[str]) -> None:
    data = ani.write(anim)
    back = ani.read(data)
    assert ani.write(back) == data
    assert_same(anim, back)
    assert [t.name for t in back.tracks] == names
    times = back.tracks[0].keys["time"]
    assert times[0] == 0 and np.float32(times[-1]) == np.float32(back.length)
    assert np.all(np.diff(times) > 0)
    for t in back.tracks:
        assert t.mask in (3, 7)
        assert np.array_equal(t.keys["time"], times)
        q = t.keys["rotation"].astype(np.float64)
        assert np.allclose(np.linalg.norm(q, axis=1), 1, atol=1e-6)
        assert np.all(np.sum(q[1:] * q[:-1], axis=1) > 0)  # no hemisphere jumps
        for field in t.keys.dtype.names[1:]:  # a loop: the last key is the first
            assert np.allclose(t.keys[field][0], t.keys[field][-1], atol=1e-5)


def test_walk_animation_for_a_generated_skeleton():
    model = sample("skinned")
    anim = samples.walk_animation(model, n_keys=31, length=1.25)
    check_walk(anim, [b.name for b in model.bones])
    assert anim.name == "Walk"
    assert {t.mask for t in anim.tracks} == {3, 7}
    # keys are absolute local transforms around the rest pose
    for bone, track in zip(model.bones, anim.tracks, strict=True):
        assert np.allclose(track.keys["position"].mean(axis=0), bone.position, atol=0.05)
        assert np.all(np.abs(np.sum(track.keys["rotation"] * bone.rotation, axis=1)) > 0.9)


@pytest.mark.corpus
def test_walk_animation_for_jack():
    model = corpus_model("urho3d/Jack.mdl")
    anim = samples.walk_animation(model.bones, n_keys=9, scale_every=0, name="Sway")
    check_walk(anim, [b.name for b in model.bones])
    assert {t.mask for t in anim.tracks} == {3}


def test_walk_animation_from_names():
    anim = samples.walk_animation(["a", "b", "c"], n_keys=5, length=2.0, scale_every=1)
    check_walk(anim, ["a", "b", "c"])
    assert {t.mask for t in anim.tracks} == {7}
    rest = (np.ones((2, 3)), np.tile([0.0, 0, 1, 0], (2, 1)), np.full((2, 3), 2.0))
    anim = samples.walk_animation(["x", "y"], n_keys=3, rest=rest)
    check_walk(anim, ["x", "y"])
