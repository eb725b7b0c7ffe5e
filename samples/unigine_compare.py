"""What "the same asset" means for Unigine files (DESIGN.md), as a list of differences.

Used by the round-trip tests (with and without Blender) and by ``batch.py
roundtrip``-style checks: counts, names and order must match; positions, bind
poses and key values within 1e-5 (relative for large values); weights and
quantised values within their quantisation step (plus one for rounding).
"""

from __future__ import annotations

import numpy as np

from ..io_formats.codec.quantize import dequantize_box
from ..io_formats.unigine import anim, mesh
from ..io_formats.unigine.anim_convert import decode

TOL = 1e-5


def _close(a, b, tol: float = TOL) -> bool:
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    if a.shape != b.shape:
        return False
    return bool(np.all(np.abs(a - b) <= tol * np.maximum(1.0, np.abs(b))))


def _quat_close(a, b, step: float) -> bool:
    """Quaternions equal up to sign (xyzw), within ``step``."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    if a.shape != b.shape:
        return False
    same = np.abs(a - b).max(axis=-1, initial=0) <= step
    flipped = np.abs(a + b).max(axis=-1, initial=0) <= step
    return bool(np.all(same | flipped))


def _bones(a, b, out: list[str]) -> None:
    if [x.name for x in a.bones] != [x.name for x in b.bones]:
        out.append("bone names or order differ")
        return
    if [x.parent for x in a.bones] != [x.parent for x in b.bones]:
        out.append("bone parents differ")
    if not _close(a.bind[:, :3], b.bind[:, :3]) or not _close(a.bind[:, 7:], b.bind[:, 7:]):
        out.append("bind translations or scales differ")
    if not _quat_close(a.bind[:, 3:7], b.bind[:, 3:7], TOL):
        out.append("bind rotations differ")


def _dense_weights(s: mesh.Surface, n_bones: int) -> np.ndarray:
    j, w = s.weights.padded()
    out = np.zeros((len(s.weights), max(n_bones, 1)))
    np.add.at(out, (np.repeat(np.arange(len(j)), j.shape[1]), j.reshape(-1)), w.reshape(-1))
    return out / 65535.0


def _surface(a: mesh.Surface, b: mesh.Surface, n_bones: int, out: list[str]) -> None:
    tag = f"surface {a.name!r}"
    if a.name != b.name:
        out.append(f"{tag}: name {b.name!r}")
    if [t.name for t in a.targets] != [t.name for t in b.targets]:
        out.append(f"{tag}: morph targets {[t.name for t in b.targets]}")
        return
    if (a.n_coords, a.n_vertices, len(a.tris)) != (b.n_coords, b.n_vertices, len(b.tris)):
        want = (a.n_coords, a.n_vertices, len(a.tris))
        got = (b.n_coords, b.n_vertices, len(b.tris))
        out.append(f"{tag}: counts (coords, vertices, corners) {got} != {want}")
        return
    for ta, tb in zip(a.targets, b.targets, strict=True):
        if not _close(ta.positions[a.coords], tb.positions[b.coords]):
            out.append(f"{tag}: target {ta.name!r} positions differ")
        if len(ta.tangents) != len(tb.tangents) or (
            len(ta.tangents) and not _quat_close(ta.tangents[a.tris], tb.tangents[b.tris], 2.0)
        ):
            out.append(f"{tag}: target {ta.name!r} tangents differ")
    for attr in ("uv0", "uv1"):
        x, y = getattr(a, attr), getattr(b, attr)
        if len(x) != len(y) or (len(x) and not _close(x[a.tris], y[b.tris])):
            out.append(f"{tag}: {attr} differs")
    if len(a.colors) != len(b.colors) or (
        len(a.colors) and not np.array_equal(a.colors[a.tris], b.colors[b.tris])
    ):
        out.append(f"{tag}: colours differ")
    if len(a.weights) != len(b.weights):
        out.append(f"{tag}: {len(b.weights)} weights, not {len(a.weights)}")
    elif len(a.weights):
        wa = _dense_weights(a, n_bones)[a.coords]
        wb = _dense_weights(b, n_bones)[b.coords]
        if np.abs(wa - wb).max() > 2.5 / 65535:
            out.append(f"{tag}: weights differ by {np.abs(wa - wb).max() * 65535:.1f} steps")


def mesh_differences(a: mesh.Mesh, b: mesh.Mesh) -> list[str]:
    out: list[str] = []
    _bones(a, b, out)
    if [s.name for s in a.surfaces] != [s.name for s in b.surfaces]:
        out.append(f"surfaces {[s.name for s in b.surfaces]} != {[s.name for s in a.surfaces]}")
    else:
        for sa, sb in zip(a.surfaces, b.surfaces, strict=True):
            _surface(sa, sb, len(a.bones), out)
    if [x.name for x in a.animations] != [x.name for x in b.animations]:
        out.append("animation names differ")
    else:
        for x, y in zip(a.animations, b.animations, strict=True):
            tx, qx, sx = decode(x.frames, a.bind[x.bones], x.frames.translation, x.frames.scale)
            ty, qy, sy = decode(y.frames, b.bind[y.bones], y.frames.translation, y.frames.scale)
            _keys(f"animation {x.name!r}", x, y, (tx, qx, sx), (ty, qy, sy), 0.0, out)
    return out


def _keys(tag, x, y, vx, vy, box_step, out: list[str]) -> None:
    if list(x.bones) != list(y.bones) or x.flag != y.flag:
        out.append(f"{tag}: bones or flag differ")
        return
    if x.frames.n_frames != y.frames.n_frames:
        out.append(f"{tag}: {y.frames.n_frames} frames, not {x.frames.n_frames}")
        return
    tx, qx, sx = vx
    ty, qy, sy = vy
    tol_t = TOL + box_step
    if not (_close(tx, ty, tol_t) and _close(sx, sy, tol_t)):
        out.append(f"{tag}: translations or scales differ")
    if not _quat_close(qx, qy, 2.5 / 32767):
        out.append(f"{tag}: rotations differ")


def anim_differences(a: anim.AnimFile, b: anim.AnimFile) -> list[str]:
    out: list[str] = []
    _bones(a, b, out)
    if [x.name for x in a.animations] != [x.name for x in b.animations]:
        out.append("animation names differ")
        return out
    for x, y in zip(a.animations, b.animations, strict=True):
        vals = []
        step = 0.0
        for c in (x, y):
            t = dequantize_box(c.frames.translation, c.translation_min, c.translation_size)
            s = dequantize_box(c.frames.scale, c.scale_min, c.scale_size)
            file = a if c is x else b
            vals.append(decode(c.frames, file.bind[c.bones], t, s))
            step = max(
                step, float(np.max(np.concatenate([c.translation_size, c.scale_size]))) / 65535
            )
        _keys(f"animation {x.name!r}", x, y, vals[0], vals[1], 1.5 * step, out)
    return out
