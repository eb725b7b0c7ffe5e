"""MRTK input animation recording (.bin): the operators.

The work is in ``importer.py`` (a recording under one root empty carrying the
axes and scale options) and ``exporter.py`` (the curves written back in the
root's recorded space, or the options').
"""

from __future__ import annotations

import bpy
from bpy.props import EnumProperty, FloatProperty, StringProperty

from ...io_formats.codec import FormatError
from ..animation_files import (
    draw_animation_choice,
    export_animations_property,
    use_action_names_property,
)
from ..common import (
    BatchFormat,
    ExportFile,
    FileKind,
    ImportFiles,
    actions_of,
    file_handlers,
    file_type,
    menus,
    report_export,
)
from ..conventions import (
    FRAME_RATE_ITEMS,
    AnimationExport,
    AnimationFrameRate,
    draw_props,
    draw_transform,
    frame_rate_property,
    section,
    transform_options,
)
from ..options import from_mapping, from_operator
from ..result import Result
from .build import recording_meta
from .exporter import RecordingExportOptions, export_file, write_recording
from .importer import UNITY_FORWARD, UNITY_UP, RecordingImportOptions, import_file

RECORDING_ITEMS = (
    ("ACTIVE", "Active Recording", "The recording of the active object (or the only one)"),
    ("ACTIONS", "All Recordings", "Every recording collection in the scene, one file each"),
)


@transform_options(UNITY_FORWARD, UNITY_UP)
class IMPORT_ANIM_OT_mrtk_input(
    bpy.types.Operator, file_type(".bin"), ImportFiles, AnimationFrameRate
):
    """Import MRTK input animation recordings (.bin): camera, hands, eye gaze, markers"""

    bl_idname = "import_anim.mrtk_input"
    bl_label = "Import MRTK Input Animation"

    def draw(self, context):
        layout = self.layout
        draw_transform(layout, self)
        body = section(layout, self, "animation", "Animation")
        if body is not None:
            self.draw_frame_rate(body, importing=True)

    def execute(self, context):
        options = from_operator(RecordingImportOptions, self)
        return self.import_files(
            context,
            lambda c, path, progress: import_file(c, path, options, progress),
            timed=actions_of,
        )


@transform_options(UNITY_FORWARD, UNITY_UP, export=True)
class EXPORT_ANIM_OT_mrtk_input(bpy.types.Operator, file_type(".bin"), ExportFile, AnimationExport):
    """Export MRTK recording collections (or objects you pick) to .bin recordings"""

    bl_idname = "export_anim.mrtk_input"
    bl_label = "Export MRTK Input Animation"

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

    def execute(self, context):
        options = from_operator(RecordingExportOptions, self)
        return report_export(self, lambda: export_file(context, self.filepath, options))


def _batch_import(context, path: str, state: dict, options: dict) -> Result:
    result = import_file(context, path, from_mapping(RecordingImportOptions, options))
    state.setdefault("objects", []).extend(result.objects)
    state["mrtk"] = result.recording
    return result


def _batch_export(context, path: str, state: dict, options: dict) -> Result:
    built = state.get("mrtk")
    if built is None:
        raise FormatError("nothing to export: the input was not an MRTK recording")
    return write_recording(
        context,
        path,
        dict(built.objects),
        recording_meta(built.collection),
        from_mapping(RecordingExportOptions, options, **_version(options)),
    )


def _version(options: dict) -> dict:
    """batch's ``--mrtk-version`` as the export's ``version`` (none: as imported)."""
    chosen = options.get("mrtk_version")
    return {"version": chosen} if chosen else {}


FILES = (
    FileKind(
        "MRTK Input Animation",
        ".bin",
        "import_anim.mrtk_input",
        "export_anim.mrtk_input",
        handler="mrtk_input",
    ),
)
CLASSES = (IMPORT_ANIM_OT_mrtk_input, EXPORT_ANIM_OT_mrtk_input, *file_handlers(FILES))
MENU_IMPORT, MENU_EXPORT = menus(FILES)
BATCH = (BatchFormat("mrtk.input", _batch_import, _batch_export),)
