"""RenderWare animations (.anm): File > Import/Export and batch's handlers.

The import and export themselves are :mod:`.anm_importer` and
:mod:`.anm_exporter`; the operators hold the options and call them. The frame
rate and scale options are the IFP import's (:mod:`.ifp`).
"""

from __future__ import annotations

import bpy

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
    current_action,
    file_handlers,
    file_type,
    menus,
    report_export,
)
from ..conventions import AnimationFrameRate, ExportFrameRate, options_layout
from ..options import from_mapping, from_operator
from ..result import Result
from .anim_options import ArmatureScope, ExportKeyScale, ImportKeyScale
from .anm_exporter import AnmExportOptions, export_anm_file, export_anm_files
from .anm_importer import AnmImportOptions, import_anm_file


class IMPORT_ANIM_OT_rw_anm(
    bpy.types.Operator, file_type(".anm"), ImportFiles, AnimationFrameRate, ImportKeyScale
):
    """Import RenderWare animations (.anm) onto an HAnim armature imported from a .dff"""

    bl_idname = "import_anim.rw_anm"
    bl_label = "Import RenderWare Animation"

    def draw(self, context) -> None:
        self.draw_animation(options_layout(self))

    def execute(self, context):
        options = from_operator(AnmImportOptions, self)
        return self.import_files(
            context, lambda c, path, _: import_anm_file(c, path, options), timed=actions_of
        )


class EXPORT_ANIM_OT_rw_anm(
    bpy.types.Operator,
    file_type(".anm"),
    ExportFile,
    ExportKeyScale,
    ArmatureScope,
    ExportFrameRate,
):
    """Export the active armature's actions to RenderWare animations (.anm), one per file"""

    bl_idname = "export_anim.rw_anm"
    bl_label = "Export RenderWare Animation"

    export_animations: export_animations_property(
        description="Which actions to write: an .anm holds one, so All Actions and NLA "
        "Tracks write one file per action next to the chosen path"
    )
    use_action_names: use_action_names_property()

    def draw(self, context) -> None:
        layout = options_layout(self)
        draw_animation_choice(layout, self)
        self.draw_frame_rate(layout, importing=False)
        self.draw_scale(layout)

    def execute(self, context):
        options = from_operator(AnmExportOptions, self)
        return report_export(self, lambda: export_anm_files(context, self.filepath, options))


def _batch_import(context, path: str, state: dict, options: dict) -> Result:
    chosen = from_mapping(AnmImportOptions, options)
    result = import_anm_file(context, path, chosen, state.get("armature"))
    arm = state.get("armature") or context.view_layer.objects.active
    if arm is not None:
        state["armature"], state["action"] = arm, current_action(arm)
    return result


def _batch_export(context, path: str, state: dict, options: dict) -> Result:
    arm = state.get("armature")
    if arm is None:
        raise FormatError("no armature to export the animation from", None, path)
    # batch writes the action in its own units
    chosen = from_mapping(AnmExportOptions, options, use_transform_as_imported=False)
    return export_anm_file(context, path, chosen, arm, state.get("action"))


FILES = (
    FileKind(
        "RenderWare Animation", ".anm", "import_anim.rw_anm", "export_anim.rw_anm", handler="rw_anm"
    ),
)
CLASSES = (IMPORT_ANIM_OT_rw_anm, EXPORT_ANIM_OT_rw_anm, *file_handlers(FILES))
MENU_IMPORT, MENU_EXPORT = menus(FILES)
BATCH = (BatchFormat("renderware.anm", _batch_import, _batch_export),)
