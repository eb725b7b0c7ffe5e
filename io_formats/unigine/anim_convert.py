"""Frame records <-> neutral bone tracks (engine-local keys, one per frame).

Decoding follows the change flags: a component keeps the previous frame's
value until a record stores a new one; before the first stored value a bone
has its bind pose (the file's own bone table). Encoding writes frame 0 with
every component the animation stores and later frames only with what changed
(after quantisation), which is what keeps files small.
"""

from __future__ import annotations

import json
import re

import numpy as np

from ..codec.quantize import dequantize_box, quantize_box
from ..scene import Animation, BoneTrack
from .anim import AnimClip
from .common import ROTATION_BIT, ROTATION_MASK, SCALE_MASK, TRANSLATION_MASK, Frames, change_flags
from .mesh import MeshAnimation

FLAG_KEY = "unigine_flag"
BONES_KEY = "unigine_bones"
NAME_KEY = "unigine_name"  # the file's name, when Blender renames a clashing action
#: A clip's four boxes (translation min and size, scale min and size) as the hex of
#: their 12 float32 values: real files' boxes are often looser than the fitted ones,
#: and a clip that stores no scale has whatever scale box its writer left.
BOXES_KEY = "unigine_boxes"


def bind_wxyz(bind: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(N, 10) file bind pose -> translation, w x y z rotation, scale (float64)."""
    b = np.asarray(bind, np.float64)
    return b[:, 0:3], b[:, [6, 3, 4, 5]], b[:, 7:10]


def _held(frames: Frames, bit: int, values: np.ndarray, rest: np.ndarray) -> np.ndarray:
    """Values where a record has stored the component so far, else the bind value."""
    seen = np.logical_or.accumulate((frames.flags >> bit) & 1 == 1, axis=0)
    return np.where(seen[..., None], values, np.broadcast_to(rest, values.shape))


def decode(
    frames: Frames,
    bind: np.ndarray,
    translation: np.ndarray,
    scale: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Dense (F, B, 3/4/3) float64 local translation, rotation (w x y z) and scale.

    ``bind`` is the (B, 10) bind pose of the animated bones; ``translation`` and
    ``scale`` are the frames' values already turned into floats."""
    rt, rq, rs = bind_wxyz(bind)
    t = np.stack(
        [_held(frames, i, translation[..., i : i + 1], rt[:, i : i + 1])[..., 0] for i in range(3)],
        -1,
    )
    s = np.stack(
        [_held(frames, 4 + i, scale[..., i : i + 1], rs[:, i : i + 1])[..., 0] for i in range(3)],
        -1,
    )
    xyzw = frames.rotation.astype(np.float64) / 32767.0
    q = _held(frames, ROTATION_BIT, xyzw[..., [3, 0, 1, 2]], rq)
    return t, q, s


def stored_mask(flag: int, frames: Frames) -> int:
    return int(flag | np.bitwise_or.reduce(frames.flags, axis=None, initial=0)) & 0x7F


def to_animation(
    name: str,
    bone_names: list[str],
    flag: int,
    t: np.ndarray,
    q: np.ndarray,
    s: np.ndarray,
    mask: int,
    fps: float,
    extras: dict | None = None,
) -> Animation:
    n_frames = t.shape[0]
    times = np.arange(n_frames, dtype=np.float64) / fps
    tracks = [
        BoneTrack(
            bone,
            times,
            t[:, i] if mask & TRANSLATION_MASK else None,
            q[:, i] if mask & ROTATION_MASK else None,
            s[:, i] if mask & SCALE_MASK else None,
        )
        for i, bone in enumerate(bone_names)
    ]
    out = {FLAG_KEY: int(flag), BONES_KEY: json.dumps(list(bone_names)), NAME_KEY: name}
    out.update(extras or {})
    return Animation(name, max(n_frames - 1, 0) / fps, tracks, out)


def mesh_animation_to_neutral(
    a: MeshAnimation, names: list[str], bind: np.ndarray, fps: float
) -> Animation:
    idx = a.bones.astype(np.int64)
    fr = a.frames
    t, q, s = decode(fr, bind[idx], fr.translation.astype(np.float64), fr.scale.astype(np.float64))
    return to_animation(
        a.name, [names[i] for i in idx], a.flag, t, q, s, stored_mask(a.flag, fr), fps
    )


def clip_to_neutral(
    c: AnimClip, names: list[str], bind: np.ndarray, fps: float, extras: dict | None = None
) -> Animation:
    idx = c.bones.astype(np.int64)
    fr = c.frames
    t = dequantize_box(fr.translation, c.translation_min, c.translation_size)
    s = dequantize_box(fr.scale, c.scale_min, c.scale_size)
    t, q, s = decode(fr, bind[idx], t, s)
    anim = to_animation(
        c.name, [names[i] for i in idx], c.flag, t, q, s, stored_mask(c.flag, fr), fps, extras
    )
    anim.settle = clip_settle(c, fps)
    return anim


def clip_settle(c: AnimClip, fps: float):
    """How ``c`` stores a channel (the exact keys' ``settle``): times as file frames,
    rotations as shorts, translations and scales as ushorts in the clip's boxes. Keys
    Blender gives back within a rounding of the file's settle alike, so they need no
    residue: the export writes the file's bytes from them."""
    boxes = {
        "translation": (c.translation_min, c.translation_size),
        "scale": (c.scale_min, c.scale_size),
    }

    def settle(channel: str, values: np.ndarray) -> np.ndarray:
        v = np.asarray(values, np.float64)
        if channel == "times":
            return on_file_frames(v * fps)
        if channel == "rotation":
            return quat_to_short(v)
        lo, size = boxes[channel]
        return quantize_box(v, lo, size).astype(np.uint16)

    return settle


def quat_to_short(q_wxyz: np.ndarray) -> np.ndarray:
    """w x y z floats -> the file's x y z w shorts (/ 32767)."""
    q = np.asarray(q_wxyz, np.float64)
    xyzw = np.concatenate([q[..., 1:], q[..., :1]], axis=-1)
    return np.clip(np.rint(xyzw * 32767), -32767, 32767).astype(np.int16)


#: How far (in file frames) a key may lie from a file frame and still be on it: a
#: key imported at another rate than 30 fps comes back a rounding away from it.
ON_FRAME = 1e-4


def on_file_frames(frames: np.ndarray) -> np.ndarray:
    """Key times in file frames, those a rounding away from a whole frame put on it,
    so the frame samples the key itself rather than a blend with its neighbour."""
    whole = np.rint(frames)
    return np.where(np.abs(frames - whole) <= ON_FRAME, whole, frames)


def dense_values(
    anim: Animation,
    bone_names: list[str],
    rest: tuple[np.ndarray, np.ndarray, np.ndarray],
    fps: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Every frame from the first key to the last of ``bone_names`` from the tracks
    (linear between keys; the rest values where a channel has no keys) and the
    components the tracks hold."""
    keyed = [tr for tr in anim.tracks if len(tr.times)]
    start = min((int(round(float(tr.times[0]) * fps)) for tr in keyed), default=0)
    end = int(round(anim.length * fps))
    for tr in keyed:
        end = max(end, int(round(float(tr.times[-1]) * fps)))
    grid = np.arange(start, max(end, start) + 1, dtype=np.float64)
    n_frames = len(grid)
    b = len(bone_names)
    rt, rq, rs = rest
    t = np.repeat(rt[None], n_frames, 0).astype(np.float64)
    q = np.repeat(rq[None], n_frames, 0).astype(np.float64)
    s = np.repeat(rs[None], n_frames, 0).astype(np.float64)
    by_name = {tr.bone: tr for tr in anim.tracks}
    mask = 0
    for i in range(b):
        tr = by_name.get(bone_names[i])
        if tr is None or not len(tr.times):
            continue
        frames = on_file_frames(np.asarray(tr.times, np.float64) * fps)
        for values, out, bit in (
            (tr.translation, t, TRANSLATION_MASK),
            (tr.rotation, q, ROTATION_MASK),
            (tr.scale, s, SCALE_MASK),
        ):
            if values is None:
                continue
            mask |= bit
            v = np.asarray(values, np.float64)
            out[:, i] = np.stack([np.interp(grid, frames, v[:, c]) for c in range(v.shape[1])], -1)
    # keys are kept as they are (quantised quaternions are not exactly unit); only
    # rotations blended between keys are brought back to unit length
    norm = np.linalg.norm(q, axis=-1, keepdims=True)
    q = np.where(np.abs(norm - 1) > 1e-3, q / np.maximum(norm, 1e-300), q)
    return t, q, s, mask


def file_name(anim: Animation) -> str:
    """The name to write: the file's own where Blender only added a ``.001`` suffix."""
    stored = anim.extras.get(NAME_KEY)
    if isinstance(stored, str) and re.fullmatch(re.escape(stored) + r"(\.\d{3})?", anim.name):
        return stored
    return anim.name


def to_mesh_animation(anim: Animation, bone_index: np.ndarray, t, q, s, flag: int) -> MeshAnimation:
    t32, s32 = t.astype(np.float32), s.astype(np.float32)
    q16 = quat_to_short(q)
    frames = Frames(change_flags(t32, q16, s32, flag), t32, q16, s32)
    return MeshAnimation(file_name(anim), bone_index.astype(np.int16), flag, frames)


#: Spreads below this (relative to the values) are rounding noise from the trip through
#: Blender's pose space: such an axis gets a zero-size box, so it stores no changes.
BOX_NOISE = 1e-6


def _fit_box(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    flat = values.reshape(-1, 3)
    if not len(flat):
        return np.zeros(3, np.float32), np.zeros(3, np.float32)
    lo64, hi64 = flat.min(axis=0), flat.max(axis=0)
    scale = np.maximum(1.0, np.maximum(np.abs(lo64), np.abs(hi64)))
    flat_axis = hi64 - lo64 < BOX_NOISE * scale
    lo64 = np.where(flat_axis & (np.abs(lo64) < BOX_NOISE), 0.0, lo64)
    lo = lo64.astype(np.float32)
    size = np.where(flat_axis, 0.0, hi64 - lo.astype(np.float64)).astype(np.float32)
    return lo, size


def boxes_record(c: AnimClip) -> str:
    """A clip's boxes as :data:`BOXES_KEY` keeps them."""
    boxes = (c.translation_min, c.translation_size, c.scale_min, c.scale_size)
    return np.concatenate([np.asarray(b, "<f4").reshape(3) for b in boxes]).tobytes().hex()


def kept_boxes(anim: Animation) -> np.ndarray | None:
    """The (4, 3) float32 boxes the clip was imported with, None when it has none."""
    text = anim.extras.get(BOXES_KEY)
    try:
        raw = bytes.fromhex(text) if isinstance(text, str) else b""
    except ValueError:
        return None
    return np.frombuffer(raw, "<f4").reshape(4, 3).copy() if len(raw) == 48 else None


def _box(
    values: np.ndarray, stored: np.ndarray, kept: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray]:
    """Per axis: the kept box where the clip does not store the axis or every value
    lies inside it (so unedited keys quantise back to their own ushorts), else a box
    fitted to the values; an axis stored nowhere and kept nowhere gets an empty box."""
    lo, size = _fit_box(values)
    lo = np.where(stored, lo, 0.0).astype(np.float32)
    size = np.where(stored, size, 0.0).astype(np.float32)
    if kept is None:
        return lo, size
    flat = values.reshape(-1, 3)
    k_lo, k_size = kept[0].astype(np.float64), kept[1].astype(np.float64)
    # a value off an edge by less than half a step, or by rounding noise, quantises
    # onto the edge: Blender's reading of the file's own keys stays in the file's box
    slack = np.maximum(k_size / 131070.0, BOX_NOISE * np.maximum(1.0, np.abs(k_lo) + k_size))
    inside = (flat >= k_lo - slack) & (flat <= k_lo + k_size + slack)
    inside = np.all(inside, axis=0) if len(flat) else True
    use = ~stored | (inside & np.isfinite(k_lo + k_size) & (k_size >= 0))
    return np.where(use, kept[0], lo).astype(np.float32), np.where(use, kept[1], size).astype(
        np.float32
    )


def to_clip(anim: Animation, bone_index: np.ndarray, t, q, s, flag: int) -> AnimClip:
    """Translations and scales quantised into boxes: the file's while they still hold
    the values (:func:`_box`), else fitted to the data."""
    kept = kept_boxes(anim)
    axes = (flag >> np.arange(7)) & 1 == 1
    t_min, t_size = _box(t, axes[0:3], None if kept is None else kept[0:2])
    s_min, s_size = _box(s, axes[4:7], None if kept is None else kept[2:4])
    tq = quantize_box(t, t_min, t_size).astype(np.uint16)
    sq = quantize_box(s, s_min, s_size).astype(np.uint16)
    q16 = quat_to_short(q)
    frames = Frames(change_flags(tq, q16, sq, flag), tq, q16, sq)
    return AnimClip(
        file_name(anim), bone_index.astype(np.int16), t_min, t_size, s_min, s_size, flag, frames
    )


def json_list(value) -> list | None:
    """A list kept as a property: JSON text in Blender, a list in plain Python."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return None
    return list(value) if isinstance(value, list | tuple) else None
