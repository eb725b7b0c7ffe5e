"""Exact animation keys through Blender: what the F-curves cannot give back, kept compactly.

An import converts a file's engine-local tracks (:class:`~.scene.BoneTrack`) into
pose-space F-curves of float32 keys; an export converts them back. That trip
rounds values and times (by up to a few float32 ulps), turns +0.0 into -0.0
and may negate whole quaternions. Right after the import, the Blender side
rebuilds the tracks exactly as the export will (:func:`residue` compares them
with the file's) and keeps per track:

* a digest of each rebuilt array (times, translation, rotation, scale): at
  export, a channel whose rebuilt values (and times) still have theirs is
  unedited (same keys, rest, frame rate) and comes back as the file had it; an
  edited one is written from Blender, and
* per channel that differs, the XOR of the file's bits with the rebuilt bits
  (float32 bits when the file's values are float32 values, else float64 bits):
  zero where they agree, a few low bits where Blender rounded, the sign bit for
  -0.0 or a negated quaternion. The zeros cost almost nothing once compressed,
  and no index list is needed. A channel of float32 values whose rebuilt values
  round to exactly the file's float32 bits (often the times) keeps no XOR, only
  its name (``rounded``, from version 3).

Tracks Blender cannot hold element for element (keys the import guard left
out, so the shapes differ) and tracks of bones the armature lacks are kept
whole. :func:`restore` gives back the file's tracks, in the file's order, for
every unedited track; an edited track is the rebuilt one. :func:`encode` /
:func:`decode` make the record one short ASCII string (zlib, base64) for a
hidden custom property.

Version 4 ("given keys") needs no rebuild at import for a track ``build_action``
gives Blender as shared ascending frames: it keeps the file's own arrays
(``given``) and digests of what Blender was given (:func:`basis_digest` of the
bone's rest and the frame rate, :func:`times_digest` of the float32 frames,
:func:`channel_digest` of each channel's float32 ``co`` block). An export reads
the same float32 bits back while the keys are unedited, so it hashes what it
reads and gives back the file's arrays without converting the bone at all; a
channel whose digest differs is Blender's. Other tracks keep the residue above.
Version 4 records are raw bytes (a ``bytes`` ID property keeps NUL bytes and
survives a save on Blender 4.2 to 5.2): no planes, zlib or base64.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import json
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from .codec import FormatError
from .scene import BoneTrack

#: The arrays of a track, in the order they are hashed and stored.
CHANNELS = ("times", "translation", "rotation", "scale")

#: Stored record version (the first field of the encoded text). Version 1's
#: digests are BLAKE2b; version 2's are SHA-256 (cut to 8 bytes), which on CPUs
#: with SHA instructions hashes the rebuilt keys about four times as fast (at
#: 100 bones x 2,000 keys the import hashes 14 MB). Version 3 records are made
#: with the rest worked out without LAPACK (``build.rest_relative``), whose last
#: bits differ from the LAPACK one of versions 1 and 2: the export rebuilds an
#: older record's tracks with the older rest (:data:`LEGACY_REST`); they name
#: the ``rounded`` channels instead of storing their all-zero XOR. Records of
#: every readable version, kept in saved .blend files, still restore.
#: Version 4 keeps the file's arrays of the tracks given to Blender as shared
#: ascending frames (``KeptTrack.given``) and the record is raw bytes.
VERSION = 4
READABLE = (1, 2, 3, 4)

#: The Blender channels of a given track, in the order their digests are named.
GIVEN_CHANNELS = ("location", "rotation_quaternion", "scale")

#: The :data:`CHANNELS` array each of :data:`GIVEN_CHANNELS` converts to.
GIVEN_ARRAY = dict(zip(GIVEN_CHANNELS, CHANNELS[1:], strict=True))

#: Record versions whose digests hash tracks rebuilt with the LAPACK rest.
LEGACY_REST = (1, 2)


@dataclass
class KeptTrack:
    """What one file track needs to come back exactly.

    ``digests`` empty: a whole track always written back (``whole``: a bone the
    armature lacks). ``whole`` with a ``"track"`` digest: a track Blender could not
    hold key for key, given back while the rebuilt track is unchanged. Otherwise a
    digest per channel: while the rebuilt times keep theirs, each channel whose
    rebuilt values keep theirs gets the file's bits back (``xor``), and an edited
    channel is Blender's."""

    bone: str
    digests: dict[str, bytes] = field(default_factory=dict)
    xor: dict[str, np.ndarray] = field(default_factory=dict)
    whole: BoneTrack | None = None
    version: int = VERSION  # the record's version: which hash made ``digests``
    rounded: list[str] = field(default_factory=list)  # channels the file has as float32(rebuilt)
    given: BoneTrack | None = None  # version 4: the file's arrays, ``digests`` of Blender's keys


def _channels(track: BoneTrack) -> list[np.ndarray | None]:
    return [getattr(track, c) for c in CHANNELS]


def _digest(*arrays: np.ndarray | None, version: int = VERSION) -> bytes:
    """An 8-byte digest of arrays (as float64, with their shapes; None for a
    channel a track does not key), with the hash of record ``version``."""
    h = hashlib.blake2b(digest_size=8) if version == 1 else hashlib.sha256()
    for a in arrays:
        if a is None:
            h.update(b"-")
            continue
        a = np.ascontiguousarray(a, np.float64)
        h.update(repr(a.shape).encode())
        h.update(a.reshape(-1))  # the buffer itself: the bytes tobytes would copy
    return h.digest()[:8]


def track_digest(track: BoneTrack, version: int = VERSION) -> bytes:
    """A digest of all a track's arrays and which channels it keys."""
    return _digest(*_channels(track), version=version)


def basis_digest(rel: tuple[np.ndarray, ...], fps: float) -> bytes:
    """Version 4: a digest of a bone's rest (``build.rest_relative``'s arrays) and
    the frame rate its keys were converted at."""
    h = hashlib.sha256()
    for a in rel:  # each as float64, shape and all: ``rest_relative`` gives float64 rows
        a = np.ascontiguousarray(a, np.float64)
        h.update(np.int64(a.size).tobytes())
        h.update(a)
    h.update(np.float64(fps).tobytes())
    return h.digest()[:8]


def basis_digests(rels: list[tuple[np.ndarray, ...]], fps: float) -> list[bytes]:
    """:func:`basis_digest` of each of ``rels`` (rests of one layout, as
    ``build.rest_relative`` gives them): the hashed bytes of all bones laid out
    in one array, one hash call per bone."""
    if not rels:
        return []
    try:
        cols = [np.array([r[j] for r in rels], np.float64) for j in range(len(rels[0]))]
    except ValueError:  # rests of differing sizes: one at a time
        return [basis_digest(r, fps) for r in rels]
    if any(len(r) != len(cols) for r in rels):
        return [basis_digest(r, fps) for r in rels]
    n = len(rels)
    cols = [c.reshape(n, -1) for c in cols]
    row = np.empty((n, sum(c.shape[1] + 1 for c in cols) + 1), np.float64)
    pos = 0
    for c in cols:  # each array's size (int64), then its values, as basis_digest hashes them
        row.view(np.int64)[:, pos] = c.shape[1]
        row[:, pos + 1 : pos + 1 + c.shape[1]] = c
        pos += c.shape[1] + 1
    row[:, pos] = fps
    return [hashlib.sha256(r).digest()[:8] for r in row]


def times_digest(frames: np.ndarray) -> bytes:
    """Version 4: a digest of a bone's float32 key frames (every curve's)."""
    return hashlib.sha256(np.ascontiguousarray(frames, np.float32)).digest()[:8]


def channel_digest(curves: list[tuple[int, np.ndarray]]) -> bytes:
    """Version 4: a digest of one channel's keys as Blender holds them: per curve,
    in array-index order, its index and its float32 (k, 2) ``co`` block. A curve
    deleted or added changes the header, so the digest."""
    h = hashlib.sha256(repr([(i, len(co)) for i, co in curves]).encode())
    for _, co in curves:
        h.update(np.ascontiguousarray(co, np.float32))
    return h.digest()[:8]


@functools.lru_cache(maxsize=64)
def _block_head(width: int, k: int):
    """The hash of :func:`channel_digest`'s header for curves 0 to ``width`` - 1
    of ``k`` keys each (a file keys most channels alike: worked out once)."""
    return hashlib.sha256(repr([(i, k) for i in range(width)]).encode())


def block_digests(co: np.ndarray, rows: list[int]) -> list[bytes]:
    """:func:`channel_digest` of each block ``co[r]`` (``r`` in ``rows``) of an
    (n, width, k, 2) float32 array: curves 0 to width - 1 of one channel, each
    block hashed in one piece (``build_action`` has them contiguous)."""
    co = np.ascontiguousarray(co, np.float32)
    head = _block_head(int(co.shape[1]), int(co.shape[2]))
    out = []
    for r in rows:
        h = head.copy()
        h.update(co[r])
        out.append(h.digest()[:8])
    return out


def given_track(track: BoneTrack) -> BoneTrack:
    """Version 4: ``track``'s arrays to keep, each as float32 when every value is
    a float32 value with its sign (half the bytes), else as float64."""
    out = []
    for a in _channels(track):
        if a is not None:
            a = np.asarray(a)
            if a.dtype != np.float32:
                a = np.asarray(a, np.float64)
                a32 = a.astype(np.float32)  # keeps a zero's sign; NaN is never equal
                a = a32 if (a32 == a).all() else a  # array_equal costs more than the test
        out.append(a)
    return BoneTrack(track.bone, *out)


def given_tracks(tracks: list[BoneTrack]) -> list[BoneTrack]:
    """:func:`given_track` of each of ``tracks``: the arrays of one channel and
    shape tested in one comparison (a file keys most bones alike); a track whose
    kept times have the bits of the one before it shares that array (so
    :func:`encode` finds it the same at once)."""
    out: list[list[np.ndarray | None]] = [[None] * len(CHANNELS) for _ in tracks]
    for c, name in enumerate(CHANNELS):
        by_shape: dict[tuple[int, ...], list[tuple[int, np.ndarray]]] = {}
        for j, t in enumerate(tracks):
            a = getattr(t, name)
            if a is None:
                continue
            if type(a) is not np.ndarray:
                a = np.asarray(a)
            kind = a.dtype.char
            if kind == "f":  # float32
                out[j][c] = a
            else:
                by_shape.setdefault(a.shape, []).append(
                    (j, a if kind == "d" else np.asarray(a, np.float64))
                )
        for items in by_shape.values():
            stack = np.array([a for _, a in items], np.float64)
            stack32 = stack.astype(np.float32)  # keeps a zero's sign; NaN is never equal
            exact = (stack32 == stack).reshape(len(items), -1).all(axis=1).tolist()
            kept = [
                a32 if same else a for (_, a), same, a32 in zip(items, exact, stack32, strict=True)
            ]
            if c == 0 and len(items) > 1:  # times: each row as the one before, bit for bit
                bits = stack.view(np.uint64).reshape(len(items), -1)
                again = (bits[1:] == bits[:-1]).all(axis=1).tolist()
                for r, same in enumerate(again, 1):
                    if same and exact[r] == exact[r - 1]:
                        kept[r] = kept[r - 1]
            for (j, _), a in zip(items, kept, strict=True):
                out[j][c] = a
    return [BoneTrack(t.bone, *arrays) for t, arrays in zip(tracks, out, strict=True)]


def _f32_exact(a: np.ndarray, a32: np.ndarray | None = None) -> bool:
    """True when every value of ``a`` (float64) is a float32 value, its sign kept
    (``a32``: ``a`` as float32, when the caller has it)."""
    back = (a.astype(np.float32) if a32 is None else a32).astype(np.float64)
    return bool(np.array_equal(back.view(np.uint64), a.view(np.uint64)))


#: ``settle(channel, values)``: the values as a format that quantises them stores
#: them (``channel`` one of :data:`CHANNELS`), so two arrays that settle alike are
#: written as the same bytes.
Settle = Callable[[str, np.ndarray], np.ndarray]


def _settles_alike(settle: Settle | None, name: str, a: np.ndarray, b: np.ndarray) -> bool:
    if settle is None:
        return False
    x, y = np.asarray(settle(name, a)), np.asarray(settle(name, b))
    return x.shape == y.shape and x.tobytes() == y.tobytes()


def settled_whole(track: BoneTrack, settle: Settle | None) -> BoneTrack:
    """``track`` to keep whole, each channel rounded to float32 where ``settle``
    stores it alike (half the bytes once compressed, the same bytes written)."""
    out = BoneTrack(track.bone, track.times, track.translation, track.rotation, track.scale)
    for name, a in zip(CHANNELS, _channels(track), strict=True):
        if a is None or settle is None:
            continue
        a = np.asarray(a, np.float64)
        if not np.isfinite(a).all():
            continue
        near = a.astype(np.float32).astype(np.float64)
        if _settles_alike(settle, name, a, near):
            setattr(out, name, near)
    return out


def residue(original: BoneTrack, rebuilt: BoneTrack, settle: Settle | None = None) -> KeptTrack:
    """What turns ``rebuilt`` (the export's reading of the imported track) back into
    ``original`` (the file's): per channel the XOR of their bits, or the whole
    original when a channel's presence or shape differs. A channel that ``settle``
    (the format's quantisation) stores alike needs none: the export writes the
    file's bytes from Blender's values."""
    digests = {n: _digest(b) for n, b in zip(CHANNELS, _channels(rebuilt), strict=True)}
    kept = KeptTrack(original.bone, digests)
    for name, a, b in zip(CHANNELS, _channels(original), _channels(rebuilt), strict=True):
        if (a is None) != (b is None) or (a is not None and np.shape(a) != np.shape(b)):
            return KeptTrack(original.bone, {"track": track_digest(rebuilt)}, whole=original)
        if a is None:
            continue
        a = np.ascontiguousarray(a, np.float64)
        b = np.ascontiguousarray(b, np.float64)
        if np.array_equal(a.view(np.uint64), b.view(np.uint64)) or _settles_alike(
            settle, name, a, b
        ):
            continue
        a32 = a.astype(np.float32)
        if _f32_exact(a, a32):
            x = a32.view(np.uint32) ^ b.astype(np.float32).view(np.uint32)
            if not x.any():  # Blender's rounding alone: nothing to store
                kept.rounded.append(name)
                continue
        else:
            x = a.view(np.uint64) ^ b.view(np.uint64)
        kept.xor[name] = x
    return kept


def _unxor(rebuilt: np.ndarray, x: np.ndarray) -> np.ndarray:
    b = np.ascontiguousarray(rebuilt, np.float64)
    if x.dtype == np.uint32:
        return (b.astype(np.float32).view(np.uint32) ^ x).view(np.float32).astype(np.float64)
    return (b.view(np.uint64) ^ x).view(np.float64)


def _restored(rebuilt: BoneTrack, kept: KeptTrack) -> tuple[BoneTrack, bool]:
    """The track to write for ``rebuilt`` and whether all of it is the file's."""
    v = kept.version
    if kept.whole is not None:
        same = track_digest(rebuilt, v) == kept.digests.get("track")
        return (kept.whole, True) if same else (rebuilt, False)
    if _digest(rebuilt.times, version=v) != kept.digests.get("times"):  # keys moved, added, removed
        return rebuilt, False
    out = BoneTrack(
        rebuilt.bone, rebuilt.times, rebuilt.translation, rebuilt.rotation, rebuilt.scale
    )
    exact = True
    for name, a in zip(CHANNELS, _channels(rebuilt), strict=True):
        if _digest(a, version=v) != kept.digests.get(name):
            exact = False  # an edited channel: Blender's values
        elif name in kept.xor:
            setattr(out, name, _unxor(a, kept.xor[name]))
        elif name in kept.rounded:
            setattr(out, name, np.asarray(a, np.float64).astype(np.float32).astype(np.float64))
    return out, exact


@dataclass
class Restored:
    """:func:`restore`'s answer: the tracks to write and what happened to them."""

    tracks: list[BoneTrack]
    exact: int = 0  # unedited tracks given back as the file had them
    edited: int = 0  # kept tracks with a channel (or times) edited: Blender's values there
    carried: list[str] = field(default_factory=list)  # bones the armature lacks


def _float64(track: BoneTrack) -> BoneTrack:
    return BoneTrack(
        track.bone, *(None if a is None else np.asarray(a, np.float64) for a in _channels(track))
    )


def _given(track: BoneTrack, k: KeptTrack, match: frozenset[str] | None) -> BoneTrack:
    """A given track converted from Blender because something differs: the file's
    times and each channel in ``match`` (None: the whole track is Blender's)."""
    if match is None or k.given is None:
        return track
    out = _float64(k.given)
    for name in CHANNELS[1:]:
        if name not in match:
            setattr(out, name, getattr(track, name))
    return out


def restore(
    rebuilt: list[BoneTrack],
    kept: list[KeptTrack],
    given: dict[str, frozenset[str] | None] | None = None,
) -> Restored:
    """The tracks to export: the kept tracks in the file's order (each unedited
    channel as the file had it, each edited one as rebuilt, each whole track of a
    bone the armature lacks as kept), then the rebuilt tracks the file did not
    have, in their order.

    ``given``: per bone of a version-4 given track, the channels whose digests
    Blender's keys still have (None: its rest, frame rate or frames differ). A
    bone there but not in ``rebuilt`` was left unconverted, every channel alike:
    the file's arrays come back."""
    given = given or {}
    by_bone = {t.bone: t for t in rebuilt}
    done: set[str] = set()
    out = Restored([])
    for k in kept:
        track = by_bone.get(k.bone)
        if k.given is not None and k.bone not in done:
            match = given.get(k.bone)
            if track is None and match is None:  # the bone's keys were removed
                continue
            done.add(k.bone)
            exact = track is None
            out.tracks.append(_float64(k.given) if exact else _given(track, k, match))
            out.exact += exact
            out.edited += not exact
            continue
        if not k.digests and track is None and k.whole is not None:
            out.tracks.append(k.whole)  # a bone the armature lacks
            out.carried.append(k.bone)
            continue
        if track is None or k.bone in done:  # the bone's keys were removed
            continue
        done.add(k.bone)
        track, exact = _restored(track, k) if k.digests else (track, False)
        out.tracks.append(track)
        out.exact += exact
        out.edited += not exact
    out.tracks += [t for t in rebuilt if t.bone not in done]
    return out


def _same_bits(a: np.ndarray, b: np.ndarray | None) -> bool:
    """Whether ``a`` and ``b`` hold the same bits (a zero's sign too)."""
    if a is b:
        return True
    if b is None or a.dtype != b.dtype or a.shape != b.shape:
        return False
    kind = f"u{a.dtype.itemsize}"
    return bool((a.view(kind) == b.view(kind)).all())  # array_equal's wrapper costs more


def _arrays_meta(arrays: dict[str, np.ndarray | None], blobs: list[np.ndarray]) -> dict:
    meta = {}
    for name in CHANNELS:  # the order decode takes them in
        a = arrays.get(name)
        if a is None:
            continue
        a = np.ascontiguousarray(a)
        meta[name] = [a.dtype.str, list(a.shape)]
        blobs.append(a)
    return meta


def encode(kept: list[KeptTrack]) -> bytes:
    """``kept`` as one bytes value: the header's length (4 bytes), a JSON header
    (zlib) and the arrays' raw bytes. The record has the tracks' version (one for all)."""
    versions = {k.version for k in kept} or {VERSION}
    if len(versions) > 1:
        raise ValueError(f"kept tracks of record versions {sorted(versions)} in one record")
    if versions != {VERSION}:
        raise ValueError(f"record version {versions.pop()}: only version {VERSION} is written")
    blobs: list[np.ndarray] = []
    header = []
    last_times = None  # the previous given track's times
    for k in kept:
        entry: dict = {"bone": k.bone, "digests": {n: d.hex() for n, d in k.digests.items()}}
        if k.whole is not None:
            whole = dict(zip(CHANNELS, _channels(k.whole), strict=True))
            entry["whole"] = _arrays_meta(
                {n: None if a is None else np.asarray(a, np.float64) for n, a in whole.items()},
                blobs,
            )
        elif k.given is not None:
            arrays = dict(zip(CHANNELS, _channels(k.given), strict=True))
            times = np.ascontiguousarray(arrays["times"])
            if _same_bits(times, last_times):  # most files key every bone at one time list
                arrays["times"] = None
                entry["same_times"] = True
            last_times = times
            entry["given"] = _arrays_meta(arrays, blobs)
        else:
            entry["xor"] = _arrays_meta(k.xor, blobs)
            if k.rounded:
                entry["rounded"] = k.rounded
        header.append(entry)
    # The header (names, hex digests) compresses to a third in well under a millisecond.
    head = zlib.compress(json.dumps([versions.pop(), header], separators=(",", ":")).encode(), 1)
    return b"".join([len(head).to_bytes(4, "little"), head, *(memoryview(b) for b in blobs)])


def _take(
    meta: dict, raw: memoryview, pos: int, planes: bool = True
) -> tuple[dict[str, np.ndarray], int]:
    out = {}
    for name in CHANNELS:
        if name not in meta:
            continue
        dtype, shape = np.dtype(meta[name][0]), tuple(int(s) for s in meta[name][1])
        if dtype.kind not in "uf" or any(s < 0 for s in shape):
            raise ValueError(f"bad array {name}: {meta[name]!r}")
        size = dtype.itemsize * int(np.prod(shape, dtype=np.int64))
        if pos + size > len(raw):
            raise ValueError("the arrays end early")
        data = np.frombuffer(raw[pos : pos + size], np.uint8)
        if planes:
            out[name] = data.reshape(dtype.itemsize, -1).T.copy().view(dtype).reshape(shape)
        else:
            out[name] = data.view(dtype).reshape(shape)
        pos += size
    return out, pos


def decode(data: bytes | str, what: str = "the kept keys") -> list[KeptTrack]:
    """The record :func:`encode` made (bytes), or the ASCII text (zlib, base64,
    arrays by significance) builds before version 4 stored; a damaged one raises
    a :class:`FormatError` naming ``what`` (the action and its property)."""
    try:
        text = isinstance(data, str)
        if text:
            raw = memoryview(zlib.decompress(base64.b64decode(data.encode("ascii"), validate=True)))
        else:
            raw = memoryview(bytes(data))
        if len(raw) < 4:
            raise ValueError("no header")
        n = int.from_bytes(raw[:4], "little")
        head = bytes(raw[4 : 4 + n])
        version, header = json.loads(head if text else zlib.decompress(head))
        if version not in READABLE or text != (version < 4):  # text: versions 1 to 3
            raise ValueError(f"version {version!r}, this RigPort reads {READABLE}")
        pos = 4 + n
        kept = []
        last_times = None  # the previous given track's times
        for entry in header:
            digests = {str(n): bytes.fromhex(d) for n, d in entry["digests"].items()}
            k = KeptTrack(str(entry["bone"]), digests, version=version)
            if "whole" in entry:
                arrays, pos = _take(entry["whole"], raw, pos, text)
                if "times" not in arrays:
                    raise ValueError(f"track {k.bone!r} has no times")
                k.whole = BoneTrack(k.bone, **arrays)
            elif "given" in entry:
                arrays, pos = _take(entry["given"], raw, pos, text)
                if entry.get("same_times") and "times" not in arrays and last_times is not None:
                    arrays["times"] = last_times
                last_times = arrays.get("times")
                need = {"basis", "times"} | {g for g, c in GIVEN_ARRAY.items() if c in arrays}
                if version < 4 or "times" not in arrays or set(digests) != need:
                    raise ValueError(f"track {k.bone!r}: bad given keys")
                k.given = BoneTrack(k.bone, **arrays)
            else:
                k.xor, pos = _take(entry["xor"], raw, pos, text)
                k.rounded = [str(n) for n in entry.get("rounded", [])]
                if (version < 3 and k.rounded) or not set(k.rounded) <= set(CHANNELS):
                    raise ValueError(f"track {k.bone!r}: bad rounded channels {k.rounded!r}")
            kept.append(k)
        if pos != len(raw):
            raise ValueError(f"{len(raw) - pos} bytes after the arrays")
    except (ValueError, TypeError, KeyError, zlib.error) as err:
        raise FormatError(f"{what} are damaged: {err}") from None
    return kept
