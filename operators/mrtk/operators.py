"""MRTK input animation recording (.bin) import/export operators.

An import puts its recording's objects under one root empty named after the
recording: the axes and scale options go on that root (the curves stay the
file's, in Unity's axes turned into Blender's by the codec), and an export
writes the curves back in the root's recorded space ("As Imported") or the
options' one, baking the difference into the curves only when there is one.
"""

from __future__ import annotations

import os
from collections.abc import Callable

import bpy
import numpy as np
from bpy.props import EnumProperty, FloatProperty, StringProperty

from ...io_formats.codec import FormatError
from ...io_formats.codec.files import write_atomic
from ...io_formats.global_transform import is_identity
from ...io_formats.mrtk import recording
from ...io_formats.mrtk.convert import ExportOptions, export_recording, import_recording
from ...io_formats.mrtk.placement import bake_curves
from ..animation_files import (
    action_paths,
    draw_animation_choice,
    export_animations_property,
    use_action_names_property,
)
from ..common import (
    BatchFormat,
    ExportFile,
    ImportFiles,
    batch_notes,
    file_handler,
    read_bytes,
    report_export,
)
from ..conventions import (
    FRAME_RATE_ITEMS,
    IMPORT_TRANSFORM,
    AnimationExport,
    AnimationFrameRate,
    draw_props,
    draw_transform,
    file_matrix,
    frame_rate_property,
    option_matrix,
    place_roots,
    scene_fps,
    section,
    transform_options,
)
from .build import BuiltRecording, build_recording, recording_meta
from .extract import (
    extract_curves,
    recording_collections,
    recording_markers,
    roles_from_mapping,
    roles_in,
)

#: Unity's axes: +Z forward, +Y up (the codec turns them into Blender's).
UNITY_FORWARD, UNITY_UP = "Z", "Y"
VERSIONS = {
    "V11_SIMPLE": (1, 1, recording.SIMPLE),
    "V11_FULL": (1, 1, recording.FULL),
    "V10": (1, 0, recording.FULL),
}
RECORDING_ITEMS = (
    ("ACTIVE", "Active Recording", "The recording of the active object (or the only one)"),
    ("ACTIONS", "All Recordings", "Every recording collection in the scene, one file each"),
)


def _add_root(built: BuiltRecording, matrix: np.ndarray | None) -> bpy.types.Object:
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
    place_roots([root], np.eye(4) if matrix is None else matrix)
    return root


def recording_root(coll) -> bpy.types.Object | None:
    """The root empty an import put over a recording collection's objects."""
    if coll is None:
        return None
    for obj in coll.objects:
        if obj.parent is None and IMPORT_TRANSFORM in obj and obj.type == "EMPTY":
            return obj
    return None


def import_mrtk_file(
    context,
    path: str,
    convert: bool = True,
    fps: float | None = None,
    progress: Callable[[float], None] | None = None,
    matrix: np.ndarray | None = None,
) -> tuple[BuiltRecording, list[str]]:
    """Import one recording under a root empty carrying ``matrix`` (the axes and
    scale options; identity by default); a FormatError leaves nothing behind."""
    data = read_bytes(path)
    try:
        rec = recording.read(data)
        plan = import_recording(rec, convert)
    except FormatError as err:
        raise err.with_path(path) from None
    name = os.path.splitext(os.path.basename(path))[0]
    built = build_recording(context, plan, name, fps or scene_fps(context), progress)
    try:
        _add_root(built, matrix)
    except Exception:
        built.discard()
        raise
    warnings = list(plan.warnings)
    if built.shortened:
        warnings.append(
            f"{built.shortened} marker names are longer than Blender's 63 bytes: the timeline "
            "shows them cut, the full names are kept and written back"
        )
    return built, warnings


def export_mrtk_file(
    context,
    path: str,
    objects: dict,
    meta: dict,
    version: str = "AUTO",
    axes: str = "AUTO",
    tolerance: float = 1e-4,
    markers: str = "RECORDING",
    fps: float | None = None,
    matrix: np.ndarray | None = None,
) -> list[str]:
    """Write the recording of ``objects`` (by role); returns warnings. ``matrix``
    (from the objects' space into the file's, identity by default) is baked into
    the curves when it is not the identity."""
    if not objects and not meta:  # a recording of markers only still has its collection
        raise FormatError("nothing to export: no MRTK recording objects (camera, hands, gaze)")
    if version == "AUTO":
        major, minor = (int(x) for x in meta.get("version", "1.1").split("."))
        layout = meta.get("layout", recording.SIMPLE)
    else:
        major, minor, layout = VERSIONS[version]
    if axes == "AUTO":
        axes = meta.get("axes", "BLENDER")
    fps = fps or float(meta.get("fps", 0.0)) or scene_fps(context)
    curves, warnings = extract_curves(objects)
    if matrix is not None and not is_identity(matrix):
        try:
            curves = bake_curves(curves, matrix)
        except (FormatError, ValueError) as err:
            raise FormatError(
                f"cannot write the recording's transform: {err}", None, path
            ) from None
    marks, more = recording_markers(context.scene, meta, fps, markers)
    warnings += more
    opts = ExportOptions(major, minor, layout, axes == "BLENDER", fps, tolerance)
    rec, more = export_recording(curves, set(objects), marks, opts)
    warnings += more
    write_atomic(path, lambda: recording.write_parts(rec))
    return warnings


def _recording_of(obj, colls: list) -> bpy.types.Collection | None:
    if obj is not None:
        for coll in colls:
            if obj.name in coll.all_objects:
                return coll
    return None


@transform_options(UNITY_FORWARD, UNITY_UP)
class IMPORT_ANIM_OT_mrtk_input(bpy.types.Operator, ImportFiles, AnimationFrameRate):
    """Import MRTK input animation recordings (.bin): camera, hands, eye gaze, markers"""

    bl_idname = "import_anim.mrtk_input"
    bl_label = "Import MRTK Input Animation"

    filename_ext = ".bin"
    filter_glob: StringProperty(default="*.bin", options={"HIDDEN"})

    def draw(self, context):
        layout = self.layout
        draw_transform(layout, self)
        body = section(layout, self, "animation", "Animation")
        if body is not None:
            self.draw_frame_rate(body, importing=True)

    def execute(self, context):
        fps = self.frames_per_second(context)
        matrix = option_matrix(self)
        actions: list = []

        def one(context, path, progress):
            built, warnings = import_mrtk_file(context, path, True, fps, progress, matrix)
            actions.extend(built.built.actions)
            notes = [f"warning: {w}" for w in warnings]
            summary = f"{len(built.objects)} objects, {len(built.markers)} markers"
            return [*notes, summary], [built.discard]

        return self.import_files(context, one, made=actions)


@transform_options(UNITY_FORWARD, UNITY_UP, export=True)
class EXPORT_ANIM_OT_mrtk_input(bpy.types.Operator, ExportFile, AnimationExport):
    """Export MRTK recording collections (or objects you pick) to .bin recordings"""

    bl_idname = "export_anim.mrtk_input"
    bl_label = "Export MRTK Input Animation"

    filename_ext = ".bin"
    filter_glob: StringProperty(default="*.bin", options={"HIDDEN"})
    frame_rate: frame_rate_property(
        (
            ("AUTO", "As Imported", "The rate the recording was imported at, else the scene's"),
            *FRAME_RATE_ITEMS,
        ),
        "AUTO",
        "The frame rate key frames convert to seconds at",
    )
    export_animations: export_animations_property(RECORDING_ITEMS)
    use_action_names: use_action_names_property("recording")
    version: EnumProperty(
        name="Version",
        items=(
            (
                "AUTO",
                "As Imported",
                "The version and layout the recording came from, else 1.1 (MRTK)",
            ),
            (
                "V11_SIMPLE",
                "1.1 (MRTK)",
                "Time and value per key, what MRTK writes and reads; "
                "curves that are not linear are sampled",
            ),  # fmt: skip
            (
                "V11_FULL",
                "1.1 full keyframes (not MRTK 2.x)",
                "Tangents and weights, as documented; MRTK 2.x cannot read this layout",
            ),
            ("V10", "1.0", "Full keyframes, camera and hands only"),
        ),
        default="AUTO",
        description="The recording's version and key layout",
    )
    tolerance: FloatProperty(
        name="Sampling Tolerance",
        default=1e-4,
        min=1e-7,
        precision=6,
        description="1.1 (MRTK): largest distance between a sampled curve and the original",
    )
    markers: EnumProperty(
        name="Markers",
        items=(
            ("RECORDING", "Recording's", "The recording's markers, following timeline moves"),
            ("SCENE", "Timeline", "Every timeline marker of the scene"),
            ("NONE", "None", "No markers"),
        ),
        default="RECORDING",
        description="Which timeline markers the recording holds",
    )
    camera_object: StringProperty(
        name="Camera", description="Active Recording: object for the camera pose"
    )
    left_hand: StringProperty(
        name="Left Hand", description="Active Recording: hand root (joints are children)"
    )
    right_hand: StringProperty(
        name="Right Hand", description="Active Recording: hand root (joints are children)"
    )
    gaze_object: StringProperty(
        name="Eye Gaze", description="Active Recording: object for the gaze ray"
    )

    def draw(self, context):
        layout = self.layout
        self.draw_include(layout)
        draw_transform(layout, self)
        body = section(layout, self, "animation", "Animation")
        if body is not None:
            draw_animation_choice(body, self, several=("ACTIONS",))
            draw_props(body, self, ("version", "tolerance", "markers"))
            self.draw_frame_rate(body, importing=False)
        body = section(layout, self, "objects", "Objects", closed=True)
        if body is not None:
            body.label(text="Empty: the recording collection's")
            draw_props(body, self, ("camera_object", "left_hand", "right_hand", "gaze_object"))

    def _fps(self, context) -> float | None:
        return None if self.frame_rate == "AUTO" else self.frames_per_second(context)

    def _recordings(self, context) -> list:
        """The recording collections in the export's scope."""
        colls = recording_collections(context.scene)
        if self.collection and self.collection in bpy.data.collections:
            wanted = bpy.data.collections[self.collection]
            inside = {c.name for c in wanted.children_recursive} | {wanted.name}
            return [c for c in colls if c.name in inside]
        if not (self.collection or self.use_selection or self.use_visible
                or self.use_active_collection):  # fmt: skip
            return colls
        objs = {o.name for o in self.scope_objects(context, ("EMPTY", "CAMERA"))}
        return [c for c in colls if any(o.name in objs for o in c.all_objects)]

    def _active_job(self, context, colls: list) -> tuple:
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
        picked = [self.camera_object, self.left_hand, self.right_hand, self.gaze_object]
        if any(picked):
            found = [context.scene.objects.get(n) if n else None for n in picked]
            missing = [n for n, o in zip(picked, found, strict=True) if n and o is None]
            if missing:
                raise FormatError(f"no object named {', '.join(missing)}")
            objects.update(roles_from_mapping(*found))
        return self.filepath, coll, objects, meta

    def _jobs(self, context) -> list[tuple]:
        if self.collection and self.collection not in bpy.data.collections:
            raise FormatError(f"collection {self.collection!r} does not exist: nothing exported")
        colls = self._recordings(context)
        if self.export_animations == "ACTIVE":
            return [self._active_job(context, colls)]
        if not colls:
            raise FormatError("nothing to export: no MRTK recording collection in the scene")
        paths = action_paths(self.filepath, [c.name for c in colls], self.use_action_names)
        return [
            (path, coll, roles_in(coll), recording_meta(coll))
            for path, coll in zip(paths, colls, strict=True)
        ]

    def _export(self, context) -> list[str]:
        jobs = self._jobs(context)
        fps = self._fps(context)
        warnings: list[str] = []
        for path, coll, objects, meta in jobs:
            root = recording_root(coll)
            space = np.array(root.matrix_world, np.float64) if root is not None else None
            matrix = file_matrix(self, root, space)
            more = export_mrtk_file(
                context, path, objects, meta, self.version, "AUTO", self.tolerance,
                self.markers, fps, matrix,
            )  # fmt: skip
            prefix = f"{os.path.basename(path)}: " if len(jobs) > 1 else ""
            warnings += [prefix + w for w in more]
        self.report({"INFO"}, f"{len(jobs)} MRTK recording{'s' if len(jobs) != 1 else ''} written")
        return warnings

    def execute(self, context):
        return report_export(self, lambda: self._export(context))


def _batch_import(context, path: str, state: dict, options: dict) -> str:
    built, warnings = import_mrtk_file(context, path)
    state.setdefault("objects", []).extend(built.objects.values())
    state["mrtk"] = built
    notes = batch_notes(warnings)
    return f"{len(built.objects)} objects, {len(built.markers)} markers{notes}"


def _batch_export(context, path: str, state: dict, options: dict) -> str:
    built = state.get("mrtk")
    if built is None:
        raise FormatError("nothing to export: the input was not an MRTK recording")
    warnings = export_mrtk_file(
        context, path, dict(built.objects), recording_meta(built.collection)
    )
    return batch_notes(warnings)


CLASSES = (
    IMPORT_ANIM_OT_mrtk_input,
    EXPORT_ANIM_OT_mrtk_input,
    file_handler(
        "mrtk_input",
        "MRTK Input Animation",
        "import_anim.mrtk_input",
        "export_anim.mrtk_input",
        ".bin",
    ),
)
MENU_IMPORT = (("import_anim.mrtk_input", "MRTK Input Animation (.bin)"),)
MENU_EXPORT = (("export_anim.mrtk_input", "MRTK Input Animation (.bin)"),)
BATCH = (BatchFormat("mrtk.input", _batch_import, _batch_export),)
