"""MRTK input animation recordings (.bin) into Blender, without an operator.

An import puts its recording's objects under one root empty named after the
recording: the axes and scale options go on that root (the curves stay the
file's, in Unity's axes turned into Blender's by the codec).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ClassVar

import bpy
import numpy as np

from ...io_formats.mrtk import recording
from ...io_formats.mrtk.convert import import_recording
from ..common import in_file
from ..conventions import IMPORT_TRANSFORM, FrameRateOptions, option_matrix, place_roots
from ..result import Result, counted
from .build import BuiltRecording, build_recording

#: Unity's axes: +Z forward, +Y up (the codec turns them into Blender's).
UNITY_FORWARD, UNITY_UP = "Z", "Y"


@dataclass(frozen=True)
class RecordingImportOptions:
    """``import_anim.mrtk_input``: the Transform panel's options and the frame rate key
    times convert at. ``convert`` (no operator property): Unity's axes turned into
    Blender's; False keeps the curves exactly as in the file."""

    axis_forward: str = UNITY_FORWARD
    axis_up: str = UNITY_UP
    global_scale: float = 1.0
    frame_rate: str = "SCENE"
    fps: float = 30.0
    set_scene_timing: bool = True
    convert: bool = True
    engine_axes: ClassVar[tuple[str, str]] = (UNITY_FORWARD, UNITY_UP)
    transform_export: ClassVar[bool] = False

    def frames_per_second(self, context) -> float:
        """The rate key times convert at (``FrameRateOptions.frames_per_second``)."""
        return FrameRateOptions.frames_per_second(self, context)


@dataclass
class RecordingResult(Result):
    """A recording import's :class:`Result` and what it built (for an export of it)."""

    recording: BuiltRecording = field(default_factory=BuiltRecording)


def _add_root(built: BuiltRecording, matrix: np.ndarray) -> bpy.types.Object:
    """The recording's root empty (named after it) over its top objects, holding the
    import transform."""
    coll = built.collection
    root = bpy.data.objects.new(coll.name, None)
    built.built.objects.append(root)
    root.empty_display_type = "PLAIN_AXES"
    root.empty_display_size = 0.1
    coll.objects.link(root)
    for obj in built.built.objects:
        if obj is not root and obj.parent is None:
            obj.parent = root
    place_roots([root], matrix)
    return root


def recording_root(coll) -> bpy.types.Object | None:
    """The root empty an import put over a recording collection's objects."""
    if coll is None:
        return None
    for obj in coll.objects:
        if obj.parent is None and IMPORT_TRANSFORM in obj and obj.type == "EMPTY":
            return obj
    return None


def import_file(
    context,
    path: str,
    options: RecordingImportOptions,
    progress: Callable[[float], None] | None = None,
) -> RecordingResult:
    """Import one recording under a root empty carrying the axes and scale options; a
    FormatError leaves nothing behind. ``progress`` is called with the fraction of
    curves built so far."""
    name = os.path.splitext(os.path.basename(path))[0]
    # the keys stay in the file until the build reaches their curve (recording.opened);
    # NaN values are data kept exactly, not numpy's to warn about
    with in_file(path), recording.opened(path) as rec, np.errstate(invalid="ignore"):
        plan = import_recording(rec, options.convert)
        fps = options.frames_per_second(context)
        built = build_recording(context, plan, name, fps, progress)
    try:
        _add_root(built, option_matrix(options))
    except Exception:
        built.discard()
        raise
    result = RecordingResult(
        summary=f"{counted(len(built.objects), 'object')}, {counted(len(built.markers), 'marker')}",
        objects=list(built.objects.values()),
        actions=list(built.built.actions),
        undo=[built.discard],
        recording=built,
    )
    result.warn(*plan.warnings)
    if built.shortened:
        result.warn(
            f"{built.shortened} marker names are longer than Blender's 63 bytes: the timeline "
            "shows them cut; the recording's full names are written back on export"
        )
    return result.info(result.summary)
