"""Blender to MRTK input animation recordings (.bin), without an operator.

An export writes the curves back in the recording root's recorded space ("As
Imported") or the options' one, baking the difference into the curves only
when there is one. :func:`export_file` takes what the export operator takes
(one options dataclass) and chooses the recordings; :func:`write_recording`
writes the objects it is given (batch, tests).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import ClassVar

import bpy
import numpy as np

from ...io_formats.codec import FormatError
from ...io_formats.codec.files import write_atomic
from ...io_formats.global_transform import is_identity
from ...io_formats.mrtk import recording
from ...io_formats.mrtk.convert import ExportOptions, ExportStats, export_recording
from ...io_formats.mrtk.placement import bake_curves
from ..animation_files import action_paths
from ..conventions import ExportScope, FrameRateOptions, file_matrix, scene_fps
from ..result import Result, counted
from .build import recording_meta
from .extract import (
    extract_curves,
    recording_collections,
    recording_markers,
    roles_from_mapping,
    roles_in,
)
from .importer import UNITY_FORWARD, UNITY_UP, recording_root

VERSIONS = {
    "V11_SIMPLE": (1, 1, recording.SIMPLE),
    "V11_FULL": (1, 1, recording.FULL),
    "V10": (1, 0, recording.FULL),
}


@dataclass(frozen=True)
class RecordingExportOptions:
    """``export_anim.mrtk_input``: the export's scope (``conventions.ExportScope``) and
    transform, which recordings, the version and layout, the markers and the objects
    picked for Active Recording."""

    axis_forward: str = UNITY_FORWARD
    axis_up: str = UNITY_UP
    global_scale: float = 1.0
    use_transform_as_imported: bool = True
    use_selection: bool = False
    use_visible: bool = False
    use_active_collection: bool = False
    collection: str = ""
    frame_rate: str = "AUTO"
    fps: float = 30.0
    export_animations: str = "ACTIVE"
    use_action_names: bool = False
    version: str = "AUTO"
    tolerance: float = 1e-4
    markers: str = "RECORDING"
    camera_object: str = ""
    left_hand: str = ""
    right_hand: str = ""
    gaze_object: str = ""
    engine_axes: ClassVar[tuple[str, str]] = (UNITY_FORWARD, UNITY_UP)
    transform_export: ClassVar[bool] = True

    def scope_objects(self, context, types: tuple[str, ...]) -> list:
        """The objects of ``types`` this export takes (``ExportScope.scope_objects``)."""
        return ExportScope.scope_objects(self, context, types)

    def recording_fps(self, context) -> float | None:
        """The rate key frames convert to seconds at (None: as imported)."""
        if self.frame_rate == "AUTO":
            return None
        return FrameRateOptions.frames_per_second(self, context)


def write_recording(
    context,
    path: str,
    objects: dict,
    meta: dict,
    options: RecordingExportOptions,
    matrix: np.ndarray | None = None,
) -> Result:
    """Write the recording of ``objects`` (by role) with ``meta`` (its import's, {} for
    none). ``matrix`` (from the objects' space into the file's, identity by default) is
    baked into the curves when it is not the identity."""
    if not objects and not meta:  # a recording of markers only still has its collection
        raise FormatError("nothing to export: no MRTK recording objects (camera, hands, gaze)")
    if options.version == "AUTO":
        major, minor = (int(x) for x in meta.get("version", "1.1").split("."))
        layout = meta.get("layout", recording.SIMPLE)
    else:
        major, minor, layout = VERSIONS[options.version]
    axes = meta.get("axes", "BLENDER")
    fps = options.recording_fps(context) or float(meta.get("fps", 0.0)) or scene_fps(context)
    curves, warnings = extract_curves(objects)
    if matrix is not None and not is_identity(matrix):
        try:
            curves = bake_curves(curves, matrix)
        except (FormatError, ValueError) as err:
            raise FormatError(
                f"cannot write the recording's transform: {err}", None, path
            ) from None
    marks, more = recording_markers(context.scene, meta, fps, options.markers)
    warnings += more
    opts = ExportOptions(
        major, minor, layout, axes == "BLENDER", fps, options.tolerance, keys_later=True
    )
    stats = ExportStats()
    rec, more = export_recording(curves, set(objects), marks, opts, stats)
    warnings += more
    write_atomic(path, lambda: recording.write_parts(rec))
    done = Result(summary=stats.line())
    return done.info(f"{os.path.basename(path)}: {done.summary}").warn(*warnings)


@dataclass(frozen=True)
class _Job:
    """One file of an export: where, the recording collection, its objects by role
    and its import metadata."""

    path: str
    collection: bpy.types.Collection | None
    objects: dict
    meta: dict


def export_file(context, path: str, options: RecordingExportOptions) -> Result:
    """The recording of the active object (or the only one, or the objects picked) to
    ``path``, or with All Recordings every recording collection in the export's scope,
    one file each beside it."""
    jobs = _jobs(context, path, options)
    warnings: list[str] = []
    lines: list[str] = []
    for job in jobs:
        root = recording_root(job.collection)
        space = np.array(root.matrix_world, np.float64) if root is not None else None
        matrix = file_matrix(options, root, space)
        with np.errstate(invalid="ignore"):  # NaN values are data, written back exactly
            done = write_recording(context, job.path, job.objects, job.meta, options, matrix)
        prefix = f"{os.path.basename(job.path)}: " if len(jobs) > 1 else ""
        warnings += [prefix + w for w in done.warnings]
        lines += done.infos
    written = f"{counted(len(jobs), 'MRTK recording')} written"
    out = Result(summary=written).info(written)
    for line in lines:
        out.info(line)
    return out.warn(*warnings)


def _recording_of(obj, colls: list) -> bpy.types.Collection | None:
    if obj is not None:
        for coll in colls:
            if obj.name in coll.all_objects:
                return coll
    return None


def _recordings(context, options: RecordingExportOptions) -> list:
    """The recording collections in the export's scope."""
    colls = recording_collections(context.scene)
    if options.collection and options.collection in bpy.data.collections:
        wanted = bpy.data.collections[options.collection]
        inside = {c.name for c in wanted.children_recursive} | {wanted.name}
        return [c for c in colls if c.name in inside]
    if not (options.collection or options.use_selection or options.use_visible
            or options.use_active_collection):  # fmt: skip
        return colls
    objs = {o.name for o in options.scope_objects(context, ("EMPTY", "CAMERA"))}
    return [c for c in colls if any(o.name in objs for o in c.all_objects)]


def _active_job(context, path: str, options: RecordingExportOptions, colls: list) -> _Job:
    coll = _recording_of(context.view_layer.objects.active, colls)
    if coll is None and len(colls) == 1:
        coll = colls[0]
    if coll is None and len(colls) > 1:
        raise FormatError(
            f"{len(colls)} recordings can be exported ({', '.join(c.name for c in colls[:4])}"
            f"{' ...' if len(colls) > 4 else ''}): make an object of one active, or "
            "export All Recordings"
        )
    meta = recording_meta(coll)
    objects = roles_in(coll) if coll is not None else {}
    picked = [options.camera_object, options.left_hand, options.right_hand, options.gaze_object]
    if any(picked):
        found = [context.scene.objects.get(n) if n else None for n in picked]
        missing = [n for n, o in zip(picked, found, strict=True) if n and o is None]
        if missing:
            raise FormatError(f"no object named {', '.join(missing)}")
        objects.update(roles_from_mapping(*found))
    return _Job(path, coll, objects, meta)


def _jobs(context, path: str, options: RecordingExportOptions) -> list[_Job]:
    if options.collection and options.collection not in bpy.data.collections:
        raise FormatError(f"collection {options.collection!r} does not exist: nothing exported")
    colls = _recordings(context, options)
    if options.export_animations == "ACTIVE":
        return [_active_job(context, path, options, colls)]
    if not colls:
        raise FormatError("nothing to export: no MRTK recording collection in the scene")
    paths = action_paths(path, [c.name for c in colls], options.use_action_names)
    return [
        _Job(p, coll, roles_in(coll), recording_meta(coll))
        for p, coll in zip(paths, colls, strict=True)
    ]
