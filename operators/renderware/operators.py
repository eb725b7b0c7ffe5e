"""RenderWare clump (.dff) import/export operators (GTA III, Vice City, San Andreas)."""

from __future__ import annotations

import os

import bpy
from bpy.props import BoolProperty, EnumProperty, StringProperty
from bpy_extras.io_utils import ExportHelper

from ...io_formats.codec import FormatError
from ...io_formats.codec.files import write_atomic
from ...io_formats.renderware import dff
from ...io_formats.renderware.chunks import TARGETS, version_text
from ...io_formats.renderware.clump_export import export_clump
from ...io_formats.renderware.clump_import import import_dff
from ..blender.build import Built
from ..common import (
    BatchFormat,
    ImportFiles,
    batch_add_built,
    batch_meshes,
    batch_notes,
    file_handler,
    read_bytes,
    report_export,
)
from .build import build_clump
from .extract import extract_clump

TARGET_ITEMS = (
    ("AUTO", "As imported", "The version the clump came from, else San Andreas"),
) + tuple(
    (key, label, f"RenderWare {version_text(version)}")
    for key, (label, version, _) in TARGETS.items()
)


def import_dff_file(context, path: str) -> tuple[Built, list[str]]:
    """Import every clump of one .dff; FormatError leaves nothing behind."""
    data = read_bytes(path)
    name = os.path.splitext(os.path.basename(path))[0]
    built_all: list[Built] = []
    warnings: list[str] = []
    try:
        for imp in import_dff(dff.read(data), name):
            built_all.append(build_clump(context, imp, os.path.dirname(path)))
            warnings += imp.warnings
    except FormatError as err:
        for b in reversed(built_all):
            b.discard()
        raise err.with_path(path) from None
    except Exception:
        for b in reversed(built_all):
            b.discard()
        raise
    merged = Built()
    for b in built_all:
        for attr in ("objects", "meshes", "armatures", "materials", "actions", "collections"):
            getattr(merged, attr).extend(getattr(b, attr))
        merged.armature = merged.armature or b.armature
    return merged, warnings


def export_objects(context, use_selection: bool) -> list:
    pool = context.selected_objects if use_selection else context.scene.objects
    return [o for o in pool if o.type == "MESH"]


def export_dff_file(context, path: str, objects: list, target: str = "AUTO") -> list[str]:
    """Write ``objects`` (meshes, with their armature and frames) as one clump."""
    context.view_layer.update()  # world matrices of objects parented by a script just now
    data, warnings, imported = extract_clump(context, objects)
    out, more = export_clump(data, imported if target == "AUTO" else target)
    write_atomic(path, lambda: dff.write(out))
    return warnings + more


class IMPORT_SCENE_OT_rw_dff(bpy.types.Operator, ImportFiles):
    """Import RenderWare clumps (.dff): frames, skinned or static meshes, materials"""

    bl_idname = "import_scene.rw_dff"
    bl_label = "Import RenderWare DFF"
    bl_options = {"REGISTER", "UNDO", "PRESET"}

    filename_ext = ".dff"
    filter_glob: StringProperty(default="*.dff", options={"HIDDEN"})

    def execute(self, context):
        def one(context, path, progress):
            built, warnings = import_dff_file(context, path)
            notes = [f"warning: {w}" for w in warnings]
            return [*notes, f"{len(built.objects)} objects"], [built.discard]

        return self.import_files(context, one)


class EXPORT_SCENE_OT_rw_dff(bpy.types.Operator, ExportHelper):
    """Export meshes (with their armature and frames) to a RenderWare clump (.dff)"""

    bl_idname = "export_scene.rw_dff"
    bl_label = "Export RenderWare DFF"
    bl_options = {"REGISTER", "PRESET"}

    filename_ext = ".dff"
    filter_glob: StringProperty(default="*.dff", options={"HIDDEN"})
    target: EnumProperty(name="Version", items=TARGET_ITEMS, default="AUTO")
    use_selection: BoolProperty(name="Selected Only", default=False)

    def execute(self, context):
        objects = export_objects(context, self.use_selection)
        return report_export(
            self, lambda: export_dff_file(context, self.filepath, objects, self.target)
        )


def _batch_import(context, path: str, state: dict, options: dict) -> str:
    built, warnings = import_dff_file(context, path)
    return batch_add_built(state, built) + batch_notes(warnings)


def _batch_export(context, path: str, state: dict, options: dict) -> str:
    meshes = batch_meshes(state)
    warnings = export_dff_file(context, path, meshes)
    return batch_notes(warnings)


CLASSES = (
    IMPORT_SCENE_OT_rw_dff,
    EXPORT_SCENE_OT_rw_dff,
    file_handler(
        "rw_dff", "RenderWare Clump", "import_scene.rw_dff", "export_scene.rw_dff", ".dff"
    ),
)
MENU_IMPORT = (("import_scene.rw_dff", "RenderWare Clump (.dff)"),)
MENU_EXPORT = (("export_scene.rw_dff", "RenderWare Clump (.dff)"),)
BATCH = (BatchFormat("renderware.dff", _batch_import, _batch_export),)
