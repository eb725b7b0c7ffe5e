"""io_formats/posing.py: the bones of one action converted together (one
(B, K, .) product per key count) give the same bits as one bone at a time with
the closed form of uniform scales; non-uniform bones take the matrix path."""

from __future__ import annotations

import numpy as np
import pytest

from rigport.io_formats import posing
from rigport.io_formats.transforms import quat_to_matrix


def _unit(q: np.ndarray) -> np.ndarray:
    return q / np.linalg.norm(q, axis=-1, keepdims=True)


def _one_to_basis(rest_t, rest_q, ps, os_, t, q, s):
    """The closed form for one bone, as RigPort computed it before batching."""
    sp, so = float(ps[0]), float(os_[0])
    loc = (t * sp - rest_t) @ quat_to_matrix(rest_q).T.T
    quat = posing.quat_multiply(posing.quat_conjugate(rest_q), q)
    return loc, quat, s * (sp / so)


def _one_to_local(rest_t, rest_q, ps, os_, loc, quat, scale):
    sp, so = float(ps[0]), float(os_[0])
    t = (rest_t + loc @ quat_to_matrix(rest_q).T) / sp
    return t, posing.quat_multiply(rest_q, quat), scale * (so / sp)


def _bones(counts: list[int], seed: int = 7):
    rng = np.random.default_rng(seed)
    rests, keys = [], []
    for i, k in enumerate(counts):
        ps = rng.uniform(0.5, 2.0, 3) if i % 4 == 3 else np.full(3, rng.uniform(0.5, 2.0))
        rests.append((rng.normal(size=3), _unit(rng.normal(size=4)), ps, np.full(3, 1.25)))
        t = rng.normal(size=(k, 3)).astype(np.float32).astype(np.float64)
        keys.append((t, _unit(rng.normal(size=(k, 4))), rng.uniform(0.5, 2.0, (k, 3))))
    return rests, keys


def _same_bits(a: tuple, b: tuple) -> bool:
    return all(x.shape == y.shape and x.tobytes() == y.tobytes() for x, y in zip(a, b, strict=True))


@pytest.mark.parametrize("batch_keys", [posing.BATCH_KEYS, 450, 1])
def test_batched_bones_give_the_bits_of_one_bone_at_a_time(monkeypatch, batch_keys):
    monkeypatch.setattr(posing, "BATCH_KEYS", batch_keys)  # all in one, in twos, one by one
    counts = [200] * 9 + [1, 0, 13, 13, 200]
    rests, keys = _bones(counts)
    bases = posing.locals_to_bases(rests, keys)
    back = posing.bases_to_locals(rests, bases)
    assert len(bases) == len(back) == len(counts)
    uniform = 0
    for rest, key, basis, local in zip(rests, keys, bases, back, strict=True):
        assert [len(c) for c in basis] == [len(c) for c in key]
        if not posing.uniform_scale(rest[2]):  # the matrix path, bone by bone
            assert _same_bits(basis, posing._to_basis_general(*rest, *key))
            continue
        uniform += 1
        assert _same_bits(basis, _one_to_basis(*rest, *key))
        assert _same_bits(local, _one_to_local(*rest, *basis))
        for x, y in zip(local, key, strict=True):  # and it is the inverse
            assert np.allclose(x, y, rtol=0, atol=1e-9)
    assert 0 < uniform < len(counts)  # both paths ran


def test_one_bone_functions_are_the_batch_of_one():
    rests, keys = _bones([50, 50, 50, 50])
    for rest, key in zip(rests, keys, strict=True):
        (many,) = posing.locals_to_bases([rest], [key])
        assert _same_bits(posing.local_to_basis(*rest, *key), many)
        (many,) = posing.bases_to_locals([rest], [key])
        assert _same_bits(posing.basis_to_local(*rest, *key), many)


def test_uniform_scale_is_numpys_allclose():
    rng = np.random.default_rng(3)
    first = rng.uniform(-3.0, 3.0, 200)
    cases = [np.array([f, f * (1 + d), f * (1 - d)]) for f in first for d in (0, 5e-7, 1e-6, 2e-6)]
    cases += [
        np.array([1.0, np.nan, 1.0]),
        np.array([np.inf, np.inf, np.inf]),
        np.array([1e308, 1e308, 1e308]),  # a sum that overflows
        np.array([-0.0, 0.0, 0.0]),
        np.array([0.0, 1e-300, 0.0]),
    ]
    for s in cases:
        assert posing.uniform_scale(s) == bool(np.allclose(s, s[0], rtol=1e-6, atol=0)), s
