"""Blender objects -> the F-curves of an MRTK recording, read in bulk."""

from __future__ import annotations

import bpy
import numpy as np

from ...io_formats.codec.errors import counted
from ...io_formats.mrtk import keys as kc
from ...io_formats.mrtk.convert import BlenderCurve, hand_role, joint_role
from ...io_formats.mrtk.recording import JOINTS, Marker
from ..blender import compat
from .build import CURVES, ROLE, WRAPS, curve_key, interpolation_codes, recording_meta


def recording_collections(scene: bpy.types.Scene) -> list[bpy.types.Collection]:
    """Collections in the scene that an MRTK import made."""
    found = []
    stack = list(scene.collection.children)
    while stack:
        coll = stack.pop(0)
        if recording_meta(coll):
            found.append(coll)
        stack.extend(coll.children)
    return found


def roles_in(collection: bpy.types.Collection) -> dict[str, bpy.types.Object]:
    return {str(o[ROLE]): o for o in collection.all_objects if isinstance(o.get(ROLE), str)}


def roles_from_mapping(
    camera=None, left=None, right=None, gaze=None
) -> dict[str, bpy.types.Object]:
    """Roles for objects the user picked: a hand's joints are its children named after them."""
    out: dict[str, bpy.types.Object] = {}
    if camera is not None:
        out["camera"] = camera
    if gaze is not None:
        out["gaze"] = gaze
    for side, obj in (("L", left), ("R", right)):
        if obj is None:
            continue
        out[hand_role(side)] = obj
        by_joint = {}
        for child in obj.children:
            role = child.get(ROLE)
            if isinstance(role, str) and role.startswith(f"joint.{side}."):
                by_joint[int(role.rsplit(".", 1)[1])] = child
                continue
            base = child.name.split(".")[0]
            if base in JOINTS:
                by_joint.setdefault(JOINTS.index(base), child)
        for i, child in by_joint.items():
            out[joint_role(side, i)] = child
    return out


EASED = 255  # _code_table's code for Blender's easing interpolations


def _code_table() -> np.ndarray:
    """Blender's interpolation enum value (uint8) -> our code; easings are EASED."""
    table = np.full(256, EASED, np.uint8)
    table[interpolation_codes()] = np.arange(len(kc.INTERPOLATIONS))
    return table


def read_fcurve(
    fc, record: bytes | None, wraps=None, table: np.ndarray | None = None
) -> tuple[BlenderCurve, int]:
    """The keys of ``fc`` and how many use an interpolation MRTK cannot hold.

    The handles of a curve of lines and steps only shape nothing and are not
    read (two of the four bulk reads): the keys stand in for them.
    """
    kp = fc.keyframe_points
    k = len(kp)
    co = np.empty((k, 2), np.float32)
    kp.foreach_get("co", co.ravel())
    raw = np.empty(k, np.uint8)
    kp.foreach_get("interpolation", raw)
    codes = (_code_table() if table is None else table)[raw]
    odd = np.flatnonzero(codes == EASED)
    codes[odd] = kc.BEZIER
    arrays = [co, co, co]
    if len(odd) or np.any(codes == kc.BEZIER):
        for i, prop in ((1, "handle_left"), (2, "handle_right")):
            arrays[i] = np.empty((k, 2), np.float32)
            kp.foreach_get(prop, arrays[i].ravel())
    before = after = "NONE"
    for mod in fc.modifiers:
        if mod.type == "CYCLES" and not mod.mute:
            before, after = mod.mode_before, mod.mode_after
            break
    kept = None
    if wraps is not None and len(wraps) == 2:
        kept = (int(wraps[0]), int(wraps[1]))
    bc = BlenderCurve(*arrays, codes, before, after, record, kept, compat.HANDLE_MIN_X)
    return bc, len(odd)


def extract_curves(
    objects: dict[str, bpy.types.Object],
) -> tuple[dict[tuple[str, str, int], BlenderCurve], list[str]]:
    """Every F-curve of the objects' actions, keyed by (role, data path, index)."""
    curves: dict[tuple[str, str, int], BlenderCurve] = {}
    warnings: list[str] = []
    eased = 0
    table = _code_table()
    for role, obj in objects.items():
        ad = obj.animation_data
        if ad is None or ad.action is None:
            continue
        stored = ad.action.get(CURVES)
        kept_wraps = ad.action.get(WRAPS)
        for fc in compat.fcurves(ad.action):
            key = curve_key(fc.data_path, fc.array_index)
            record = stored.get(key) if stored is not None else None
            wraps = kept_wraps.get(key) if kept_wraps is not None else None
            bc, odd = read_fcurve(fc, record if isinstance(record, bytes) else None, wraps, table)
            eased += odd
            curves[(role, fc.data_path, fc.array_index)] = bc
    if eased:
        warnings.append(
            f"{counted(eased, 'key')} with an easing interpolation MRTK cannot hold: written "
            "from the Bezier handles"
        )
    return curves, warnings


def recording_markers(
    scene: bpy.types.Scene, meta: dict, fps: float, mode: str
) -> tuple[list[Marker], list[str]]:
    """Markers to write: the recording's own (exact times and full names, following
    timeline moves by name), every timeline marker (``SCENE``) or none.

    Blender cuts marker names at 63 bytes: the metadata keeps each full name and,
    for a long one, the name Blender holds, which is what the timeline is searched for.
    """
    if mode == "NONE":
        return [], []
    timeline = sorted(((m.frame, m.name) for m in scene.timeline_markers), key=lambda x: x[0])
    if mode == "SCENE":
        return [Marker(frame / fps, name) for frame, name in timeline], []
    pool = list(timeline)
    out, warnings = [], []
    for name, time, *held in meta.get("markers", []):
        shown = held[0] if held else name  # what Blender holds of a long name
        exact = (round(time * meta.get("fps", fps)), shown)
        if exact in pool:
            pool.remove(exact)
            out.append(Marker(float(time), name))
            continue
        moved = next((m for m in pool if m[1] == shown), None)
        if moved is None:
            warnings.append(f"marker {name!r} is no longer in the timeline: not written")
            continue
        pool.remove(moved)
        out.append(Marker(moved[0] / fps, name))
    return out, warnings
