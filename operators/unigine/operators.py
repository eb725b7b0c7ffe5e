"""Unigine mesh (.mesh, ms11) and animation (.anim, an10) operators, their
FileHandlers, menu entries and batch handlers.

The operators hold only their options and panels; the work is in
:mod:`.importer` and :mod:`.exporter`, which batch calls with the same options
dataclasses (:mod:`.settings`).
"""

from __future__ import annotations

import bpy

from ..animation_files import (
    ACTIONS_ITEM,
    ACTIVE_ITEM,
    NLA_ITEM,
    draw_animation_choice,
    export_animations_property,
    use_action_names_property,
)
from ..blender import compat
from ..common import (
    BatchFormat,
    ExportFile,
    FileKind,
    ImportFiles,
    actions_of,
    batch_add_built,
    batch_armature,
    batch_meshes,
    file_handlers,
    file_type,
    menus,
    report_export,
)
from ..conventions import (
    AnimationExport,
    AnimationFrameRate,
    ExportFrameRate,
    ExportScope,
    FrameRateOptions,
    ReuseMaterials,
    draw_transform,
    frame_rate_property,
    options_layout,
    section,
    transform_options,
)
from ..options import from_mapping, from_operator
from ..result import Result, counted
from .exporter import export_anim_file, export_mesh_file
from .importer import import_anim_file, import_mesh_file
from .settings import (
    ENGINE_FORWARD,
    ENGINE_UP,
    AnimExportOptions,
    AnimImportOptions,
    MeshExportOptions,
    MeshImportOptions,
)

FRAME_RATE_DESCRIPTION = (
    "The rate at which the file's frames (1/30 s each: Unigine files store no rate) "
    "become Blender frames. Custom at 30 keys file frame n at Blender frame n"
)
EXPORT_FRAME_RATE_DESCRIPTION = (
    "The rate of the actions RigPort did not import (imported ones keep the rate they "
    "were imported at); the file's frames are 1/30 s each. Custom at 30 writes "
    "Blender frame n as file frame n"
)


def _frame_rate_property(export: bool = False):
    """``frame_rate`` defaulting to the scene's rate, as every format's does."""
    return frame_rate_property(
        default="SCENE",
        description=EXPORT_FRAME_RATE_DESCRIPTION if export else FRAME_RATE_DESCRIPTION,
    )


# -- operators ------------------------------------------------------------------


@transform_options(ENGINE_FORWARD, ENGINE_UP)
class IMPORT_SCENE_OT_unigine_mesh(
    bpy.types.Operator, file_type(".mesh"), ImportFiles, FrameRateOptions, ReuseMaterials
):
    """Import Unigine meshes (.mesh): surfaces, morph targets, skin, bones, animations"""

    bl_idname = "import_scene.unigine_mesh"
    bl_label = "Import Unigine Mesh"

    frame_rate: _frame_rate_property()

    def draw(self, context):
        layout = options_layout(self)
        draw_transform(layout, self)
        section(layout, self, "geometry", "Geometry", props=("reuse_materials",))
        body = section(layout, self, "animation", "Animation")
        if body is not None:
            self.draw_frame_rate(body, importing=True)

    def execute(self, context):
        options = from_operator(MeshImportOptions, self)
        return self.import_files(
            context, lambda c, path, _: import_mesh_file(c, path, options), timed=actions_of
        )


@transform_options(ENGINE_FORWARD, ENGINE_UP, export=True)
class EXPORT_SCENE_OT_unigine_mesh(
    bpy.types.Operator, file_type(".mesh"), ExportFile, ExportScope, ExportFrameRate
):
    """Export meshes (material slots as surfaces, with their armature and its
    animations) to a Unigine mesh"""

    bl_idname = "export_scene.unigine_mesh"
    bl_label = "Export Unigine Mesh"

    export_animations: export_animations_property(
        (
            (
                "IMPORTED",
                "As Imported",
                "The actions the mesh file had embedded (none for a rig made in Blender)",
            ),
            ACTIVE_ITEM,
            ACTIONS_ITEM,
            NLA_ITEM,
            ("NONE", "None", "No embedded animations"),
        ),
        "IMPORTED",
        "The armature's actions the mesh embeds as animations",
    )
    frame_rate: _frame_rate_property(export=True)

    def draw(self, context):
        layout = options_layout(self)
        self.draw_include(layout)
        draw_transform(layout, self)
        section(layout, self, "geometry", "Geometry", props=("apply_modifiers",))
        body = section(layout, self, "animation", "Animation", props=("export_animations",))
        if body is not None:
            self.draw_frame_rate(body, importing=False)

    def execute(self, context):
        options = from_operator(MeshExportOptions, self)

        def export() -> Result:
            with self.evaluated_scope(context) as (objects, warnings):
                done = export_mesh_file(context, self.filepath, objects, options)
            return Result().warn_all(warnings).merge(done)

        return report_export(self, export)


# No axes or scale options: the actions play in their armature's space, which
# carries the transform its mesh import put on it.
class IMPORT_ANIM_OT_unigine_anim(
    bpy.types.Operator, file_type(".anim"), ImportFiles, AnimationFrameRate
):
    """Import Unigine animations (.anim): an action per animation on an armature"""

    bl_idname = "import_anim.unigine_anim"
    bl_label = "Import Unigine Animation"

    frame_rate: _frame_rate_property()

    def draw(self, context):
        self.draw_frame_rate(options_layout(self), importing=True)

    def execute(self, context):
        options = from_operator(AnimImportOptions, self)
        return self.import_files(
            context, lambda c, path, _: import_anim_file(c, path, options), timed=actions_of
        )


@transform_options(ENGINE_FORWARD, ENGINE_UP, export=True)
class EXPORT_ANIM_OT_unigine_anim(
    bpy.types.Operator, file_type(".anim"), ExportFile, AnimationExport
):
    """Export an armature's actions to Unigine animations (.anim)"""

    bl_idname = "export_anim.unigine_anim"
    bl_label = "Export Unigine Animation"

    export_animations: export_animations_property(
        (
            (
                "IMPORTED",
                "As Imported",
                "The active action and the other animations of the .anim it came from, in one file",
            ),
            ACTIVE_ITEM,
            (ACTIONS_ITEM[0], ACTIONS_ITEM[1], ACTIONS_ITEM[2] + ": one file each"),
            (NLA_ITEM[0], NLA_ITEM[1], NLA_ITEM[2] + ": one file each"),
        ),
        "IMPORTED",
        "Which actions to write, into which files",
    )
    use_action_names: use_action_names_property()
    frame_rate: _frame_rate_property(export=True)

    def draw(self, context):
        layout = options_layout(self)
        self.draw_include(layout)
        draw_transform(layout, self)
        body = section(layout, self, "animation", "Animation")
        if body is not None:
            draw_animation_choice(body, self)
            self.draw_frame_rate(body, importing=False)

    def execute(self, context):
        options = from_operator(AnimExportOptions, self)
        return report_export(
            self,
            lambda: export_anim_file(context, self.filepath, self.scope_armature(context), options),
        )


def _batch_import_mesh(context, path: str, state: dict, options: dict) -> Result:
    """As imported: the objects as built (no transform recorded on them)."""
    settings = from_mapping(MeshImportOptions, options, record_transform=False)
    result = import_mesh_file(context, path, settings)
    result.summary = f"{batch_add_built(state, result)}, {counted(len(result.actions), 'action')}"
    return result


def _batch_import_anim(context, path: str, state: dict, options: dict) -> Result:
    settings = from_mapping(AnimImportOptions, options)
    result = import_anim_file(context, path, settings, state.get("armature"))
    state["armature"] = result.armature
    if result.actions:
        state["action"] = result.actions[-1]
    return result


def _batch_export_mesh(context, path: str, state: dict, options: dict) -> Result:
    settings = from_mapping(MeshExportOptions, options)
    return export_mesh_file(context, path, batch_meshes(state), settings)


def _batch_export_anim(context, path: str, state: dict, options: dict) -> Result:
    arm = batch_armature(state, "a Unigine animation")
    action = state.get("action")
    if action is not None:
        compat.assign_action(arm, action)
    return export_anim_file(context, path, arm, from_mapping(AnimExportOptions, options))


FILES = (
    FileKind(
        "Unigine Mesh",
        ".mesh",
        "import_scene.unigine_mesh",
        "export_scene.unigine_mesh",
        handler="unigine_mesh",
    ),
    FileKind(
        "Unigine Animation",
        ".anim",
        "import_anim.unigine_anim",
        "export_anim.unigine_anim",
        handler="unigine_anim",
    ),
)
CLASSES = (
    IMPORT_SCENE_OT_unigine_mesh,
    EXPORT_SCENE_OT_unigine_mesh,
    IMPORT_ANIM_OT_unigine_anim,
    EXPORT_ANIM_OT_unigine_anim,
    *file_handlers(FILES),
)
MENU_IMPORT, MENU_EXPORT = menus(FILES)
BATCH = (
    BatchFormat("unigine.mesh", _batch_import_mesh, _batch_export_mesh),
    BatchFormat("unigine.anim", _batch_import_anim, _batch_export_anim),
)
