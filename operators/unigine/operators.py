"""Unigine mesh (.mesh, ms11) and animation (.anim, an10) import/export operators.

Unigine is Z-up and right-handed, as Blender is: the engine's axes are Blender's
(forward Y, up Z), and only other axes or a scale chosen in the options change
anything. Its files store animation frames, not times: RigPort takes a file frame
as 1/30 s (``FRAME_RATE``), and the Frame Rate options say at which rate those
seconds become Blender frames. The default (Custom, 30 fps) keys file frame n at
Blender frame n, as RigPort always has.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import bpy
import numpy as np
from bpy.props import StringProperty

from ...io_formats import global_transform
from ...io_formats.codec import FormatError
from ...io_formats.codec.files import write_atomic
from ...io_formats.scene import Animation, Mesh, Scene, Skeleton
from ...io_formats.unigine import anim, mesh
from ...io_formats.unigine.anim_convert import NAME_KEY, file_name, json_list
from ...io_formats.unigine.anim_file_convert import (
    BOUNDS_KEY,
    CLIP_KEY,
    SOURCE_KEY,
    export_anim_file,
    import_anim_file,
)
from ...io_formats.unigine.common import FRAME_RATE
from ...io_formats.unigine.mesh_export import (
    ExportOptions,
    export_mesh,
    file_order,
    merge_files,
    rotate_kept_tangents,
)
from ...io_formats.unigine.mesh_import import ANIMATIONS_KEY, import_mesh
from ..animation_files import (
    ACTIONS_ITEM,
    ACTIVE_ITEM,
    NLA_ITEM,
    chosen_actions,
    chosen_files,
    draw_animation_choice,
    export_animations_property,
    use_action_names_property,
)
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
    ExportFile,
    ImportFiles,
    batch_add_built,
    batch_armature,
    batch_mesh_export,
    batch_notes,
    file_handler,
    fit_armature,
    one_armature,
    read_bytes,
)
from ..conventions import (
    AnimationExport,
    AnimationFrameRate,
    ExportFrameRate,
    ExportScope,
    FrameRateOptions,
    ReuseMaterials,
    draw_transform,
    file_matrix,
    frame_rate_property,
    option_matrix,
    options_layout,
    place_roots,
    section,
    transform_options,
)

#: Unigine's axes, as ``orientation_helper`` names them: Blender's own.
ENGINE_FORWARD, ENGINE_UP = "Y", "Z"

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
    """``frame_rate`` with Unigine's default: Custom (30 fps), file frames one to one."""
    return frame_rate_property(
        default="CUSTOM",
        description=EXPORT_FRAME_RATE_DESCRIPTION if export else FRAME_RATE_DESCRIPTION,
    )


@dataclass
class Transform:
    """The axes and scale options of an export when no operator gives them
    (``batch.py``, scripts): "As Imported", else the engine's axes at scale 1."""

    engine_axes: tuple[str, str] = (ENGINE_FORWARD, ENGINE_UP)
    axis_forward: str = ENGINE_FORWARD
    axis_up: str = ENGINE_UP
    global_scale: float = 1.0
    use_transform_as_imported: bool = True


AS_IMPORTED = Transform()


def _parse(codec, path: str):
    data = read_bytes(path)
    try:
        return codec.read(data)
    except FormatError as err:
        raise err.with_path(path) from None


def import_mesh_file(
    context,
    path: str,
    fps: float = FRAME_RATE,
    reuse_materials: bool = False,
    matrix: np.ndarray | None = None,
) -> Built:
    """Import one .mesh, its embedded animations keyed at ``fps`` Blender frames per
    second; ``matrix`` (the axes and scale options) goes on the root objects. Returns
    what was built; a FormatError leaves nothing behind."""
    native = _parse(mesh, path)
    name = os.path.splitext(os.path.basename(path))[0]
    try:
        scene = import_mesh(native, name, FRAME_RATE)
    except FormatError as err:
        raise err.with_path(path) from None
    built = build_scene(context, scene, fps=fps, reuse_materials=reuse_materials)
    if built.armature is not None and built.actions:  # Blender may have renamed them
        built.armature[ANIMATIONS_KEY] = json.dumps([a.name for a in built.actions])
    if matrix is not None:
        place_roots(built.objects, matrix)
    return built


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


def import_anim_path(context, path: str, armature=None, fps: float = FRAME_RATE) -> AnimImport:
    """Every animation of one .anim as an action on ``armature`` (or the armature that
    fits), keyed at ``fps`` Blender frames per second and kept through a save
    (:func:`keep_actions`, the last one active); refused when none of its animated
    bones is in the armature."""
    native = _parse(anim, path)
    try:
        anims = import_anim_file(native, os.path.basename(path), FRAME_RATE)
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


# -- export: the file's space ---------------------------------------------------


def _root(obj: bpy.types.Object) -> bpy.types.Object:
    while obj.parent is not None:
        obj = obj.parent
    return obj


def _file_matrix(transform, root, space_world) -> np.ndarray:
    return file_matrix(transform, root, np.array(space_world, np.float64))


def _apply_matrix(m: Mesh, mat: np.ndarray) -> None:
    """Any matrix (shear, uneven scale) on the mesh's positions, morph offsets and
    normals; the kept tangent quaternions are left to be remade where they no
    longer fit the normals."""
    m.positions = (m.positions @ mat[:3, :3].T + mat[:3, 3]).astype(np.float32)
    for morph in m.morphs:
        morph.position_offsets = (morph.position_offsets @ mat[:3, :3].T).astype(np.float32)
    if m.normals is not None:
        n = m.normals @ np.linalg.inv(mat[:3, :3])
        m.normals = (n / np.maximum(np.linalg.norm(n, axis=1, keepdims=True), 1e-12)).astype(
            np.float32
        )


def _to_file_space(m: Mesh, mat: np.ndarray) -> None:
    """Bring a mesh read in object space into the file's space (``mat``: nothing
    when it is the identity, so unmoved imports write their own bytes)."""
    if global_transform.is_identity(mat):
        return
    try:
        rotation, _, _ = global_transform.split(mat)
    except ValueError:
        _apply_matrix(m, mat)
        return
    global_transform.bake_mesh(m, mat)
    rotate_kept_tangents(m, rotation)


def _bake_rig(transform, armature, skeleton: Skeleton, anims: list[Animation]) -> np.ndarray:
    """The armature's skeleton and animations into the file's space; the matrix."""
    matrix = _file_matrix(transform, armature, armature.matrix_world)
    if global_transform.is_identity(matrix):
        return matrix
    try:
        global_transform.bake(Scene(armature.name, skeleton, [], anims), matrix)
    except ValueError as err:
        raise FormatError(
            f"armature {armature.name!r}: its transform cannot be written ({err}); "
            "apply its rotation and scale (Ctrl+A) first"
        ) from None
    for a in anims:  # the bounds the file had no longer fit the moved skeleton
        a.extras.pop(BOUNDS_KEY, None)
    return matrix


def _blender_tangents(obj, mat: np.ndarray) -> np.ndarray:
    """Blender's tangents (xyz, bitangent sign) per triangle corner, as extract_mesh
    orders corners, in the export space; computed only when the exporter needs new
    tangent quaternions."""
    out = triangle_tangents(obj)
    out[:, :3] = out[:, :3] @ mat[:3, :3].T.astype(np.float32)
    return out


# -- export: animations ---------------------------------------------------------


#: (name to write, action), as :func:`animation_files.chosen_actions` gives them.
Chosen = tuple[str, bpy.types.Action]


def _imported_actions(armature) -> list[Chosen]:
    names = json_list(read_prop(armature, ANIMATIONS_KEY)) or []
    return [(n, bpy.data.actions[n]) for n in names if n in bpy.data.actions]


def _embedded_actions(armature, which: str) -> list[Chosen]:
    """IMPORTED: the actions the mesh file had embedded; NONE; or an
    :func:`chosen_actions` choice (ACTIVE, ACTIONS, NLA)."""
    if armature is None or which == "NONE":
        return []
    if which == "IMPORTED":
        return _imported_actions(armature)
    return chosen_actions(armature, which)


def _extract(armature, chosen: list[Chosen], fps: float) -> list[Animation]:
    """The chosen actions as animations (in seconds), each under its chosen name;
    where two would write the same name, the later one writes its Blender name."""
    out, used = [], set()
    for name, action in chosen:
        a = extract_animation(armature, action, fps)
        if name != action.name:  # an NLA track's; else the name the action keeps
            a.name = name
        if file_name(a) in used:
            a.extras.pop(NAME_KEY, None)
        used.add(file_name(a))
        out.append(a)
    return out


@dataclass
class MeshExport:
    """What a .mesh export wrote: its surfaces and animations, and the warnings."""

    surfaces: int
    animations: int
    warnings: list[str] = field(default_factory=list)


def write_mesh_file(
    context,
    path: str,
    objects: list,
    animations: str = "IMPORTED",
    fps: float = FRAME_RATE,
    transform=AS_IMPORTED,
) -> MeshExport:
    """Write ``objects`` (their material slots as surfaces) and the ``animations``
    choice of their armature's actions to one .mesh, in the file's space that
    ``transform`` (axes and scale options) gives."""
    if not objects:
        raise FormatError("no mesh objects to export")
    armature = one_armature(objects, "a Unigine mesh")
    context.view_layer.update()  # world matrices after an import moved the roots
    skeleton, names, anims = None, None, []
    if armature is not None:
        skeleton = file_order(extract_skeleton(armature))
        names = skeleton.names
        anims = _extract(armature, _embedded_actions(armature, animations), fps)
        _bake_rig(transform, armature, skeleton, anims)
    parts, warnings = [], []
    for i, obj in enumerate(sorted(objects, key=lambda o: o.name)):
        m = extract_mesh(obj, names)
        root = armature if armature is not None else _root(obj)
        mat = _file_matrix(transform, root, obj.matrix_world)
        _to_file_space(m, mat)
        opts = ExportOptions(tangent_source=lambda o=obj, x=mat: _blender_tangents(o, x))
        embedded = [(a, FRAME_RATE) for a in anims] if i == 0 else []
        part, part_warnings = export_mesh(m, skeleton, embedded, opts)
        parts.append(part)
        warnings += part_warnings
    merged = merge_files(parts)
    write_atomic(path, lambda: mesh.write(merged))
    return MeshExport(len(merged.surfaces), len(merged.animations), warnings)


def export_mesh_file(
    context,
    path: str,
    objects: list,
    animations: str = "IMPORTED",
    fps: float = FRAME_RATE,
    transform=AS_IMPORTED,
) -> list[str]:
    """:func:`write_mesh_file`, returning its warnings."""
    return write_mesh_file(context, path, objects, animations, fps, transform).warnings


def _file_actions(armature, which: str) -> list[Chosen]:
    """IMPORTED: the active action and the other clips of the .anim it came from
    (in file order); ACTIVE: the active action alone."""
    ad = armature.animation_data
    active = ad.action if ad is not None else None
    if active is None:
        raise FormatError(f"armature {armature.name!r} has no action to export")
    source = active.get(SOURCE_KEY)
    if which == "ACTIVE" or source is None:
        return [(active.name, active)]
    same = [a for a in bpy.data.actions if a.get(SOURCE_KEY) == source]
    return [(a.name, a) for a in sorted(same, key=lambda a: int(a.get(CLIP_KEY, 0)))]


@dataclass
class AnimExport:
    """What an .anim export wrote: the files and how many animations in all."""

    paths: list[str]
    animations: int


def export_anim_path(
    context,
    path: str,
    armature,
    which: str = "IMPORTED",
    fps: float = FRAME_RATE,
    transform=AS_IMPORTED,
    use_action_names: bool = False,
) -> AnimExport:
    """Write the armature's animations as ``which`` says: IMPORTED (the active action
    and the other clips of its file) or ACTIVE into ``path``; ACTIONS or NLA one
    .anim per action beside it (:func:`animation_files.chosen_files`). Every file is made before
    the first is written, so a refusal writes none."""
    skeleton = file_order(extract_skeleton(armature))
    if which in ("IMPORTED", "ACTIVE"):
        groups = [(path, _file_actions(armature, which))]
    else:
        chosen = chosen_files(armature, which, path, use_action_names)
        groups = [(p, [(name, action)]) for p, name, action in chosen]
    per_file = [(p, _extract(armature, group, fps)) for p, group in groups]
    _bake_rig(transform, armature, skeleton, [a for _, anims in per_file for a in anims])
    files = [
        (p, export_anim_file([(a, FRAME_RATE) for a in anims], skeleton)) for p, anims in per_file
    ]
    for p, f in files:
        write_atomic(p, lambda f=f: anim.write(f))
    return AnimExport([p for p, _ in files], sum(len(f.animations) for _, f in files))


# -- operators ------------------------------------------------------------------


@transform_options(ENGINE_FORWARD, ENGINE_UP)
class IMPORT_SCENE_OT_unigine_mesh(
    bpy.types.Operator, ImportFiles, FrameRateOptions, ReuseMaterials
):
    """Import Unigine meshes (.mesh): surfaces, morph targets, skin, bones, animations"""

    bl_idname = "import_scene.unigine_mesh"
    bl_label = "Import Unigine Mesh"

    filename_ext = ".mesh"
    filter_glob: StringProperty(default="*.mesh", options={"HIDDEN"})
    frame_rate: _frame_rate_property()

    def draw(self, context):
        layout = options_layout(self)
        draw_transform(layout, self)
        section(layout, self, "geometry", "Geometry", props=("reuse_materials",))
        body = section(layout, self, "animation", "Animation")
        if body is not None:
            self.draw_frame_rate(body, importing=True)

    def execute(self, context):
        fps = self.frames_per_second(context)
        matrix = option_matrix(self)
        actions = []

        def one(context, path, progress):
            built = import_mesh_file(context, path, fps, self.reuse_materials, matrix)
            actions.extend(built.actions)
            extra = f", {len(built.actions)} actions" if built.actions else ""
            return [f"{len(built.objects)} objects{extra}"], [built.discard]

        return self.import_files(context, one, made=actions)


@transform_options(ENGINE_FORWARD, ENGINE_UP, export=True)
class EXPORT_SCENE_OT_unigine_mesh(bpy.types.Operator, ExportFile, ExportScope, ExportFrameRate):
    """Export meshes (material slots as surfaces, with their armature and its
    animations) to a Unigine mesh"""

    bl_idname = "export_scene.unigine_mesh"
    bl_label = "Export Unigine Mesh"

    filename_ext = ".mesh"
    filter_glob: StringProperty(default="*.mesh", options={"HIDDEN"})
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
        try:
            with self.evaluated_scope(context) as (read, warnings):
                done = write_mesh_file(
                    context,
                    self.filepath,
                    read,
                    self.export_animations,
                    self.frames_per_second(context),
                    self,
                )
        except FormatError as err:
            self.report({"ERROR"}, str(err))
            return {"CANCELLED"}
        for w in warnings + done.warnings:
            self.report({"WARNING"}, w)
        self.report(
            {"INFO"},
            f"{os.path.basename(self.filepath)}: {done.surfaces} surfaces, "
            f"{done.animations} animations written",
        )
        return {"FINISHED"}


# No axes or scale options: the actions play in their armature's space, which
# carries the transform its mesh import put on it.
class IMPORT_ANIM_OT_unigine_anim(bpy.types.Operator, ImportFiles, AnimationFrameRate):
    """Import Unigine animations (.anim): an action per animation on an armature"""

    bl_idname = "import_anim.unigine_anim"
    bl_label = "Import Unigine Animation"

    filename_ext = ".anim"
    filter_glob: StringProperty(default="*.anim", options={"HIDDEN"})
    frame_rate: _frame_rate_property()

    def draw(self, context):
        self.draw_frame_rate(options_layout(self), importing=True)

    def execute(self, context):
        fps = self.frames_per_second(context)
        actions = []

        def one(context, path, progress):
            result = import_anim_path(context, path, None, fps)
            actions.extend(result.actions)
            messages = [
                f"{len(result.actions)} actions applied to {result.armature.name} ({result.how})"
            ]
            return messages + [f"warning: {w}" for w in result.warnings], [result.undo]

        return self.import_files(context, one, made=actions)


@transform_options(ENGINE_FORWARD, ENGINE_UP, export=True)
class EXPORT_ANIM_OT_unigine_anim(bpy.types.Operator, ExportFile, AnimationExport):
    """Export an armature's actions to Unigine animations (.anim)"""

    bl_idname = "export_anim.unigine_anim"
    bl_label = "Export Unigine Animation"

    filename_ext = ".anim"
    filter_glob: StringProperty(default="*.anim", options={"HIDDEN"})
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
        try:
            done = export_anim_path(
                context,
                self.filepath,
                self.scope_armature(context),
                self.export_animations,
                self.frames_per_second(context),
                self,
                self.use_action_names,
            )
        except FormatError as err:
            self.report({"ERROR"}, str(err))
            return {"CANCELLED"}
        names = ", ".join(os.path.basename(p) for p in done.paths)
        self.report(
            {"INFO"}, f"{done.animations} animations written to {len(done.paths)} files: {names}"
        )
        return {"FINISHED"}


def _batch_import_mesh(context, path: str, state: dict, options: dict) -> str:
    built = import_mesh_file(context, path)
    return f"{batch_add_built(state, built)}, {len(built.actions)} actions"


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
    return f"{export_anim_path(context, path, arm).animations} animations"


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
    BatchFormat("unigine.mesh", _batch_import_mesh, batch_mesh_export(export_mesh_file)),
    BatchFormat("unigine.anim", _batch_import_anim, _batch_export_anim),
)
