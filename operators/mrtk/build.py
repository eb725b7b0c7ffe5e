"""An MRTK recording plan -> a collection of animated empties, a camera and markers.

Every Unity curve becomes one F-curve, written in bulk: ``keyframe_points.add``
and one ``foreach_set`` per property, enums as uint8 (Blender's own byte
fields, which ``foreach_set`` then copies directly, ten times faster than
int32), with FREE handles. Whatever the build makes is recorded, so a failure
removes it all again.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field

import bpy
import numpy as np

from ...io_formats.mrtk import keys as kc
from ...io_formats.mrtk.convert import DIRECTION, ImportPlan
from ...io_formats.mrtk.recording import JOINTS
from ..blender import compat
from ..blender.actions import keep_actions
from ..blender.build import Built
from ..blender.guard import blender_name

ROLE = "_mrtk_role"
CURVES = "_mrtk_curves"  # action property: {"<data path>[<index>]": stored file curve}
WRAPS = "_mrtk_wraps"  # action property: {"<data path>[<index>]": [pre wrap, post wrap]}
META = "_mrtk_meta"  # collection property: JSON (version, layout, axes, fps, markers)


def curve_key(data_path: str, index: int) -> str:
    return f"{data_path}[{index}]"


def object_name(role: str) -> str:
    kind, _, rest = role.partition(".")
    if kind == "camera":
        return "Camera"
    if kind == "gaze":
        return "Gaze"
    if kind == "hand":
        return f"Hand.{rest}"
    side, _, index = rest.partition(".")
    return f"{JOINTS[int(index)]}.{side}"


@dataclass
class BuiltRecording:
    """What one import made: collection, objects by role, camera data, timeline markers."""

    built: Built = field(default_factory=Built)
    collection: bpy.types.Collection | None = None
    objects: dict[str, bpy.types.Object] = field(default_factory=dict)
    cameras: list = field(default_factory=list)
    markers: list = field(default_factory=list)
    scene: bpy.types.Scene | None = None
    axes: str = "BLENDER"
    shortened: int = 0  # marker names longer than Blender holds (kept in the metadata)

    def discard(self) -> None:
        if self.scene is not None:
            for m in reversed(self.markers):
                try:
                    self.scene.timeline_markers.remove(m)
                except (ReferenceError, RuntimeError):
                    pass
        self.markers.clear()
        self.built.discard()
        for cam in self.cameras:
            try:
                bpy.data.cameras.remove(cam)
            except (ReferenceError, RuntimeError):
                pass
        self.cameras.clear()


def _enum(name: str, prop: str = "interpolation") -> int:
    return compat.enum_value(bpy.types.Keyframe, prop, name)


@functools.cache
def interpolation_codes() -> np.ndarray:
    """Our interpolation code (keys.CONSTANT ...) -> Blender's enum value, as uint8
    (read-only: a Blender build's enum values are fixed, so they are looked up once)."""
    codes = np.array([_enum(name) for name in kc.INTERPOLATIONS], np.uint8)
    codes.flags.writeable = False
    return codes


@functools.cache
def _blender_interpolation() -> np.ndarray | None:
    """:func:`interpolation_codes`, or None where Blender's codes are ours (0, 1, 2), as
    in every supported version: no lookup then."""
    codes = interpolation_codes()
    return None if np.array_equal(codes, np.arange(len(kc.INTERPOLATIONS))) else codes


def _in_order(co: np.ndarray, hl: np.ndarray, hr: np.ndarray) -> bool:
    """Keys strictly increasing in time, each handle on its own side of its key."""
    x = co[:, 0]
    return bool(np.all(x[1:] > x[:-1]) and np.all(hl[:, 0] <= x) and np.all(hr[:, 0] >= x))


def fill_fcurve(fc, co, hl, hr, interp: np.ndarray) -> None:
    """Keys from float32 (K, 2) arrays in frames and interpolation codes (the handles
    may be None for a curve without Bezier keys).

    Curves with Bezier keys get every handle, FREE. A curve of lines and steps
    only (MRTK 1.1 files, bool curves, MRTK's recorder keys) gets no handles:
    they shape nothing, and Blender's automatic handles (its default for new
    keys) are computed by the first edit that needs them; that saves two of
    the six bulk calls on 14 million keys.

    ``FCurve.update()`` only sorts keys and recalculates handles. Keys in order
    with FREE handles on their sides need neither, and would only get the
    version's handle nudge (``compat.HANDLE_MIN_X``), so it runs only for
    Bezier curves that are not already in order.
    """
    k = len(co)
    if not k:
        return
    interp = np.asarray(interp, np.uint8)
    kp = fc.keyframe_points
    kp.add(k)
    kp.foreach_set("co", np.ascontiguousarray(co, np.float32).ravel())
    codes = _blender_interpolation()
    kp.foreach_set("interpolation", interp if codes is None else codes[interp])
    if hl is None or not np.any(interp == kc.BEZIER):
        return
    kp.foreach_set("handle_left", np.ascontiguousarray(hl, np.float32).ravel())
    kp.foreach_set("handle_right", np.ascontiguousarray(hr, np.float32).ravel())
    free = np.full(k, _enum("FREE", "handle_left_type"), np.uint8)
    kp.foreach_set("handle_left_type", free)
    kp.foreach_set("handle_right_type", free)
    if not _in_order(co, hl, hr):
        fc.update()


def _empty(name: str, display: str, size: float, built: Built, coll, parent=None):
    obj = bpy.data.objects.new(name, None)
    built.objects.append(obj)
    obj.empty_display_type = display
    obj.empty_display_size = size
    obj.rotation_mode = "QUATERNION"
    coll.objects.link(obj)
    if parent is not None:
        obj.parent = parent
    return obj


def _gaze_arrow(gaze, built: Built, coll) -> None:
    """A child arrow turned along the animated direction by drivers (simple expressions)."""
    arrow = _empty("Gaze Arrow", "SINGLE_ARROW", 0.5, built, coll, gaze)
    arrow.rotation_mode = "XYZ"
    for axis, expr in ((0, "atan2(sqrt(x*x+y*y), z)"), (2, "atan2(x, -y)")):
        drv = arrow.driver_add("rotation_euler", axis).driver
        drv.type = "SCRIPTED"
        for i, var_name in enumerate("xyz"):
            var = drv.variables.new()
            var.name = var_name
            var.targets[0].id = gaze
            var.targets[0].data_path = f"{DIRECTION}[{i}]"
        drv.expression = expr


def _make_object(role: str, built: Built, coll, out: BuiltRecording):
    name = object_name(role)
    if role == "camera":
        obj = _empty(name, "ARROWS", 0.1, built, coll)
        cam = bpy.data.cameras.new("Camera View")
        out.cameras.append(cam)
        view = bpy.data.objects.new("Camera View", cam)
        built.objects.append(view)
        coll.objects.link(view)
        view.parent = obj
        # Blender cameras look down -Z with +Y up; Unity's look down +Z with +Y up.
        if out.axes == "BLENDER":
            view.rotation_euler = (math.pi / 2, 0.0, 0.0)
        else:
            view.rotation_euler = (0.0, math.pi, 0.0)
        return obj
    if role.startswith("hand."):
        obj = _empty(name, "CUBE", 0.02, built, coll)
        obj["tracked"] = False
        obj["pinch"] = False
        return obj
    if role.startswith("joint."):
        side = role.split(".")[1]
        return _empty(name, "SPHERE", 0.008, built, coll, out.objects[f"hand.{side}"])
    obj = _empty(name, "PLAIN_AXES", 0.05, built, coll)
    obj["direction"] = [0.0, 0.0, 1.0]
    _gaze_arrow(obj, built, coll)
    return obj


def build_recording(
    context,
    plan: ImportPlan,
    name: str,
    fps: float,
    progress: Callable[[float], None] | None = None,
) -> BuiltRecording:
    """A collection for the recording in the scene; all or nothing.

    ``progress`` is called with the fraction of curves built so far.
    """
    name = blender_name(name)
    out = BuiltRecording(scene=context.scene, axes=plan.meta.get("axes", "BLENDER"))
    try:
        coll = bpy.data.collections.new(name)
        out.built.collections.append(coll)
        out.collection = coll
        context.scene.collection.children.link(coll)
        for role in plan.roles:
            obj = _make_object(role, out.built, coll, out)
            obj[ROLE] = role
            out.objects[role] = obj
        _fill_curves(plan, out, name, fps, progress)
        meta = dict(plan.meta)
        meta["fps"] = float(fps)
        meta["markers"] = _add_markers(context.scene, plan, out, fps)
        coll[META] = json.dumps(meta)
    except Exception:
        out.discard()
        raise
    return out


def _fill_curves(
    plan: ImportPlan,
    out: BuiltRecording,
    name: str,
    fps: float,
    progress: Callable[[float], None] | None,
) -> None:
    """One action per animated object, one F-curve per file curve (the file's curve
    and wrap modes stored on the action for the export), each action stashed on its
    object."""
    actions: dict[str, bpy.types.Action] = {}
    makers: dict[str, Callable] = {}  # per action: its channel bag looked up once
    for i, planned in enumerate(plan.curves):
        if progress is not None and i % 16 == 0:
            progress(i / len(plan.curves))
        c = plan.loaded(planned)  # an opened file's keys are read now, one curve at a time
        obj = out.objects[c.target]
        action = actions.get(c.target)
        if action is None:
            action = bpy.data.actions.new(f"{name} {obj.name}")
            out.built.actions.append(action)
            actions[c.target] = action
            action[CURVES] = {}
            action[WRAPS] = {}
            makers[c.target] = compat.fcurve_maker(action)
        fc = makers[c.target](c.data_path, c.index, obj.name)
        # Before the keys: setting a modifier's property recalculates the curve's
        # handles (twice over 36,000 keys per curve of a 10-minute recording).
        if c.cycle_before != "NONE" or c.cycle_after != "NONE":
            mod = fc.modifiers.new("CYCLES")
            mod.mode_before = c.cycle_before
            mod.mode_after = c.cycle_after
        co, hl, hr, interp = c.frames(fps)
        key = curve_key(c.data_path, c.index)
        # kept before the keys go to Blender, while the file's are in the CPU's cache
        action[CURVES][key] = c.stored(co, fps, copied=True, kept=plan.kept)
        fill_fcurve(fc, co, hl, hr, interp)
        action[WRAPS][key] = list(c.wraps)
    for role, action in actions.items():
        keep_actions(out.objects[role], [action])


def _add_markers(scene, plan: ImportPlan, out: BuiltRecording, fps: float) -> list:
    """The recording's markers on the timeline; their metadata entries (name, time,
    and the timeline's name where Blender shortened it). ``out.shortened`` counts
    those."""
    held = []
    for m in plan.markers:
        frame = m.time * fps
        marker = scene.timeline_markers.new(  # the file's own values are in META
            blender_name(m.name),
            frame=round(frame) if abs(frame) < 2**30 else 0,  # NaN/Inf/huge: frame 0
        )
        out.markers.append(marker)
        held.append(marker.name)
    out.shortened = sum(name != m.name for m, name in zip(plan.markers, held, strict=True))
    return [
        [m.name, m.time, *([name] if name != m.name else [])]
        for m, name in zip(plan.markers, held, strict=True)
    ]


def recording_meta(coll) -> dict:
    """The stored import metadata of a recording collection ({} for any other)."""
    text = coll.get(META) if coll is not None else None
    if not isinstance(text, str):
        return {}
    try:
        meta = json.loads(text)
    except ValueError:
        return {}
    return meta if isinstance(meta, dict) else {}
