"""The MRTK input animation recording for the registry."""

from __future__ import annotations

import numpy as np

from ..registry import FileFormat
from . import recording


def summarize(rec: recording.Recording) -> dict:
    floats = list(rec.float_curves())
    keys = [len(c.keys) for _, c in floats]
    times = [c.keys["time"] for _, c in [*floats, *rec.bool_curves()] if len(c.keys)]
    span = [float(min(t.min() for t in times)), float(max(t.max() for t in times))] if times else []
    return {
        "version": f"{rec.major}.{rec.minor}",
        "layout": rec.layout,
        "camera": rec.camera is not None,
        "hands": rec.hands is not None,
        "eye_gaze": rec.gaze is not None,
        "float_curves": len(floats),
        "keys": int(np.sum(keys)) if keys else 0,
        "empty_curves": int(sum(k == 0 for k in keys)),
        "time_span": [round(x, 6) for x in span],
        "markers": [{"time": round(float(m.time), 6), "name": m.name} for m in rec.markers],
    }


def is_recording(head: bytes) -> bool:
    """``.bin`` is generic: a recording starts with the format's 64-bit magic."""
    return len(head) >= 8 and int.from_bytes(head[:8], "little") == recording.MAGIC


FORMATS = (
    FileFormat(
        "mrtk.input",
        "MRTK Input Animation",
        "other",
        (".bin",),
        recording.read,
        recording.write,
        summarize,
        is_recording,
    ),
)
