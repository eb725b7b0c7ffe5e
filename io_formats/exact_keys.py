"""Exact animation keys through Blender: what the F-curves cannot give back, kept compactly.

An import converts a file's engine-local tracks (:class:`~.scene.BoneTrack`) into
pose-space F-curves of float32 keys; an export converts them back. That trip
rounds values and times (by up to a few float32 ulps), turns +0.0 into -0.0
and may negate whole quaternions. Right after the import, the Blender side
rebuilds the tracks exactly as the export will (:func:`residue` compares them
with the file's) and keeps per track:

* a digest of the rebuilt arrays: at export, a track whose rebuilt arrays still
  have this digest is unedited (same keys, rest, frame rate), and
* per channel that differs, the XOR of the file's bits with the rebuilt bits
  (float32 bits when the file's values are float32 values, else float64 bits):
  zero where they agree, a few low bits where Blender rounded, the sign bit for
  -0.0 or a negated quaternion. The zeros cost almost nothing once compressed,
  and no index list is needed.

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
from dataclasses import dataclass, field

import numpy as np

from .codec import FormatError
from .scene import BoneTrack

#: The arrays of a track, in the order they are hashed and stored.
CHANNELS = ("times", "translation", "rotation", "scale")

#: Stored record version (the first field of the encoded text).
VERSION = 1


@dataclass
class KeptTrack:
    """What one file track needs to come back exactly.

    ``digest`` None: a whole track always written back (``whole``: a bone the
    armature lacks). Otherwise ``whole`` (when Blender could not hold the track
    key for key) or ``xor`` (per differing channel) restores the file's arrays
    while the rebuilt track still has ``digest``."""

    bone: str
    digest: bytes | None = None
    xor: dict[str, np.ndarray] = field(default_factory=dict)
    whole: BoneTrack | None = None


def _channels(track: BoneTrack) -> list[np.ndarray | None]:
    return [getattr(track, c) for c in CHANNELS]


def track_digest(track: BoneTrack) -> bytes:
    """A 16-byte digest of a track's arrays (as float64) and which channels it keys."""
    h = hashlib.blake2b(digest_size=16)
    for a in _channels(track):
        if a is None:
            h.update(b"-")
            continue
        a = np.ascontiguousarray(a, np.float64)
        h.update(repr(a.shape).encode())
        h.update(a.tobytes())
    return h.digest()


def _f32_exact(a: np.ndarray) -> bool:
    """True when every value of ``a`` (float64) is a float32 value, its sign kept."""
    back = a.astype(np.float32).astype(np.float64)
    return bool(np.array_equal(back.view(np.uint64), a.view(np.uint64)))


def residue(original: BoneTrack, rebuilt: BoneTrack) -> KeptTrack:
    """What turns ``rebuilt`` (the export's reading of the imported track) back into
    ``original`` (the file's): per channel the XOR of their bits, or the whole
    original when a channel's presence or shape differs."""
    kept = KeptTrack(original.bone, track_digest(rebuilt))
    for name, a, b in zip(CHANNELS, _channels(original), _channels(rebuilt), strict=True):
        if (a is None) != (b is None) or (a is not None and np.shape(a) != np.shape(b)):
            return KeptTrack(original.bone, kept.digest, whole=original)
        if a is None:
            continue
        a = np.ascontiguousarray(a, np.float64)
        b = np.ascontiguousarray(b, np.float64)
        if np.array_equal(a.view(np.uint64), b.view(np.uint64)):
            continue
        if _f32_exact(a):
            x = a.astype(np.float32).view(np.uint32) ^ b.astype(np.float32).view(np.uint32)
        else:
            x = a.view(np.uint64) ^ b.view(np.uint64)
        kept.xor[name] = x
    return kept


def _restored(rebuilt: BoneTrack, kept: KeptTrack) -> BoneTrack:
    if kept.whole is not None:
        return kept.whole
    out = BoneTrack(
        rebuilt.bone, rebuilt.times, rebuilt.translation, rebuilt.rotation, rebuilt.scale
    )
    for name, x in kept.xor.items():
        b = np.ascontiguousarray(getattr(rebuilt, name), np.float64)
        if x.dtype == np.uint32:
            value = (b.astype(np.float32).view(np.uint32) ^ x).view(np.float32).astype(np.float64)
        else:
            value = (b.view(np.uint64) ^ x).view(np.float64)
        setattr(out, name, value)
    return out


@dataclass
class Restored:
    """:func:`restore`'s answer: the tracks to write and what happened to them."""

    tracks: list[BoneTrack]
    exact: int = 0  # unedited tracks given back as the file had them
    edited: int = 0  # kept tracks whose rebuilt arrays changed: Blender's values
    carried: list[str] = field(default_factory=list)  # bones the armature lacks


def restore(rebuilt: list[BoneTrack], kept: list[KeptTrack]) -> Restored:
    """The tracks to export: the kept tracks in the file's order (each unedited one
    as the file had it, each edited one as rebuilt, each whole one as kept), then
    the rebuilt tracks the file did not have, in their order."""
    by_bone = {t.bone: t for t in rebuilt}
    done: set[str] = set()
    out = Restored([])
    for k in kept:
        track = by_bone.get(k.bone)
        if k.digest is None and track is None and k.whole is not None:
            out.tracks.append(k.whole)  # a bone the armature lacks
            out.carried.append(k.bone)
            continue
        if track is None or k.bone in done:  # the bone's keys were removed
            continue
        done.add(k.bone)
        if k.digest is not None and track_digest(track) == k.digest:
            out.tracks.append(_restored(track, k))
            out.exact += 1
        else:
            out.tracks.append(track)
            out.edited += 1
    out.tracks += [t for t in rebuilt if t.bone not in done]
    return out


def _arrays_meta(arrays: dict[str, np.ndarray | None], blobs: list[bytes]) -> dict:
    meta = {}
    for name, a in arrays.items():
        if a is None:
            continue
        a = np.ascontiguousarray(a)
        meta[name] = [a.dtype.str, list(a.shape)]
        blobs.append(a.tobytes())
    return meta


def encode(kept: list[KeptTrack]) -> str:
    """``kept`` as one ASCII string: a JSON header and the arrays' bytes, compressed."""
    blobs: list[bytes] = []
    header = []
    for k in kept:
        entry: dict = {"bone": k.bone, "digest": k.digest.hex() if k.digest else None}
        if k.whole is not None:
            whole = dict(zip(CHANNELS, _channels(k.whole), strict=True))
            entry["whole"] = _arrays_meta(
                {n: None if a is None else np.asarray(a, np.float64) for n, a in whole.items()},
                blobs,
            )
        else:
            entry["xor"] = _arrays_meta(k.xor, blobs)
        header.append(entry)
    head = json.dumps([VERSION, header], separators=(",", ":")).encode()
    raw = len(head).to_bytes(4, "little") + head + b"".join(blobs)
    return base64.b64encode(zlib.compress(raw, 9)).decode("ascii")


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
        out[name] = np.frombuffer(raw[pos : pos + size], dtype).reshape(shape).copy()
        pos += size
    return out, pos


def decode(text: str, what: str = "the kept keys") -> list[KeptTrack]:
    """The record :func:`encode` made; a damaged one raises a :class:`FormatError`
    naming ``what`` (the action and its property)."""
    try:
        raw = memoryview(zlib.decompress(base64.b64decode(text.encode("ascii"), validate=True)))
        n = int.from_bytes(raw[:4], "little")
        version, header = json.loads(bytes(raw[4 : 4 + n]))
        if version != VERSION:
            raise ValueError(f"version {version!r}, this RigPort reads {VERSION}")
        pos = 4 + n
        kept = []
        for entry in header:
            digest = bytes.fromhex(entry["digest"]) if entry["digest"] else None
            k = KeptTrack(str(entry["bone"]), digest)
            if "whole" in entry:
                arrays, pos = _take(entry["whole"], raw, pos)
                if "times" not in arrays:
                    raise ValueError(f"track {k.bone!r} has no times")
                k.whole = BoneTrack(k.bone, **arrays)
            else:
                k.xor, pos = _take(entry["xor"], raw, pos)
            kept.append(k)
        if pos != len(raw):
            raise ValueError(f"{len(raw) - pos} bytes after the arrays")
    except (ValueError, TypeError, KeyError, zlib.error) as err:
        raise FormatError(f"{what} are damaged: {err}") from None
    return kept
