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
"""

from __future__ import annotations

import base64
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
VERSION = 3
READABLE = (1, 2, 3)

#: Record versions whose digests hash tracks rebuilt with the LAPACK rest.
LEGACY_REST = (1, 2)

#: zlib level of :func:`encode` (any level decodes alike). Level 1: at 100 bones
#: x 2,000 keys it encodes in 0.015 s instead of level 3's 0.018 s, for 199 KB
#: instead of 182 KB.
COMPRESS_LEVEL = 1


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


def restore(rebuilt: list[BoneTrack], kept: list[KeptTrack]) -> Restored:
    """The tracks to export: the kept tracks in the file's order (each unedited
    channel as the file had it, each edited one as rebuilt, each whole track of a
    bone the armature lacks as kept), then the rebuilt tracks the file did not
    have, in their order."""
    by_bone = {t.bone: t for t in rebuilt}
    done: set[str] = set()
    out = Restored([])
    for k in kept:
        track = by_bone.get(k.bone)
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


def _arrays_meta(arrays: dict[str, np.ndarray | None], blobs: list[np.ndarray]) -> dict:
    meta = {}
    for name in CHANNELS:  # the order decode takes them in
        a = arrays.get(name)
        if a is None:
            continue
        a = np.ascontiguousarray(a)
        meta[name] = [a.dtype.str, list(a.shape)]
        blobs.append(_planes(a))
    return meta


def _planes(a: np.ndarray) -> np.ndarray:
    """``a``'s bytes by significance (every value's first byte, then every second
    ...): a residue's high bytes are nearly all zero, and runs of zeros compress
    quickly and to almost nothing. Copied into a new array rather than with
    ``.T.tobytes()``, which is about seven times slower for these strides."""
    size = a.dtype.itemsize
    out = np.empty((size, a.size), np.uint8)
    np.copyto(out, a.reshape(-1).view(np.uint8).reshape(-1, size).T)
    return out


def encode(kept: list[KeptTrack]) -> str:
    """``kept`` as one ASCII string: a JSON header and the arrays' bytes (by
    significance), compressed. The record has the tracks' version (one for all)."""
    versions = {k.version for k in kept} or {VERSION}
    if len(versions) > 1:
        raise ValueError(f"kept tracks of record versions {sorted(versions)} in one record")
    blobs: list[np.ndarray] = []
    header = []
    for k in kept:
        entry: dict = {"bone": k.bone, "digests": {n: d.hex() for n, d in k.digests.items()}}
        if k.whole is not None:
            whole = dict(zip(CHANNELS, _channels(k.whole), strict=True))
            entry["whole"] = _arrays_meta(
                {n: None if a is None else np.asarray(a, np.float64) for n, a in whole.items()},
                blobs,
            )
        else:
            entry["xor"] = _arrays_meta(k.xor, blobs)
            if k.rounded:
                entry["rounded"] = k.rounded
        header.append(entry)
    head = json.dumps([versions.pop(), header], separators=(",", ":")).encode()
    # Fed piece by piece, so the planes are never joined into one copy.
    pack = zlib.compressobj(COMPRESS_LEVEL)
    out = [pack.compress(len(head).to_bytes(4, "little") + head)]
    out += [pack.compress(b) for b in blobs]
    out.append(pack.flush())
    return base64.b64encode(b"".join(out)).decode("ascii")


def _take(meta: dict, raw: memoryview, pos: int) -> tuple[dict[str, np.ndarray], int]:
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
        planes = np.frombuffer(raw[pos : pos + size], np.uint8).reshape(dtype.itemsize, -1)
        out[name] = planes.T.copy().view(dtype).reshape(shape)
        pos += size
    return out, pos


def decode(text: str, what: str = "the kept keys") -> list[KeptTrack]:
    """The record :func:`encode` made; a damaged one raises a :class:`FormatError`
    naming ``what`` (the action and its property)."""
    try:
        raw = memoryview(zlib.decompress(base64.b64decode(text.encode("ascii"), validate=True)))
        n = int.from_bytes(raw[:4], "little")
        version, header = json.loads(bytes(raw[4 : 4 + n]))
        if version not in READABLE:
            raise ValueError(f"version {version!r}, this RigPort reads {READABLE}")
        pos = 4 + n
        kept = []
        for entry in header:
            digests = {str(n): bytes.fromhex(d) for n, d in entry["digests"].items()}
            k = KeptTrack(str(entry["bone"]), digests, version=version)
            if "whole" in entry:
                arrays, pos = _take(entry["whole"], raw, pos)
                if "times" not in arrays:
                    raise ValueError(f"track {k.bone!r} has no times")
                k.whole = BoneTrack(k.bone, **arrays)
            else:
                k.xor, pos = _take(entry["xor"], raw, pos)
                k.rounded = [str(n) for n in entry.get("rounded", [])]
                if (version < 3 and k.rounded) or not set(k.rounded) <= set(CHANNELS):
                    raise ValueError(f"track {k.bone!r}: bad rounded channels {k.rounded!r}")
            kept.append(k)
        if pos != len(raw):
            raise ValueError(f"{len(raw) - pos} bytes after the arrays")
    except (ValueError, TypeError, KeyError, zlib.error) as err:
        raise FormatError(f"{what} are damaged: {err}") from None
    return kept
