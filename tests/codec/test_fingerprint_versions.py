"""The fingerprint's two hashes: version 1 (BLAKE2b, what older builds stored in
.blend files) must stay bit for bit what it was, version 2 (SHA-256, new
fingerprints) says its version, and each digest tells which hash made it."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from rigport.io_formats import fingerprint
from rigport.io_formats.unigine import mesh_kept
from rigport.samples import unigine as samples
from rigport.tests.legacy_records import blake2b_digest


def _arrays() -> list[np.ndarray]:
    rng = np.random.default_rng(7)
    return [
        np.array([5, 12, 4], np.int64),
        rng.integers(0, 5, 12).astype(np.int32),
        rng.standard_normal((5, 3)).astype(np.float32),
    ]


def test_version_1_is_the_old_blake2b_digest():
    arrays = _arrays()
    old = blake2b_digest(*arrays, names=("Basis", "smile"))
    assert fingerprint.digest(*arrays, names=["Basis", "smile"], version=1) == old
    h = fingerprint.Digest(["Basis", "smile"], 1)
    for a in arrays:
        h.add(a)
    assert h.hexdigest() == old
    assert len(old) == 32 and fingerprint.version_of(old) == 1


def test_version_2_is_sha256_with_its_marker():
    arrays = _arrays()
    new = fingerprint.digest(*arrays)
    assert fingerprint.VERSION == 2 and fingerprint.version_of(new) == 2
    assert new.startswith("v2:") and len(new) == 3 + 32
    h = hashlib.sha256()
    for a in arrays:
        h.update(str((a.dtype.str, a.shape)).encode("ascii"))
        h.update(a.tobytes())
    assert new == "v2:" + h.hexdigest()[:32]
    assert new[3:] != blake2b_digest(*arrays)
    # one changed value changes both versions' digests
    arrays[2][1, 1] += np.float32(1e-3)
    assert fingerprint.digest(*arrays) != new
    assert fingerprint.version_of("") == 1  # "nothing hashed", as a format stores it
    with pytest.raises(ValueError):
        fingerprint.digest(*arrays, version=3)


def test_skin_digest_by_version():
    joints = np.array([[0, 2], [1, 0]], np.int32)
    weights = np.array([[0.75, 0.25], [1.0, 0.0]], np.float32)
    names = ["a", "b", "c"]
    old = fingerprint.skin_digest(joints, weights, names, version=1)
    new = fingerprint.skin_digest(joints, weights, names)
    assert fingerprint.version_of(old) == 1 and fingerprint.version_of(new) == 2
    assert old[-32:] != new[-32:]
    reordered = fingerprint.skin_digest(np.array([[2, 0], [1, 2]]), weights, ["c", "b", "a"], 1)
    assert reordered == old


def test_unigine_bounds_kept_for_an_old_record():
    """A kept record an older build stored (BLAKE2b position digests) still gives
    the file's bounds for unmoved positions, and none for moved ones."""
    m = samples.inexact_mesh()
    kept = mesh_kept.parse(mesh_kept.record(m))
    base = m.surfaces[0].targets[0].positions
    assert fingerprint.version_of(kept.surface_positions[0]) == 2
    kept.surface_positions = [
        mesh_kept.positions_digest(s.targets[0].positions, 1) for s in m.surfaces
    ]
    assert kept.surface_positions[0] == blake2b_digest(np.asarray(base, "<f4").reshape(-1, 3))
    assert np.array_equal(kept.bounds_for(0, base), m.surfaces[0].bounds)
    moved = np.array(base, np.float32)
    moved[0] += 1
    assert kept.bounds_for(0, moved) is None
