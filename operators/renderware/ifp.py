"""GTA IFP animations: File > Import/Export, a list of the package's animations.

Import lists every animation of the chosen .ifp with its frame and bone counts
(like the package browser) and builds the ticked ones as actions
(:mod:`.ifp_importer`); export writes chosen actions into an IFP
(:mod:`.ifp_exporter`). The operators hold the options and call those.

Import takes the frame rate options (an IFP stores times in seconds and no
rate of its own) and sets the scene's rate and frame range by default; the
scale multiplies the keys' translations and is recorded on each action, so an
export "As Imported" writes the file's values back.
"""

from __future__ import annotations

import bpy
from bpy.props import BoolProperty, CollectionProperty, EnumProperty, IntProperty, StringProperty

from ...io_formats.codec import FormatError
from ..animation_files import export_animations_property
from ..blender.armatures import iter_armatures
from ..common import (
    BatchFormat,
    ExportFile,
    FileBrowserList,
    FileKind,
    ImportFiles,
    actions_of,
    current_action,
    file_handlers,
    file_type,
    menus,
    report_export,
)
from ..conventions import (
    AnimationFrameRate,
    ExportFrameRate,
    draw_props,
    options_layout,
)
from ..options import from_mapping, from_operator
from ..result import Result, counted
from .anim_options import ArmatureScope, ExportKeyScale, ImportKeyScale
from .ifp_exporter import IfpExportOptions, export_ifp_file
from .ifp_importer import IfpImportOptions, ifp_rows, import_ifp_file


class RIGPORT_PG_ifp_animation(bpy.types.PropertyGroup):
    """One animation of the package shown in the import browser."""

    frames: IntProperty(name="Frames", description="The animation's key frames")
    objects: IntProperty(name="Bones", description="The bones the animation keys")
    select: BoolProperty(name="Import", default=True, description="Import this animation")


class IMPORT_ANIM_OT_gta_ifp(
    bpy.types.Operator,
    file_type(".ifp"),
    FileBrowserList,
    ImportFiles,
    AnimationFrameRate,
    ImportKeyScale,
):
    """Import GTA IFP animations (III, Vice City, San Andreas) as actions on a ped armature"""

    bl_idname = "import_anim.gta_ifp"
    bl_label = "Import GTA IFP"

    animations: CollectionProperty(
        type=RIGPORT_PG_ifp_animation,
        options={"HIDDEN", "SKIP_SAVE"},
        description="The package's animations (drawn as the list of ticks)",
    )
    names: StringProperty(
        name="Animations",
        default="",
        description="Animations to import, ';'-separated (empty: all, or those ticked in the list)",
    )
    list_attr = "animations"

    def invoke(self, context, event):
        """A dropped file's popup lists its animations too."""
        if self.filepath:
            self._list()
        return self.invoke_popup(context)

    def list_rows(self, path: str) -> list[dict]:
        return ifp_rows(path)

    def fill_item(self, item, row: dict) -> None:
        item.name, item.frames, item.objects = row["name"], row["frames"], row["objects"]

    def draw(self, context) -> None:
        layout = options_layout(self)
        layout.prop(self, "names")
        box = layout.box()
        if self.draw_list_state(box, "No IFP file selected", "No animations"):
            box.label(text=counted(len(self.animations), "animation"))
            for item in self.animations:
                box.prop(
                    item,
                    "select",
                    text=f"{item.name}  ({counted(item.frames, 'frame')}, "
                    f"{counted(item.objects, 'bone')})",
                )
        self.draw_animation(layout)

    def execute(self, context):
        try:
            names = self.chosen_names(self.names, "tick at least one animation to import")
        except FormatError as err:
            self.report({"ERROR"}, str(err))
            return {"CANCELLED"}
        chosen = tuple(names) if names is not None else None
        options = from_operator(IfpImportOptions, self, names=chosen)
        return self.import_files(
            context,
            lambda c, path, progress: import_ifp_file(c, path, options, progress=progress),
            timed=actions_of,
        )


class EXPORT_ANIM_OT_gta_ifp(
    bpy.types.Operator,
    file_type(".ifp"),
    ExportFile,
    ExportKeyScale,
    ArmatureScope,
    ExportFrameRate,
):
    """Export actions of the active armature into a GTA IFP (new, or replacing animations)"""

    bl_idname = "export_anim.gta_ifp"
    bl_label = "Export GTA IFP"

    export_animations: export_animations_property(
        default="ACTIONS",
        description="Which actions become the package's animations (an IFP holds many: "
        "All Actions writes back every animation an IFP import made)",
    )
    version: EnumProperty(
        name="Version",
        items=(
            ("AUTO", "As Imported", "The layout the actions came from, else San Andreas"),
            ("ANPK", "III / Vice City (ANPK)", "Float keys"),
            ("ANP3", "San Andreas (ANP3)", "Compressed keys"),
        ),
        default="AUTO",
        description="The package layout (game) written for a new file",
    )
    replace: BoolProperty(
        name="Replace in Existing File",
        default=True,
        description="Write into the existing file: animations of the same name are "
        "replaced, the others left as they are",
    )

    def draw(self, context) -> None:
        layout = options_layout(self)
        draw_props(layout, self, ("export_animations", "version", "replace"))
        self.draw_frame_rate(layout, importing=False)
        self.draw_scale(layout)

    def execute(self, context):
        options = from_operator(IfpExportOptions, self)
        return report_export(self, lambda: export_ifp_file(context, self.filepath, options))


def _batch_import(context, path: str, state: dict, options: dict) -> Result:
    arm = state.get("armature")
    result = import_ifp_file(context, path, from_mapping(IfpImportOptions, options), arm)
    if arm is None:
        arm = next((a for a in iter_armatures(context) if current_action(a) is not None), None)
    if arm is not None:
        state["armature"], state["action"] = arm, current_action(arm)
    return result


def _batch_export(context, path: str, state: dict, options: dict) -> Result:
    arm = state.get("armature")
    if arm is None:
        raise FormatError("no armature to export animations from", None, path)
    # batch writes a new file in the actions' own units
    chosen = from_mapping(IfpExportOptions, options, replace=False, use_transform_as_imported=False)
    return export_ifp_file(context, path, chosen, arm)


FILES = (
    FileKind(
        "GTA Animations",
        ".ifp",
        "import_anim.gta_ifp",
        "export_anim.gta_ifp",
        handler="gta_ifp",
        handler_label="GTA IFP Animations",
    ),
)
CLASSES = (
    RIGPORT_PG_ifp_animation,
    IMPORT_ANIM_OT_gta_ifp,
    EXPORT_ANIM_OT_gta_ifp,
    *file_handlers(FILES),
)
MENU_IMPORT, MENU_EXPORT = menus(FILES)
BATCH = (BatchFormat("renderware.ifp", _batch_import, _batch_export),)
