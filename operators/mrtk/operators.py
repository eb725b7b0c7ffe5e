"""MRTK input animation recording (.bin) import/export operators."""

from __future__ import annotations

import os
from collections.abc import Callable

import bpy
from bpy.props import EnumProperty, FloatProperty, StringProperty
from bpy_extras.io_utils import ExportHelper

from ...io_formats.codec import FormatError
from ...io_formats.codec.files import write_atomic
from ...io_formats.mrtk import recording
from ...io_formats.mrtk.convert import ExportOptions, export_recording, import_recording
from ..common import BatchFormat, ImportFiles, batch_notes, file_handler, read_bytes, report_export
from .build import BuiltRecording, build_recording, recording_meta
from .extract import (
    extract_curves,
    recording_collections,
    recording_markers,
    roles_from_mapping,
    roles_in,
)

AXES_ITEMS = (
    ("BLENDER", "Convert to Blender", "Unity's left-handed Y-up axes become Blender's Z-up"),
    ("UNITY", "Keep Unity axes", "Curves as they are in the file (Y up)"),
)
VERSIONS = {
    "V11_SIMPLE": (1, 1, recording.SIMPLE),
    "V11_FULL": (1, 1, recording.FULL),
    "V10": (1, 0, recording.FULL),
}


def _scene_fps(context) -> float:
    r = context.scene.render
    return r.fps / r.fps_base


def import_mrtk_file(
    context,
    path: str,
    convert: bool = True,
    fps: float | None = None,
    progress: Callable[[float], None] | None = None,
) -> tuple[BuiltRecording, list[str]]:
    """Import one recording; a FormatError leaves nothing behind."""
    data = read_bytes(path)
    try:
        rec = recording.read(data)
        plan = import_recording(rec, convert)
    except FormatError as err:
        raise err.with_path(path) from None
    name = os.path.splitext(os.path.basename(path))[0]
    built = build_recording(context, plan, name, fps or _scene_fps(context), progress)
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
) -> list[str]:
    """Write the recording of ``objects`` (by role); returns warnings."""
    if not objects and not meta:  # a recording of markers only still has its collection
        raise FormatError("nothing to export: no MRTK recording objects (camera, hands, gaze)")
    if version == "AUTO":
        major, minor = (int(x) for x in meta.get("version", "1.1").split("."))
        layout = meta.get("layout", recording.SIMPLE)
    else:
        major, minor, layout = VERSIONS[version]
    if axes == "AUTO":
        axes = meta.get("axes", "BLENDER")
    fps = fps or float(meta.get("fps", 0.0)) or _scene_fps(context)
    curves, warnings = extract_curves(objects)
    marks, more = recording_markers(context.scene, meta, fps, markers)
    warnings += more
    opts = ExportOptions(major, minor, layout, axes == "BLENDER", fps, tolerance)
    rec, more = export_recording(curves, set(objects), marks, opts)
    warnings += more
    write_atomic(path, lambda: recording.write(rec))
    return warnings


def _collection_for(context):
    """The recording collection of the active object, else the scene's only one."""
    obj = context.view_layer.objects.active
    colls = recording_collections(context.scene)
    if obj is not None:
        for coll in colls:
            if obj.name in coll.all_objects:
                return coll
    return colls[0] if len(colls) == 1 else None


class IMPORT_ANIM_OT_mrtk_input(bpy.types.Operator, ImportFiles):
    """Import MRTK input animation recordings (.bin): camera, hands, eye gaze, markers"""

    bl_idname = "import_anim.mrtk_input"
    bl_label = "Import MRTK Input Animation"
    bl_options = {"REGISTER", "UNDO", "PRESET"}

    filename_ext = ".bin"
    filter_glob: StringProperty(default="*.bin", options={"HIDDEN"})
    axes: EnumProperty(name="Axes", items=AXES_ITEMS, default="BLENDER")
    fps: FloatProperty(
        name="Frame Rate",
        default=0.0,
        min=0.0,
        description="Frames per second for key times (0: the scene's)",
    )

    def execute(self, context):
        def one(context, path, progress):
            built, warnings = import_mrtk_file(
                context, path, self.axes == "BLENDER", self.fps or None, progress
            )
            notes = [f"warning: {w}" for w in warnings]
            summary = f"{len(built.objects)} objects, {len(built.markers)} markers"
            return [*notes, summary], [built.discard]

        return self.import_files(context, one)


class EXPORT_ANIM_OT_mrtk_input(bpy.types.Operator, ExportHelper):
    """Export an imported MRTK recording collection (or objects you pick) to a .bin recording"""

    bl_idname = "export_anim.mrtk_input"
    bl_label = "Export MRTK Input Animation"
    bl_options = {"REGISTER", "PRESET"}

    filename_ext = ".bin"
    filter_glob: StringProperty(default="*.bin", options={"HIDDEN"})
    version: EnumProperty(
        name="Version",
        items=(
            (
                "AUTO",
                "As imported",
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
    )
    axes: EnumProperty(
        name="Axes",
        items=(("AUTO", "As imported", "The axes the recording was imported with"), *AXES_ITEMS),
        default="AUTO",
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
    )
    camera_object: StringProperty(name="Camera", description="Object for the camera pose")
    left_hand: StringProperty(name="Left Hand", description="Hand root (joints are children)")
    right_hand: StringProperty(name="Right Hand", description="Hand root (joints are children)")
    gaze_object: StringProperty(name="Eye Gaze", description="Object for the gaze ray")

    def draw(self, context):
        layout = self.layout
        for prop in ("version", "axes", "tolerance", "markers"):
            layout.prop(self, prop)
        box = layout.box()
        box.label(text="Objects (empty: the recording collection's)")
        for prop in ("camera_object", "left_hand", "right_hand", "gaze_object"):
            box.prop_search(self, prop, context.scene, "objects")

    def execute(self, context):
        coll = _collection_for(context)
        meta = recording_meta(coll)
        objects = roles_in(coll) if coll is not None else {}
        picked = [self.camera_object, self.left_hand, self.right_hand, self.gaze_object]
        if any(picked):
            found = [context.scene.objects.get(n) if n else None for n in picked]
            missing = [n for n, o in zip(picked, found, strict=True) if n and o is None]
            if missing:
                self.report({"ERROR"}, f"no object named {', '.join(missing)}")
                return {"CANCELLED"}
            objects.update(roles_from_mapping(*found))
        return report_export(
            self,
            lambda: export_mrtk_file(
                context,
                self.filepath,
                objects,
                meta,
                self.version,
                self.axes,
                self.tolerance,
                self.markers,
            ),
        )


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
