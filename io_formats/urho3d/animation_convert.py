"""Urho3D animation <-> neutral animation (engine-local keys in Blender axes)."""

from __future__ import annotations

import numpy as np

from ..scene import Animation, BoneTrack
from . import axes
from .ani import CHANNEL_POSITION, CHANNEL_ROTATION, CHANNEL_SCALE, Track, keyframe_dtype
from .ani import Animation as UrhoAnimation


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
    return Animation(anim.name, float(anim.length), tracks, {"rigport_format": "urho3d"})


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
