"""Unigine export: meshes into a .mesh (ms11), an armature's actions into .anim (an10).

Callable without an operator: each export takes a ``context``, a path, what to
export (mesh objects, an armature) and one options dataclass, and returns a
:class:`Result`. Everything is brought into the file's space first: the
recorded import transform ("As Imported") or the axes and scale options, baked
into the data only where it is not the identity, so unmoved imports write
their own bytes.
"""

from __future__ import annotations

import os

import bpy
import numpy as np

from ...io_formats import global_transform
from ...io_formats.codec import FormatError
from ...io_formats.codec.errors import counted
from ...io_formats.codec.files import write_atomic
from ...io_formats.scene import Animation, Mesh, Scene, Skeleton
from ...io_formats.unigine import anim, anim_file_convert, mesh
from ...io_formats.unigine.anim_convert import NAME_KEY, file_name, json_list
from ...io_formats.unigine.anim_file_convert import BOUNDS_KEY, CLIP_KEY, HEADER_KEY, SOURCE_KEY
from ...io_formats.unigine.common import FRAME_RATE
from ...io_formats.unigine.mesh_export import (
    ExportOptions,
    export_mesh,
    file_order,
    merge_files,
    rotate_kept_tangents,
)
from ...io_formats.unigine.mesh_import import ANIMATIONS_KEY, MORPH_TANGENT, TANGENT_ATTRIBUTE
from ...io_formats.urho3d.axes import rewind
from ...io_formats.urho3d.model_export import rewind_mesh
from ..animation_files import chosen_actions, chosen_files, written_message
from ..blender.armatures import one_armature
from ..blender.extract import (
    extract_animation,
    extract_mesh,
    extract_skeleton,
    read_prop,
    triangle_tangents,
)
from ..conventions import file_matrix
from ..result import Result
from . import mesh_keep
from .settings import AnimExportOptions, ExportAxes, MeshExportOptions

# -- the file's space -----------------------------------------------------------


def _root(obj: bpy.types.Object) -> bpy.types.Object:
    while obj.parent is not None:
        obj = obj.parent
    return obj


def _mirrors(mat: np.ndarray) -> bool:
    return bool(np.linalg.det(np.asarray(mat, np.float64)[:3, :3]) < 0)


def _apply_matrix(m: Mesh, mat: np.ndarray) -> None:
    """Any matrix (shear, uneven scale, a mirror) on the mesh's positions, morph
    offsets and normals; the kept tangent quaternions are left to be remade where
    they no longer fit the normals. A mirror turns every triangle's front to the
    other side: its corners are rewound so the file draws what Blender draws
    (facing out), and the kept quaternions, which cannot hold a mirrored frame,
    are all remade from Blender's tangents (:func:`_blender_tangents`)."""
    if _mirrors(mat):
        rewind_mesh(m)
        m.attributes = [
            a
            for a in m.attributes
            if a.name != TANGENT_ATTRIBUTE and not a.name.startswith(MORPH_TANGENT.format(""))
        ]
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


def _bake_rig(
    options: ExportAxes, armature, skeleton: Skeleton, anims: list[Animation]
) -> np.ndarray:
    """The armature's skeleton and animations into the file's space; the matrix."""
    matrix = file_matrix(options, armature, armature.matrix_world)
    if global_transform.is_identity(matrix):
        return matrix
    try:
        global_transform.bake(Scene(armature.name, skeleton, [], anims), matrix)
    except ValueError as err:
        raise FormatError(
            f"armature {armature.name!r}: its transform cannot be written ({err}); "
            "apply its rotation and scale (Ctrl+A) first"
        ) from None
    for a in anims:  # the bounds and bind pose the file had no longer fit the moved skeleton
        a.extras.pop(BOUNDS_KEY, None)
        a.extras.pop(HEADER_KEY, None)
    return matrix


def _blender_tangents(obj, mat: np.ndarray) -> np.ndarray:
    """Blender's tangents (xyz, bitangent sign) per triangle corner, as extract_mesh
    orders corners, in the export space; computed only when the exporter needs new
    tangent quaternions. A mirroring ``mat`` rewinds the corners as
    :func:`_apply_matrix` does, and flips each bitangent sign: the mirrored
    bitangent is minus the cross product of the mirrored normal and tangent."""
    out = triangle_tangents(obj)
    out[:, :3] = out[:, :3] @ mat[:3, :3].T.astype(np.float32)
    if _mirrors(mat):
        out = out[rewind(np.arange(len(out)), True)]
        out[:, 3] = -out[:, 3]
    return out


# -- which actions --------------------------------------------------------------


#: (name to write, action), as :func:`animation_files.chosen_actions` gives them.
Chosen = tuple[str, bpy.types.Action]


def _imported_actions(armature) -> list[Chosen]:
    names = json_list(read_prop(armature, ANIMATIONS_KEY)) or []
    return [(n, bpy.data.actions[n]) for n in names if n in bpy.data.actions]


def _embedded_actions(armature, which: str) -> list[Chosen]:
    """IMPORTED: the actions the mesh file had embedded; NONE; or an
    :func:`chosen_actions` choice (ACTIVE, ACTIONS, NLA)."""
    if which == "NONE":
        return []
    if which == "IMPORTED":
        return _imported_actions(armature)
    return chosen_actions(armature, which)


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


def _extract(
    armature, chosen: list[Chosen], fps: float, result: Result | None = None
) -> list[Animation]:
    """The chosen actions as animations (in seconds), each under its chosen name;
    where two would write the same name, the later one writes its Blender name.
    ``result`` gets a line per action on the tracks carried through for bones the
    armature lacks and on edited ones."""
    out, used = [], set()
    for name, action in chosen:
        a = extract_animation(armature, action, fps, result=result)
        if name != action.name:  # an NLA track's; else the name the action keeps
            a.name = name
        if file_name(a) in used:
            a.extras.pop(NAME_KEY, None)
        used.add(file_name(a))
        out.append(a)
    return out


# -- .mesh ----------------------------------------------------------------------


def _rig(
    context, armature, options: MeshExportOptions
) -> tuple[Skeleton | None, list[Animation], list[Chosen]]:
    """The armature's skeleton (file order), the animations the mesh embeds, in the
    file's space, and the actions they come from; nothing for meshes without an
    armature."""
    if armature is None:
        return None, [], []
    skeleton = file_order(extract_skeleton(armature))
    chosen = _embedded_actions(armature, options.export_animations)
    anims = _extract(armature, chosen, options.frames_per_second(context))
    _bake_rig(options, armature, skeleton, anims)
    return skeleton, anims, chosen


def export_mesh_file(context, path: str, objects: list, options: MeshExportOptions) -> Result:
    """Write ``objects`` (their material slots as surfaces) and the
    ``export_animations`` choice of their armature's actions (embedded in the
    first object's part) to one .mesh."""
    if not objects:
        raise FormatError("no mesh objects to export")
    armature = one_armature(objects, "a Unigine mesh")
    context.view_layer.update()  # world matrices after an import moved the roots
    skeleton, anims, chosen = _rig(context, armature, options)
    names = skeleton.names if skeleton is not None else None
    result, parts = Result(), []
    for i, obj in enumerate(sorted(objects, key=lambda o: o.name)):
        m = extract_mesh(obj, names, normalize_weights=False)
        topology_holds, weights_hold = mesh_keep.holds(obj, m.skin, names)
        if m.skin is not None:  # as extract_mesh normalises them
            sums = m.skin.weights.sum(axis=1, keepdims=True)
            np.divide(m.skin.weights, sums, out=m.skin.weights, where=sums > 0)
        root = armature if armature is not None else _root(obj)
        mat = file_matrix(options, root, obj.matrix_world)
        _to_file_space(m, mat)
        tangents = ExportOptions(
            tangent_source=lambda o=obj, x=mat: _blender_tangents(o, x),
            topology_holds=topology_holds,
            weights_hold=weights_hold,
        )
        embedded = [(a, FRAME_RATE) for a in anims] if i == 0 else []
        part, warnings = export_mesh(m, skeleton, embedded, tangents)
        parts.append(part)
        result.warn_all(warnings)
    merged = merge_files(parts)
    write_atomic(path, lambda: mesh.write(merged))
    result.info(
        f"{os.path.basename(path)}: {counted(len(merged.surfaces), 'surface')}, "
        f"{counted(len(merged.animations), 'animation')} written"
    )
    if options.export_animations == "IMPORTED" or not chosen:  # the file's own clips
        return result
    return result.info(written_message(armature, chosen))


# -- .anim ----------------------------------------------------------------------


def _file_groups(armature, path: str, options: AnimExportOptions) -> list[tuple[str, list]]:
    """(file, chosen actions) for every file the export writes: IMPORTED or ACTIVE
    into ``path``, ACTIONS or NLA one file per action beside it
    (:func:`animation_files.chosen_files`)."""
    which = options.export_animations
    if which in ("IMPORTED", "ACTIVE"):
        return [(path, _file_actions(armature, which))]
    chosen = chosen_files(armature, which, path, options.use_action_names)
    return [(p, [(name, action)]) for p, name, action in chosen]


def export_anim_file(context, path: str, armature, options: AnimExportOptions) -> Result:
    """Write the armature's animations as ``export_animations`` says (see
    :func:`_file_groups`). Every file is made before the first is written, so a
    refusal writes none."""
    skeleton = file_order(extract_skeleton(armature))
    fps = options.frames_per_second(context)
    groups = _file_groups(armature, path, options)
    carried = Result()
    per_file = [(p, _extract(armature, group, fps, carried)) for p, group in groups]
    _bake_rig(options, armature, skeleton, [a for _, anims in per_file for a in anims])
    files = [
        (p, anim_file_convert.export_anim_file([(a, FRAME_RATE) for a in anims], skeleton))
        for p, anims in per_file
    ]
    for p, f in files:
        write_atomic(p, lambda f=f: anim.write(f))
    count = sum(len(f.animations) for _, f in files)
    names = ", ".join(os.path.basename(p) for p, _ in files)
    result = Result(summary=counted(count, "animation")).info(
        f"{counted(count, 'animation')} written to {counted(len(files), 'file')}: {names}"
    )
    result.messages.extend(carried.messages)
    return result.info(written_message(armature, [c for _, group in groups for c in group]))
