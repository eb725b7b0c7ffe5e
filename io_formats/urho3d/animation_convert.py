"""Urho3D animation <-> neutral animation (engine-local keys in Blender axes)."""

from __future__ import annotations

import base64
from typing import Any

import numpy as np

from ..codec import FormatError, Reader, Writer
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


def import_animation(anim: UrhoAnimation, convert: bool = True) -> Animation:
    tracks = []
    for t in anim.tracks:
        k = t.keys
        tracks.append(
            BoneTrack(
                bone=t.name,
                times=k["time"].astype(np.float64),
                translation=axes.vectors(k["position"], convert).astype(np.float64)
                if t.mask & CHANNEL_POSITION
                else None,
                rotation=axes.quats(k["rotation"], convert).astype(np.float64)
                if t.mask & CHANNEL_ROTATION
                else None,
                scale=axes.vectors(k["scale"], convert).astype(np.float64)
                if t.mask & CHANNEL_SCALE
                else None,
            )
        )
    extras: dict[str, Any] = {"rigport_format": "urho3d"}
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
