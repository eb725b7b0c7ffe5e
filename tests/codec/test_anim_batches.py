"""The batched helpers of an animation import give exactly what their one-at-a-time
forms give: digests of rests and ``co`` blocks, the file's arrays kept
(``given_tracks``), the guard, Urho3D's axes and its
tracks converted per key count (``import_animation``)."""

from __future__ import annotations

import numpy as np
import pytest

from rigport.io_formats import exact_keys
from rigport.io_formats.scene import BoneTrack
from rigport.io_formats.urho3d import ani, axes
from rigport.io_formats.urho3d.animation_convert import import_animation
from rigport.operators.blender import guard
from rigport.samples import urho3d as samples

RNG = np.random.default_rng(28)


def _bits(a: np.ndarray) -> bytes:
    return np.ascontiguousarray(a).tobytes()


def test_basis_digests_are_each_bones_basis_digest():
    rests = [
        (RNG.normal(size=3), RNG.normal(size=4), RNG.uniform(0.5, 2, 3), np.full(3, 1.25))
        for _ in range(9)
    ]
    rests[4] = (np.zeros(3), np.array([1.0, -0.0, 0.0, 0.0]), np.ones(3), np.ones(3))
    for fps in (24.0, 30.0, 1 / 3):
        assert exact_keys.basis_digests(rests, fps) == [
            exact_keys.basis_digest(r, fps) for r in rests
        ]
    odd = [*rests[:2], (np.zeros((1, 3)), np.ones(4), np.ones(3), np.ones(2))]  # other sizes
    assert exact_keys.basis_digests(odd, 30.0) == [exact_keys.basis_digest(r, 30.0) for r in odd]
    assert exact_keys.basis_digests([], 30.0) == []


@pytest.mark.parametrize("width,k", [(3, 200), (4, 1), (4, 0)])
def test_block_digests_are_each_channels_channel_digest(width, k):
    co = RNG.normal(size=(5, width, k, 2)).astype(np.float32)
    rows = [0, 2, 4]
    want = [exact_keys.channel_digest(list(enumerate(co[r]))) for r in rows]
    assert exact_keys.block_digests(co, rows) == want
    assert exact_keys.block_digests(co, rows) == want  # the header hash is reused, not spent


def _tracks() -> list[BoneTrack]:
    times = np.linspace(0.0, 1.0, 6, dtype=np.float32).astype(np.float64)
    f32 = RNG.normal(size=(6, 3)).astype(np.float32).astype(np.float64)
    return [
        BoneTrack("a", times, f32, RNG.normal(size=(6, 4)), None),  # rotation not float32
        BoneTrack("b", times.copy(), f32.copy(), np.ones((6, 4)), np.ones((6, 3))),
        BoneTrack("c", times[:4], None, np.ones((4, 4)), None),  # another key count
        BoneTrack("d", times + 0.5, np.array(f32), np.ones((6, 4), np.float32), None),
        BoneTrack("e", times.copy(), np.full((6, 3), -0.0), np.full((6, 4), np.nan), None),
        BoneTrack("f", times.astype(np.float32), [[1.0, 2.0, 3.0]] * 6, np.ones((6, 4)), None),
    ]


def test_given_tracks_keep_what_given_track_keeps_and_share_equal_times():
    tracks = _tracks()
    got = exact_keys.given_tracks(tracks)
    for one, many in zip((exact_keys.given_track(t) for t in tracks), got, strict=True):
        assert one.bone == many.bone
        for name in exact_keys.CHANNELS:
            a, b = getattr(one, name), getattr(many, name)
            assert (a is None) == (b is None), (one.bone, name)
            if a is not None:
                assert a.dtype == b.dtype and a.shape == b.shape, (one.bone, name)
                assert _bits(a) == _bits(b), (one.bone, name)
    assert got[1].times is got[0].times  # the same bits, one array
    assert got[3].times is not got[1].times  # other times
    assert exact_keys.given_tracks([]) == []


def test_guard_tracks_are_guard_track_each():
    tracks = [*_tracks(), BoneTrack("g" * 70, np.array([0.0, np.inf]), None, None, None)]
    for one, (out, lost) in zip(tracks, guard.guard_tracks(tracks), strict=True):
        want, want_lost = guard.guard_track(one)
        assert lost == want_lost and out.bone == want.bone, one.bone
        for name in exact_keys.CHANNELS:
            a, b = getattr(want, name), getattr(out, name)
            assert (a is None) == (b is None) and (a is None or _bits(a) == _bits(b))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_urho3d_quats_swap_and_negate_bit_for_bit(dtype):
    q = RNG.normal(size=(3, 7, 4)).astype(dtype)
    q.reshape(-1)[:6] = [np.nan, -0.0, 0.0, np.inf, -np.inf, -np.nan]
    want = q[..., [0, 1, 3, 2]].copy()  # the definition: swap y and z, negate x y z
    want[..., 1:] *= -1
    for got_q, want_q in ((axes.quats(q, True), want), (axes.quats(q[0, 0], True), want[0, 0])):
        assert got_q.dtype == want_q.dtype and got_q.shape == want_q.shape
        assert got_q.flags.c_contiguous and _bits(got_q) == _bits(want_q)
    assert axes.quats(q, False) is q


def test_urho3d_tracks_convert_per_key_count_as_one_at_a_time():
    """Mixed masks and key counts, an instant step and a track whose keys are not
    contiguous (the row-by-row path): each track as one track alone converts."""
    model = samples.skinned_model(6, grid=(8, 4), morphs=0, uv_sets=1, color=False)
    anim = samples.walk_animation(model, 9, 1.0, scale_every=2)
    t1 = anim.tracks[1].keys.copy()
    t1["time"][4] = t1["time"][3]  # an instant step
    anim.tracks[1] = ani.Track(anim.tracks[1].name, anim.tracks[1].mask, t1)
    anim.tracks[3] = ani.Track(anim.tracks[3].name, anim.tracks[3].mask, anim.tracks[3].keys[::2])
    wide = np.zeros((9, 2), anim.tracks[4].keys.dtype)
    wide[:, 0] = anim.tracks[4].keys
    anim.tracks[4] = ani.Track(anim.tracks[4].name, anim.tracks[4].mask, wide[:, 0])
    assert not anim.tracks[4].keys.flags.c_contiguous
    for convert in (True, False):
        whole = import_animation(anim, convert)
        for i, track in enumerate(anim.tracks):
            alone = ani.Animation(anim.name, anim.length, [track])
            (one,) = import_animation(alone, convert).tracks
            got = whole.tracks[i]
            assert got.bone == one.bone
            for name in exact_keys.CHANNELS:
                a, b = getattr(one, name), getattr(got, name)
                assert (a is None) == (b is None), (i, name)
                if a is not None:
                    assert a.dtype == b.dtype == np.float64 and _bits(a) == _bits(b), (i, name)
        assert whole.extras.get("_urho_steps", {}).keys() == {"1"}
