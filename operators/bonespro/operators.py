"""BonesPro (3ds Max) structure and animation text exports: the operators.

Both files are ``.txt``: every importer looks at the content and says which
file it got; ``import_scene.bonespro`` (used for drag and drop) imports either.
The work is in ``importer.py`` and ``exporter.py``.
"""

from __future__ import annotations

import os

import bpy
from bpy.props import (
    BoolProperty,
    EnumProperty,
    FloatProperty,
)

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
    batch_meshes,
    file_handlers,
    file_type,
    menus,
    read_bytes,
    report_export,
    selected_paths,
)
from ..conventions import (
    AnimationExport,
    ExportScope,
    FrameRateOptions,
    draw_props,
    draw_transform,
    frame_rate_property,
    section,
    transform_options,
)
from ..options import from_mapping, from_operator
from ..result import Result
from .exporter import (
    MODE_IDS,
    ORDER_IDS,
    REPRESENTATION_IDS,
    SYSTEM_IDS,
    UNIT_IDS,
    AnimationExportOptions,
    StructureExportOptions,
    export_animation,
    export_structure,
    write_animation,
    write_structure,
)
from .importer import (
    MAX_FORWARD,
    MAX_UP,
    AnimationImportOptions,
    AnimationResult,
    ImportOptions,
    StructureImportOptions,
    file_kind,
    import_animation,
    import_file,
    import_structure,
)

WEIGHTS_ITEMS = (
    (
        "AUTO",
        "Active Mesh if It Fits",
        "The active mesh when its vertex count matches, else a new vertex-only mesh",
    ),
    ("NEW", "New Vertex-Only Mesh", "Always a new mesh holding the file's vertices and weights"),
)


def _weights_property():
    return EnumProperty(
        name="Weights",
        items=WEIGHTS_ITEMS,
        default="AUTO",
        description="Where the file's vertex weights go",
    )


def _draw_import(op, layout, weights: bool, animation: bool) -> None:
    if weights:
        body = section(layout, op, "geometry", "Geometry")
        if body is not None:
            body.prop(op, "weights_to")
    draw_transform(layout, op)
    if animation:
        body = section(layout, op, "animation", "Animation")
        if body is not None:
            op.draw_frame_rate(body, importing=True)


def _timed(result: Result) -> list:
    """An animation import's result itself (a mesh animation makes no action): the
    scene's timing follows its ``frame_range``."""
    return [result] if isinstance(result, AnimationResult) else []


@transform_options(MAX_FORWARD, MAX_UP)
class IMPORT_SCENE_OT_bonespro_structure(bpy.types.Operator, file_type(".txt"), ImportFiles):
    """Import BonesPro structure exports (.txt): armature and vertex weights"""

    bl_idname = "import_scene.bonespro_structure"
    bl_label = "Import BonesPro Structure"

    weights_to: _weights_property()

    def draw(self, context):
        _draw_import(self, self.layout, True, False)

    def execute(self, context):
        options = from_operator(StructureImportOptions, self)
        return self.import_files(context, lambda c, path, _: import_structure(c, path, options))


@transform_options(MAX_FORWARD, MAX_UP)
class IMPORT_ANIM_OT_bonespro_anim(
    bpy.types.Operator, file_type(".txt"), ImportFiles, FrameRateOptions
):
    """Import BonesPro animation exports (.txt): an action (Bones mode) or a mesh that
    shows each frame's positions (Mesh modes). Axes and scale go on a new mesh; an
    action's keys are in its armature's space, which carries its structure's import
    transform"""

    bl_idname = "import_anim.bonespro_anim"
    bl_label = "Import BonesPro Animation"

    set_scene_timing: BoolProperty(
        name="Set Scene Rate and Range",
        default=True,
        description="Set the scene's frame rate to the one used and its frame range to "
        "the imported animation's",
    )

    def draw(self, context):
        _draw_import(self, self.layout, False, True)

    def execute(self, context):
        options = from_operator(AnimationImportOptions, self)
        return self.import_files(
            context, lambda c, path, _: import_animation(c, path, options), timed=_timed
        )


@transform_options(MAX_FORWARD, MAX_UP)
class IMPORT_SCENE_OT_bonespro(
    bpy.types.Operator, file_type(".txt"), ImportFiles, FrameRateOptions
):
    """Import BonesPro exports (.txt), structure or animation as the content says"""

    bl_idname = "import_scene.bonespro"
    bl_label = "Import BonesPro"

    weights_to: _weights_property()

    def draw(self, context):
        _draw_import(self, self.layout, True, True)

    def execute(self, context):
        paths = selected_paths(self)
        # Structures first, so animations of the same drop find their armature.
        kinds = {p: file_kind(read_bytes(p)) if os.path.isfile(p) else "neither" for p in paths}
        ordered = sorted(paths, key=lambda p: kinds[p] != "structure")
        options = from_operator(ImportOptions, self)
        return self.import_files(
            context, lambda c, path, _: import_file(c, path, options), ordered, _timed
        )


@transform_options(MAX_FORWARD, MAX_UP, export=True)
class EXPORT_SCENE_OT_bonespro_structure(
    bpy.types.Operator, file_type(".txt"), ExportFile, ExportScope
):
    """Export the active armature (or the active mesh's) and its mesh's weights to a
    BonesPro structure file (.txt)"""

    bl_idname = "export_scene.bonespro_structure"
    bl_label = "Export BonesPro Structure"

    def draw(self, context):
        layout = self.layout
        self.draw_include(layout)
        draw_transform(layout, self)
        body = section(layout, self, "geometry", "Geometry")
        if body is not None:
            body.prop(self, "apply_modifiers")

    def execute(self, context):
        options = from_operator(StructureExportOptions, self)
        return report_export(self, lambda: export_structure(context, self.filepath, options))


def _setting(name: str, pairs, description: str):
    """A header setting of the file: "As Imported" (``AUTO``) or one of ``pairs``."""
    items = (("AUTO", "As Imported", "The imported file's setting, else the first one"),)
    items += tuple((i, v, f"{v}, as the file writes it") for i, v in pairs)
    return EnumProperty(name=name, items=items, default="AUTO", description=description)


@transform_options(MAX_FORWARD, MAX_UP, export=True)
class EXPORT_ANIM_OT_bonespro_anim(
    bpy.types.Operator, file_type(".txt"), ExportFile, AnimationExport
):
    """Export the active armature's animation (or the active mesh's deformation) to a
    BonesPro animation file (.txt); with All Actions or NLA Tracks, one file each"""

    bl_idname = "export_anim.bonespro_anim"
    bl_label = "Export BonesPro Animation"

    frame_rate: frame_rate_property(
        (
            ("AUTO", "As Imported", "The frame rate the animation was imported at, else Scene"),
            ("SCENE", "Scene", "The file's frames are the scene's frames"),
            ("CUSTOM", "Custom", "The file's frames are at the frame rate given below"),
        ),
        "AUTO",
        "The frame rate of the file's frame numbers",
    )
    export_animations: export_animations_property()
    use_action_names: use_action_names_property()
    mode: _setting(
        "Export Mode",
        MODE_IDS,
        "Bones, or the mesh's vertex positions (absolute or in bone space)",
    )
    system: _setting(
        "Transform System",
        SYSTEM_IDS,
        "Bone transforms in world space (absolute) or relative to the parent",
    )
    representation: _setting(
        "Representation",
        REPRESENTATION_IDS,
        "Bone transforms as matrices or as Euler angles and a translation",
    )
    euler_order: _setting("Euler Order", ORDER_IDS, "The order of the Euler angles")
    angle_units: _setting("Angle Units", UNIT_IDS, "Degrees or radians for Euler angles")
    interval: EnumProperty(
        name="Frames",
        items=(
            ("AUTO", "As Imported", "The imported interval, else the action's frame range"),
            ("SCENE", "Scene Range", "The scene's start and end frame, step 1"),
            ("CUSTOM", "Custom", "First, last and step below"),
        ),
        default="AUTO",
        description="Which frames to write",
    )
    first_frame: FloatProperty(
        name="First Frame", default=0.0, description="Custom frames: the first (scene frame)"
    )
    last_frame: FloatProperty(
        name="Last Frame", default=100.0, description="Custom frames: the last (scene frame)"
    )
    step: FloatProperty(
        name="Step", default=1.0, min=0.001, description="Custom frames: scene frames between two"
    )

    def draw(self, context):
        layout = self.layout
        self.draw_include(layout)
        draw_transform(layout, self)
        body = section(layout, self, "animation", "Animation")
        if body is not None:
            draw_animation_choice(body, self)
            body.prop(self, "interval")
            col = body.column()
            col.active = self.interval == "CUSTOM"
            draw_props(col, self, ("first_frame", "last_frame", "step"))
            self.draw_frame_rate(body, importing=False)
        props = ("mode", "system", "representation", "euler_order", "angle_units")
        section(layout, self, "format", "File Settings", props=props)

    def execute(self, context):
        options = from_operator(AnimationExportOptions, self)
        return report_export(self, lambda: export_animation(context, self.filepath, options))


# ------------------------------------------------------------------ batch
def _batch_import_structure(context, path: str, state: dict, options: dict) -> Result:
    result = import_structure(
        context, path, from_mapping(StructureImportOptions, options, weights_to="NEW")
    )
    state["armature"] = result.armature
    state.setdefault("objects", []).extend(result.objects)
    return result


def _batch_export_structure(context, path: str, state: dict, options: dict) -> Result:
    meshes = batch_meshes(state)
    return write_structure(context, path, state.get("armature"), meshes[0] if meshes else None)


def _batch_import_anim(context, path: str, state: dict, options: dict) -> Result:
    result = import_animation(
        context, path, from_mapping(AnimationImportOptions, options), state.get("armature")
    )
    if result.armature is not None:
        state["armature"] = result.armature
    else:
        state["mesh_animation"] = result.objects[0]
    state["action"] = result.actions[0] if result.actions else None
    return result


def _batch_export_anim(context, path: str, state: dict, options: dict) -> Result:
    mesh = state.get("mesh_animation")
    if mesh is None:
        meshes = batch_meshes(state)
        mesh = meshes[0] if meshes else None
    return write_animation(
        context, path, state.get("armature"), mesh, from_mapping(AnimationExportOptions, options)
    )


FILES = (
    FileKind(
        "BonesPro Structure",
        ".txt",
        "import_scene.bonespro_structure",
        "export_scene.bonespro_structure",
    ),
    FileKind(
        "BonesPro Animation", ".txt", "import_anim.bonespro_anim", "export_anim.bonespro_anim"
    ),
    FileKind(
        "BonesPro Export",
        ".txt",
        "import_scene.bonespro",
        "export_scene.bonespro_structure",
        handler="bonespro",
        menu=False,
    ),
)
CLASSES = (
    IMPORT_SCENE_OT_bonespro_structure,
    IMPORT_ANIM_OT_bonespro_anim,
    IMPORT_SCENE_OT_bonespro,
    EXPORT_SCENE_OT_bonespro_structure,
    EXPORT_ANIM_OT_bonespro_anim,
    *file_handlers(FILES),
)
MENU_IMPORT, MENU_EXPORT = menus(FILES)
BATCH = (
    BatchFormat("bonespro.structure", _batch_import_structure, _batch_export_structure),
    BatchFormat("bonespro.animation", _batch_import_anim, _batch_export_anim),
)
