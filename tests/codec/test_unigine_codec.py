"""Unigine MESH/ANIM codec: byte-exact round trips of files built from the specification."""

from __future__ import annotations

import functools

import numpy as np
import pytest

from rigport.io_formats.codec import Reader, Writer
from rigport.io_formats.unigine import anim, common, mesh
from rigport.samples import unigine as samples


@functools.cache
def generated() -> dict[str, bytes]:
    skinned = samples.skinned_mesh()
    return {
        "skinned.mesh": mesh.write(skinned),
        "static.mesh": mesh.write(samples.static_mesh()),
        "wide.mesh": mesh.write(samples.large_mesh()),
        "wider.mesh": mesh.write(samples.large_mesh(rings=300)),
        "flag127.anim": anim.write(samples.anim_file(skinned, 127)),
        "flag15.anim": anim.write(samples.anim_file(skinned, 15)),
    }


def _codec(name: str):
    return mesh if name.endswith(".mesh") else anim


@pytest.mark.parametrize("name", sorted(generated()))
def test_byte_round_trip(name):
    data = generated()[name]
    codec = _codec(name)
    assert codec.write(codec.read(data)) == data


def test_skinned_sample_covers_the_cases():
    m = mesh.read(generated()["skinned.mesh"])
    assert len(m.surfaces) == 2
    assert [t.name for t in m.surfaces[0].targets] == ["base", "bulge", "pinch"]
    assert [t.name for t in m.surfaces[1].targets] == ["base", "bulge"]
    assert len(m.surfaces[0].uv1) == m.surfaces[0].n_vertices
    assert len(m.surfaces[0].colors) == m.surfaces[0].n_vertices
    assert m.surfaces[0].n_vertices > m.surfaces[0].n_coords
    # bones listed before their parents, non-unit bind scales
    assert any(b.parent > i for i, b in enumerate(m.bones))
    assert {0.25, 0.216} <= {round(float(v), 3) for v in m.bind[:, 7]}
    # weights: 1 to 4 influences, each vertex summing to 65535
    w = m.surfaces[0].weights
    assert set(np.unique(w.counts).tolist()) == {1, 2, 3, 4}
    owner = np.repeat(np.arange(len(w.counts)), w.counts)
    assert (np.bincount(owner, w.values.astype(np.int64)) == 65535).all()
    # tangent handedness: the mirrored surface has negative w
    assert (m.surfaces[0].targets[0].tangents[:, 3] > 0).all()
    assert (m.surfaces[1].targets[0].tangents[:, 3] < 0).all()
    # embedded animations with partial change flags
    assert [a.flag for a in m.animations] == [127, 15]
    flags = m.animations[0].frames.flags
    assert (flags[0] == 127).all()
    later = np.unique(flags[1:])
    assert len(later) > 1 and (later != 127).any() and (later & 0x08).all()


def test_index_widths_follow_the_counts():
    small = mesh.read(generated()["skinned.mesh"]).surfaces[0]
    assert common.index_dtype(small.n_coords) == "<u1"
    wide = mesh.read(generated()["wide.mesh"]).surfaces[0]
    assert wide.n_coords == 65280 and wide.n_vertices == 65536
    assert common.index_dtype(wide.n_coords) == "<u2"
    assert common.index_dtype(wide.n_vertices) == "<i4"
    wider = mesh.read(generated()["wider.mesh"]).surfaces[0]
    assert wider.n_coords > 65535 and int(wider.coords.max()) > 65535
    # the file size matches the widths: 4 bytes per index for both lists
    data = generated()["wider.mesh"]
    assert len(data) > 2 * 4 * len(wider.tris)


def test_anim_flags_15_and_127():
    for name, flag in (("flag15.anim", 15), ("flag127.anim", 127)):
        a = anim.read(generated()[name])
        assert [c.flag for c in a.animations] == [flag, flag]
        assert not (a.animations[0].frames.flags & (0xFF ^ flag)).any()
        assert len(a.animations[1].bones) == len(a.bones) - 1


def test_compact_int_and_strings():
    w = Writer()
    for v in (0, 63, 64, 1156, -1, -64, 2**31 - 1):
        w.compact_int(v)
    common.write_string(w, "Bip01 Spine")

    r = Reader(w.getvalue())
    assert [r.compact_int() for _ in range(7)] == [0, 63, 64, 1156, -1, -64, 2**31 - 1]
    assert common.read_string(r, "name") == "Bip01 Spine"
    w2 = Writer()
    w2.compact_int(1156)
    assert w2.getvalue() == b"\x84\x12"


def test_frame_values_hold_until_changed():
    m = mesh.read(generated()["skinned.mesh"])
    fr = m.animations[0].frames
    flags = fr.flags
    f, b = np.nonzero((flags & 1) == 0)
    f, b = f[f > 0], b[f > 0]
    assert len(f)
    assert (fr.translation[f, b, 0] == fr.translation[f - 1, b, 0]).all()


def test_change_flags_store_only_changes():
    t = np.zeros((3, 1, 3), np.float32)
    q = np.zeros((3, 1, 4), np.int16)
    s = np.ones((3, 1, 3), np.float32)
    t[2, 0, 1] = 1.0
    q[1, 0, 3] = 5
    flags = common.change_flags(t, q, s, 0x7F)
    assert flags[:, 0].tolist() == [0x7F, 0x08, 0x0A]  # the rotation changes back in frame 2
    assert common.change_flags(t, q, s, 0x0F)[0, 0] == 0x0F
