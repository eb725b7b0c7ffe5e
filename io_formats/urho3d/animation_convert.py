"""Urho3D animation <-> neutral animation (engine-local keys in Blender axes)."""

from __future__ import annotations

import base64
from typing import Any

import numpy as np

from ..codec import FormatError, Reader, Writer
from ..codec.errors import counted
from ..scene import Animation, BoneTrack
from . import axes
from .ani import (
    CHANNEL_POSITION,
    CHANNEL_ROTATION,
    CHANNEL_SCALE,
    TRACK_WEIGHT_VERSION,
    UAN2_VERSIONS,
    Track,
    keyframe_dtype,
    read_variant_tracks,
    write_variant_tracks,
)
from .ani import Animation as UrhoAnimation

RBFX_EXTRA = "urho_ani"  # UAN2 data Blender has no place for, kept on the action
STEPS_EXTRA = "_urho_steps"  # tracks with keys at one time (instant steps), as in the file
AXES_EXTRA = "urho_axes"  # "BLENDER" or "NONE": the axes the animation was imported with
ORDER_EXTRA = "_urho_tracks"  # {"order": track names as in the file}: Blender keys bone order


def split_steps(
    anim: UrhoAnimation, stepped: list[bool] | None = None
) -> tuple[UrhoAnimation, dict[str, Any]]:
    """``anim`` with one key per time in every track, and the tracks that had more
    (``stepped``: per track whether it has any, when the caller has tested).

    An instant step is two keys at one time (the value before and after a cut).
    A Blender F-curve holds one key per frame, so the last key of each such run
    goes to Blender and the file's whole track is kept (by track index) to be
    restored while Blender's keys are unedited (:func:`restore_steps`)."""
    kept: dict[str, Any] = {}
    tracks = []
    stepped = _stepped(anim.tracks) if stepped is None else stepped
    for i, t in enumerate(anim.tracks):
        if not stepped[i]:
            tracks.append(t)
            continue
        times = t.keys["time"]
        step = np.zeros(len(times), bool)
        step[:-1] = times[1:] == times[:-1]
        if step.any():
            kept[str(i)] = {
                "name": t.name,
                "mask": int(t.mask),
                "steps": int(step.sum()),
                "keys": base64.b64encode(np.ascontiguousarray(t.keys).tobytes()).decode("ascii"),
            }
            t = Track(t.name, t.mask, t.keys[~step], t.weight)
        tracks.append(t)
    out = UrhoAnimation(anim.name, anim.length, tracks, anim.version, anim.variant_tracks)
    return out, kept


def _stepped(tracks: list[Track]) -> list[bool]:
    """Per track: whether two of its keys in a row share a time; the tracks of
    one key count tested in one comparison."""
    out = [False] * len(tracks)
    for members in _by_key_count(tracks).values():
        _mark_steps(np.array([tracks[i].keys["time"] for i in members]), members, out)
    return out


def _mark_steps(times: np.ndarray, members: list[int], out: list[bool]) -> None:
    """``out[i]`` True for each track ``members[j]`` whose ``times[j]`` has two
    keys in a row at one time."""
    found = (times[:, 1:] == times[:, :-1]).any(axis=1).tolist()
    for i, f in zip(members, found, strict=True):
        out[i] = f


def _by_key_count(tracks: list[Track], mask: bool = False) -> dict[tuple[int, int], list[int]]:
    """Indices of ``tracks`` by key count (and channel mask with ``mask``)."""
    groups: dict[tuple[int, int], list[int]] = {}
    for i, t in enumerate(tracks):
        groups.setdefault((len(t.keys), t.mask if mask else 0), []).append(i)
    return groups


def steps_warning(kept: dict[str, Any] | None) -> str | None:
    """The import warning for the instant steps :func:`split_steps` kept, or None."""
    if not kept:
        return None
    n = sum(int(k["steps"]) for k in kept.values())
    return (
        f"{counted(n, 'key')} sharing a time with another key (instant steps) in "
        f"{counted(len(kept), 'track')}; "
        "Blender holds one key per frame, so the file's keys are kept and written back "
        "while those tracks are unedited"
    )


def _same_keys(a: np.ndarray, b: np.ndarray, mask: int) -> bool:
    """Keys equal within what a trip through Blender changes (float32 curves)."""
    if len(a) != len(b):
        return False

    def close(x, y) -> bool:
        x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
        return bool(np.all(np.abs(x - y) <= 1e-4 * np.maximum(1.0, np.abs(x))))

    if not close(a["time"], b["time"]):
        return False
    if mask & CHANNEL_POSITION and not close(a["position"], b["position"]):
        return False
    if mask & CHANNEL_SCALE and not close(a["scale"], b["scale"]):
        return False
    if mask & CHANNEL_ROTATION:
        qa, qb = a["rotation"].astype(np.float64), b["rotation"].astype(np.float64)
        sign = np.where(np.sum(qa * qb, axis=1, keepdims=True) < 0, -1.0, 1.0)
        if not close(qa, qb * sign):
            return False
    return True


def file_track_order(anim: UrhoAnimation, kept: Any) -> None:
    """Put ``anim``'s tracks in the file's order (``kept``: :data:`ORDER_EXTRA`);
    tracks the file did not have follow in their own order."""
    order = kept.get("order") if isinstance(kept, dict) else None
    if not isinstance(order, list):
        return
    place = {name: i for i, name in enumerate(order) if isinstance(name, str)}
    ranked = sorted(
        enumerate(anim.tracks), key=lambda it: (place.get(it[1].name, len(place)), it[0])
    )
    anim.tracks = [t for _, t in ranked]


def restore_steps(anim: UrhoAnimation, kept: Any) -> list[str]:
    """Put back the file's instant steps (from :func:`split_steps`) in every track
    whose keys are still the ones imported; returns a warning per edited track."""
    if not isinstance(kept, dict):
        return []
    notes = []
    for index, info in kept.items():
        try:
            i, name, mask = int(index), info["name"], int(info["mask"])
            full = np.frombuffer(base64.b64decode(info["keys"]), keyframe_dtype(mask))
        except (KeyError, TypeError, ValueError) as err:
            raise FormatError(f"the action's {STEPS_EXTRA} property is damaged: {err}") from None
        track = anim.tracks[i] if i < len(anim.tracks) else None
        if track is None or track.name != name:
            track = next((t for t in anim.tracks if t.name == name), None)
        if track is None:
            continue
        times = full["time"]
        step = np.zeros(len(times), bool)
        step[:-1] = times[1:] == times[:-1]
        if track.mask == mask and _same_keys(full[~step], track.keys, mask):
            track.keys = full.copy()
        else:
            notes.append(
                f"track {name!r} was edited: its {int(step.sum())} instant steps "
                "(keys at one time) are not written"
            )
    return notes


def _stacked(keys: list[np.ndarray], dtype: np.dtype, count: int) -> np.ndarray:
    """Records of one layout as one (tracks, count) array: their bytes joined when
    each is a contiguous array of ``dtype`` (copying records one array at a time
    costs ten times as much), else row by row."""
    if all(k.dtype == dtype and k.flags.c_contiguous for k in keys):
        return np.frombuffer(b"".join(keys), dtype).reshape(len(keys), count)
    out = np.empty((len(keys), count), dtype)
    for row, k in zip(out, keys, strict=True):
        row[...] = k
    return out


def _blocks(tracks: list[Track]) -> list[tuple[list[int], np.ndarray]]:
    """The indices of the tracks of each key count and mask, and their keys as one
    (tracks, keys) array (:func:`_stacked`)."""
    return [
        (members, _stacked([tracks[i].keys for i in members], keyframe_dtype(mask), count))
        for (count, mask), members in _by_key_count(tracks, mask=True).items()
    ]


def import_animation(anim: UrhoAnimation, convert: bool = True) -> Animation:
    blocks = _blocks(anim.tracks)
    stepped = [False] * len(anim.tracks)
    for members, k in blocks:
        _mark_steps(k["time"], members, stepped)
    steps: dict[str, Any] = {}
    if any(stepped):
        anim, steps = split_steps(anim, stepped)
        blocks = _blocks(anim.tracks)
    tracks: list[BoneTrack | None] = [None] * len(anim.tracks)
    for members, k in blocks:
        # the tracks of one key count and mask converted as one (B, K) block, each
        # track a view of it: the same operations per element, so the same bits
        mask = anim.tracks[members[0]].mask
        times = k["time"].astype(np.float64)  # C order: later stacks are plain copies
        translation = (
            axes.vectors(k["position"], convert).astype(np.float64, order="C")
            if mask & CHANNEL_POSITION
            else None
        )
        rotation = (
            axes.quats(k["rotation"], convert).astype(np.float64, order="C")
            if mask & CHANNEL_ROTATION
            else None
        )
        scale = (
            axes.vectors(k["scale"], convert).astype(np.float64, order="C")
            if mask & CHANNEL_SCALE
            else None
        )
        for j, i in enumerate(members):
            tracks[i] = BoneTrack(
                bone=anim.tracks[i].name,
                times=times[j],
                translation=None if translation is None else translation[j],
                rotation=None if rotation is None else rotation[j],
                scale=None if scale is None else scale[j],
            )
    extras: dict[str, Any] = {
        "rigport_format": "urho3d",
        AXES_EXTRA: "BLENDER" if convert else "NONE",
        ORDER_EXTRA: {"order": [t.name for t in anim.tracks]},
    }
    if steps:
        extras[STEPS_EXTRA] = steps
    if anim.version is not None:
        extras[RBFX_EXTRA] = rbfx_extras(anim)
    return Animation(anim.name, float(anim.length), tracks, extras)


def rbfx_extras(anim: UrhoAnimation) -> dict[str, Any]:
    """What a UAN2 file holds beyond bone keys: its version, the track weights
    and the variant tracks (their encoded bytes, base64)."""
    weights = anim.version >= TRACK_WEIGHT_VERSION
    w = Writer()
    write_variant_tracks(w, anim.variant_tracks, weights)
    return {
        "version": int(anim.version),
        "weights": {t.name: float(t.weight) for t in anim.tracks},
        "variant_tracks": base64.b64encode(w.getvalue()).decode("ascii"),
    }


def apply_rbfx_extras(anim: UrhoAnimation, extras: Any) -> UrhoAnimation:
    """Make ``anim`` the UAN2 file ``extras`` (from :func:`rbfx_extras`) describes."""
    if not isinstance(extras, dict) or extras.get("version") not in UAN2_VERSIONS:
        raise FormatError(f"the action's {RBFX_EXTRA} property is damaged: {extras!r}")
    anim.version = int(extras["version"])
    weights = extras.get("weights") or {}
    for t in anim.tracks:
        t.weight = float(weights.get(t.name, 1.0))
    raw = base64.b64decode(extras.get("variant_tracks") or "")
    if raw:
        r = Reader(raw)
        anim.variant_tracks = read_variant_tracks(r, anim.version >= TRACK_WEIGHT_VERSION)
    return anim


def export_animation(anim: Animation, convert: bool = True) -> UrhoAnimation:
    tracks = []
    for bt in anim.tracks:
        mask = (
            (CHANNEL_POSITION if bt.translation is not None else 0)
            | (CHANNEL_ROTATION if bt.rotation is not None else 0)
            | (CHANNEL_SCALE if bt.scale is not None else 0)
        )
        keys = np.zeros(len(bt.times), keyframe_dtype(mask))
        keys["time"] = bt.times
        if bt.translation is not None:
            keys["position"] = axes.vectors(bt.translation, convert)
        if bt.rotation is not None:
            keys["rotation"] = axes.quats(bt.rotation, convert)
        if bt.scale is not None:
            keys["scale"] = axes.vectors(bt.scale, convert)
        tracks.append(Track(bt.bone, mask, keys))
    return UrhoAnimation(anim.name, float(np.float32(anim.length)), tracks)
