"""Damaged, truncated, lying and unsupported Unigine files: a FormatError with an offset.

Never another exception, never a huge allocation, and whatever still parses is
written back byte for byte.
"""

from __future__ import annotations

import copy
import functools
import tracemalloc

import numpy as np
import pytest

from rigport.io_formats.codec import FormatError, Writer
from rigport.io_formats.unigine import anim, common, mesh
from rigport.samples import unigine as samples


@functools.cache
def small_files() -> dict[str, bytes]:
    m = samples.skinned_mesh(n_bones=4, rings=3, segments=4, n_frames=3)
    return {
        "skinned.mesh": mesh.write(m),
        "static.mesh": mesh.write(samples.static_mesh(rings=3, segments=3)),
        "flag127.anim": anim.write(samples.anim_file(m, 127, n_frames=3)),
        "flag15.anim": anim.write(samples.anim_file(m, 15, n_frames=3)),
    }


def _codec(name: str):
    return mesh if name.endswith(".mesh") else anim


def _fails(codec, data: bytes, match: str | None = None) -> FormatError:
    with pytest.raises(FormatError, match=match) as info:
        codec.read(data)
    assert info.value.offset is not None, str(info.value)
    return info.value


@pytest.mark.parametrize("name", sorted(small_files()))
def test_every_truncation_is_a_format_error(name):
    data = small_files()[name]
    codec = _codec(name)
    for end in range(len(data)):
        err = _fails(codec, data[:end])
        assert 0 <= err.offset <= end


@pytest.mark.parametrize("name", sorted(small_files()))
def test_trailing_bytes_are_refused(name):
    _fails(_codec(name), small_files()[name] + b"\0", "after the closing")


@pytest.mark.parametrize("name", sorted(small_files()))
def test_random_damage(name):
    data = small_files()[name]
    codec = _codec(name)
    rng = np.random.default_rng(7)
    parsed = 0
    for _ in range(600):
        damaged = bytearray(data)
        for at in rng.integers(0, len(data), rng.integers(1, 4)):
            damaged[at] = int(rng.integers(0, 256))
        damaged = bytes(damaged)
        try:
            result = codec.read(damaged)
        except FormatError as err:
            assert err.offset is not None
            continue
        parsed += 1
        assert codec.write(result) == damaged
    assert parsed  # damage to float data still parses, and is kept exactly


@pytest.mark.parametrize(
    "magic, codec, match",
    [
        (b"ms10", mesh, "unsupported version 'ms10'"),
        (b"ms12", mesh, "unsupported version 'ms12'"),
        (b"an11", anim, "unsupported version 'an11'"),
        (b"an09", anim, "unsupported version 'an09'"),
        (b"UMDL", mesh, "not a Unigine mesh"),
        (b"ms11", anim, "not a Unigine animation"),
    ],
)
def test_unsupported_versions(magic, codec, match):
    data = small_files()["skinned.mesh" if codec is mesh else "flag127.anim"]
    err = _fails(codec, magic + data[4:], match)
    assert err.offset == 0


def test_empty_and_tiny_files():
    for codec in (mesh, anim):
        for data in (b"", b"m", b"ms1"):
            _fails(codec, data)


def _lying_count(data: bytes, at: int, value: int) -> bytes:
    """Replace the one-byte compact count at ``at`` by ``value``."""
    w = Writer()
    w.compact_int(value)
    return data[:at] + w.getvalue() + data[at + 1 :]


@pytest.mark.parametrize("name", sorted(small_files()))
def test_lying_counts_allocate_nothing_big(name):
    data = small_files()[name]
    codec = _codec(name)
    # the bone count sits right after magic + 10 floats
    for value in (2**20, 2**40, 2**60, -5):
        tracemalloc.start()
        try:
            _fails(codec, _lying_count(data, 44, value))
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert peak < 50 * len(data) + 1_000_000


def _skinned() -> mesh.Mesh:
    return mesh.read(small_files()["skinned.mesh"])


def test_bone_parent_out_of_range():
    m = _skinned()
    m.bones[1].parent = len(m.bones)
    _fails(mesh, mesh.write(m), "has parent")


def test_coordinate_index_out_of_range():
    m = _skinned()
    m.surfaces[1].coords = m.surfaces[1].coords.copy()
    m.surfaces[1].coords[4] = m.surfaces[1].n_coords
    err = _fails(mesh, mesh.write(m), "coordinate index 4 is")
    data = mesh.write(m)
    assert data[err.offset] == m.surfaces[1].n_coords


def test_triangle_index_out_of_range():
    m = _skinned()
    m.surfaces[0].tris = m.surfaces[0].tris.copy()
    m.surfaces[0].tris[-1] = 255
    _fails(mesh, mesh.write(m), "triangle index")


def test_weight_bone_out_of_range():
    m = _skinned()
    m.surfaces[0].weights.bones = m.surfaces[0].weights.bones.copy()
    m.surfaces[0].weights.bones[3] = len(m.bones)
    _fails(mesh, mesh.write(m), "weight bone index")


def test_animation_bone_out_of_range():
    m = _skinned()
    m.animations[0].bones = m.animations[0].bones.copy()
    m.animations[0].bones[0] = -1
    _fails(mesh, mesh.write(m), "bone index -1")
    a = anim.read(small_files()["flag127.anim"])
    a.animations[1].bones = a.animations[1].bones + len(a.bones)
    _fails(anim, anim.write(a), "out of range")


def test_inconsistent_surface_counts():
    m = _skinned()
    bad = copy.deepcopy(m)
    bad.surfaces[0].targets[1].positions = bad.surfaces[0].targets[1].positions[:-1]
    _fails(mesh, mesh.write(bad), "morph target 1 has")
    bad = copy.deepcopy(m)
    bad.surfaces[0].uv1 = bad.surfaces[0].uv1[:-1]
    _fails(mesh, mesh.write(bad), "UV set 2")
    bad = copy.deepcopy(m)
    bad.surfaces[0].coords = bad.surfaces[0].coords[:-3]
    _fails(mesh, mesh.write(bad), "must be equal")
    bad = copy.deepcopy(m)
    w = bad.surfaces[0].weights
    cut = len(w.bones) - int(w.counts[-1])
    w.bones, w.values, w.counts = w.bones[:cut], w.values[:cut], w.counts[:-1]
    _fails(mesh, mesh.write(bad), "weights for")


def test_string_without_nul_and_long_compact_ints():
    data = small_files()["skinned.mesh"]
    bone0 = 46  # first bone name bytes: after the bone count and the name length
    n = data[45]
    damaged = bytearray(data)
    damaged[bone0 + n - 1] = ord("x")
    _fails(mesh, bytes(damaged), "NUL")
    # a count in a longer encoding than needed would not come back the same
    longer = data[:44] + bytes([data[44] | 0x80, 0x00]) + data[45:]
    _fails(mesh, longer, "shortest encoding")
    negative_zero = data[:44] + b"\x40" + data[45:]
    _fails(mesh, negative_zero, "shortest encoding")


def test_frame_record_past_the_end():
    bones = [common.Bone("root", -1)]
    bind = np.zeros((1, 10), np.float32)
    z3 = np.zeros((1, 1, 3), np.uint16)
    frames = common.Frames(np.full((1, 1), 0x7F, np.uint8), z3, np.zeros((1, 1, 4), np.int16), z3)
    box = np.zeros(3, np.float32)
    clip = anim.AnimClip("a", np.zeros(1, np.int16), box, box, box, box, 0x7F, frames)
    data = anim.write(anim.AnimFile(np.zeros(10, np.float32), bones, bind, [clip]))
    anim.read(data)
    err = _fails(anim, data[:-14] + data[-4:], "frame record 0 of 1 runs past the end")
    assert err.offset == len(data) - 4 - 21
    assert common.index_dtype(255) == "<u1" and common.index_dtype(256) == "<u2"


def test_more_than_four_influences():
    m = _skinned()
    n = len(m.surfaces[0].weights)
    counts = np.ones(n, np.uint8)
    counts[2] = 5
    total = int(counts.sum())
    m.surfaces[0].weights = mesh.Weights(
        counts, np.zeros(total, np.int16), np.full(total, 65535, np.uint16)
    )
    data = mesh.write(m)
    err = _fails(mesh, data, "weight 2 has 5 bones")
    assert data[err.offset] == 5


def test_bone_free_animation_cannot_claim_endless_frames():
    m = _skinned()
    m.animations[0].bones = np.zeros(0, np.int16)
    m.animations[0].frames = common.Frames(
        np.zeros((2**40, 0), np.uint8),
        np.zeros((2**40, 0, 3), np.float32),
        np.zeros((2**40, 0, 4), np.int16),
        np.zeros((2**40, 0, 3), np.float32),
    )
    tracemalloc.start()
    try:
        _fails(mesh, mesh.write(m), "frame record count")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 10_000_000
