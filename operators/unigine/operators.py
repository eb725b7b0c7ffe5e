"""Unigine mesh (.mesh, ms11) and animation (.anim, an10) import/export operators."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import bpy
import numpy as np
from bpy.props import BoolProperty, EnumProperty, FloatProperty, StringProperty
from bpy_extras.io_utils import ExportHelper

from ...io_formats.codec import FormatError
from ...io_formats.codec.files import write_atomic
from ...io_formats.scene import Mesh
from ...io_formats.unigine import anim, mesh
from ...io_formats.unigine.anim_convert import json_list
from ...io_formats.unigine.anim_file_convert import (
    CLIP_KEY,
    SOURCE_KEY,
    export_anim_file,
    import_anim_file,
)
from ...io_formats.unigine.mesh_export import ExportOptions, export_mesh, file_order, merge_files
from ...io_formats.unigine.mesh_import import ANIMATIONS_KEY, import_mesh
from ..blender import compat
from ..blender.actions import keep_actions
from ..blender.build import Built, build_action, build_scene, rest_relative
from ..blender.extract import (
    extract_animation,
    extract_mesh,
    extract_skeleton,
    read_prop,
    triangle_tangents,
)
from ..common import (
    BatchFormat,
    ImportFiles,
    batch_add_built,
    batch_armature,
    batch_meshes,
    batch_notes,
    file_handler,
    fit_armature,
    one_armature,
    read_bytes,
    report_export,
)

DEFAULT_FPS = 30.0
FPS_DESCRIPTION = "Frames per second of the file's animation frames (Unigine's default is 30)"


def _parse(codec, path: str):
    data = read_bytes(path)
    try:
        return codec.read(data)
    except FormatError as err:
        raise err.with_path(path) from None


def import_mesh_file(context, path: str, fps: float = DEFAULT_FPS) -> Built:
    """Import one .mesh: returns what was built; a FormatError leaves nothing behind."""
    native = _parse(mesh, path)
    name = os.path.splitext(os.path.basename(path))[0]
    try:
        scene = import_mesh(native, name, fps)
    except FormatError as err:
        raise err.with_path(path) from None
    built = build_scene(context, scene, fps=fps)
    if built.armature is not None and built.actions:  # Blender may have renamed them
        built.armature[ANIMATIONS_KEY] = json.dumps([a.name for a in built.actions])
    return built


def _action_fps(action, default: float) -> float:
    return float(action.get("rigport_fps", default))


@dataclass
class AnimImport:
    """What one .anim import made: an action per animation on ``armature``, how the
    armature was chosen, the fit warnings, and ``undo``, which takes it all back."""

    armature: bpy.types.Object
    actions: list
    how: str
    warnings: list[str]
    undo: Callable[[], None]

    def __iter__(self) -> Iterator:
        """Unpacks as ``(armature, actions, how)``, what the import returned before."""
        return iter((self.armature, self.actions, self.how))


def import_anim_path(context, path: str, armature=None, fps: float = DEFAULT_FPS) -> AnimImport:
    """Every animation of one .anim as an action on ``armature`` (or the armature that
    fits), kept through a save (:func:`keep_actions`, the last one active); refused
    when none of its animated bones is in the armature."""
    native = _parse(anim, path)
    try:
        anims = import_anim_file(native, os.path.basename(path), fps)
    except FormatError as err:
        raise err.with_path(path) from None
    bones = [t.bone for a in anims for t in a.tracks] or [b.name for b in native.bones]
    armature, how, warnings = fit_armature(context, path, bones, armature)
    actions = []
    rest = rest_relative(armature.data)
    try:
        for a in anims:
            actions.append(build_action(armature, a, fps, rest))
    except Exception:
        for action in actions:
            bpy.data.actions.remove(action)
        raise
    undo = keep_actions(armature, actions)
    return AnimImport(armature, actions, how, warnings, undo)


def _apply_object_transform(m: Mesh, obj, armature) -> np.ndarray:
    """Bring the mesh into the armature's (or the world's) space; returns the matrix."""
    mat = np.array(obj.matrix_world, np.float64)
    if armature is not None:
        mat = np.linalg.inv(np.array(armature.matrix_world, np.float64)) @ mat
    if np.allclose(mat, np.eye(4), atol=1e-9):
        return mat
    m.positions = (m.positions @ mat[:3, :3].T + mat[:3, 3]).astype(np.float32)
    for morph in m.morphs:
        morph.position_offsets = (morph.position_offsets @ mat[:3, :3].T).astype(np.float32)
    if m.normals is not None:
        n = m.normals @ np.linalg.inv(mat[:3, :3])
        m.normals = (n / np.maximum(np.linalg.norm(n, axis=1, keepdims=True), 1e-12)).astype(
            np.float32
        )
    return mat


def _blender_tangents(obj, mat: np.ndarray) -> np.ndarray:
    """Blender's tangents (xyz, bitangent sign) per triangle corner, as extract_mesh
    orders corners, in the export space; computed only when the exporter needs new
    tangent quaternions."""
    out = triangle_tangents(obj)
    out[:, :3] = out[:, :3] @ mat[:3, :3].T.astype(np.float32)
    return out


def _embedded_actions(armature, which: str) -> list:
    if armature is None or which == "NONE":
        return []
    if which == "ACTIVE":
        ad = armature.animation_data
        return [ad.action] if ad is not None and ad.action is not None else []
    names = json_list(read_prop(armature, ANIMATIONS_KEY)) or []
    return [bpy.data.actions[n] for n in names if n in bpy.data.actions]


def export_mesh_file(
    context, path: str, objects: list, animations: str = "IMPORTED", fps: float = DEFAULT_FPS
) -> list[str]:
    """Write ``objects`` (their material slots as surfaces) to one .mesh; returns warnings."""
    if not objects:
        raise FormatError("no mesh objects to export")
    armature = one_armature(objects, "a Unigine mesh")
    skeleton = file_order(extract_skeleton(armature)) if armature is not None else None
    names = skeleton.names if skeleton is not None else None
    actions = _embedded_actions(armature, animations)
    anims = []
    for action in actions:
        rate = _action_fps(action, fps)
        anims.append((extract_animation(armature, action, rate), rate))
    parts, warnings = [], []
    for i, obj in enumerate(sorted(objects, key=lambda o: o.name)):
        m = extract_mesh(obj, names)
        mat = _apply_object_transform(m, obj, armature)
        opts = ExportOptions(tangent_source=lambda o=obj, x=mat: _blender_tangents(o, x))
        part, part_warnings = export_mesh(m, skeleton, anims if i == 0 else [], opts)
        parts.append(part)
        warnings += part_warnings
    write_atomic(path, lambda: mesh.write(merge_files(parts)))
    return warnings


def _file_actions(armature, which: str) -> list:
    ad = armature.animation_data
    active = ad.action if ad is not None else None
    if active is None:
        raise FormatError(f"armature {armature.name!r} has no action to export")
    source = active.get(SOURCE_KEY)
    if which == "ACTIVE" or source is None:
        return [active]
    same = [a for a in bpy.data.actions if a.get(SOURCE_KEY) == source]
    return sorted(same, key=lambda a: int(a.get(CLIP_KEY, 0)))


def export_anim_path(
    context, path: str, armature, which: str = "FILE", fps: float = DEFAULT_FPS
) -> int:
    """Write the armature's action (and the other clips of its file) to one .anim."""
    skeleton = file_order(extract_skeleton(armature))
    anims = []
    for action in _file_actions(armature, which):
        rate = _action_fps(action, fps)
        anims.append((extract_animation(armature, action, rate), rate))
    write_atomic(path, lambda: anim.write(export_anim_file(anims, skeleton)))
    return len(anims)


def _fps_property():
    return FloatProperty(
        name="Frame Rate", default=DEFAULT_FPS, min=0.001, description=FPS_DESCRIPTION
    )


class IMPORT_SCENE_OT_unigine_mesh(bpy.types.Operator, ImportFiles):
    """Import Unigine meshes (.mesh): surfaces, morph targets, skin, bones, animations"""

    bl_idname = "import_scene.unigine_mesh"
    bl_label = "Import Unigine Mesh"
    bl_options = {"REGISTER", "UNDO", "PRESET"}

    filename_ext = ".mesh"
    filter_glob: StringProperty(default="*.mesh", options={"HIDDEN"})
    fps: _fps_property()

    def execute(self, context):
        def one(context, path, progress):
            built = import_mesh_file(context, path, self.fps)
            extra = f", {len(built.actions)} actions" if built.actions else ""
            return [f"{len(built.objects)} objects{extra}"], [built.discard]

        return self.import_files(context, one)


class EXPORT_SCENE_OT_unigine_mesh(bpy.types.Operator, ExportHelper):
    """Export meshes (material slots as surfaces, with their armature) to a Unigine mesh"""

    bl_idname = "export_scene.unigine_mesh"
    bl_label = "Export Unigine Mesh"
    bl_options = {"REGISTER", "PRESET"}

    filename_ext = ".mesh"
    filter_glob: StringProperty(default="*.mesh", options={"HIDDEN"})
    use_selection: BoolProperty(name="Selected Only", default=False)
    animations: EnumProperty(
        name="Animations",
        items=(
            ("IMPORTED", "As imported", "The actions the mesh file had embedded"),
            ("ACTIVE", "Active action", "The armature's current action"),
            ("NONE", "None", "No embedded animations"),
        ),
        default="IMPORTED",
    )
    fps: _fps_property()

    def execute(self, context):
        pool = context.selected_objects if self.use_selection else context.scene.objects
        objects = [o for o in pool if o.type == "MESH"]
        return report_export(
            self,
            lambda: export_mesh_file(context, self.filepath, objects, self.animations, self.fps),
        )


class IMPORT_ANIM_OT_unigine_anim(bpy.types.Operator, ImportFiles):
    """Import Unigine animations (.anim): an action per animation on an armature"""

    bl_idname = "import_anim.unigine_anim"
    bl_label = "Import Unigine Animation"
    bl_options = {"REGISTER", "UNDO", "PRESET"}

    filename_ext = ".anim"
    filter_glob: StringProperty(default="*.anim", options={"HIDDEN"})
    fps: _fps_property()

    def execute(self, context):
        def one(context, path, progress):
            result = import_anim_path(context, path, None, self.fps)
            messages = [
                f"{len(result.actions)} actions applied to {result.armature.name} ({result.how})"
            ]
            return messages + [f"warning: {w}" for w in result.warnings], [result.undo]

        return self.import_files(context, one)


class EXPORT_ANIM_OT_unigine_anim(bpy.types.Operator, ExportHelper):
    """Export the active armature's action to a Unigine animation (.anim)"""

    bl_idname = "export_anim.unigine_anim"
    bl_label = "Export Unigine Animation"
    bl_options = {"REGISTER", "PRESET"}

    filename_ext = ".anim"
    filter_glob: StringProperty(default="*.anim", options={"HIDDEN"})
    clips: EnumProperty(
        name="Animations",
        items=(
            ("FILE", "As imported", "The active action and the other actions of its file"),
            ("ACTIVE", "Active action", "Only the armature's current action"),
        ),
        default="FILE",
    )
    fps: _fps_property()

    def execute(self, context):
        arm = context.view_layer.objects.active
        if arm is None or arm.type != "ARMATURE":
            arms = [o for o in context.scene.objects if o.type == "ARMATURE"]
            arm = arms[0] if len(arms) == 1 else None
        if arm is None:
            self.report({"ERROR"}, "select the armature whose action to export")
            return {"CANCELLED"}
        try:
            n = export_anim_path(context, self.filepath, arm, self.clips, self.fps)
        except FormatError as err:
            self.report({"ERROR"}, str(err))
            return {"CANCELLED"}
        self.report({"INFO"}, f"{n} animations written")
        return {"FINISHED"}


def _batch_import_mesh(context, path: str, state: dict, options: dict) -> str:
    built = import_mesh_file(context, path)
    return f"{batch_add_built(state, built)}, {len(built.actions)} actions"


def _batch_export_mesh(context, path: str, state: dict, options: dict) -> str:
    meshes = batch_meshes(state)
    warnings = export_mesh_file(context, path, meshes)
    return batch_notes(warnings)


def _batch_import_anim(context, path: str, state: dict, options: dict) -> str:
    result = import_anim_path(context, path, state.get("armature"))
    state["armature"] = result.armature
    if result.actions:
        state["action"] = result.actions[-1]
    summary = f"{len(result.actions)} actions on {result.armature.name} ({result.how})"
    return summary + batch_notes(result.warnings)


def _batch_export_anim(context, path: str, state: dict, options: dict) -> str:
    arm = batch_armature(state, "a Unigine animation")
    action = state.get("action")
    if action is not None:
        compat.assign_action(arm, action)
    n = export_anim_path(context, path, arm)
    return f"{n} animations"


CLASSES = (
    IMPORT_SCENE_OT_unigine_mesh,
    EXPORT_SCENE_OT_unigine_mesh,
    IMPORT_ANIM_OT_unigine_anim,
    EXPORT_ANIM_OT_unigine_anim,
    file_handler(
        "unigine_mesh",
        "Unigine Mesh",
        "import_scene.unigine_mesh",
        "export_scene.unigine_mesh",
        ".mesh",
    ),
    file_handler(
        "unigine_anim",
        "Unigine Animation",
        "import_anim.unigine_anim",
        "export_anim.unigine_anim",
        ".anim",
    ),
)
MENU_IMPORT = (
    ("import_scene.unigine_mesh", "Unigine Mesh (.mesh)"),
    ("import_anim.unigine_anim", "Unigine Animation (.anim)"),
)
MENU_EXPORT = (
    ("export_scene.unigine_mesh", "Unigine Mesh (.mesh)"),
    ("export_anim.unigine_anim", "Unigine Animation (.anim)"),
)
BATCH = (
    BatchFormat("unigine.mesh", _batch_import_mesh, _batch_export_mesh),
    BatchFormat("unigine.anim", _batch_import_anim, _batch_export_anim),
)
