"""BonesPro (3ds Max) structure and animation text exports: import/export operators.

Both files are ``.txt``: every importer looks at the content and says which
file it got; ``import_scene.bonespro`` (used for drag and drop) imports either.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable

import bpy
import numpy as np
from bpy.props import (
    BoolProperty,
    EnumProperty,
    FloatProperty,
    StringProperty,
)

from ...io_formats.bonespro import animation as anim_file
from ...io_formats.bonespro import convert, formats, structure
from ...io_formats.bonespro.euler import ORDERS
from ...io_formats.bonespro.placement import bake_matrices, bake_points, bake_structure
from ...io_formats.codec import FormatError
from ...io_formats.codec.files import write_atomic
from ...io_formats.global_transform import is_identity, split
from ...io_formats.scene import Scene
from ..animation_files import (
    chosen_files,
    draw_animation_choice,
    export_animations_property,
    use_action_names_property,
)
from ..blender import compat
from ..blender.actions import keep_actions
from ..blender.build import Built, build_action, build_scene
from ..blender.extract import extract_skeleton, read_prop
from ..common import (
    BatchFormat,
    ExportFile,
    ImportFiles,
    batch_meshes,
    batch_notes,
    file_handler,
    mesh_armature,
    one_armature,
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
    evaluated_meshes,
    file_matrix,
    frame_rate_property,
    option_matrix,
    place_roots,
    scene_fps,
    section,
    transform_options,
)
from .rig import (
    bone_order,
    bone_parents,
    frame_positions,
    get_weights,
    sample_frames,
    set_weights,
    world_positions,
)

HEADER = "_bonespro_header"
NODE_OFFSET = "_bonespro_node_offset"
BOXES = "_bonespro_boxes"
NODE_OFFSETS_PER_FRAME = "_bonespro_node_offsets_per_frame"
BOXES_PER_FRAME = "_bonespro_boxes_per_frame"
SOURCE_MESH = "_bonespro_source"
#: Blender frames per file frame of an import with a custom frame rate (absent: 1).
FRAME_SCALE = "_bonespro_frame_scale"
#: 3ds Max's axes: Z up, and the front view looks along +Y (Blender's own).
MAX_FORWARD, MAX_UP = "Y", "Z"


def _kind(data: bytes) -> str:
    if formats.is_structure(data[:4096]):
        return "structure"
    if formats.is_animation(data[:4096]):
        return "animation"
    return "neither"


def _read(path: str, want: str):
    data = read_bytes(path)
    kind = _kind(data)
    if kind != want:
        other = {
            "structure": "a BonesPro structure file (use Import > BonesPro Structure)",
            "animation": "a BonesPro animation file (use Import > BonesPro Animation)",
            "neither": "neither a BonesPro structure nor a BonesPro animation file",
        }[kind]
        raise FormatError(f"this is {other}", None, path)
    try:
        return (structure.read if want == "structure" else anim_file.read)(data)
    except FormatError as err:
        raise err.with_path(path) from None


# ------------------------------------------------------------------ structure import
def import_structure_file(
    context, path: str, weights_to: str = "AUTO", matrix: np.ndarray | None = None
) -> tuple[Built, list[str]]:
    """An armature (bone transforms as the rest pose) and the weights: on the active mesh
    when ``weights_to`` is AUTO and its vertex count matches, else on a new vertex-only
    mesh. ``matrix`` (the axes and scale options, identity by default) goes on the
    new root objects. Returns what was built and messages; a failure leaves nothing
    behind."""
    matrix = np.eye(4) if matrix is None else matrix
    s = _read(path, "structure")
    name = os.path.splitext(os.path.basename(path))[0]
    try:
        scene = convert.structure_to_scene(s, name)
    except FormatError as err:
        raise err.with_path(path) from None
    target = context.view_layer.objects.active
    messages = []
    use_active = (
        weights_to == "AUTO"
        and target is not None
        and target.type == "MESH"
        and len(target.data.vertices) == len(s.positions)
        and len(s.positions) > 0
    )
    if use_active:
        off = np.linalg.norm(world_positions(target) - bake_points(s.positions, matrix), axis=1)
        messages.append(
            f"weights put on {target.name!r} (same {len(s.positions)} vertices; positions "
            f"differ by {off.max():.3g} at most, {off.mean():.3g} on average)"
        )
        scene = Scene(name, scene.skeleton)
    else:
        scene.meshes[0].skin = None  # the weights go in below, zero weights included
        if target is not None and target.type == "MESH" and weights_to == "AUTO":
            messages.append(
                f"the active mesh {target.name!r} has {len(target.data.vertices)} vertices, "
                f"the file {len(s.positions)}: the weights are on a new vertex-only mesh"
            )
    built = build_scene(context, scene)
    added_groups = modifier = None
    try:
        armature = built.armature
        names = bone_order(armature)
        if use_active:
            mesh_obj = target
            added_groups = list(s.names)
            modifier = mesh_obj.modifiers.new("BonesPro", "ARMATURE")
            modifier.object = armature
        else:
            mesh_obj = next(o for o in built.objects if o.type == "MESH")
        set_weights(mesh_obj, names, s.weight_counts, s.weight_bones, s.weights)
        place_roots(built.objects, matrix)
    except Exception:
        if modifier is not None:
            target.modifiers.remove(modifier)
        for n in added_groups or ():
            group = target.vertex_groups.get(n)
            if group is not None:
                target.vertex_groups.remove(group)
        built.discard()
        raise
    messages.insert(0, f"{len(s.names)} bones, {len(s.positions)} vertices")
    return built, messages


# ------------------------------------------------------------------ animation import
def _armature_for(context, nb: int, given=None) -> tuple[bpy.types.Object, str]:
    if given is not None:
        return given, "the given armature"
    active = context.view_layer.objects.active
    if active is not None and active.type == "ARMATURE":
        return active, "the active armature"
    if active is not None and active.type == "MESH":
        arm = mesh_armature(active)
        if arm is not None:
            return arm, "the active mesh's armature"
    fits = [o for o in context.scene.objects if o.type == "ARMATURE" and len(o.data.bones) == nb]
    stored = [o for o in fits if all(convert.INDEX in b for b in o.data.bones)]
    pick = stored or fits
    if len(pick) == 1:
        return pick[0], f"the only armature with {nb} bones"
    raise FormatError(
        f"select the armature to animate ({len(pick)} armatures have {nb} bones)"
        if pick
        else f"no armature has the animation's {nb} bones"
    )


def _mesh_for(context, nv: int, armature=None) -> bpy.types.Object | None:
    active = context.view_layer.objects.active
    if active is not None and active.type == "MESH" and len(active.data.vertices) == nv:
        return active
    fits = [o for o in context.scene.objects if o.type == "MESH" and len(o.data.vertices) == nv]
    skinned = [o for o in fits if armature is not None and mesh_armature(o) == armature]
    return (skinned or fits or [None])[0]


def import_anim_file(
    context,
    path: str,
    armature=None,
    mesh=None,
    matrix: np.ndarray | None = None,
    frame_scale: float = 1.0,
) -> dict:
    """Bones mode: an action on the armature (its keys in the armature's space: the
    armature carries the transform its structure was imported with). Mesh modes: a
    copy of the mesh whose Geometry Nodes modifier shows each frame's positions
    (``frames``; ``action`` is None), ``matrix`` (the axes and scale options) on it.
    A file frame becomes ``frame_scale`` Blender frames. Returns ``target``,
    ``action``, ``frames``, ``how`` and ``warnings``."""
    timing = {"matrix": np.eye(4) if matrix is None else matrix, "frame_scale": frame_scale}
    a = _read(path, "animation")
    if a.frame_count == 0:
        raise FormatError("the animation has no frames (Nf is 0): nothing to import", None, path)
    name = os.path.splitext(os.path.basename(path))[0]
    warnings: list[str] = []
    if a.mode == anim_file.MESH_ABSOLUTE:
        positions = a.positions
        try:
            return _mesh_animation(context, a, positions, name, mesh, None, warnings, timing)
        except FormatError as err:
            raise err.with_path(path) from None
    try:
        armature, how = _armature_for(context, a.bone_count, armature)
    except FormatError as err:
        raise err.with_path(path) from None
    names = bone_order(armature)
    if len(names) != a.bone_count:
        raise FormatError(
            f"the animation has {a.bone_count} bones, {armature.name!r} has {len(names)}",
            None,
            path,
        )
    parents = bone_parents(armature, names)
    if a.mode == anim_file.MESH_BONES:
        # the armature's pose at the file's frames, in its own space (the file's)
        space = np.array(armature.matrix_world, np.float64)
        bones, _ = sample_frames(context, a.frames() * frame_scale, armature, names, None, space)
        positions, hits, spread = convert.block_world_positions(a, bones)
        if spread.max() > 1e-4:
            warnings.append(
                f"bones disagree about vertex positions by up to {spread.max():.3g}: "
                "the armature's pose is not the one the file was exported with (averaged)"
            )
        missing = hits == 0
        if missing.any():
            warnings.append(
                f"{int(missing.sum())} vertex-frames are listed by no bone: they take the "
                "vertex's frame-0 position (the origin when it is missing there too)"
            )
            first = np.where(missing[0][:, None], 0.0, positions[0])
            positions = np.where(missing[..., None], first[None], positions)
        try:
            return _mesh_animation(
                context, a, positions, name, mesh, armature, warnings, timing, how
            )
        except FormatError as err:
            raise err.with_path(path) from None
    fps = scene_fps(context)
    neutral, shear = convert.bones_to_neutral(a, names, parents, fps / frame_scale, name)
    if shear > 1e-5:
        warnings.append(
            f"bone transforms with shear: the action's keys are off by up to {shear:.3g}"
        )
    bone, node = convert.bone_worlds(a, parents)
    offsets = convert.affine_inverse(bone) @ node
    neutral.extras = {
        HEADER: convert.header(a),
        NODE_OFFSET: [float(v) for v in offsets[0].ravel()],
        BOXES: [float(v) for v in a.boxes[0].ravel()],
    }
    if frame_scale != 1.0:
        neutral.extras[FRAME_SCALE] = frame_scale
    drift = float(np.abs(offsets - offsets[:1]).max())
    if drift > 1e-6:  # kept per frame: export writes them for the same frames
        neutral.extras[NODE_OFFSETS_PER_FRAME] = offsets[..., :3, :].ravel().tolist()
        warnings.append(
            f"node transforms move against their bones (by up to {drift:.3g}): kept per "
            "frame, written back only for the same frames"
        )
    if float(np.abs(a.boxes - a.boxes[:1]).max()) > 0:
        neutral.extras[BOXES_PER_FRAME] = a.boxes.ravel().tolist()
        warnings.append(
            "box sizes change over the frames: kept per frame, written back only for "
            "the same frames"
        )
    action = build_action(armature, neutral, fps)
    undo = keep_actions(armature, [action])
    if armature.name in context.view_layer.objects:
        _make_active(context, armature)
    return {
        "target": armature,
        "action": action,
        "how": how,
        "warnings": warnings,
        "undo": undo,
        "frame_range": tuple(action.frame_range),
    }


def _make_active(context, obj) -> None:
    """Select ``obj`` alone and make it active, as Blender's importers leave what they
    made (an action on an existing armature adds no object for the operator to select)."""
    for other in context.view_layer.objects.selected:
        other.select_set(False)
    obj.select_set(True)
    context.view_layer.objects.active = obj


def _mesh_animation(
    context, a, positions, name, mesh, armature, warnings, timing: dict, how=""
) -> dict:
    source = _mesh_for(context, a.vertex_count, armature) if mesh is None else mesh
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
        at = a.frames() * timing["frame_scale"]
        frames = frame_positions(obj, positions, at, name)
        obj[HEADER] = json.dumps(convert.header(a))
        if timing["frame_scale"] != 1.0:
            obj[FRAME_SCALE] = timing["frame_scale"]
        place_roots([obj], timing["matrix"])
        _make_active(context, obj)  # what File > Export then writes by default
    except Exception:
        if frames is not None:
            frames.remove()
        bpy.data.objects.remove(obj)
        bpy.data.meshes.remove(me)
        raise
    return {
        "target": obj,
        "action": None,
        "frames": frames,
        "how": how,
        "warnings": warnings,
        "frame_range": (float(at[0]), float(at[-1])),
    }


# ------------------------------------------------------------------ export
def _deformed_mesh(context, armature) -> bpy.types.Object | None:
    meshes = [
        o
        for o in context.scene.objects
        if o.type == "MESH" and (armature is None or mesh_armature(o) == armature)
    ]
    return meshes[0] if meshes else None


def _file_name(name: str, warnings: list[str]) -> str:
    """A bone name a ``<name>`` can hold: no '>' and no line breaks."""
    clean = name.replace(">", "_").replace("\n", "_").replace("\r", "_")
    if clean != name:
        warnings.append(f"bone {name!r} is written as {clean!r} (a <name> cannot hold '>')")
    return clean


def _file_space(matrix: np.ndarray | None, armature, path: str) -> np.ndarray:
    """The transform from ``armature``'s space into the file's: ``matrix``, else the
    armature's world matrix (3ds Max writes world space); FormatError when it shears
    or scales unevenly (bones cannot hold that)."""
    m = np.array(armature.matrix_world, np.float64) if matrix is None else matrix
    if not is_identity(m):
        try:
            split(m)
        except ValueError as err:
            raise FormatError(
                f"the transform of {armature.name!r} {err.args[0][len('the transform ') :]}, "
                "which a BonesPro file cannot hold: apply its scale first",
                None,
                path,
            ) from None
    return m


def export_structure_file(
    context, path: str, armature, mesh=None, matrix: np.ndarray | None = None
) -> list[str]:
    """The armature's rest pose and the mesh's weights as a structure file, both read
    in the armature's space and written through ``matrix`` (from that space into the
    file's; the armature's world matrix by default)."""
    if armature is None:
        raise FormatError(
            "a BonesPro structure is a skeleton with its vertex weights: there is no "
            "armature to export (import or select one)",
            None,
            path,
        )
    if not armature.data.bones:
        raise FormatError(f"armature {armature.name!r} has no bones to export", None, path)
    warnings = []
    matrix = _file_space(matrix, armature, path)
    space = np.array(armature.matrix_world, np.float64)
    names = bone_order(armature)
    skeleton = extract_skeleton(armature)
    order = [skeleton.names.index(n) for n in names]
    inverse = np.argsort(order)
    parents = np.array([inverse[p] if p >= 0 else -1 for p in skeleton.parents[order]], np.int32)
    bind = skeleton.bind_matrices()[order]
    skeleton.names = [_file_name(n, warnings) for n in names]
    skeleton.parents = parents
    skeleton.inverse_bind = np.linalg.inv(bind)
    skeleton.extras = [skeleton.extras[i] for i in order]
    lengths = np.array([armature.data.bones[n].length for n in names])
    if mesh is None:
        mesh = _deformed_mesh(context, armature)
    if mesh is None:
        warnings.append("no mesh is deformed by the armature: the file has no vertices")
        counts = np.zeros(0, np.int32)
        bones = np.zeros(0, np.int32)
        weights = np.zeros(0)
        positions = np.zeros((0, 3))
    else:
        counts, bones, weights = get_weights(mesh, names)
        positions = world_positions(mesh, space=space)
        if (counts == 0).any():
            warnings.append(f"{int((counts == 0).sum())} vertices have no bone weights")
    s = convert.scene_to_structure(skeleton, positions, counts, bones, weights, lengths)
    s = bake_structure(s, matrix)
    write_atomic(path, lambda: structure.write(s))
    return warnings


def _stored_header(*holders) -> dict:
    for h in holders:
        if h is None or HEADER not in h:
            continue
        value = read_prop(h, HEADER)
        if isinstance(value, dict):
            return value
    return {}


def export_anim_file(
    context,
    path: str,
    armature=None,
    mesh=None,
    mode: str = "AUTO",
    system: str = "AUTO",
    representation: str = "AUTO",
    order: str = "AUTO",
    units: str = "AUTO",
    interval: tuple[float, float, float] | None = None,
    file_space: Callable[[bpy.types.Object], np.ndarray] | None = None,
    frame_scale: float | None = None,
) -> list[str]:
    """An animation file; AUTO settings are the imported file's, else Bones, Absolute,
    Matrix, XYZ, Degrees. ``interval`` is (first, last, step) in Blender frames, else
    the imported one or the action's frame range. Data is read in the space of its
    root (the mesh in Mesh (absolute), else the armature) and written through
    ``file_space(root)`` (the root's world matrix by default: world space). A file
    frame is ``frame_scale`` Blender frames (None: as imported, else 1)."""
    warnings: list[str] = []
    action = None
    if armature is not None and armature.animation_data is not None:
        action = armature.animation_data.action
    shape_action = None
    if (
        mesh is not None
        and mesh.data.shape_keys is not None
        and mesh.data.shape_keys.animation_data
    ):
        shape_action = mesh.data.shape_keys.animation_data.action
    # A mesh animation's own settings come first: it is what the user picked.
    stored = _stored_header(shape_action, mesh, action)
    h = {
        "mode": anim_file.BONES,
        "system": anim_file.ABSOLUTE,
        "representation": anim_file.MATRIX,
        "euler_order": "XYZ",
        "angle_units": anim_file.DEGREES,
        "quoted": False,
    }
    h.update({k: v for k, v in stored.items() if k in h})
    for key, value in (
        ("mode", mode),
        ("system", system),
        ("representation", representation),
        ("euler_order", order),
        ("angle_units", units),
    ):
        if value != "AUTO":
            h[key] = value
    if frame_scale is None:
        frame_scale = _stored_frame_scale(shape_action, mesh, action)
    k = float(frame_scale)
    if interval is None and "first_frame" in stored:
        file_interval = (stored["first_frame"], stored["last_frame"], stored["step"])
    else:
        if interval is None:
            src = action or shape_action
            if src is None:
                raise FormatError("nothing is animated: give a frame interval")
            lo, hi = src.frame_range
            interval = (float(lo), float(hi), 1.0)
        file_interval = tuple(float(v) / k for v in interval)
    first, last, step = (float(v) for v in file_interval)
    if step <= 0 or last < first:
        raise FormatError(f"bad frame interval {first:g}..{last:g} step {step:g}")
    nf = int(np.floor((last - first) / step + 1e-9)) + 1
    file_frames = first + np.arange(nf) * step
    frames = file_frames * k
    template = anim_file.Animation(0, 0, nf, first_frame=first, last_frame=last, step=step)
    for key, value in h.items():
        setattr(template, key, value)
    if h["mode"] == anim_file.MESH_ABSOLUTE:
        if mesh is None:
            raise FormatError("Mesh (absolute) needs a mesh: select it")
        space = np.array(mesh.matrix_world, np.float64)
        _, positions = sample_frames(context, frames, None, None, mesh, space)
        matrix = _file_space(_root_space(file_space, mesh), mesh, path)
        if not is_identity(matrix):
            positions = bake_points(positions, matrix)
        template.vertex_count = positions.shape[1]
        template.bone_count = (
            len(bone_order(armature)) if armature is not None else int(stored.get("bone_count", 0))
        )
        template.positions = positions
        out = template
    else:
        if armature is None:
            raise FormatError(f"{h['mode']} needs an armature: select it")
        names = bone_order(armature)
        parents = bone_parents(armature, names)
        need_mesh = h["mode"] == anim_file.MESH_BONES
        if need_mesh and mesh is None:
            raise FormatError("Mesh (bones c.s) needs a mesh with the bone weights: select it")
        space = np.array(armature.matrix_world, np.float64)
        bones, positions = sample_frames(
            context, frames, armature, names, mesh if need_mesh else None, space
        )
        matrix = _file_space(_root_space(file_space, armature), armature, path)
        baked = not is_identity(matrix)
        if baked:
            bones = bake_matrices(bones, matrix)
            if positions is not None:
                positions = bake_points(positions, matrix)
        if need_mesh:
            counts, wb, w = get_weights(mesh, names)
            owner = np.repeat(np.arange(len(counts)), counts)
            members = [owner[(wb == b) & (w > 0)] for b in range(len(names))]
            template.bone_count, template.vertex_count = len(names), positions.shape[1]
            (
                template.block_bones,
                template.block_counts,
                template.block_vertices,
                template.block_positions,
            ) = convert.world_positions_to_blocks(positions, bones, members)
            out = template
        else:
            offset, boxes = _node_offsets_and_boxes(armature, action, names)
            per_frame = _per_frame(action, stored, file_frames, len(names), warnings)
            offset = per_frame.get("offsets", offset[None])
            boxes = per_frame.get("boxes", np.broadcast_to(boxes, (nf, len(names), 3)))
            if baked:  # bones hold no scale: it goes into the offsets' translations
                scale = split(matrix)[1]
                offset = np.array(offset, np.float64)
                offset[..., :3, 3] *= scale
                boxes = boxes * scale
            out = convert.worlds_to_bones_animation(bones, bones @ offset, boxes, parents, template)
            deformed = mesh or _deformed_mesh(context, armature)
            out.vertex_count = (
                len(deformed.data.vertices)
                if deformed is not None
                else int(stored.get("vertex_count", 0))
            )
            if out.representation == anim_file.EULER:
                scale = np.linalg.norm(bones[..., :3, :3], axis=-2)
                if np.abs(scale - 1).max() > 1e-5:
                    warnings.append("Euler angles hold no scale: the bones' scale is not written")
    write_atomic(path, lambda: anim_file.write(out))
    return warnings


def _root_space(file_space, root) -> np.ndarray:
    """The transform from ``root``'s space into the file's."""
    if file_space is None:
        return np.array(root.matrix_world, np.float64)
    return file_space(root)


def _stored_frame_scale(*holders) -> float:
    """The Blender frames per file frame an import used (1 when it did not say)."""
    for h in holders:
        if h is not None and FRAME_SCALE in h:
            value = h[FRAME_SCALE]
            if isinstance(value, (int, float)) and np.isfinite(value) and value > 0:
                return float(value)
    return 1.0


def _per_frame(action, stored: dict, frames: np.ndarray, nb: int, warnings: list) -> dict:
    """Node offsets and boxes kept per frame by the import, when the export writes the
    same frames."""
    out: dict = {}
    if action is None:
        return out
    same = "first_frame" in stored and np.array_equal(
        frames,
        stored["first_frame"] + np.arange(int(stored["frame_count"])) * stored["step"],
    )
    for key, name, width in (
        (NODE_OFFSETS_PER_FRAME, "offsets", 12),
        (BOXES_PER_FRAME, "boxes", 3),
    ):
        if key not in action:
            continue
        if not same:
            warnings.append(
                f"per-frame {'node transforms' if width == 12 else 'box sizes'} were kept "
                "for the imported frames only: the first frame's are written"
            )
            continue
        values = np.asarray(read_prop(action, key), np.float64).reshape(len(frames), nb, -1)
        if width == 12:
            full = np.zeros((len(frames), nb, 4, 4))
            full[..., :3, :] = values.reshape(len(frames), nb, 3, 4)
            full[..., 3, 3] = 1.0
            values = full
        out[name] = values
    return out


def _node_offsets_and_boxes(armature, action, names) -> tuple[np.ndarray, np.ndarray]:
    """Per bone: node = bone @ offset, and the box size. From the imported animation,
    else the imported structure, else identity and the bone length."""
    nb = len(names)
    offset = np.tile(np.eye(4), (nb, 1, 1))
    boxes = np.array(
        [
            [b.length, b.length * 0.25, b.length * 0.25]
            for b in (armature.data.bones[n] for n in names)
        ]
    )
    stored_offset = read_prop(action, NODE_OFFSET) if action is not None else None
    stored_boxes = read_prop(action, BOXES) if action is not None else None
    for i, n in enumerate(names):
        bone = armature.data.bones[n]
        rows_b, rows_n = read_prop(bone, convert.BONE), read_prop(bone, convert.NODE)
        if rows_b is not None and rows_n is not None:
            offset[i] = np.linalg.inv(convert.rows_to_matrix(np.array(rows_b))) @ (
                convert.rows_to_matrix(np.array(rows_n))
            )
        box = read_prop(bone, convert.BOX)
        if box is not None:
            boxes[i] = box
    if stored_offset is not None and len(stored_offset) == nb * 16:
        offset = np.array(stored_offset, np.float64).reshape(nb, 4, 4)
    if stored_boxes is not None and len(stored_boxes) == nb * 3:
        boxes = np.array(stored_boxes, np.float64).reshape(nb, 3)
    return offset, boxes


# ------------------------------------------------------------------ operators
def _import_any(
    context,
    path: str,
    weights_to: str = "AUTO",
    matrix: np.ndarray | None = None,
    frame_scale: float = 1.0,
    spans: list | None = None,
) -> tuple[str, list[str], list]:
    """Import whichever BonesPro file ``path`` is; returns (kind, messages, undo list).
    An animation's frame span goes into ``spans`` (for the scene's timing)."""
    kind = _kind(read_bytes(path))
    if kind == "structure":
        built, messages = import_structure_file(context, path, weights_to, matrix)
        return kind, messages, [built.discard]
    if kind == "animation":
        result = import_anim_file(context, path, None, None, matrix, frame_scale)
        if spans is not None:
            spans.append(_Span(result["frame_range"]))
        return kind, _anim_messages(result), [lambda: _undo_anim(result)]
    raise FormatError("neither a BonesPro structure nor a BonesPro animation file", None, path)


class _Span:
    """What the scene's timing reads of an imported animation: its frame range."""

    def __init__(self, frame_range: tuple[float, float]):
        self.frame_range = frame_range


def _anim_messages(result: dict) -> list[str]:
    made = result["action"] or result["frames"].node_group
    return [f"{made.name} on {result['target'].name} ({result['how']})"] + [
        f"warning: {w}" for w in result["warnings"]
    ]


def _undo_anim(result: dict) -> None:
    target = result["target"]
    if target.type == "ARMATURE":
        result["undo"]()
    else:
        me = target.data
        bpy.data.objects.remove(target)
        result["frames"].remove()
        bpy.data.meshes.remove(me)


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


class _ImportTiming(FrameRateOptions):
    """Frame rate of BonesPro imports: the file holds 3ds Max frame numbers; Custom is
    the rate they were made at, and each becomes the matching scene frame."""

    def frame_scale(self, context) -> float:
        """Blender frames per file frame."""
        if self.frame_rate != "CUSTOM" or self.set_scene_timing:
            return 1.0  # the scene's rate is (or becomes) the file's
        return scene_fps(context) / float(self.fps)


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


@transform_options(MAX_FORWARD, MAX_UP)
class IMPORT_SCENE_OT_bonespro_structure(bpy.types.Operator, ImportFiles):
    """Import BonesPro structure exports (.txt): armature and vertex weights"""

    bl_idname = "import_scene.bonespro_structure"
    bl_label = "Import BonesPro Structure"

    filename_ext = ".txt"
    filter_glob: StringProperty(default="*.txt", options={"HIDDEN"})
    weights_to: _weights_property()

    def draw(self, context):
        _draw_import(self, self.layout, True, False)

    def execute(self, context):
        matrix = option_matrix(self)

        def one(context, path, progress):
            built, messages = import_structure_file(context, path, self.weights_to, matrix)
            return messages, [built.discard]

        return self.import_files(context, one)


@transform_options(MAX_FORWARD, MAX_UP)
class IMPORT_ANIM_OT_bonespro_anim(bpy.types.Operator, ImportFiles, _ImportTiming):
    """Import BonesPro animation exports (.txt): an action (Bones mode) or a mesh that
    shows each frame's positions (Mesh modes). Axes and scale go on a new mesh; an
    action's keys are in its armature's space, which carries its structure's import
    transform"""

    bl_idname = "import_anim.bonespro_anim"
    bl_label = "Import BonesPro Animation"

    filename_ext = ".txt"
    filter_glob: StringProperty(default="*.txt", options={"HIDDEN"})
    set_scene_timing: BoolProperty(
        name="Set Scene Rate and Range",
        default=True,
        description="Set the scene's frame rate to the one used and its frame range to "
        "the imported animation's",
    )

    def draw(self, context):
        _draw_import(self, self.layout, False, True)

    def execute(self, context):
        matrix, k, spans = option_matrix(self), self.frame_scale(context), []

        def one(context, path, progress):
            result = import_anim_file(context, path, None, None, matrix, k)
            spans.append(_Span(result["frame_range"]))
            return _anim_messages(result), [lambda: _undo_anim(result)]

        return self.import_files(context, one, made=spans)


@transform_options(MAX_FORWARD, MAX_UP)
class IMPORT_SCENE_OT_bonespro(bpy.types.Operator, ImportFiles, _ImportTiming):
    """Import BonesPro exports (.txt), structure or animation as the content says"""

    bl_idname = "import_scene.bonespro"
    bl_label = "Import BonesPro"

    filename_ext = ".txt"
    filter_glob: StringProperty(default="*.txt", options={"HIDDEN"})
    weights_to: _weights_property()

    def draw(self, context):
        _draw_import(self, self.layout, True, True)

    def execute(self, context):
        paths = selected_paths(self)
        # Structures first, so animations of the same drop find their armature.
        kinds = {p: _kind(read_bytes(p)) if os.path.isfile(p) else "neither" for p in paths}
        ordered = sorted(paths, key=lambda p: kinds[p] != "structure")
        matrix, k, spans = option_matrix(self), self.frame_scale(context), []

        def one(context, path, progress):
            kind, messages, undo = _import_any(context, path, self.weights_to, matrix, k, spans)
            tag = f"BonesPro {kind}: "
            return [
                "warning: " + tag + m[9:] if m.startswith("warning: ") else tag + m
                for m in messages
            ], undo

        return self.import_files(context, one, ordered, spans)


def _active_armature_and_mesh(context):
    active = context.view_layer.objects.active
    armature = mesh = None
    if active is not None and active.type == "ARMATURE":
        armature = active
    elif active is not None and active.type == "MESH":
        mesh = active
        armature = mesh_armature(active)
    if armature is None:
        arms = [o for o in context.scene.objects if o.type == "ARMATURE"]
        armature = arms[0] if len(arms) == 1 else None
    return armature, mesh


def _scoped_armature_and_mesh(op, context):
    """The armature and mesh an export takes: the active ones (the Include options
    unset), else those of the export's scope (a Collection Exporter's collection,
    selection, visibility, active collection)."""
    if not (op.collection or op.use_selection or op.use_visible or op.use_active_collection):
        return _active_armature_and_mesh(context)
    meshes = op.scope_objects(context, ("MESH",))
    arms = op.scope_objects(context, ("ARMATURE",))
    armature = one_armature(meshes, "a BonesPro file") if meshes else None
    if armature is None:
        if len(arms) > 1:
            raise FormatError(
                f"{len(arms)} armatures to export ({', '.join(a.name for a in arms[:3])}"
                f"{' ...' if len(arms) > 3 else ''}): a BonesPro file holds one"
            )
        armature = arms[0] if arms else None
    active = context.view_layer.objects.active
    mine = [m for m in meshes if armature is None or mesh_armature(m) == armature]
    mesh = active if active in mine else (mine[0] if mine else None)
    if mesh is None and not meshes and armature is None:
        raise FormatError("nothing to export: no armature or mesh in the export's scope")
    return armature, mesh


def _root_matrix(op):
    """``file_space`` for the exports: the options' transform from a root's space."""
    return lambda root: file_matrix(op, root, np.array(root.matrix_world, np.float64))


@transform_options(MAX_FORWARD, MAX_UP, export=True)
class EXPORT_SCENE_OT_bonespro_structure(bpy.types.Operator, ExportFile, ExportScope):
    """Export the active armature (or the active mesh's) and its mesh's weights to a
    BonesPro structure file (.txt)"""

    bl_idname = "export_scene.bonespro_structure"
    bl_label = "Export BonesPro Structure"

    filename_ext = ".txt"
    filter_glob: StringProperty(default="*.txt", options={"HIDDEN"})

    def draw(self, context):
        layout = self.layout
        self.draw_include(layout)
        draw_transform(layout, self)
        body = section(layout, self, "geometry", "Geometry")
        if body is not None:
            body.prop(self, "apply_modifiers")

    def _export(self, context) -> list[str]:
        armature, mesh = _scoped_armature_and_mesh(self, context)
        if armature is None:
            raise FormatError("select the armature (or a mesh it deforms) to export")
        if mesh is None:
            mesh = _deformed_mesh(context, armature)
        matrix = _root_matrix(self)(armature)
        with evaluated_meshes(context, [mesh] if mesh else [], self.apply_modifiers) as (
            objs,
            warnings,
        ):
            more = export_structure_file(
                context, self.filepath, armature, objs[0] if objs else None, matrix
            )
        return warnings + more

    def execute(self, context):
        return report_export(self, lambda: self._export(context))


#: (enum identifier, the file's own spelling) of each header setting.
MODE_IDS = (
    ("BONES", anim_file.BONES),
    ("MESH_ABSOLUTE", anim_file.MESH_ABSOLUTE),
    ("MESH_BONES", anim_file.MESH_BONES),
)
SYSTEM_IDS = (("ABSOLUTE", anim_file.ABSOLUTE), ("RELATIVE", anim_file.RELATIVE))
REPRESENTATION_IDS = (("MATRIX", anim_file.MATRIX), ("EULER", anim_file.EULER))
UNIT_IDS = (("DEGREES", anim_file.DEGREES), ("RADIANS", anim_file.RADIANS))
ORDER_IDS = tuple((o, o) for o in ORDERS)


def _setting(name: str, pairs, description: str):
    """A header setting of the file: "As Imported" (``AUTO``) or one of ``pairs``."""
    items = (("AUTO", "As Imported", "The imported file's setting, else the first one"),)
    items += tuple((i, v, f"{v}, as the file writes it") for i, v in pairs)
    return EnumProperty(name=name, items=items, default="AUTO", description=description)


def _file_value(identifier: str, pairs) -> str:
    """The file's own spelling of an enum identifier ("AUTO" stays)."""
    return dict(pairs).get(identifier, identifier)


@transform_options(MAX_FORWARD, MAX_UP, export=True)
class EXPORT_ANIM_OT_bonespro_anim(bpy.types.Operator, ExportFile, AnimationExport):
    """Export the active armature's animation (or the active mesh's deformation) to a
    BonesPro animation file (.txt); with All Actions or NLA Tracks, one file each"""

    bl_idname = "export_anim.bonespro_anim"
    bl_label = "Export BonesPro Animation"

    filename_ext = ".txt"
    filter_glob: StringProperty(default="*.txt", options={"HIDDEN"})
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

    def _frame_scale(self, context) -> float | None:
        if self.frame_rate == "AUTO":
            return None
        if self.frame_rate == "SCENE":
            return 1.0
        return scene_fps(context) / float(self.fps)

    def _export_one(self, context, path: str, armature, mesh) -> list[str]:
        interval = None
        if self.interval == "SCENE":
            interval = (context.scene.frame_start, context.scene.frame_end, 1.0)
        elif self.interval == "CUSTOM":
            interval = (self.first_frame, self.last_frame, self.step)
        return export_anim_file(
            context,
            path,
            armature,
            mesh,
            _file_value(self.mode, MODE_IDS),
            _file_value(self.system, SYSTEM_IDS),
            _file_value(self.representation, REPRESENTATION_IDS),
            _file_value(self.euler_order, ORDER_IDS),
            _file_value(self.angle_units, UNIT_IDS),
            interval,
            _root_matrix(self),
            self._frame_scale(context),
        )

    def _export(self, context) -> list[str]:
        armature, mesh = _scoped_armature_and_mesh(self, context)
        if self.export_animations == "ACTIVE":
            return self._export_one(context, self.filepath, armature, mesh)
        if armature is None:
            raise FormatError(
                "All Actions and NLA Tracks export an armature's actions: select the armature"
            )
        chosen = chosen_files(
            armature, self.export_animations, self.filepath, self.use_action_names
        )
        ad = armature.animation_data or armature.animation_data_create()
        kept_action, kept_nla = ad.action, ad.use_nla
        warnings: list[str] = []
        try:
            ad.use_nla = False  # each action alone
            for path, _, action in chosen:
                compat.assign_action(armature, action)
                more = self._export_one(context, path, armature, mesh)
                warnings += [f"{os.path.basename(path)}: {w}" for w in more]
        finally:
            if kept_action is None:
                ad.action = None
            else:
                compat.assign_action(armature, kept_action)
            ad.use_nla = kept_nla
        self.report({"INFO"}, f"{len(chosen)} BonesPro animations written")
        return warnings

    def execute(self, context):
        return report_export(self, lambda: self._export(context))


# ------------------------------------------------------------------ batch
def _batch_import_structure(context, path: str, state: dict, options: dict) -> str:
    built, messages = import_structure_file(context, path, "NEW")
    state["armature"] = built.armature
    state.setdefault("objects", []).extend(built.objects)
    return "; ".join(messages)


def _batch_export_structure(context, path: str, state: dict, options: dict) -> str:
    meshes = batch_meshes(state)
    warnings = export_structure_file(
        context, path, state.get("armature"), meshes[0] if meshes else None
    )
    return batch_notes(warnings)


def _batch_import_anim(context, path: str, state: dict, options: dict) -> str:
    result = import_anim_file(context, path, state.get("armature"))
    if result["target"].type == "ARMATURE":
        state["armature"] = result["target"]
    else:
        state["mesh_animation"] = result["target"]
    state["action"] = result["action"]
    return "; ".join(_anim_messages(result))


def _batch_export_anim(context, path: str, state: dict, options: dict) -> str:
    mesh = state.get("mesh_animation")
    if mesh is None:
        meshes = batch_meshes(state)
        mesh = meshes[0] if meshes else None
    warnings = export_anim_file(context, path, state.get("armature"), mesh)
    return batch_notes(warnings)


CLASSES = (
    IMPORT_SCENE_OT_bonespro_structure,
    IMPORT_ANIM_OT_bonespro_anim,
    IMPORT_SCENE_OT_bonespro,
    EXPORT_SCENE_OT_bonespro_structure,
    EXPORT_ANIM_OT_bonespro_anim,
    file_handler(
        "bonespro",
        "BonesPro Export",
        "import_scene.bonespro",
        "export_scene.bonespro_structure",
        ".txt",
    ),
)
MENU_IMPORT = (
    ("import_scene.bonespro_structure", "BonesPro Structure (.txt)"),
    ("import_anim.bonespro_anim", "BonesPro Animation (.txt)"),
)
MENU_EXPORT = (
    ("export_scene.bonespro_structure", "BonesPro Structure (.txt)"),
    ("export_anim.bonespro_anim", "BonesPro Animation (.txt)"),
)
BATCH = (
    BatchFormat("bonespro.structure", _batch_import_structure, _batch_export_structure),
    BatchFormat("bonespro.animation", _batch_import_anim, _batch_export_anim),
)
