"""Kept data as text: nested dicts of numpy arrays and plain values <-> JSON.

What Blender cannot hold (the import guard's dropped faces and original values)
is kept in a custom property on the Blender data as one JSON string; arrays go
in as base64 of their bytes with dtype and shape, so they come back bit for bit.
"""

from __future__ import annotations

import base64
import json

import numpy as np


def _pack(a: np.ndarray) -> dict:
    a = np.ascontiguousarray(a)
    return {"dtype": a.dtype.str, "shape": list(a.shape), "data": base64.b64encode(a).decode()}


def _unpack(d: dict) -> np.ndarray:
    raw = base64.b64decode(d["data"])
    return np.frombuffer(raw, np.dtype(d["dtype"])).reshape(d["shape"]).copy()


def dumps(kept: dict) -> str:
    """``kept`` (nested dicts of arrays and plain values) as JSON text."""

    def enc(v):
        if isinstance(v, np.ndarray):
            return {"__array__": _pack(v)}
        if isinstance(v, dict):
            return {k: enc(x) for k, x in v.items()}
        return v

    return json.dumps(enc(kept))


def loads(text: str) -> dict:
    def dec(v):
        if isinstance(v, dict):
            if "__array__" in v:
                return _unpack(v["__array__"])
            return {k: dec(x) for k, x in v.items()}
        return v

    return dec(json.loads(text))
