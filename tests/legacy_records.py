"""What older builds stored, written out here for tests that check saved .blend
files of those builds still work: exact-keys records before version 4 (ASCII
text: zlib, base64, arrays by significance; only the decoder stays in the
product), and fingerprints before version 2 (BLAKE2b, :func:`blake2b_digest`)."""

from __future__ import annotations

import base64
import hashlib
import json
import zlib

import numpy as np

from rigport.io_formats import exact_keys


def _planes(a: np.ndarray) -> bytes:
    """``a``'s bytes by significance (every value's first byte, then every second ...)."""
    size = a.dtype.itemsize
    return np.ascontiguousarray(a.reshape(-1).view(np.uint8).reshape(-1, size).T).tobytes()


def _meta(arrays: dict, blobs: list[bytes]) -> dict:
    meta = {}
    for name in exact_keys.CHANNELS:
        a = arrays.get(name)
        if a is None:
            continue
        a = np.ascontiguousarray(a)
        meta[name] = [a.dtype.str, list(a.shape)]
        blobs.append(_planes(a))
    return meta


def encode_text(kept: list[exact_keys.KeptTrack]) -> str:
    """``kept`` (of one version, 1 to 3) as the text record those builds wrote."""
    (version,) = {k.version for k in kept}
    assert version < 4
    blobs: list[bytes] = []
    header = []
    for k in kept:
        entry: dict = {"bone": k.bone, "digests": {n: d.hex() for n, d in k.digests.items()}}
        if k.whole is not None:
            whole = {n: getattr(k.whole, n) for n in exact_keys.CHANNELS}
            entry["whole"] = _meta(
                {n: None if a is None else np.asarray(a, np.float64) for n, a in whole.items()},
                blobs,
            )
        else:
            entry["xor"] = _meta(k.xor, blobs)
            if k.rounded:
                entry["rounded"] = k.rounded
        header.append(entry)
    head = json.dumps([version, header], separators=(",", ":")).encode()
    raw = len(head).to_bytes(4, "little") + head + b"".join(blobs)
    return base64.b64encode(zlib.compress(raw, 1)).decode("ascii")


def as_version(kept: exact_keys.KeptTrack, version: int) -> exact_keys.KeptTrack:
    """A residue ``kept`` (:func:`exact_keys.residue`) marked as record ``version``."""
    return exact_keys.KeptTrack(
        kept.bone, dict(kept.digests), dict(kept.xor), kept.whole, version, list(kept.rounded)
    )


def blake2b_digest(*arrays: np.ndarray, names=()) -> str:
    """A fingerprint digest as builds before fingerprint version 2 stored it:
    BLAKE2b-128 of the names, then each array's dtype, shape and bytes (written
    out here, not taken from the add-on)."""
    h = hashlib.blake2b(digest_size=16)
    for name in names:
        h.update(name.encode("utf-8") + b"\0")
    for a in arrays:
        a = np.ascontiguousarray(a)
        h.update(str((a.dtype.str, a.shape)).encode("ascii"))
        h.update(a.tobytes())
    return h.hexdigest()
