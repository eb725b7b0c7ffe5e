"""Exact animation keys (io_formats/exact_keys.py): residue, restore, encoding, size."""

from __future__ import annotations

import json
import zlib

import numpy as np
import pytest

from rigport.io_formats import exact_keys
from rigport.io_formats.codec import FormatError, read_file
from rigport.io_formats.scene import BoneTrack
from rigport.io_formats.urho3d import ani, animation_convert
from rigport.tests.legacy_records import as_version, encode_text


def _bits(a) -> np.ndarray:
    return np.ascontiguousarray(a, np.float64).view(np.uint64)


def _same(a: BoneTrack, b: BoneTrack) -> bool:
    for name in exact_keys.CHANNELS:
        x, y = getattr(a, name), getattr(b, name)
        if (x is None) != (y is None):
            return False
        if x is not None and not np.array_equal(_bits(x), _bits(y)):
            return False
    return a.bone == b.bone


def _blender_trip(track: BoneTrack, fps: float = 30.0) -> BoneTrack:
    """What an import and export do to a track: times through float32 frames,
    values rounded by a pose-space conversion, a zero's sign lost, one
    quaternion negated."""
    times = (track.times * fps).astype(np.float32).astype(np.float64) / fps
    out = BoneTrack(track.bone, times)
    if track.translation is not None:
        t = track.translation * (1 + 1e-7) + 0.0  # -0.0 + 0.0 is +0.0
        out.translation = t
    if track.rotation is not None:
        q = track.rotation * (1 - 3e-8)
        q[len(q) // 2] *= -1
        out.rotation = q
    if track.scale is not None:
        out.scale = track.scale.copy()
    return out


def _sample_track(bone: str = "Hip", k: int = 20) -> BoneTrack:
    rng = np.random.default_rng(7)
    t = rng.normal(size=(k, 3)).astype(np.float32).astype(np.float64)
    t[min(3, k - 1), 1] = -0.0
    q = rng.normal(size=(k, 4)).astype(np.float32)
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    times = (np.arange(k) / 30.0).astype(np.float32).astype(np.float64)
    return BoneTrack(bone, times, t, q.astype(np.float64), np.ones((k, 3)))


def test_unedited_track_comes_back_bit_for_bit():
    original = _sample_track()
    rebuilt = _blender_trip(original)
    kept = exact_keys.residue(original, rebuilt)
    assert set(kept.xor) == {"translation", "rotation"}  # scale agreed: nothing kept
    assert kept.rounded == ["times"]  # float32 frames: the file's float32 bits, rounded
    assert kept.xor["translation"].dtype == np.uint32  # the file's values are float32 values
    assert kept.xor["rotation"][10].min() >= 0x80000000  # the negated key: the sign bit
    assert kept.xor["translation"][3, 1] & 0x80000000  # -0.0 made +0.0
    back = exact_keys.restore([rebuilt], exact_keys.decode(exact_keys.encode([kept])))
    assert back.exact == 1 and back.edited == 0
    assert _same(back.tracks[0], original)


def test_float64_values_keep_float64_bits():
    original = _sample_track()
    original.translation = original.translation + 1e-12  # not float32 values
    rebuilt = _blender_trip(original)
    kept = exact_keys.residue(original, rebuilt)
    assert kept.xor["translation"].dtype == np.uint64
    back = exact_keys.restore([rebuilt], [kept])
    assert _same(back.tracks[0], original)


def _settle(channel: str, values: np.ndarray) -> np.ndarray:
    """A format storing times as 30 fps frames and everything else in 1/1000 steps."""
    return np.rint(np.asarray(values) * (30.0 if channel == "times" else 1000.0)).astype(int)


def test_channels_a_quantising_format_stores_alike_keep_no_residue():
    original = _sample_track()
    rebuilt = _blender_trip(original)
    kept = exact_keys.residue(original, rebuilt, _settle)
    assert set(kept.xor) == {"rotation"}  # the negated quaternion is stored otherwise
    assert kept.xor["rotation"][10].min() >= 0x80000000
    back = exact_keys.restore([rebuilt], exact_keys.decode(exact_keys.encode([kept])))
    assert back.exact == 1
    for name in exact_keys.CHANNELS:  # what the format writes is the file's
        x, y = getattr(original, name), getattr(back.tracks[0], name)
        assert np.array_equal(_settle(name, x), _settle(name, y)), name
    plain = exact_keys.encode([exact_keys.residue(original, rebuilt)])
    assert len(exact_keys.encode([kept])) < len(plain)


def test_carried_tracks_settle_to_float32_where_stored_alike():
    original = _sample_track()
    original.translation = original.translation + 1e-12  # not float32 values
    original.scale = np.full_like(original.scale, np.nan)  # not finite: kept as it is
    whole = exact_keys.settled_whole(original, _settle)
    t = whole.translation
    assert np.array_equal(t, t.astype(np.float32).astype(np.float64))
    assert np.array_equal(_settle("translation", t), _settle("translation", original.translation))
    assert whole.scale is original.scale
    assert exact_keys.settled_whole(original, None).translation is original.translation


def test_an_edited_channel_is_written_from_blender_the_others_exact():
    a, b = _sample_track("Hip"), _sample_track("Knee")
    ra, rb = _blender_trip(a), _blender_trip(b)
    kept = [exact_keys.residue(a, ra), exact_keys.residue(b, rb)]
    rb.translation = rb.translation.copy()
    rb.translation[5, 0] += 0.25  # one key edited
    back = exact_keys.restore([ra, rb], exact_keys.decode(exact_keys.encode(kept)))
    assert back.exact == 1 and back.edited == 1
    assert _same(back.tracks[0], a)
    knee = back.tracks[1]
    assert knee.translation is rb.translation  # Blender's
    for name in ("times", "rotation", "scale"):  # the file's
        assert np.array_equal(_bits(getattr(knee, name)), _bits(getattr(b, name))), name


def test_moved_keys_write_the_whole_track_from_blender():
    a = _sample_track()
    r = _blender_trip(a)
    kept = [exact_keys.residue(a, r)]
    r.times = r.times.copy()
    r.times[4] += 0.01
    back = exact_keys.restore([r], kept)
    assert back.edited == 1 and back.tracks[0] is r


def test_missing_bones_are_carried_whole_in_file_order():
    a, gone, b = _sample_track("Hip"), _sample_track("Hand_Target", 5), _sample_track("Knee")
    gone.scale = None
    ra, rb = _blender_trip(a), _blender_trip(b)
    kept = [
        exact_keys.residue(a, ra),
        exact_keys.KeptTrack(gone.bone, whole=gone),
        exact_keys.residue(b, rb),
    ]
    new = _sample_track("Tail", 3)  # keyed in Blender only: after the file's tracks
    back = exact_keys.restore([rb, new, ra], exact_keys.decode(exact_keys.encode(kept)))
    assert [t.bone for t in back.tracks] == ["Hip", "Hand_Target", "Knee", "Tail"]
    assert back.carried == ["Hand_Target"]
    assert _same(back.tracks[1], gone) and back.tracks[1].scale is None
    assert _same(back.tracks[0], a) and _same(back.tracks[2], b)


def test_a_track_blender_cannot_hold_key_for_key_is_kept_whole():
    original = _sample_track()
    rebuilt = _blender_trip(original)
    rebuilt.times, rebuilt.translation = rebuilt.times[1:], rebuilt.translation[1:]
    rebuilt.rotation, rebuilt.scale = rebuilt.rotation[1:], rebuilt.scale[1:]
    kept = exact_keys.residue(original, rebuilt)
    assert kept.whole is original and set(kept.digests) == {"track"}
    back = exact_keys.restore([rebuilt], exact_keys.decode(exact_keys.encode([kept])))
    assert _same(back.tracks[0], original)


def test_removed_keys_drop_the_track():
    a = _sample_track()
    kept = [exact_keys.residue(a, _blender_trip(a))]
    assert exact_keys.restore([], kept).tracks == []


@pytest.mark.parametrize(
    "text",
    [
        "",
        "not base64!",
        "eJwDAAAAAAE=",
        encode_text([as_version(exact_keys.KeptTrack("a"), 3)])[:-4] + "AAAA",
        b"",
        b"\x00\x01",
        exact_keys.encode([])[:-1],
        exact_keys.encode([exact_keys.KeptTrack("a", given=_sample_track())]),  # no digests
        exact_keys.encode([exact_keys.KeptTrack("a", whole=_sample_track())]) + b"\x00",
        exact_keys.encode([exact_keys.KeptTrack("a", whole=_sample_track())])[:-3],
    ],
)
def test_damaged_records_are_refused_with_a_sentence(text):
    with pytest.raises(FormatError, match="kept keys of Walk are damaged"):
        exact_keys.decode(text, "the kept keys of Walk")


def test_raw_records_are_version_4_text_records_older():
    """Builds before version 4 wrote text; a raw record naming an older version,
    or a text one naming version 4, is damaged; only version 4 is written."""
    head = zlib.compress(json.dumps([3, []]).encode())
    with pytest.raises(FormatError, match="version 3"):
        exact_keys.decode(len(head).to_bytes(4, "little") + head)
    assert exact_keys.decode(exact_keys.encode([])) == []
    with pytest.raises(ValueError, match="only version 4"):
        exact_keys.encode([as_version(exact_keys.KeptTrack("a"), 3)])


def test_corpus_walk_residue_restores(corpus_dir):
    """Jack_Walk: every value rounded by the trip; the residues give the file back."""
    anim = animation_convert.import_animation(
        ani.read(read_file(str(corpus_dir / "urho3d" / "Jack_Walk.ani"), "animation"))
    )
    rebuilt = [_blender_trip(t) for t in anim.tracks]
    kept = [exact_keys.residue(t, r) for t, r in zip(anim.tracks, rebuilt, strict=True)]
    back = exact_keys.restore(rebuilt, exact_keys.decode(exact_keys.encode(kept)))
    assert back.exact == len(anim.tracks)
    assert all(_same(a, b) for a, b in zip(back.tracks, anim.tracks, strict=True))


def test_corpus_walk_given_record_size(corpus_dir):
    """Version 4 keeps the file's float32 arrays: the record is about the file's
    44 bytes per key (times, translation, rotation, scale), no more."""
    anim = animation_convert.import_animation(
        ani.read(read_file(str(corpus_dir / "urho3d" / "Jack_Walk.ani"), "animation"))
    )
    kept = [
        exact_keys.KeptTrack(t.bone, _given_digests(t), given=exact_keys.given_track(t))
        for t in anim.tracks
    ]
    assert all(k.given.times.dtype == np.float32 for k in kept)
    data = exact_keys.encode(kept)
    keys = sum(len(t.times) for t in anim.tracks)
    assert isinstance(data, bytes) and len(data) / keys < 48
    arrays = sum(a.nbytes for k in kept for a in vars(k.given).values() if hasattr(a, "nbytes"))
    repeated = sum(  # a time list the track before has too is kept once
        b.given.times.nbytes
        for a, b in zip(kept, kept[1:], strict=False)
        if a.given.times.tobytes() == b.given.times.tobytes()
    )
    assert repeated and len(data) < arrays - repeated + 64 * len(kept)
    decoded = exact_keys.decode(data)
    back = exact_keys.restore([], decoded, {k.bone: frozenset() for k in decoded})
    assert back.exact == len(anim.tracks)
    assert all(_same(a, b) for a, b in zip(back.tracks, anim.tracks, strict=True))


def _given_digests(track: BoneTrack) -> dict[str, bytes]:
    names = {"translation": "location", "rotation": "rotation_quaternion", "scale": "scale"}
    out = {"basis": b"b" * 8, "times": b"t" * 8}
    out.update({names[n]: b"c" * 8 for n in names if getattr(track, n) is not None})
    return out


def test_given_tracks_restore_by_what_blender_still_keys():
    """A given track left unconverted is the file's; converted with a channel
    edited: the file's times and unedited channels, Blender's edited one; with
    its frames or rest changed (None): all Blender's; keys removed: gone."""
    a, b, c, d = (_sample_track(n) for n in ("A", "B", "C", "D"))
    kept = [exact_keys.KeptTrack(t.bone, _given_digests(t), given=t) for t in (a, b, c, d)]
    rb, rc = _blender_trip(b), _blender_trip(c)
    new = _sample_track("E")
    given = {"A": frozenset(exact_keys.CHANNELS[1:]), "B": frozenset({"rotation"}), "C": None}
    back = exact_keys.restore([rc, new, rb], kept, given)
    assert [t.bone for t in back.tracks] == ["A", "B", "C", "E"]
    assert back.exact == 1 and back.edited == 2
    assert _same(back.tracks[0], a)
    assert back.tracks[1].times.tobytes() == b.times.tobytes()
    assert back.tracks[1].rotation.tobytes() == b.rotation.tobytes()
    assert back.tracks[1].translation is rb.translation and back.tracks[1].scale is rb.scale
    assert back.tracks[2] is rc


def _v1_record(kept: exact_keys.KeptTrack, rebuilt: BoneTrack) -> str:
    """``kept`` as a version 1 record (BLAKE2b digests), as .blend files saved
    before version 2 hold it."""
    old = {
        n: exact_keys._digest(a, version=1)
        for n, a in zip(
            exact_keys.CHANNELS,
            (rebuilt.times, rebuilt.translation, rebuilt.rotation, rebuilt.scale),
            strict=True,
        )
    }
    v1 = _older(kept, rebuilt, 1)
    v1.digests = old
    return encode_text([v1])


def _older(kept: exact_keys.KeptTrack, rebuilt: BoneTrack, version: int) -> exact_keys.KeptTrack:
    """``kept`` as builds before version 3 kept it: an all-zero XOR for each
    channel version 3 names rounded."""
    xor = dict(kept.xor)
    for name in kept.rounded:
        xor[name] = np.zeros(np.shape(getattr(rebuilt, name)), np.uint32)
    return exact_keys.KeptTrack(kept.bone, dict(kept.digests), xor, version=version)


def test_version_1_records_still_restore_and_see_edits():
    original = _sample_track()
    rebuilt = _blender_trip(original)
    kept = exact_keys.residue(original, rebuilt)
    assert kept.version == exact_keys.VERSION == 4
    text = _v1_record(kept, rebuilt)
    (decoded,) = exact_keys.decode(text)
    assert decoded.version == 1 and decoded.digests != kept.digests
    back = exact_keys.restore([rebuilt], [decoded])
    assert back.exact == 1 and _same(back.tracks[0], original)
    moved = BoneTrack(
        rebuilt.bone, rebuilt.times, rebuilt.translation + 1.0, rebuilt.rotation, rebuilt.scale
    )
    back = exact_keys.restore([moved], exact_keys.decode(text))
    assert back.edited == 1 and back.tracks[0].translation is moved.translation
    mixed = [kept, exact_keys.decode(text)[0]]
    with pytest.raises(ValueError, match="versions"):
        exact_keys.encode(mixed)


def _rounded_pair() -> tuple[BoneTrack, BoneTrack]:
    """A file track of float32 values and its rebuilt track whose times (and
    scales) are other float64 values of the same float32 bits."""
    original = _sample_track(k=40)
    rebuilt = _blender_trip(original)
    rebuilt.times = original.times * (1 + 2e-12)
    rebuilt.scale = original.scale * (1 - 2e-12)
    assert not np.array_equal(_bits(rebuilt.times), _bits(original.times))
    return original, rebuilt


def test_channels_blender_only_rounded_keep_their_name_not_an_xor():
    original, rebuilt = _rounded_pair()
    kept = exact_keys.residue(original, rebuilt)
    assert kept.rounded == ["times", "scale"]
    assert set(kept.xor) == {"translation", "rotation"}
    (decoded,) = exact_keys.decode(encode_text([as_version(kept, 3)]))
    assert decoded.rounded == kept.rounded and decoded.version == 3
    back = exact_keys.restore([rebuilt], [decoded])
    assert back.exact == 1 and _same(back.tracks[0], original)
    moved = BoneTrack(rebuilt.bone, rebuilt.times, rebuilt.translation, rebuilt.rotation, None)
    moved.scale = rebuilt.scale * 2.0  # an edited rounded channel is Blender's
    back = exact_keys.restore([moved], [decoded])
    assert back.edited == 1 and back.tracks[0].scale is moved.scale


def test_version_2_records_with_zero_xors_still_restore():
    """Records before version 3 stored an all-zero XOR where version 3 names
    the channel rounded; they read as before, and may not name rounded channels."""
    original, rebuilt = _rounded_pair()
    kept = exact_keys.residue(original, rebuilt)
    v2 = _older(kept, rebuilt, 2)
    text = encode_text([v2])
    (decoded,) = exact_keys.decode(text)
    assert decoded.version == 2 and decoded.rounded == [] and set(decoded.xor) == set(v2.xor)
    back = exact_keys.restore([rebuilt], [decoded])
    assert back.exact == 1 and _same(back.tracks[0], original)
    v2.rounded = ["times"]
    with pytest.raises(FormatError, match="rounded"):
        exact_keys.decode(encode_text([v2]))
