"""RenderWare .anm codec: byte round trips, key order and node walk, librw reads it."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from rigport.io_formats.codec import FormatError
from rigport.io_formats.renderware import anm
from rigport.io_formats.renderware.chunks import TARGETS
from rigport.tests import clients


def sample_tracks(nodes: int = 5, seed: int = 0):
    rng = np.random.default_rng(seed)
    out = []
    for i in range(nodes):
        k = 2 + (i * 3) % 5
        times = np.sort(rng.uniform(0.05, 2.0, k - 1))
        times = np.concatenate([[0.0], times]).astype(np.float32).astype(np.float64)
        q = rng.normal(size=(k, 4))
        q /= np.linalg.norm(q, axis=1, keepdims=True)
        q = q.astype(np.float32).astype(np.float64)
        t = rng.normal(size=(k, 3)).astype(np.float32).astype(np.float64)
        out.append((times, q, t))
    return out


def test_round_trip_and_tracks():
    tracks = sample_tracks()
    f = anm.from_tracks(tracks, TARGETS["SA"][2])
    data = anm.write(f)
    back = anm.read(data)
    assert anm.write(back) == data
    assert back.node_count() == 5
    got = back.tracks(5)
    for (t0, q0, p0), (t1, q1, p1) in zip(tracks, got, strict=True):
        assert np.array_equal(t0, t1) and np.array_equal(q0, q1) and np.array_equal(p0, p1)


def test_stream_order_is_renderwares():
    f = anm.from_tracks(sample_tracks(), 0)
    k = f.keys
    assert np.all(k["time"][:5] == 0.0)  # every node's first key
    prev = k["prev"] // anm.KEY.itemsize
    assert np.all(prev[5:] < np.arange(5, len(k)))
    prev_times = k["time"][prev[10:]]
    assert np.all(np.diff(prev_times) >= 0)  # later keys by the time of the key before


def test_compressed_keys_are_kept_as_bytes():
    body = struct.pack("<iiiif", 0x100, 2, 3, 0, 1.0) + bytes(range(60))
    data = struct.pack("<III", anm.ANIM_ANIMATION, len(body), 0x1803FFFF) + body
    f = anm.read(data)
    assert f.keys is None and anm.write(f) == data


def test_bad_input():
    data = anm.write(anm.from_tracks(sample_tracks(), 0))
    lying = bytearray(data)
    struct.pack_into("<i", lying, 20, 10**8)
    with pytest.raises(FormatError, match="key count"):
        anm.read(bytes(lying))
    for cut in range(0, len(data), 13):
        with pytest.raises(FormatError):
            anm.read(data[:cut])
    with pytest.raises(FormatError, match="not a RenderWare animation"):
        anm.read(struct.pack("<III", 0x10, 0, 0))
    loop = anm.read(data)
    loop.keys["prev"][7] = 7 * anm.KEY.itemsize
    with pytest.raises(FormatError, match="points forward"):
        loop.tracks(5)


def test_librw_reads_and_writes_our_anm(tmp_path):
    tracks = sample_tracks(6, seed=3)
    f = anm.from_tracks(tracks, TARGETS["SA"][2])
    path = tmp_path / "walk.anm"
    path.write_bytes(anm.write(f))
    out = tmp_path / "librw.anm"
    text = clients.run_rwanim("anm", path, out)
    head = text.splitlines()[0].split()
    assert head[:6] == ["type", "1", "keys", str(len(f.keys)), "flags", "0"]
    assert int(head[head.index("nodes") + 1]) == 6
    rows = np.array([line.split()[2:] for line in text.splitlines()[1:]], np.float64)
    assert np.allclose(rows[:, 0], f.keys["time"])
    assert np.allclose(rows[:, 1:5], f.keys["q"])
    assert np.allclose(rows[:, 5:8], f.keys["t"])
    assert np.array_equal(rows[:, 8].astype(int), f.keys["prev"] // anm.KEY.itemsize)
    assert out.read_bytes() == path.read_bytes()  # librw writes back the same bytes
