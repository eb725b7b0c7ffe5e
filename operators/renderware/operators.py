"""RenderWare clump (.dff) import/export operators (GTA III, Vice City, San Andreas)."""

from __future__ import annotations

import os

import bpy
import numpy as np
from bpy.props import EnumProperty, StringProperty

from ...io_formats.codec import FormatError
from ...io_formats.codec.files import write_atomic
from ...io_formats.renderware import clump_transform, dff
from ...io_formats.renderware.chunks import TARGETS, version_text
from ...io_formats.renderware.clump_export import export_clump
from ...io_formats.renderware.clump_import import import_dff
from ..blender.build import Built
from ..common import (
    BatchFormat,
    ExportFile,
    ImportFiles,
    batch_add_built,
    batch_mesh_export,
    batch_notes,
    file_handler,
    read_bytes,
    report_export,
)
from ..conventions import (
    SAME,
    ExportScope,
    ReuseMaterials,
    draw_transform,
    evaluated_meshes,
    file_matrix,
    option_matrix,
    options_layout,
    place_roots,
    recorded_transform,
    section,
    transform_options,
)
from .build import build_clump
from .extract import clump_root, extract_clump

TARGET_ITEMS = (
    ("AUTO", "As Imported", "The version the clump came from, else San Andreas"),
) + tuple(
    (key, label, f"RenderWare {version_text(version)}")
    for key, (label, version, _) in TARGETS.items()
)

#: RenderWare's axes are Blender's (Z up, right-handed): no conversion by default.
ENGINE_AXES = ("Y", "Z")


def import_dff_file(
    context, path: str, reuse_materials: bool = False, matrix: np.ndarray | None = None
) -> tuple[Built, list[str]]:
    """Import every clump of one .dff; FormatError leaves nothing behind. ``matrix``
    (the axes and scale options) goes on the root objects (``place_roots``)."""
    data = read_bytes(path)
    name = os.path.splitext(os.path.basename(path))[0]
    built_all: list[Built] = []
    warnings: list[str] = []
    try:
        for imp in import_dff(dff.read(data), name):
            built = build_clump(context, imp, os.path.dirname(path), None, reuse_materials)
            built_all.append(built)
            warnings += imp.warnings
            if matrix is not None:
                place_roots(built.objects, matrix)
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


def to_file_space(data, root, options) -> None:
    """The clump extracted from Blender (root frames in world space) in the file's
    space: the root's recorded import transform taken off its root frames (exact:
    "As Imported" then changes nothing else), then what the options ask for on
    top, baked in (:func:`clump_transform.bake_clump`) where it is not the identity."""
    wanted = file_matrix(options, root)  # world -> file
    imported = recorded_transform(root)
    if imported is None or np.allclose(imported, np.eye(4), atol=SAME):
        imported = np.eye(4)
    else:
        clump_transform.move_roots(data, np.linalg.inv(imported))
    extra = wanted @ imported  # the transform left once the import's is taken off
    if not np.allclose(extra, np.eye(4), atol=SAME):
        clump_transform.bake_clump(data, extra)


def export_dff_file(
    context,
    path: str,
    objects: list,
    target: str = "AUTO",
    morph_targets: str = "AUTO",
    apply_modifiers: bool = True,
    options=None,
) -> list[str]:
    """Write ``objects`` (meshes, with their armature and frames) as one clump.
    ``apply_modifiers``: meshes as their modifiers make them (``evaluated_meshes``);
    ``options``: an object with the axes and scale options (the operator), None
    for the objects' own space (the default options)."""
    context.view_layer.update()  # world matrices of objects parented by a script just now
    with evaluated_meshes(context, objects, apply_modifiers) as (meshes, warnings):
        data, more, imported = extract_clump(context, meshes)
        if options is not None:
            to_file_space(data, clump_root(meshes), options)
    out, last = export_clump(data, imported if target == "AUTO" else target, morph_targets)
    write_atomic(path, lambda: dff.write(out))
    return warnings + more + last


@transform_options(*ENGINE_AXES)
class IMPORT_SCENE_OT_rw_dff(bpy.types.Operator, ImportFiles, ReuseMaterials):
    """Import RenderWare clumps (.dff): frames, skinned or static meshes, materials"""

    bl_idname = "import_scene.rw_dff"
    bl_label = "Import RenderWare DFF"

    filename_ext = ".dff"
    filter_glob: StringProperty(default="*.dff", options={"HIDDEN"})

    def draw(self, context) -> None:
        layout = options_layout(self)
        draw_transform(layout, self)
        section(layout, self, "materials", "Materials", props=("reuse_materials",))

    def execute(self, context):
        matrix = option_matrix(self)

        def one(context, path, progress):
            built, warnings = import_dff_file(context, path, self.reuse_materials, matrix)
            notes = [f"warning: {w}" for w in warnings]
            return [*notes, f"{len(built.objects)} objects"], [built.discard]

        return self.import_files(context, one)


@transform_options(*ENGINE_AXES, export=True)
class EXPORT_SCENE_OT_rw_dff(bpy.types.Operator, ExportFile, ExportScope):
    """Export meshes (with their armature and frames) to a RenderWare clump (.dff)"""

    bl_idname = "export_scene.rw_dff"
    bl_label = "Export RenderWare DFF"

    filename_ext = ".dff"
    filter_glob: StringProperty(default="*.dff", options={"HIDDEN"})
    target: EnumProperty(
        name="Version",
        items=TARGET_ITEMS,
        default="AUTO",
        description="The RenderWare version (game) the clump is written for",
    )
    morph_targets: EnumProperty(
        name="Morph Targets",
        items=MORPH_ITEMS,
        default="AUTO",
        description="Which shape keys become morph targets of the geometries",
    )

    def draw(self, context) -> None:
        layout = options_layout(self)
        layout.prop(self, "target")
        self.draw_include(layout)
        draw_transform(layout, self)
        props = ("apply_modifiers", "morph_targets")
        section(layout, self, "geometry", "Geometry", props=props)

    def execute(self, context):
        return report_export(
            self,
            lambda: export_dff_file(
                context,
                self.filepath,
                self.scope_objects(context, ("MESH",)),
                self.target,
                self.morph_targets,
                self.apply_modifiers,
                self,
            ),
        )


def _batch_import(context, path: str, state: dict, options: dict) -> str:
    built, warnings = import_dff_file(context, path)
    return batch_add_built(state, built) + batch_notes(warnings)


CLASSES = (
    IMPORT_SCENE_OT_rw_dff,
    EXPORT_SCENE_OT_rw_dff,
    file_handler(
        "rw_dff", "RenderWare Clump", "import_scene.rw_dff", "export_scene.rw_dff", ".dff"
    ),
)
MENU_IMPORT = (("import_scene.rw_dff", "RenderWare Clump (.dff)"),)
MENU_EXPORT = (("export_scene.rw_dff", "RenderWare Clump (.dff)"),)
BATCH = (BatchFormat("renderware.dff", _batch_import, batch_mesh_export(export_dff_file)),)
