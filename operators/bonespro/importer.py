"""BonesPro structure and animation files into Blender, without an operator.

Each import takes a context, a path and one options dataclass (its fields named
as the import operators' properties) and returns a :class:`Result`; a failure
leaves nothing behind. Both files are ``.txt``: the content says which one a
file is (:func:`file_kind`), and :func:`import_file` imports either.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import ClassVar

import bpy
import numpy as np

from ...io_formats.bonespro import animation as anim_file
from ...io_formats.bonespro import convert, formats, structure
from ...io_formats.bonespro.placement import bake_points
from ...io_formats.bonespro.text import pack_source
from ...io_formats.codec import FormatError
from ...io_formats.scene import Scene
from ..blender.actions import keep_actions
from ..blender.armatures import Count, choose_armature, mesh_armature
from ..blender.build import build_action, build_scene
from ..common import in_file, read_bytes
from ..conventions import option_matrix, place_roots, scene_fps
from ..result import Message, Result, counted
from .rig import (
    bone_order,
    bone_parents,
    frame_positions,
    sample_frames,
    set_weights,
    world_positions,
)

#: 3ds Max's axes: Z up, and the front view looks along +Y (Blender's own).
MAX_FORWARD, MAX_UP = "Y", "Z"

# What an import stores on the data it makes, for the export to write back.
HEADER = "_bonespro_header"
NODE_OFFSET = "_bonespro_node_offset"
BOXES = "_bonespro_boxes"
NODE_OFFSETS_PER_FRAME = "_bonespro_node_offsets_per_frame"
BOXES_PER_FRAME = "_bonespro_boxes_per_frame"
SOURCE_MESH = "_bonespro_source"
#: The file's text, compressed, when another writer laid it out (numbers, comments,
#: whitespace): the export writes it back where the values are unchanged.
TEXT = "_bonespro_text"
#: Blender frames per file frame of an import with a custom frame rate (absent: 1).
FRAME_SCALE = "_bonespro_frame_scale"


@dataclass(frozen=True)
class TransformOptions:
    """The Transform panel's options (``conventions.transform_options``), which
    ``conventions.option_matrix`` turns into the import's transform."""

    axis_forward: str = MAX_FORWARD
    axis_up: str = MAX_UP
    global_scale: float = 1.0
    engine_axes: ClassVar[tuple[str, str]] = (MAX_FORWARD, MAX_UP)
    transform_export: ClassVar[bool] = False


@dataclass(frozen=True)
class StructureImportOptions(TransformOptions):
    """``import_scene.bonespro_structure``: where the weights go (AUTO: the active
    mesh when its vertex count matches, NEW: a new vertex-only mesh)."""

    weights_to: str = "AUTO"


@dataclass(frozen=True)
class AnimationImportOptions(TransformOptions):
    """``import_anim.bonespro_anim``: the frame rate of the file's 3ds Max frame
    numbers (``conventions.FrameRateOptions``)."""

    frame_rate: str = "SCENE"
    fps: float = 30.0
    set_scene_timing: bool = True

    def frame_scale(self, context) -> float:
        """Blender frames per file frame: Custom is the rate the file was made at,
        and each file frame becomes the matching scene frame."""
        if self.frame_rate != "CUSTOM" or self.set_scene_timing:
            return 1.0  # the scene's rate is (or becomes) the file's
        return scene_fps(context) / float(self.fps)


@dataclass(frozen=True)
class ImportOptions(StructureImportOptions, AnimationImportOptions):
    """``import_scene.bonespro`` (drag and drop): either file, as the content says."""

    set_scene_timing: bool = False


@dataclass
class AnimationResult(Result):
    """An animation import's :class:`Result` and the scene frames it spans (what
    the scene's timing follows, as an action's ``frame_range``)."""

    frame_range: tuple[float, float] = (0.0, 0.0)


# ------------------------------------------------------------------ reading
def file_kind(data: bytes) -> str:
    """``"structure"``, ``"animation"`` or ``"neither"``, from the file's start."""
    if formats.is_structure(data[:4096]):
        return "structure"
    if formats.is_animation(data[:4096]):
        return "animation"
    return "neither"


def read_file(path: str, want: str) -> structure.Structure | anim_file.Animation:
    """The structure or animation (``want``) in ``path``; FormatError saying which
    file it is when it is the other kind."""
    data = read_bytes(path)
    kind = file_kind(data)
    if kind != want:
        other = {
            "structure": "a BonesPro structure file (use Import > BonesPro Structure)",
            "animation": "a BonesPro animation file (use Import > BonesPro Animation)",
            "neither": "neither a BonesPro structure nor a BonesPro animation file",
        }[kind]
        raise FormatError(f"this is {other}", None, path)
    with in_file(path):
        return (structure.read if want == "structure" else anim_file.read)(data)


def _stem(path: str) -> str:
    return os.path.splitext(os.path.basename(path))[0]


# ------------------------------------------------------------------ structure
def import_structure(context, path: str, options: StructureImportOptions) -> Result:
    """An armature (bone transforms as the rest pose) and the weights: on the active
    mesh when ``weights_to`` is AUTO and its vertex count matches, else on a new
    vertex-only mesh. The axes and scale options go on the new root objects."""
    matrix = option_matrix(options)
    s = read_file(path, "structure")
    name = _stem(path)
    with in_file(path):
        scene = convert.structure_to_scene(s, name)
    target = context.view_layer.objects.active
    bones, vertices = counted(len(s.names), "bone"), counted(len(s.positions), "vertex")
    result = Result().info(f"{bones}, {vertices}")
    use_active = (
        options.weights_to == "AUTO"
        and target is not None
        and target.type == "MESH"
        and len(target.data.vertices) == len(s.positions)
        and len(s.positions) > 0
    )
    if use_active:
        off = np.linalg.norm(world_positions(target) - bake_points(s.positions, matrix), axis=1)
        result.info(
            f"weights put on {target.name!r} (same {len(s.positions)} vertices; positions "
            f"differ by {off.max():.3g} at most, {off.mean():.3g} on average)"
        )
        scene = Scene(name, scene.skeleton)
    else:
        scene.meshes[0].skin = None  # the weights go in below, zero weights included
        if target is not None and target.type == "MESH" and options.weights_to == "AUTO":
            result.info(
                f"the active mesh {target.name!r} has {len(target.data.vertices)} vertices, "
                f"the file {len(s.positions)}: the weights are on a new vertex-only mesh"
            )
    built = build_scene(context, scene)
    try:
        _put_weights(built, s, target if use_active else None, matrix)
        text = structure.foreign_text(s)
        if text is not None:
            built.armature[TEXT] = pack_source(text)
    except Exception:
        built.discard()
        raise
    result.summary = "; ".join(result.infos)
    result.objects, result.armature = list(built.objects), built.armature
    result.undo.append(built.discard)
    return result


def _put_weights(built, s, target, matrix: np.ndarray) -> None:
    """The file's weights as vertex groups on ``target`` (deformed by the new armature
    through a new modifier), else on the new mesh; ``matrix`` on the new root objects.
    On failure ``target`` is left as it was."""
    names = bone_order(built.armature)
    if target is None:
        mesh_obj = next(o for o in built.objects if o.type == "MESH")
        set_weights(mesh_obj, names, s.weight_counts, s.weight_bones, s.weights)
        place_roots(built.objects, matrix)
        return
    modifier = target.modifiers.new("BonesPro", "ARMATURE")
    try:
        modifier.object = built.armature
        set_weights(target, names, s.weight_counts, s.weight_bones, s.weights)
        place_roots(built.objects, matrix)
    except Exception:
        target.modifiers.remove(modifier)
        for n in s.names:
            group = target.vertex_groups.get(n)
            if group is not None:
                target.vertex_groups.remove(group)
        raise


# ------------------------------------------------------------------ animation
def _armature_for(context, nb: int, given=None) -> tuple[bpy.types.Object, str]:
    """The given armature, else the active one (or the active mesh's), else the
    only one with ``nb`` bones, those with stored BonesPro indices first."""
    choice = choose_armature(
        context,
        given=given,
        active_mesh=True,
        rule=Count(nb, prefer=lambda o: all(convert.INDEX in b for b in o.data.bones)),
    )
    return choice.required(), choice.how


def _mesh_for(context, nv: int, armature=None) -> bpy.types.Object | None:
    active = context.view_layer.objects.active
    if active is not None and active.type == "MESH" and len(active.data.vertices) == nv:
        return active
    fits = [o for o in context.scene.objects if o.type == "MESH" and len(o.data.vertices) == nv]
    skinned = [o for o in fits if armature is not None and mesh_armature(o) == armature]
    return (skinned or fits or [None])[0]


@dataclass
class _AnimationImport:
    """One animation import under way: the file, its options, and what it says."""

    context: object
    path: str
    a: anim_file.Animation
    matrix: np.ndarray
    frame_scale: float
    name: str
    warnings: list[str] = field(default_factory=list)

    def done(self, target, made, how: str, frame_range, undo) -> AnimationResult:
        summary = f"{made.name} on {target.name} ({how})"
        result = AnimationResult(summary=summary, frame_range=frame_range, undo=[undo])
        result.info(summary).warn(*self.warnings)
        return result


def import_animation(
    context,
    path: str,
    options: AnimationImportOptions,
    armature=None,
) -> AnimationResult:
    """Bones mode: an action on the armature (``armature``, else the one the scene
    offers; its keys in the armature's space: the armature carries the transform its
    structure was imported with). Mesh modes: a copy of the mesh whose Geometry Nodes
    modifier shows each frame's positions, with the axes and scale options on it. A
    file frame becomes ``options.frame_scale`` Blender frames."""
    a = read_file(path, "animation")
    if a.frame_count == 0:
        raise FormatError("the animation has no frames (Nf is 0): nothing to import", None, path)
    job = _AnimationImport(
        context, path, a, option_matrix(options), options.frame_scale(context), _stem(path)
    )
    with in_file(path):
        if a.mode == anim_file.MESH_ABSOLUTE:
            return _mesh_animation(job, a.positions)
        armature, how = _armature_for(context, a.bone_count, armature)
    names = bone_order(armature)
    if len(names) != a.bone_count:
        raise FormatError(
            f"the animation has {counted(a.bone_count, 'bone')}, "
            f"{armature.name!r} has {len(names)}",
            None,
            path,
        )
    if a.mode == anim_file.MESH_BONES:
        positions = _block_positions(job, armature, names)
        with in_file(path):
            return _mesh_animation(job, positions, armature, how)
    return _bone_animation(job, armature, names, how)


def _block_positions(job: _AnimationImport, armature, names: list[str]) -> np.ndarray:
    """Mesh (bones c.s): each frame's vertex positions from the armature's pose at the
    file's frames, in its own space (the file's)."""
    a = job.a
    space = np.array(armature.matrix_world, np.float64)
    bones, _ = sample_frames(
        job.context, a.frames() * job.frame_scale, armature, names, None, space
    )
    positions, hits, spread = convert.block_world_positions(a, bones)
    if spread.max() > 1e-4:
        job.warnings.append(
            f"bones disagree about vertex positions by up to {spread.max():.3g}: "
            "the armature's pose is not the one the file was exported with (averaged)"
        )
    missing = hits == 0
    if missing.any():
        job.warnings.append(
            f"{int(missing.sum())} vertex-frames are listed by no bone: they take the "
            "vertex's frame-0 position (the origin when it is missing there too)"
        )
        first = np.where(missing[0][:, None], 0.0, positions[0])
        positions = np.where(missing[..., None], first[None], positions)
    return positions


def _bone_animation(job: _AnimationImport, armature, names: list[str], how: str):
    """Bones mode: an action keyed in pose space, stashed on the armature, with what
    the file holds beyond the bones' motion (header, node offsets, boxes)."""
    a, context = job.a, job.context
    parents = bone_parents(armature, names)
    fps = scene_fps(context)
    neutral, shear = convert.bones_to_neutral(a, names, parents, fps / job.frame_scale, job.name)
    if shear > 1e-5:
        job.warnings.append(
            f"bone transforms with shear: the action's keys are off by up to {shear:.3g}"
        )
    neutral.extras = _bone_extras(job, parents)
    action = build_action(
        armature, neutral, fps, file_stem=os.path.splitext(os.path.basename(job.path))[0]
    )
    undo = keep_actions(armature, [action])
    if armature.name in context.view_layer.objects:
        _make_active(context, armature)
    result = job.done(armature, action, how, tuple(action.frame_range), undo)
    result.armature = armature
    result.actions.append(action)
    return result


def _bone_extras(job: _AnimationImport, parents: np.ndarray) -> dict:
    """What the action stores for the export: the header, the first frame's node
    offsets and boxes, and every frame's when they change over the frames."""
    a = job.a
    bone, node = convert.bone_worlds(a, parents)
    offsets = convert.affine_inverse(bone) @ node
    extras = {
        HEADER: convert.header(a),
        NODE_OFFSET: [float(v) for v in offsets[0].ravel()],
        BOXES: [float(v) for v in a.boxes[0].ravel()],
    }
    if job.frame_scale != 1.0:
        extras[FRAME_SCALE] = job.frame_scale
    text = anim_file.foreign_text(a)
    if text is not None:
        extras[TEXT] = pack_source(text)
    drift = float(np.abs(offsets - offsets[:1]).max())
    if drift > 1e-6:  # stored per frame: export writes them for the same frames
        extras[NODE_OFFSETS_PER_FRAME] = offsets[..., :3, :].ravel().tolist()
        job.warnings.append(
            f"node transforms move against their bones (by up to {drift:.3g}): each "
            "frame's is stored with the action, and an export of the same frames writes "
            "them back"
        )
    if float(np.abs(a.boxes - a.boxes[:1]).max()) > 0:
        extras[BOXES_PER_FRAME] = a.boxes.ravel().tolist()
        job.warnings.append(
            "box sizes change over the frames: each frame's is stored with the action, "
            "and an export of the same frames writes them back"
        )
    return extras


def _make_active(context, obj) -> None:
    """Select ``obj`` alone and make it active, as Blender's importers leave what they
    made (an action on an existing armature adds no object for the operator to select)."""
    for other in context.view_layer.objects.selected:
        other.select_set(False)
    obj.select_set(True)
    context.view_layer.objects.active = obj


def _mesh_animation(job: _AnimationImport, positions, armature=None, how="") -> AnimationResult:
    """Mesh modes: a copy of the mesh (or a new vertex-only one) whose Geometry Nodes
    modifier shows each frame's ``positions``."""
    a, context, name = job.a, job.context, job.name
    source = _mesh_for(context, a.vertex_count, armature)
    if source is not None:
        me = source.data.copy()
        me.name = f"{name} mesh animation"
        how = how or f"topology of {source.name!r}"
    else:
        me = bpy.data.meshes.new(f"{name} mesh animation")
        me.vertices.add(a.vertex_count)
        how = how or "a new vertex-only mesh"
    obj = bpy.data.objects.new(me.name, me)
    frames = None
    try:
        if me.shape_keys is not None:
            obj.shape_key_clear()
        me.attributes["position"].data.foreach_set(
            "vector", np.ascontiguousarray(positions[0], np.float32).ravel()
        )
        if source is not None:
            for g in source.vertex_groups:
                obj.vertex_groups.new(name=g.name)
            obj[SOURCE_MESH] = source.name
        context.collection.objects.link(obj)
        at = a.frames() * job.frame_scale
        frames = frame_positions(obj, positions, at, name)
        obj[HEADER] = json.dumps(convert.header(a))
        text = anim_file.foreign_text(a)
        if text is not None:
            obj[TEXT] = pack_source(text)
        if job.frame_scale != 1.0:
            obj[FRAME_SCALE] = job.frame_scale
        place_roots([obj], job.matrix)
        _make_active(context, obj)  # what File > Export then writes by default
    except Exception:
        if frames is not None:
            frames.remove()
        bpy.data.objects.remove(obj)
        bpy.data.meshes.remove(me)
        raise

    def undo() -> None:
        bpy.data.objects.remove(obj)
        frames.remove()
        bpy.data.meshes.remove(me)

    result = job.done(obj, frames.node_group, how, (float(at[0]), float(at[-1])), undo)
    result.objects.append(obj)
    return result


# ------------------------------------------------------------------ either
def import_file(context, path: str, options: ImportOptions) -> Result:
    """Import whichever BonesPro file ``path`` is, every message after "BonesPro
    structure: " or "BonesPro animation: " (an animation's result keeps its
    ``frame_range``)."""
    kind = file_kind(read_bytes(path))
    if kind == "structure":
        result = import_structure(context, path, options)
    elif kind == "animation":
        result = import_animation(context, path, options)
    else:
        raise FormatError("neither a BonesPro structure nor a BonesPro animation file", None, path)
    tag = f"BonesPro {kind}: "
    result.messages = [Message(m.level, tag + m.text) for m in result.messages]
    return result
