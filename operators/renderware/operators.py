"""RenderWare clump (.dff) import/export operators (GTA III, Vice City, San Andreas).

The import and export themselves are :mod:`.clump_importer` and
:mod:`.clump_exporter`; the operators hold their options and call them.
"""

from __future__ import annotations

import bpy
from bpy.props import EnumProperty

from ...io_formats.renderware.chunks import TARGETS, version_text
from ..common import (
    BatchFormat,
    ExportFile,
    FileKind,
    ImportFiles,
    batch_add_built,
    batch_meshes,
    file_handlers,
    file_type,
    menus,
    report_export,
)
from ..conventions import (
    ExportScope,
    ReuseMaterials,
    draw_transform,
    options_layout,
    section,
    transform_options,
)
from ..options import from_mapping, from_operator
from ..result import Result
from .clump_exporter import ClumpExportOptions, export_clump_file
from .clump_importer import ENGINE_AXES, ClumpImportOptions, import_clump_file

TARGET_ITEMS = (
    ("AUTO", "As Imported", "The version the clump came from, else San Andreas"),
) + tuple(
    (key, label, f"RenderWare {version_text(version)}")
    for key, (label, version, _) in TARGETS.items()
)

MORPH_ITEMS = (
    (
        "AUTO",
        "As Imported",
        "As many morph targets as the geometry had in its .dff (one for a new mesh: "
        "GTA reads only the first); shape keys left out are warned about",
    ),
    ("BASE", "Base Mesh Only", "One morph target, the base mesh; shape keys are left out"),
    (
        "ALL",
        "Every Shape Key",
        "One morph target per shape key. DragonFF and GTA read only the first, "
        "rw-parser based tools fail on more than one",
    ),
)


@transform_options(*ENGINE_AXES)
class IMPORT_SCENE_OT_rw_dff(bpy.types.Operator, file_type(".dff"), ImportFiles, ReuseMaterials):
    """Import RenderWare clumps (.dff): frames, skinned or static meshes, materials"""

    bl_idname = "import_scene.rw_dff"
    bl_label = "Import RenderWare DFF"

    def draw(self, context) -> None:
        layout = options_layout(self)
        draw_transform(layout, self)
        section(layout, self, "materials", "Materials", props=("reuse_materials",))

    def execute(self, context):
        options = from_operator(ClumpImportOptions, self)
        return self.import_files(
            context, lambda context, path, progress: import_clump_file(context, path, options)
        )


@transform_options(*ENGINE_AXES, export=True)
class EXPORT_SCENE_OT_rw_dff(bpy.types.Operator, file_type(".dff"), ExportFile, ExportScope):
    """Export meshes (with their armature and frames) to a RenderWare clump (.dff)"""

    bl_idname = "export_scene.rw_dff"
    bl_label = "Export RenderWare DFF"

    target: EnumProperty(
        name="Version",
        items=TARGET_ITEMS,
        default="AUTO",
        description="The RenderWare version (game) the clump is written for",
    )
    morph_targets: EnumProperty(
        name="Shape Keys",
        items=MORPH_ITEMS,
        default="AUTO",
        description="Export shape keys (morph targets): which of them the geometries take",
    )

    def draw(self, context) -> None:
        layout = options_layout(self)
        layout.prop(self, "target")
        self.draw_include(layout)
        draw_transform(layout, self)
        props = ("apply_modifiers", "morph_targets")
        section(layout, self, "geometry", "Geometry", props=props)

    def execute(self, context):
        options = from_operator(ClumpExportOptions, self)
        return report_export(
            self,
            lambda: export_clump_file(
                context, self.filepath, options, self.scope_objects(context, ("MESH",))
            ),
        )


def _batch_import(context, path: str, state: dict, options: dict) -> Result:
    result = import_clump_file(
        context, path, from_mapping(ClumpImportOptions, options, use_transform=False)
    )
    result.summary = batch_add_built(state, result)
    return result


def _batch_export(context, path: str, state: dict, options: dict) -> Result:
    chosen = from_mapping(ClumpExportOptions, options, use_transform=False)
    return export_clump_file(context, path, chosen, batch_meshes(state))


FILES = (
    FileKind(
        "RenderWare Clump", ".dff", "import_scene.rw_dff", "export_scene.rw_dff", handler="rw_dff"
    ),
)
CLASSES = (IMPORT_SCENE_OT_rw_dff, EXPORT_SCENE_OT_rw_dff, *file_handlers(FILES))
MENU_IMPORT, MENU_EXPORT = menus(FILES)
BATCH = (BatchFormat("renderware.dff", _batch_import, _batch_export),)
