"""The hash behind the one "kept data still describes this mesh" rule (no bpy).

The Blender side (``operators/blender/fingerprint.py``) reads a mesh's arrays in
bulk; this turns them, and any names that belong to them, into one short digest.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np


def digest(*arrays: np.ndarray, names: Sequence[str] = ()) -> str:
    """A 128-bit hex digest of ``names`` (in order) and ``arrays`` (their dtype,
    shape and bytes), so equal data gives equal digests on every platform."""
    h = hashlib.blake2b(digest_size=16)
    for name in names:
        h.update(name.encode("utf-8") + b"\0")
    for a in arrays:
        a = np.ascontiguousarray(a)
        h.update(str((a.dtype.str, a.shape)).encode("ascii"))
        h.update(a.tobytes())
    return h.hexdigest()
