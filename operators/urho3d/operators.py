"""Urho3D model and animation import/export operators."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import bpy
import numpy as np
from bpy.props import BoolProperty, EnumProperty, StringProperty

from ...io_formats.codec import FormatError
from ...io_formats.codec.files import write_atomic
from ...io_formats.global_transform import bake_animation, is_identity
from ...io_formats.merge import merge_meshes
from ...io_formats.scene import Mesh
from ...io_formats.urho3d import ani, engine_rules, mdl, package
from ...io_formats.urho3d.animation_convert import (
    AXES_EXTRA,
    ORDER_EXTRA,
    RBFX_EXTRA,
    STEPS_EXTRA,
    apply_rbfx_extras,
    export_animation,
    file_track_order,
    import_animation,
    restore_steps,
    steps_warning,
)
from ...io_formats.urho3d.model_export import (
    ExportOptions,
    export_model,
    file_order,
    imported_bone_limit,
    unheld_normals,
)
from ...io_formats.urho3d.model_import import (
    GEOMETRY_ATTRIBUTE,
    NORMAL_ATTRIBUTE,
    TANGENT_ATTRIBUTE,
    import_model,
)
from ...io_formats.urho3d.transform import bake_bones, bake_layout, bake_meshes
from ..animation_files import (
    chosen_files,
    draw_animation_choice,
    export_animations_property,
    use_action_names_property,
)
from ..blender import compat
from ..blender.actions import keep_actions
from ..blender.build import build_action, build_scene
from ..blender.extract import extract_animation, extract_mesh, extract_skeleton, read_prop
from ..blender.weights import reader_groups_kept
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
    report_export,
)
from ..conventions import (
    IMPORT_TRANSFORM,
    SAME,
    AnimationExport,
    AnimationFrameRate,
    ExportScope,
    ReuseMaterials,
    draw_transform,
    file_matrix,
    option_matrix,
    options_layout,
    place_roots,
    recorded_transform,
    scene_fps,
    section,
    transform_options,
)

#: Urho3D's own axes (left-handed, Y up, +Z forward), which the codec's
#: conversion turns into Blender's: the axes options' default.
ENGINE_AXES = ("Z", "Y")

#: ``transform(root, space_world)``: the 4x4 an export bakes into data read in
#: ``root``'s space (``conventions.file_matrix`` bound to the operator).
Transform = Callable[[object, np.ndarray | None], np.ndarray]

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


def export_axes(choice: str | bool | None, kept: object) -> bool:
    """Whether to convert axes: ``choice`` (BLENDER, NONE or a bool), or with
    AUTO/None what the import recorded in ``kept`` (a bool or BLENDER/NONE);
    Blender's axes when nothing was recorded."""
    if choice in (None, "AUTO"):
        choice = kept
    if isinstance(choice, bool):
        return choice
    return choice != "NONE"


@dataclass
class AnimationImport:
    """What one animation import made: the action on ``armature``, how the armature
    was chosen, the fit warnings, and ``undo``, which takes it all back."""

    armature: bpy.types.Object
    action: bpy.types.Action
    how: str
    warnings: list[str]
    undo: Callable[[], None]

    def __iter__(self) -> Iterator:
        """Unpacks as ``(armature, action, how)``, what the import returned before."""
        return iter((self.armature, self.action, self.how))

    def messages(self) -> list[str]:
        """The operator's report lines (``warning: `` prefixed for warnings)."""
        lines = [f"{self.action.name} applied to {self.armature.name} ({self.how})"]
        return lines + [f"warning: {w}" for w in self.warnings]


def import_mdl_file(
    context,
    path: str,
    all_lods: bool = False,
    convert: bool = True,
    reuse_materials: bool = False,
):
    """Import one .mdl: returns what was built; FormatError leaves nothing behind."""
    return import_mdl_data(context, read_bytes(path), path, all_lods, convert, reuse_materials)


def import_mdl_data(
    context,
    data: bytes,
    path: str,
    all_lods: bool = False,
    convert: bool = True,
    reuse_materials: bool = False,
):
    """Import a model from bytes (``path`` names it: a file, or a file in a package)."""
    try:
        model = mdl.read(data)
    except FormatError as err:
        raise err.with_path(path) from None
    return build_model(context, model, path, all_lods, convert, reuse_materials)


def build_model(
    context,
    model: mdl.Model,
    path: str,
    all_lods: bool = False,
    convert: bool = True,
    reuse_materials: bool = False,
):
    """Build ``model``; with every LOD, the levels after 0 are hidden in the viewport
    (they are still exported)."""
    name = os.path.splitext(os.path.basename(path))[0]
    try:
        scene = import_model(model, name, all_lods=all_lods, convert=convert)
    except FormatError as err:
        raise err.with_path(path) from None
    built = build_scene(context, scene, reuse_materials=reuse_materials)
    for obj in built.objects:
        if obj.type == "MESH" and int(obj.get("urho_lod", 0)) > 0:
            obj.hide_set(True)
    return built


def unheld_normal_warnings(built) -> list[str]:
    """A "warning: " message counting the vertices whose file normals Blender
    cannot hold (corners of degenerate triangles); the exporter writes the kept ones.
    Versions with the ``custom_normal`` attribute hold every normal as given, so
    they skip the check (reading 4.2's corner normals costs a second at 1M vertices)."""
    if compat.HAS_NORMAL_ATTRIBUTE:
        return []
    count = 0
    for obj in built.objects:
        me = obj.data if obj.type == "MESH" else None
        if me is None or NORMAL_ATTRIBUTE not in me.attributes or not len(me.loops):
            continue
        normals = np.empty(3 * len(me.loops), np.float32)
        me.corner_normals.foreach_get("vector", normals)
        bad = unheld_normals(normals.reshape(-1, 3))
        if bad.any():
            verts = np.empty(len(me.loops), np.int32)
            me.loops.foreach_get("vertex_index", verts)
            count += len(np.unique(verts[bad]))
    if not count:
        return []
    return [
        f"warning: {count} vertices lie on degenerate triangles, where Blender cannot hold "
        "their normals: the file's normals are kept and written back"
    ]


def import_ani_file(
    context,
    path: str,
    armature=None,
    convert: bool = True,
    fps: float | None = None,
    matrix: np.ndarray | None = None,
) -> AnimationImport:
    return import_ani_data(context, read_bytes(path), path, armature, convert, fps, matrix)


def import_ani_data(
    context,
    data: bytes,
    path: str,
    armature=None,
    convert: bool = True,
    fps: float | None = None,
    matrix: np.ndarray | None = None,
) -> AnimationImport:
    """Import an animation from bytes onto ``armature`` (else the best match)."""
    try:
        anim = ani.read(data)
    except FormatError as err:
        raise err.with_path(path) from None
    return build_animation(context, anim, path, armature, convert, fps, matrix)


def build_animation(
    context,
    anim: ani.Animation,
    path: str,
    armature=None,
    convert: bool = True,
    fps: float | None = None,
    matrix: np.ndarray | None = None,
) -> AnimationImport:
    """One animation as an action on ``armature`` (else the armature that fits),
    kept through a save (:func:`keep_actions`); refused when it fits no bone.
    ``matrix`` (the axes and scale options, in the armature's space) is baked
    into the keys and recorded on the action, so an export "As Imported" takes
    it back out; the identity leaves the keys the file's."""
    try:
        neutral = import_animation(anim, convert)
    except FormatError as err:
        raise err.with_path(path) from None
    armature, how, warnings = fit_armature(
        context, path, [t.bone for t in neutral.tracks], armature
    )
    if matrix is not None and not is_identity(matrix):
        bake_animation(neutral, extract_skeleton(armature), matrix)
    action = build_action(armature, neutral, fps or scene_fps(context))
    if matrix is not None and not is_identity(matrix):
        action[IMPORT_TRANSFORM] = [float(v) for v in np.asarray(matrix, np.float64).ravel()]
    undo = keep_actions(armature, [action])
    return AnimationImport(armature, action, how, warnings, undo)


def write_output(
    path: str, data: Callable[[], bytes], package_path: str = "", entry: str = ""
) -> str:
    """Write what ``data()`` makes to ``path`` (atomically), or into the existing
    package ``package_path`` as ``entry`` (default: ``path``'s file name); returns
    where it went."""
    if not package_path:
        write_atomic(path, data)
        return path
    name = entry or os.path.basename(path)
    package.update_file(package_path, name, data())
    return f"{package_path}:{name}"


def export_mdl_file(
    context,
    path: str,
    objects: list,
    fmt: str = "AUTO",
    convert: bool | str | None = None,
    tangents: bool = True,
    recompute_tangents: bool = False,
    bone_limit: int | str = "AUTO",
    package_path: str = "",
    entry: str = "",
    transform: Transform | None = None,
) -> list[str]:
    """Write ``objects`` (LODs by their ``urho_lod`` property) to one .mdl; returns warnings.

    ``convert`` and ``bone_limit`` default to what the import recorded (Blender's
    axes and 64 bones per draw for new models).
    With ``package_path`` the model goes into that existing package as ``entry``
    (default: ``path``'s file name), replacing a file of that name.
    Skinned meshes are read in their armature's space, others in world space;
    ``transform(root, space_world)`` gives the matrix baked into that data (the
    axes and scale options; none: the data as read)."""
    if not objects:
        raise FormatError("no mesh objects to export")
    armature = one_armature(objects, "an Urho3D model")
    skeleton = file_order(extract_skeleton(armature)) if armature is not None else None
    names = skeleton.names if skeleton is not None else None
    by_lod: dict[int, list] = {}
    for obj in objects:
        by_lod.setdefault(int(obj.get("urho_lod", 0)), []).append(obj)
    matrix = np.eye(4)
    if transform is not None:
        if armature is not None:
            matrix = transform(armature, np.array(armature.matrix_world, np.float64))
        else:
            matrix = transform(_top(min(by_lod[min(by_lod)], key=lambda o: o.name)), None)
    if skeleton is not None:
        bake_bones(skeleton, matrix)
    lods = []
    merge_warnings: list[str] = []
    single = all(len(v) == 1 for v in by_lod.values())
    for lod, objs in sorted(by_lod.items()):
        meshes = []
        # Blender's tangents only when the file's own are not all kept (they win on export)
        need = tangents and (
            recompute_tangents or any(TANGENT_ATTRIBUTE not in o.data.attributes for o in objs)
        )
        with reader_groups_kept():  # one weight-reading node group for every object
            for obj in sorted(objs, key=lambda o: o.name):
                m = extract_mesh(obj, names, tangents=need)
                _apply_object_transform(m, obj, armature)
                meshes.append(m)
        bake_meshes(meshes, matrix)
        merged, notes = merge_meshes(meshes, (GEOMETRY_ATTRIBUTE,))
        merge_warnings += notes
        lods.append((lod, merged))
    recorded = read_prop(by_lod[min(by_lod)][0], "urho_layout")
    recorded = recorded if isinstance(recorded, dict) else {}
    layout = recorded if single and recorded else None
    magic = fmt
    if fmt == "AUTO":
        magic = recorded.get("magic", "UMD2")
    if bone_limit == "AUTO":
        bone_limit = imported_bone_limit(recorded)
    convert_axes = export_axes(convert, recorded.get("axes"))
    opts = ExportOptions(
        magic=magic.encode("ascii"),
        convert_axes=convert_axes,
        tangents=tangents,
        recompute_tangents=recompute_tangents,
        bone_limit=int(bone_limit),
        layout=bake_layout(layout, matrix, convert_axes),
    )
    model, warnings = export_model(lods, skeleton, opts)
    warnings = merge_warnings + warnings
    warnings += [
        f"the engine would refuse it: {v}" for v in engine_rules.check(model, opts.bone_limit)
    ]
    if model.magic == b"UMD3":
        _rbfx_model_fields(model, objects, layout if isinstance(layout, dict) else None)
    write_output(path, lambda: mdl.write(model), package_path, entry)
    if len(lods) == 1 and isinstance(layout, dict):
        n = max((len(g["lods"]) for g in layout["geometries"]), default=1)
        if n > 1:
            warnings.append(
                f"the imported model had {n} LOD levels; only LOD {lods[0][0]} "
                "was in Blender, so the file has one (import with all LODs to keep them)"
            )
    return warnings


def _rbfx_model_fields(model: mdl.Model, objects: list, layout: dict | None) -> None:
    """UMD3: the version (as imported, else the newest) and each morph's default
    weight, which is the shape key's value in Blender."""
    model.version = int((layout or {}).get("version", mdl.UMD3_VERSIONS[-1]))
    values: dict[str, float] = {}
    for obj in objects:
        keys = obj.data.shape_keys
        for kb in keys.key_blocks[1:] if keys is not None else ():
            values.setdefault(kb.name, float(kb.value))
    for m in model.morphs:
        m.weight = values.get(m.name, 0.0)


def _top(obj):
    """The topmost parent of ``obj`` (where an import recorded its transform)."""
    while obj.parent is not None:
        obj = obj.parent
    return obj


def _apply_object_transform(mesh: Mesh, obj, armature) -> None:
    m = np.array(obj.matrix_world, np.float64)
    if armature is not None:
        m = np.linalg.inv(np.array(armature.matrix_world, np.float64)) @ m
    if np.allclose(m, np.eye(4), atol=1e-9):
        return
    mesh.positions = (mesh.positions @ m[:3, :3].T + m[:3, 3]).astype(np.float32)
    if mesh.normals is not None:
        n = mesh.normals @ np.linalg.inv(m[:3, :3])
        mesh.normals = (n / np.maximum(np.linalg.norm(n, axis=1, keepdims=True), 1e-12)).astype(
            np.float32
        )


def export_ani_file(
    context,
    path: str,
    armature,
    action=None,
    convert: bool | str | None = None,
    fmt: str = "AUTO",
    package_path: str = "",
    entry: str = "",
    fps: float | None = None,
    transform: Transform | None = None,
) -> list[str]:
    """Write the armature's action as UANI, or as UAN2 (``fmt``; AUTO: as imported);
    returns warnings. ``convert`` defaults to the axes the action was imported with.
    With ``package_path`` the file goes into that existing package as ``entry``.
    Key times convert at the rate the action was imported with, else the scene's;
    ``fps`` (an explicit rate) wins over both. ``transform(armature, space_world)``
    gives the matrix baked into the root bones' keys (read in the armature's space)."""
    action = action or (armature.animation_data.action if armature.animation_data else None)
    if action is None:
        raise FormatError(f"armature {armature.name!r} has no action to export")
    neutral = extract_animation(armature, action, fps or scene_fps(context), fps is None)
    if transform is not None:
        matrix = transform(armature, np.array(armature.matrix_world, np.float64))
        own = recorded_transform(action) if convert is None else None
        if own is not None:  # As Imported: what the animation's import baked, back out
            matrix = np.linalg.inv(own) @ matrix
            if np.allclose(matrix, np.eye(4), atol=SAME):
                matrix = np.eye(4)
        if not is_identity(matrix):
            bake_animation(neutral, extract_skeleton(armature), matrix)
    convert = export_axes(convert, read_prop(action, AXES_EXTRA))
    anim = export_animation(neutral, convert)
    file_track_order(anim, read_prop(action, ORDER_EXTRA))
    warnings = restore_steps(anim, read_prop(action, STEPS_EXTRA))
    extras = read_prop(action, RBFX_EXTRA)
    if fmt == "UAN2" or (fmt == "AUTO" and extras is not None):
        apply_rbfx_extras(anim, extras if extras is not None else {"version": 3})
    write_output(path, lambda: ani.write(anim), package_path, entry)
    return warnings


def steps_warnings(action) -> list[str]:
    """The import warning about instant steps kept on ``action`` (a "warning: " message)."""
    note = steps_warning(read_prop(action, STEPS_EXTRA))
    return [f"warning: {note}"] if note else []


def transform_choice(op) -> tuple[bool | None, Transform]:
    """An exporter's axes and scale options as ``(convert, transform)`` for the
    export functions: "As Imported" writes the axes each model or action was
    imported with (Blender's for new ones) and the recorded import transform;
    otherwise the engine's axes and the options' transform."""
    convert = None if op.use_transform_as_imported else True
    return convert, lambda root, space: file_matrix(op, root, space)


LOD_DESCRIPTION = "Which LOD levels to import"


@transform_options(*ENGINE_AXES)
class IMPORT_SCENE_OT_urho3d_mdl(bpy.types.Operator, ImportFiles, ReuseMaterials):
    """Import Urho3D models (.mdl): mesh, armature, weights, shape keys, LODs"""

    bl_idname = "import_scene.urho3d_mdl"
    bl_label = "Import Urho3D Model"

    filename_ext = ".mdl"
    filter_glob: StringProperty(default="*.mdl", options={"HIDDEN"})
    lods: EnumProperty(name="LODs", items=LOD_ITEMS, default="ALL", description=LOD_DESCRIPTION)

    def draw(self, context) -> None:
        layout = options_layout(self)
        draw_transform(layout, self)
        section(layout, self, "geometry", "Geometry", props=("lods", "reuse_materials"))

    def execute(self, context):
        matrix = option_matrix(self)

        def one(context, path, progress):
            built = import_mdl_file(
                context, path, self.lods == "ALL", reuse_materials=self.reuse_materials
            )
            place_roots(built.objects, matrix)
            return [f"{len(built.objects)} objects", *unheld_normal_warnings(built)], [
                built.discard
            ]

        return self.import_files(context, one)


@transform_options(*ENGINE_AXES, export=True)
class EXPORT_SCENE_OT_urho3d_mdl(bpy.types.Operator, ExportFile, ExportScope):
    """Export meshes (with their armature and LOD collection) to an Urho3D model (.mdl)"""

    bl_idname = "export_scene.urho3d_mdl"
    bl_label = "Export Urho3D Model"

    filename_ext = ".mdl"
    filter_glob: StringProperty(default="*.mdl", options={"HIDDEN"})
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
        name="Tangents", default=True, description="Write tangents (needs a UV map)"
    )
    recompute_tangents: BoolProperty(
        name="Recompute Tangents",
        default=False,
        description="Compute tangents even where imported ones are kept",
    )
    bone_limit: EnumProperty(
        name="Bones per Draw",
        items=BONE_LIMIT_ITEMS,
        default="AUTO",
        description="Skin matrices one draw may use: 64 on every Urho3D build (GL2, GLES, "
        "D3D9), 128 on GL3/D3D11 only. Skeletons of more than 64 bones get a bone mapping "
        "per geometry",
    )
    package_file: StringProperty(
        name="Into Package",
        subtype="FILE_PATH",
        default="",
        description="An existing .pak to write the model into (instead of the file path)",
    )
    package_entry: StringProperty(
        name="Path in Package",
        default="",
        description="The model's name inside the package (empty: Models/<file name>)",
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
        entry = self.package_entry or f"Models/{os.path.basename(self.filepath)}"
        convert, transform = transform_choice(self)

        def export() -> list[str]:
            with self.evaluated_scope(context) as (read, notes):
                return notes + export_mdl_file(
                    context,
                    self.filepath,
                    read,
                    self.file_format,
                    convert,
                    self.tangents,
                    self.recompute_tangents,
                    self.bone_limit,
                    bpy.path.abspath(self.package_file) if self.package_file else "",
                    entry,
                    transform,
                )

        result = report_export(self, export)
        if result == {"FINISHED"} and self.package_file:
            self.report({"INFO"}, f"wrote {entry} into {self.package_file}")
        return result


def draw_package(layout, op) -> None:
    """The Package panel of the exporters: write into an existing .pak."""
    section(
        layout, op, "package", "Package", not op.package_file, ("package_file", "package_entry")
    )


@transform_options(*ENGINE_AXES)
class IMPORT_ANIM_OT_urho3d_ani(bpy.types.Operator, ImportFiles, AnimationFrameRate):
    """Import Urho3D animations (.ani) as actions on an armature"""

    bl_idname = "import_anim.urho3d_ani"
    bl_label = "Import Urho3D Animation"

    filename_ext = ".ani"
    filter_glob: StringProperty(default="*.ani", options={"HIDDEN"})

    def draw(self, context) -> None:
        layout = options_layout(self)
        draw_transform(layout, self)
        body = section(layout, self, "animation", "Animation")
        if body is not None:
            self.draw_frame_rate(body)

    def execute(self, context):
        fps = self.frames_per_second(context)
        matrix = option_matrix(self)
        actions = []

        def one(context, path, progress):
            result = import_ani_file(context, path, None, fps=fps, matrix=matrix)
            actions.append(result.action)
            return result.messages() + steps_warnings(result.action), [result.undo]

        return self.import_files(context, one, made=actions)


@transform_options(*ENGINE_AXES, export=True)
class EXPORT_ANIM_OT_urho3d_ani(bpy.types.Operator, ExportFile, AnimationExport):
    """Export an armature's actions to Urho3D animations (.ani): the active one, every
    action or every NLA track, one file each"""

    bl_idname = "export_anim.urho3d_ani"
    bl_label = "Export Urho3D Animation"

    filename_ext = ".ani"
    filter_glob: StringProperty(default="*.ani", options={"HIDDEN"})
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
    package_file: StringProperty(
        name="Into Package",
        subtype="FILE_PATH",
        default="",
        description="An existing .pak to write the animations into (instead of the file path)",
    )
    package_entry: StringProperty(
        name="Path in Package",
        default="",
        description="The animation's name inside the package (empty: Models/<file name>); "
        "with several animations, the folder their files go into",
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
        convert, transform = transform_choice(self)
        fps = self.fps if self.frame_rate == "CUSTOM" else None
        package_path = bpy.path.abspath(self.package_file) if self.package_file else ""

        def export() -> list[str]:
            arm = self.scope_armature(context)
            chosen = chosen_files(arm, self.export_animations, self.filepath, self.use_action_names)
            paths = [p for p, _, _ in chosen]
            if self.export_animations == "ACTIVE":
                entries = [self.package_entry or f"Models/{os.path.basename(self.filepath)}"]
            else:
                folder = os.path.dirname(self.package_entry) or "Models"
                if self.package_entry and not os.path.splitext(self.package_entry)[1]:
                    folder = self.package_entry.rstrip("/")
                entries = [f"{folder}/{os.path.basename(p)}" for p in paths]
            warnings = []
            for (path, name, action), entry in zip(chosen, entries, strict=True):
                notes = export_ani_file(
                    context,
                    path,
                    arm,
                    action,
                    convert,
                    self.file_format,
                    package_path,
                    entry,
                    fps,
                    transform,
                )
                warnings += [f"{name}: {w}" for w in notes] if len(chosen) > 1 else notes
            where = f" into {self.package_file}" if package_path else ""
            self.report({"INFO"}, f"wrote {len(chosen)} animation file(s){where} from {arm.name}")
            return warnings

        return report_export(self, export)


def _batch_import_mdl(context, path: str, state: dict, options: dict) -> str:
    built = import_mdl_file(context, path, all_lods=bool(options.get("all_lods")))
    return batch_add_built(state, built)


def _batch_import_ani(context, path: str, state: dict, options: dict) -> str:
    result = import_ani_file(context, path, state.get("armature"))
    state["armature"], state["action"] = result.armature, result.action
    notes = result.warnings + [m[len("warning: ") :] for m in steps_warnings(result.action)]
    return f"action {result.action.name} on {result.armature.name} ({result.how})" + batch_notes(
        notes
    )


def _batch_export_ani(context, path: str, state: dict, options: dict) -> str:
    armature = batch_armature(state, "an Urho3D animation")
    warnings = export_ani_file(context, path, armature, state.get("action"))
    return batch_notes(warnings)


CLASSES = (
    IMPORT_SCENE_OT_urho3d_mdl,
    EXPORT_SCENE_OT_urho3d_mdl,
    IMPORT_ANIM_OT_urho3d_ani,
    EXPORT_ANIM_OT_urho3d_ani,
    file_handler(
        "urho3d_mdl", "Urho3D Model", "import_scene.urho3d_mdl", "export_scene.urho3d_mdl", ".mdl"
    ),
    file_handler(
        "urho3d_ani", "Urho3D Animation", "import_anim.urho3d_ani", "export_anim.urho3d_ani", ".ani"
    ),
)
MENU_IMPORT = (
    ("import_scene.urho3d_mdl", "Urho3D Model (.mdl)"),
    ("import_anim.urho3d_ani", "Urho3D Animation (.ani)"),
)
MENU_EXPORT = (
    ("export_scene.urho3d_mdl", "Urho3D Model (.mdl)"),
    ("export_anim.urho3d_ani", "Urho3D Animation (.ani)"),
)
BATCH = (
    BatchFormat("urho3d.mdl", _batch_import_mdl, batch_mesh_export(export_mdl_file)),
    BatchFormat("urho3d.ani", _batch_import_ani, _batch_export_ani),
)
