"""Blender side of BonesPro: bone order, weights as vertex groups, posed bone
matrices and deformed vertex positions per frame, mesh animations (every frame's
positions picked by a Geometry Nodes modifier)."""

from __future__ import annotations

from dataclasses import dataclass

import bpy
import numpy as np

from ...io_formats.bonespro.convert import INDEX, to_world
from ...io_formats.bonespro.euler import euler_to_matrix
from ...io_formats.codec import FormatError
from ...io_formats.posing import basis_to_local
from ...io_formats.transforms import compose_trs, matrix_to_quat
from ..blender import compat
from ..blender.build import BIND_SCALE, rest_relative
from ..blender.extract import sample_fcurve, triplets_by_vertex


def bone_order(armature: bpy.types.Object) -> list[str]:
    """Bone names in BonesPro file order (the stored index), else the armature's order."""
    bones = list(armature.data.bones)
    if all(INDEX in b for b in bones):
        bones.sort(key=lambda b: int(b[INDEX]))
    return [b.name for b in bones]


def bone_parents(armature: bpy.types.Object, names: list[str]) -> np.ndarray:
    index = {n: i for i, n in enumerate(names)}
    bones = armature.data.bones
    return np.array(
        [index[bones[n].parent.name] if bones[n].parent else -1 for n in names], np.int32
    )


def set_weights(
    obj: bpy.types.Object,
    names: list[str],
    counts: np.ndarray,
    bones: np.ndarray,
    weights: np.ndarray,
) -> None:
    """One vertex group per bone (replacing groups of the same name) holding the ragged
    per-vertex weights, zero weights included. The adds go rank by rank (every vertex's
    first bone, then every second bone ...) and Blender appends each new weight to its
    vertex's list, so each vertex keeps the file's bone order; within a rank there is
    one ``add`` per (bone, weight) run."""
    for n in names:
        old = obj.vertex_groups.get(n)
        if old is not None:
            obj.vertex_groups.remove(old)
    groups = [obj.vertex_groups.new(name=n) for n in names]
    counts = np.asarray(counts, np.int64)
    verts = np.repeat(np.arange(len(counts), dtype=np.int64), counts)
    rank = np.arange(len(verts)) - np.repeat(np.cumsum(counts) - counts, counts)
    w = np.asarray(weights, np.float32)
    b = np.asarray(bones, np.int64)
    order = np.lexsort((verts, w, b, rank))
    verts, b, w, rank = verts[order], b[order], w[order], rank[order]
    if not len(verts):
        return
    change = np.nonzero((np.diff(b) != 0) | (np.diff(w) != 0) | (np.diff(rank) != 0))[0] + 1
    starts = np.concatenate([[0], change])
    ends = np.concatenate([change, [len(verts)]])
    vlist = verts.tolist()
    for s, e, j, value in zip(
        starts.tolist(), ends.tolist(), b[starts].tolist(), w[starts].tolist(), strict=True
    ):
        groups[j].add(vlist[s:e], value, "REPLACE")


def get_weights(obj: bpy.types.Object, names: list[str]) -> tuple[np.ndarray, ...]:
    """Ragged weights (counts, bone indices, weights) of the groups named like bones,
    each vertex's bones in Blender's order for it (the file's order after an import)."""
    owner, bone, weight = triplets_by_vertex(obj, names)
    keep = bone >= 0
    owner, bone, weight = owner[keep], bone[keep], weight[keep]
    nv = len(obj.data.vertices)
    return (
        np.bincount(owner, minlength=nv).astype(np.int32),
        bone.astype(np.int32),
        weight.astype(np.float64),
    )


def relative_to(space: np.ndarray | None, world) -> np.ndarray:
    """``world`` (an object's world matrix) seen from ``space`` (a world matrix; None:
    world space itself); exactly the identity when they agree to float32 precision."""
    m = np.array(world, np.float64)
    if space is None:
        return m
    rel = np.linalg.solve(np.asarray(space, np.float64), m)
    return np.eye(4) if np.allclose(rel, np.eye(4), rtol=0, atol=1e-6) else rel


def world_positions(
    obj: bpy.types.Object, evaluated: bool = False, space: np.ndarray | None = None
) -> np.ndarray:
    """(V, 3) vertex positions in world space, or in ``space`` (a world matrix), after
    modifiers and shape keys when ``evaluated``."""
    if evaluated:
        obj = obj.evaluated_get(bpy.context.evaluated_depsgraph_get())
    me = obj.data
    pos = np.empty(len(me.vertices) * 3, np.float32)
    me.vertices.foreach_get("co", pos)
    m = relative_to(space, obj.matrix_world)
    return pos.reshape(-1, 3).astype(np.float64) @ m[:3, :3].T + m[:3, 3]


def action_worlds(
    armature: bpy.types.Object, names: list[str], frames: np.ndarray, space=None
) -> np.ndarray | None:
    """World bone matrices (bind scale included) at ``frames`` computed from the
    action's F-curves without changing the scene frame, or None when the pose depends on
    more than the action (constraints, no action)."""
    ad = armature.animation_data
    if ad is None or ad.action is None or ad.drivers or ad.nla_tracks:
        return None
    pose = armature.pose.bones
    if any(pb.constraints for pb in pose):
        return None
    curves: dict[tuple[str, str], dict[int, object]] = {}
    for fc in compat.fcurves(ad.action):
        path = fc.data_path
        if path.startswith('pose.bones["'):
            name, _, prop = path[len('pose.bones["') :].partition('"].')
            name = name.replace('\\"', '"').replace("\\\\", "\\")
            curves.setdefault((name, prop), {})[fc.array_index] = fc
    rels = rest_relative(armature.data)
    frames = np.asarray(frames, np.float64)
    nf = len(frames)
    local = np.empty((nf, len(names), 4, 4))
    for b, name in enumerate(names):
        pb = pose[name]

        def channel(prop, current, name=name):
            out = np.tile(np.array(current, np.float64), (nf, 1))
            for index, fc in curves.get((name, prop), {}).items():
                if index < out.shape[1]:
                    out[:, index] = sample_fcurve(fc, frames)
            return out

        loc = channel("location", pb.location)
        scale = channel("scale", pb.scale)
        mode = pb.rotation_mode
        if mode == "QUATERNION":
            quat = channel("rotation_quaternion", pb.rotation_quaternion)
        elif mode == "AXIS_ANGLE":
            return None
        else:
            # Blender's Euler modes are the same fixed-axis orders as 3ds Max's, but its
            # angles are stored by axis (x, y, z), not by position in the order.
            by_axis = channel("rotation_euler", pb.rotation_euler)
            in_order = by_axis[:, ["XYZ".index(c) for c in mode]]
            quat = matrix_to_quat(euler_to_matrix(in_order, mode))
        t, q, sc = basis_to_local(*rels[name], loc, quat, scale)
        local[:, b] = compose_trs(t, q, sc)
    parents = bone_parents(armature, names)
    return relative_to(space, armature.matrix_world) @ to_world(local, parents)


def _set_frame(scene, frame: float) -> None:
    whole = int(np.floor(frame))
    scene.frame_set(whole, subframe=float(frame - whole))


def sample_frames(
    context,
    frames: np.ndarray,
    armature: bpy.types.Object | None,
    names: list[str] | None,
    mesh: bpy.types.Object | None = None,
    space: np.ndarray | None = None,
) -> tuple[np.ndarray | None, np.ndarray | None]:
    """Per frame: the world bone matrices 3ds Max would export (pose matrix with the
    bind scale put back, (Nf, Nb, 4, 4)) and the deformed world vertex positions of
    ``mesh`` ((Nf, V, 3)). Bone matrices come straight from the action's F-curves when
    nothing else moves the bones; otherwise each frame is set (and the scene's frame is
    restored afterwards). With ``space`` (a world matrix), both are in that space
    instead of world space."""
    scene = context.scene
    frames = np.asarray(frames, np.float64)
    worlds = positions = None
    by_frame = False
    if armature is not None:
        worlds = action_worlds(armature, names, frames, space)
        by_frame = worlds is None
    if by_frame:
        pose_bones = armature.pose.bones
        picks = [pose_bones.find(n) for n in names]
        bind_scale = np.array(
            [armature.data.bones[n].get(BIND_SCALE, (1.0, 1.0, 1.0)) for n in names], np.float64
        ).reshape(-1, 3)
        worlds = np.empty((len(frames), len(names), 4, 4))
        buf = np.empty(len(pose_bones) * 16, np.float32)
    if mesh is not None:
        positions = np.empty((len(frames), len(mesh.data.vertices), 3))
    if not by_frame and mesh is None:
        return worlds, positions
    keep = (scene.frame_current, scene.frame_subframe)
    try:
        for f, frame in enumerate(frames.tolist()):
            _set_frame(scene, frame)
            if by_frame:
                pose_bones.foreach_get("matrix", buf)
                pose = buf.reshape(-1, 4, 4).transpose(0, 2, 1)[picks].astype(np.float64)
                worlds[f] = relative_to(space, armature.matrix_world) @ pose
            if mesh is not None:
                positions[f] = world_positions(mesh, True, space)
    finally:
        scene.frame_set(keep[0], subframe=keep[1])
    if by_frame:
        worlds[..., :3, :3] *= bind_scale[None, :, None, :]
    return worlds, positions


# Point indices of the frames mesh are computed in Geometry Nodes' float32 math:
# exact up to 2**24.
MAX_FRAME_POINTS = 1 << 24


@dataclass
class FramePositions:
    """What :func:`frame_positions` made: the node group (on the object's modifier) and
    the hidden object whose mesh holds every frame's positions."""

    node_group: bpy.types.NodeTree
    frames_object: bpy.types.Object

    def remove(self) -> None:
        me = self.frames_object.data
        bpy.data.objects.remove(self.frames_object)
        bpy.data.meshes.remove(me)
        bpy.data.node_groups.remove(self.node_group)


def frame_positions(
    obj: bpy.types.Object, positions: np.ndarray, frames: np.ndarray, name: str
) -> FramePositions:
    """Show object-space ``positions`` (Nf, V, 3) on ``obj``: frame f's positions exactly
    from ``frames[f]`` until the next frame (the first before, the last after).

    The frames go into one mesh of Nf * V points in one ``foreach_set`` (an object
    linked to no scene, used by the modifier), and a Geometry Nodes modifier picks the
    scene frame's V points: the cost is linear in the frames, where a shape key and an
    F-curve per frame cost a name search over all the others each.
    """
    nf, nv = positions.shape[:2]
    if nf * nv > MAX_FRAME_POINTS:
        raise FormatError(
            f"{nf} frames of {nv} vertices are {nf * nv} positions, more than the "
            f"{MAX_FRAME_POINTS} a mesh animation can index"
        )
    first = float(frames[0]) if nf else 0.0
    step = float(frames[1] - frames[0]) if nf > 1 else 1.0
    if not np.isfinite(step) or step <= 0:
        step = 1.0
    me = bpy.data.meshes.new(f"{name} frames")
    obj_frames = bpy.data.objects.new(me.name, me)
    tree = bpy.data.node_groups.new(f"{name} frames", "GeometryNodeTree")
    built = FramePositions(tree, obj_frames)
    try:
        me.vertices.add(nf * nv)
        me.attributes["position"].data.foreach_set(
            "vector", np.ascontiguousarray(positions, np.float32).ravel()
        )
        _frame_picker(tree, obj_frames, first, step, nf, nv)
        obj.modifiers.new(tree.name, "NODES").node_group = tree
    except Exception:
        built.remove()
        raise
    return built


def _frame_picker(tree, source, first: float, step: float, nf: int, nv: int) -> None:
    """Set Position from ``source``'s point ``Index + V * clamp(floor((frame - first) /
    step), 0, Nf - 1)``."""
    tree.interface.new_socket("Geometry", in_out="INPUT", socket_type="NodeSocketGeometry")
    tree.interface.new_socket("Geometry", in_out="OUTPUT", socket_type="NodeSocketGeometry")
    nodes, links = tree.nodes, tree.links

    def math(operation: str, a, b):
        node = nodes.new("ShaderNodeMath")
        node.operation = operation
        for socket, value in zip(node.inputs, (a, b), strict=False):
            if isinstance(value, float):
                socket.default_value = value
            else:
                links.new(value, socket)
        return node.outputs[0]

    info = nodes.new("GeometryNodeObjectInfo")
    info.inputs["Object"].default_value = source
    frame = nodes.new("GeometryNodeInputSceneTime").outputs["Frame"]
    f = math("ADD", math("DIVIDE", math("SUBTRACT", frame, first), step), 1e-4)
    f = math("MINIMUM", math("MAXIMUM", math("FLOOR", f, 0.0), 0.0), float(nf - 1))
    point = math(
        "ADD", math("MULTIPLY", f, float(nv)), nodes.new("GeometryNodeInputIndex").outputs[0]
    )
    sample = nodes.new("GeometryNodeSampleIndex")
    sample.data_type = "FLOAT_VECTOR"
    sample.domain = "POINT"
    links.new(info.outputs["Geometry"], sample.inputs["Geometry"])
    links.new(nodes.new("GeometryNodeInputPosition").outputs[0], sample.inputs["Value"])
    links.new(point, sample.inputs["Index"])
    set_position = nodes.new("GeometryNodeSetPosition")
    links.new(nodes.new("NodeGroupInput").outputs[0], set_position.inputs["Geometry"])
    links.new(sample.outputs[0], set_position.inputs["Position"])
    links.new(set_position.outputs[0], nodes.new("NodeGroupOutput").inputs[0])
