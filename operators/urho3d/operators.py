"""Urho3D model and animation operators: File > Import/Export, drag and drop, batch.

The import and export logic is in ``model_importer``, ``model_exporter``,
``animation_importer`` and ``animation_exporter``; the operators build its
options from their properties, and ``BATCH`` from batch's command line.
"""

from __future__ import annotations

import bpy
from bpy.props import BoolProperty, EnumProperty

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
    ExportScope,
    ExportTransform,
    ReuseMaterials,
    draw_transform,
    options_layout,
    section,
    transform_options,
)
from ..options import from_mapping, from_operator
from ..result import Result
from .animation_exporter import AnimationExportOptions, export_ani, export_animations
from .animation_importer import AnimationImportOptions, import_ani
from .axes import ENGINE_AXES, TransformOptions
from .model_exporter import ModelExportOptions, export_mdl
from .model_importer import ModelImportOptions, import_mdl
from .output import draw_package, package_entry_property, package_file_property

LOD_ITEMS = (
    (
        "ALL",
        "All LODs",
        "Every LOD level as its own object in a collection, levels after 0 hidden "
        "(an export writes them all back)",
    ),
    ("FIRST", "LOD 0", "Import the most detailed level only (an export then writes one level)"),
)
BONE_LIMIT_ITEMS = (
    (
        "AUTO",
        "As Imported",
        "64, or 128 when the imported model skinned more than 64 bones in one draw",
    ),
    (
        "64",
        "64: every build",
        "At most 64 skin matrices per draw (MAX_SKIN_MATRICES on GL2, GLES/mobile and D3D9): "
        "skeletons of more than 64 bones get a bone mapping per geometry",
    ),
    (
        "128",
        "128: GL3/D3D11 only",
        "A geometry may skin up to 128 bones (rbfx on GL3/D3D11 only; GL2, GLES and D3D9 "
        "take 64); skeletons of more than 64 bones still get a bone mapping per geometry",
    ),
)


LOD_DESCRIPTION = "Which LOD levels to import"


def transform(op) -> TransformOptions:
    """An importer's Transform panel as the import logic takes it."""
    return from_operator(TransformOptions, op)


@transform_options(*ENGINE_AXES)
class IMPORT_SCENE_OT_urho3d_mdl(
    bpy.types.Operator, file_type(".mdl"), ImportFiles, ReuseMaterials
):
    """Import Urho3D models (.mdl): mesh, armature, weights, shape keys, LODs"""

    bl_idname = "import_scene.urho3d_mdl"
    bl_label = "Import Urho3D Model"

    lods: EnumProperty(name="LODs", items=LOD_ITEMS, default="ALL", description=LOD_DESCRIPTION)

    def draw(self, context) -> None:
        layout = options_layout(self)
        draw_transform(layout, self)
        section(layout, self, "geometry", "Geometry", props=("lods", "reuse_materials"))

    def execute(self, context):
        options = from_operator(ModelImportOptions, self, transform=transform(self))
        return self.import_files(
            context, lambda context, path, _: import_mdl(context, path, options)
        )


@transform_options(*ENGINE_AXES, export=True)
class EXPORT_SCENE_OT_urho3d_mdl(bpy.types.Operator, file_type(".mdl"), ExportFile, ExportScope):
    """Export meshes (with their armature and LOD collection) to an Urho3D model (.mdl)"""

    bl_idname = "export_scene.urho3d_mdl"
    bl_label = "Export Urho3D Model"

    file_format: EnumProperty(
        name="Format",
        items=(
            ("AUTO", "As Imported", "The format the model was imported from, else UMD2"),
            ("UMD2", "UMD2", "Vertex element descriptors (Urho3D 1.7+, rbfx)"),
            ("UMDL", "UMDL", "Legacy element mask"),
            ("UMD3", "UMD3", "rbfx: versioned, with each shape key's value as default weight"),
        ),
        default="AUTO",
        description="The model file format to write",
    )
    tangents: BoolProperty(
        name="Tangents",
        default=True,
        description="Export vertex tangents with meshes (needs a UV map)",
    )
    recompute_tangents: BoolProperty(
        name="Recompute Tangents",
        default=False,
        description="Compute tangents in Blender even for meshes that still carry the "
        "imported file's own",
    )
    bone_limit: EnumProperty(
        name="Bones per Draw",
        items=BONE_LIMIT_ITEMS,
        default="AUTO",
        description="Skin matrices one draw may use: 64 on every Urho3D build (GL2, GLES, "
        "D3D9), 128 on GL3/D3D11 only. Skeletons of more than 64 bones get a bone mapping "
        "per geometry",
    )
    package_file: package_file_property("the model")
    package_entry: package_entry_property(
        "The model's name inside the package (empty: Models/<file name>)"
    )

    def draw(self, context) -> None:
        layout = options_layout(self)
        self.draw_include(layout)
        draw_transform(layout, self)
        props = ("file_format", "apply_modifiers", "tangents")
        body = section(layout, self, "geometry", "Geometry", props=props)
        if body is not None:
            row = body.row()
            row.active = self.tangents
            row.prop(self, "recompute_tangents")
            body.prop(self, "bone_limit")
        draw_package(layout, self)

    def execute(self, context):
        options = from_operator(ModelExportOptions, self, transform=ExportTransform.of(self))

        def export() -> Result:
            with self.evaluated_scope(context) as (read, notes):
                return (
                    Result()
                    .warn_all(notes)
                    .merge(export_mdl(context, self.filepath, read, options))
                )

        return report_export(self, export)


@transform_options(*ENGINE_AXES)
class IMPORT_ANIM_OT_urho3d_ani(
    bpy.types.Operator, file_type(".ani"), ImportFiles, AnimationFrameRate
):
    """Import Urho3D animations (.ani) as actions on an armature"""

    bl_idname = "import_anim.urho3d_ani"
    bl_label = "Import Urho3D Animation"

    def draw(self, context) -> None:
        layout = options_layout(self)
        draw_transform(layout, self)
        body = section(layout, self, "animation", "Animation")
        if body is not None:
            self.draw_frame_rate(body)

    def execute(self, context):
        options = from_operator(AnimationImportOptions, self, transform=transform(self))
        return self.import_files(
            context,
            lambda c, path, _: import_ani(c, path, options, keep=False),
            timed=actions_of,
            keep=True,
        )


@transform_options(*ENGINE_AXES, export=True)
class EXPORT_ANIM_OT_urho3d_ani(bpy.types.Operator, file_type(".ani"), ExportFile, AnimationExport):
    """Export an armature's actions to Urho3D animations (.ani): the active one, every
    action or every NLA track, one file each"""

    bl_idname = "export_anim.urho3d_ani"
    bl_label = "Export Urho3D Animation"

    export_animations: export_animations_property()
    use_action_names: use_action_names_property()
    file_format: EnumProperty(
        name="Format",
        items=(
            (
                "AUTO",
                "As Imported",
                "UAN2 with its version and track data if imported so, else UANI",
            ),
            ("UANI", "UANI", "Urho3D animation"),
            ("UAN2", "UAN2", "rbfx animation (version 3: track weights, variant tracks)"),
        ),
        default="AUTO",
        description="The animation file format to write",
    )
    package_file: package_file_property("the animations")
    package_entry: package_entry_property(
        "The animation's name inside the package (empty: Models/<file name>); "
        "with several animations, the folder their files go into"
    )

    def draw(self, context) -> None:
        layout = options_layout(self)
        self.draw_include(layout)
        draw_transform(layout, self)
        body = section(layout, self, "animation", "Animation")
        if body is not None:
            draw_animation_choice(body, self)
            self.draw_frame_rate(body, importing=False)
            body.prop(self, "file_format")
        draw_package(layout, self)

    def execute(self, context):
        options = from_operator(AnimationExportOptions, self, transform=ExportTransform.of(self))
        return report_export(
            self,
            lambda: export_animations(
                context, self.filepath, self.scope_armature(context), options
            ),
        )


def _batch_import_mdl(context, path: str, state: dict, options: dict) -> Result:
    lods = "ALL" if options.get("all_lods") else "FIRST"
    imported = import_mdl(context, path, from_mapping(ModelImportOptions, options, lods=lods))
    # batch's line says what was built; the degenerate-normals note is for the importer's report
    return Result(summary=batch_add_built(state, imported))


def _batch_export_mdl(context, path: str, state: dict, options: dict) -> Result:
    return export_mdl(context, path, batch_meshes(state), from_mapping(ModelExportOptions, options))


def _batch_import_ani(context, path: str, state: dict, options: dict) -> Result:
    opts = from_mapping(AnimationImportOptions, options)
    result = import_ani(context, path, opts, state.get("armature"))
    state["armature"], state["action"] = result.armature, result.actions[0]
    result.summary = f"action {result.summary}"
    return result


def _batch_export_ani(context, path: str, state: dict, options: dict) -> Result:
    armature = batch_armature(state, "an Urho3D animation")
    opts = from_mapping(AnimationExportOptions, options)
    return export_ani(context, path, armature, state.get("action"), opts)


FILES = (
    FileKind(
        "Urho3D Model",
        ".mdl",
        "import_scene.urho3d_mdl",
        "export_scene.urho3d_mdl",
        handler="urho3d_mdl",
    ),
    FileKind(
        "Urho3D Animation",
        ".ani",
        "import_anim.urho3d_ani",
        "export_anim.urho3d_ani",
        handler="urho3d_ani",
    ),
)
CLASSES = (
    IMPORT_SCENE_OT_urho3d_mdl,
    EXPORT_SCENE_OT_urho3d_mdl,
    IMPORT_ANIM_OT_urho3d_ani,
    EXPORT_ANIM_OT_urho3d_ani,
    *file_handlers(FILES),
)
MENU_IMPORT, MENU_EXPORT = menus(FILES)
BATCH = (
    BatchFormat("urho3d.mdl", _batch_import_mdl, _batch_export_mdl),
    BatchFormat("urho3d.ani", _batch_import_ani, _batch_export_ani),
)
