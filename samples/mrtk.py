"""MRTK recordings built in code: there are no real ones in the corpus.

Everything follows the specification (and FORMAT-NOTES for what it leaves
out) and is written with :func:`recording.write`. The builders are
vectorised, so a 10-minute 60 Hz recording (about 400 curves of 36,000 keys)
takes well under a second.

- :func:`full_curve`: Unity keys mixing unweighted, in-, out- and
  both-weighted sides, broken tangents and (optionally) infinite tangents.
- :func:`sample_recording`: camera, both hands (some joints empty), gaze and
  markers with non-ASCII names, in any version and layout, with chosen
  presence flags and wrap modes.
- :func:`recorder_recording`: a 1.0 recording of linear keys as MRTK's
  recorder writes them (weighted mode Both, tangents and weights 0).
"""

from __future__ import annotations

import numpy as np

from ..io_formats.mrtk.recording import (
    FULL,
    FULL_KEY,
    JOINTS,
    SIMPLE,
    SIMPLE_KEY,
    WRAP_CLAMP_FOREVER,
    WRAP_MODES,
    Curve,
    Hands,
    Marker,
    Recording,
)

MARKER_NAMES = ("Start", "Греть руки", "ピンチ開始", "Ende ✋", "")


def _times(rng: np.random.Generator, n: int, duration: float) -> np.ndarray:
    """Increasing float32 key times from 0 over ``duration`` seconds, unevenly spaced."""
    steps = rng.uniform(0.5, 1.5, n)
    t = np.concatenate([[0.0], np.cumsum(steps[:-1])])
    if n > 1:
        t *= duration / t[-1]
    return t.astype(np.float32)


def full_curve(
    rng: np.random.Generator,
    n: int,
    duration: float = 4.0,
    amplitude: float = 1.0,
    offset: float = 0.0,
    infinite: bool = True,
    wraps: tuple[int, int] = (8, 8),
) -> Curve:
    """Keys of every kind: weights in [0.05, 0.5] keep each segment's weights <= 1 in sum."""
    keys = np.zeros(n, FULL_KEY)
    t = _times(rng, n, duration)
    keys["time"] = t
    keys["value"] = offset + amplitude * np.sin(2.0 * t + rng.uniform(0, 6)) * rng.uniform(
        0.5, 1.0, n
    )
    slope = amplitude * 2.0 * np.cos(2.0 * t)
    noise = amplitude * min(1.0, 10.0 * duration / max(n, 1))  # dense keys: gentler noise
    keys["in_tangent"] = slope + rng.normal(0, 0.3 * noise, n)
    broken = rng.random(n) < 0.5
    keys["out_tangent"] = np.where(broken, slope + rng.normal(0, noise, n), keys["in_tangent"])
    keys["in_weight"] = rng.uniform(0.05, 0.5, n)
    keys["out_weight"] = rng.uniform(0.05, 0.5, n)
    unweighted = rng.random(n) < 0.25
    keys["in_weight"][unweighted] = np.float32(1.0 / 3.0)  # as Unity stores new keys
    keys["weighted_mode"] = rng.integers(0, 4, n)
    if infinite and n > 3:
        m = max(1, n // 10)
        steps = rng.choice(np.arange(1, n - 1), size=2 * m, replace=False)
        keys["out_tangent"][steps[:m]] = np.inf
        keys["in_tangent"][steps[m:] + 1] = -np.inf
    return Curve(*wraps, keys)


def simple_curve(rng: np.random.Generator, n: int, duration: float = 4.0) -> Curve:
    full = full_curve(rng, n, duration, infinite=False)
    return Curve(full.pre_wrap, full.post_wrap, full.keys[["time", "value"]].astype(SIMPLE_KEY))


def bool_curve(rng: np.random.Generator, n: int, duration: float = 4.0) -> Curve:
    keys = np.zeros(n, SIMPLE_KEY)
    keys["time"] = _times(rng, n, duration)
    keys["value"] = np.arange(n) % 2 == 0
    return Curve(8, 8, keys)


def _pose(rng, n: int, layout: str, duration: float, wraps_at: int | None = None) -> list[Curve]:
    curves = []
    for i in range(7):
        wraps = (8, 8)
        if wraps_at is not None:
            wraps = (WRAP_MODES[(wraps_at + i) % 5], WRAP_MODES[(wraps_at + 2 * i + 1) % 5])
        c = (
            full_curve(rng, n, duration, 0.5, 1.0 if i == 1 else 0.0, wraps=wraps)
            if layout == FULL
            else simple_curve(rng, n, duration)
        )
        if layout == SIMPLE:
            c.pre_wrap, c.post_wrap = wraps
        curves.append(c)
    return curves


def sample_recording(
    version: tuple[int, int] = (1, 1),
    layout: str = FULL,
    camera: bool = True,
    hands: bool = True,
    gaze: bool = True,
    keys: int = 12,
    empty_joints: tuple[int, ...] = (0, 5, 26),
    markers: int = 4,
    duration: float = 4.0,
    seed: int = 5,
) -> Recording:
    """A recording with every kind of content; ``keys`` per curve (0 for empty curves)."""
    if version == (1, 0):
        layout, camera, hands, gaze = FULL, True, True, False
    rng = np.random.default_rng(seed)
    cam = _pose(rng, keys, layout, duration, wraps_at=0) if camera else None
    hand_data = None
    if hands:
        states = [bool_curve(rng, max(keys // 3, 1) if keys else 0, duration) for _ in range(4)]
        sides = []
        for _side in range(2):
            joints = []
            for j in range(len(JOINTS)):
                if j in empty_joints:
                    empty = Curve.empty(FULL_KEY if layout == FULL else SIMPLE_KEY)
                    joints.append([empty] * 7)
                else:
                    joints.append(_pose(rng, keys, layout, duration, wraps_at=j))
            sides.append(joints)
        hand_data = Hands(*states, *sides)
    ray = _pose(rng, keys, layout, duration, wraps_at=3)[:6] if gaze else None
    names = [MARKER_NAMES[i % len(MARKER_NAMES)] for i in range(markers)]
    times = np.sort(rng.uniform(0, duration, markers)).astype(np.float32)
    marks = [Marker(float(t), n) for t, n in zip(times, names, strict=True)]
    return Recording(*version, layout, cam, hand_data, ray, marks)


def long_recording(minutes: float = 10.0, rate: float = 60.0, layout: str = SIMPLE) -> Recording:
    """A benchmark-sized recording: camera, both hands, gaze, ``minutes * 60 * rate`` keys.

    The motion is smooth, as a recorder samples it; full-keyframe tangents
    follow it and the keys are unweighted.
    """
    n = int(minutes * 60 * rate)
    rec = sample_recording(
        layout=layout, keys=n, empty_joints=(), markers=20, duration=minutes * 60.0
    )
    rng = np.random.default_rng(17)
    for _, c in rec.float_curves():
        k = c.keys
        t = k["time"].astype(np.float64)
        w1, w2, p1, p2 = rng.uniform(0.2, 1.5), rng.uniform(1.5, 4.0), *rng.uniform(0, 6, 2)
        k["value"] = 0.3 * np.sin(w1 * t + p1) + 0.05 * np.sin(w2 * t + p2)
        if layout == FULL:
            slope = 0.3 * w1 * np.cos(w1 * t + p1) + 0.05 * w2 * np.cos(w2 * t + p2)
            k["in_tangent"] = k["out_tangent"] = slope
            k["weighted_mode"] = 0
            k["in_weight"] = k["out_weight"] = np.float32(1.0 / 3.0)
    return rec


def recorder_recording(minutes: float = 10.0, rate: float = 60.0) -> Recording:
    """A version 1.0 recording as MRTK's recorder writes one: camera and both hands
    sampled at ``rate`` Hz for ``minutes``, every float key linear (weighted mode Both,
    tangents and weights 0: zero-length handles in Blender), tracking and pinch states
    switching every few seconds, and 20 markers. Key times are frame times as a game
    loop gives them, each frame up to 10 % longer or shorter than ``1 / rate``."""
    n = int(round(minutes * 60 * rate)) + 1
    jitter = np.random.default_rng(12).uniform(-0.1, 0.1, n - 1)
    t = np.concatenate([[0.0], np.cumsum((1.0 + jitter) / rate)]).astype(np.float32)
    keys = np.zeros(n, FULL_KEY)
    keys["time"] = t
    keys["weighted_mode"] = 3

    def curve(i: int) -> Curve:
        k = keys.copy()
        freq, phase = 0.05 + 0.013 * i, 0.37 * i
        k["value"] = np.sin(2 * np.pi * freq * t + phase) * 0.3 + 0.01 * i
        return Curve(WRAP_CLAMP_FOREVER, WRAP_CLAMP_FOREVER, k)

    def state(i: int) -> Curve:
        times = np.arange(0.0, minutes * 60, 5.0 + i, dtype=np.float32)
        k = np.zeros(len(times), SIMPLE_KEY)
        k["time"] = times
        k["value"] = np.arange(len(times)) % 2 == 0
        return Curve(WRAP_CLAMP_FOREVER, WRAP_CLAMP_FOREVER, k)

    index = iter(range(1000))
    camera = [curve(next(index)) for _ in range(7)]
    states = [state(i) for i in range(4)]
    sides = [[[curve(next(index)) for _ in range(7)] for _ in JOINTS] for _ in range(2)]
    marks = [Marker(float(np.float32(m * minutes * 3.0)), f"marker {m}") for m in range(20)]
    return Recording(1, 0, FULL, camera, Hands(*states, *sides), None, marks)
