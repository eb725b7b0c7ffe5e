"""A turn, uniform scale and offset of a whole recording, baked into its curves.

An export whose objects are not in the file's space (an explicit Scale or Axes,
a recording root the artist moved) writes each curve set through the transform
``x -> s * R @ x + t``: positions get all of it, gaze directions the turn,
rotations are turned by ``R`` (a quaternion product: each new component is a
fixed mix of the old four). A new curve that takes one old curve (scaled, flipped,
offset) is exact for every key kind. A new curve that mixes several old ones
is exact when they share their keys' times and handles' times (Bezier segments
are linear in their control points), or when they are all straight lines (they
are then mixed at the union of their key times); anything else cannot be
written without resampling, and is refused with the curves named.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..codec import FormatError
from ..global_transform import split
from ..transforms import matrix_to_quat
from . import keys as kc
from .convert import DIRECTION, LOC, ROT, BlenderCurve

#: Coefficients smaller than this take no part in a mix (float noise of a 90° turn).
NEGLIGIBLE = 1e-12


def _quat_left(q: np.ndarray) -> np.ndarray:
    """The 4x4 matrix of ``p -> q * p`` (w x y z)."""
    w, x, y, z = q
    return np.array([[w, -x, -y, -z], [x, w, -z, y], [y, z, w, -x], [z, -y, x, w]])


def _linear_only(bc: BlenderCurve) -> bool:
    return bool(np.all(np.asarray(bc.interpolation)[:-1] == kc.LINEAR))


def _same_times(curves: list[BlenderCurve]) -> bool:
    a = curves[0]
    return all(
        np.array_equal(a.co[:, 0], b.co[:, 0])
        and np.array_equal(a.handle_left[:, 0], b.handle_left[:, 0])
        and np.array_equal(a.handle_right[:, 0], b.handle_right[:, 0])
        and np.array_equal(a.interpolation, b.interpolation)
        for b in curves[1:]
    )


def _combined(curves: list[BlenderCurve], coefs: np.ndarray, offset: float) -> BlenderCurve:
    """The first curve with every key's and handle's value replaced by the mix."""
    first = curves[0]
    arrays = []
    for part in ("co", "handle_left", "handle_right"):
        out = getattr(first, part).astype(np.float64)
        out[:, 1] = offset + sum(
            float(k) * getattr(c, part)[:, 1].astype(np.float64)
            for k, c in zip(coefs, curves, strict=True)
        )
        arrays.append(out.astype(np.float32))
    co, hl, hr = arrays
    return replace(first, co=co, handle_left=hl, handle_right=hr, record=None)


def _mix(curves: list[BlenderCurve], coefs: np.ndarray, offset: float, what: str) -> BlenderCurve:
    """``sum(coefs[i] * curves[i]) + offset`` as one curve (no kept file bytes)."""
    cycles = {(c.cycle_before, c.cycle_after) for c in curves}
    if len(curves) == 1 or (len(cycles) == 1 and _same_times(curves)):
        return _combined(curves, coefs, offset)
    if cycles == {("NONE", "NONE")} and all(_linear_only(c) for c in curves):
        x = np.unique(np.concatenate([c.co[:, 0] for c in curves])).astype(np.float64)
        y = offset + sum(
            float(k) * np.interp(x, c.co[:, 0].astype(np.float64), c.co[:, 1].astype(np.float64))
            for k, c in zip(coefs, curves, strict=True)
        )
        co = np.stack([x, y], axis=1).astype(np.float32)
        interp = np.full(len(x), kc.LINEAR, np.uint8)
        return replace(
            curves[0],
            co=co,
            handle_left=co.copy(),
            handle_right=co.copy(),
            interpolation=interp,
            record=None,
        )
    raise FormatError(
        f"{what}: the transform mixes curves whose keys are at different times "
        "and are not all straight lines, which a recording cannot hold without "
        "resampling; export with As Imported, or with axes that only swap or flip"
    )


def bake_curves(
    curves: dict[tuple[str, str, int], BlenderCurve], matrix: np.ndarray
) -> dict[tuple[str, str, int], BlenderCurve]:
    """The curves (keyed by role, data path, index; values in Blender's axes) of a
    recording moved by ``matrix`` (4x4, a turn times a uniform scale plus an
    offset). Curves it does not touch (hand states) are passed through."""
    r, s, t = split(matrix)
    q = matrix_to_quat(r[None])[0]
    sets = (
        (LOC, s * r, t),
        (DIRECTION, r, np.zeros(3)),
        (ROT, _quat_left(q), np.zeros(4)),
    )
    out = dict(curves)
    for role in sorted({role for role, _, _ in curves}):
        for path, m, offset in sets:
            n = len(m)
            have = [curves.get((role, path, i)) for i in range(n)]
            if all(c is None for c in have):
                continue
            for i in range(n):
                use = [j for j in range(n) if abs(m[i, j]) > NEGLIGIBLE]
                missing = [j for j in use if have[j] is None]
                if missing:
                    raise FormatError(
                        f"{role} {path}: channel {missing[0]} has no F-curve, and the "
                        f"transform needs it for channel {i}: key every channel first"
                    )
                if use == [i] and m[i, i] == 1.0 and offset[i] == 0.0:
                    continue  # untouched: its kept file bytes still apply
                out[(role, path, i)] = _mix(
                    [have[j] for j in use], m[i, use], float(offset[i]), f"{role} {path}[{i}]"
                )
    return out
