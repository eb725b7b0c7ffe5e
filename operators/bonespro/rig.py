"""Blender side of BonesPro: bone order, weights as vertex groups, posed bone
matrices and deformed vertex positions per frame, per-frame shape keys."""

from __future__ import annotations

import bpy
import numpy as np

from ...io_formats.bonespro.convert import INDEX, to_world
from ...io_formats.bonespro.euler import euler_to_matrix
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


def world_positions(obj: bpy.types.Object, evaluated: bool = False) -> np.ndarray:
    """(V, 3) vertex positions in world space (after modifiers and shape keys when
    ``evaluated``)."""
    if evaluated:
        obj = obj.evaluated_get(bpy.context.evaluated_depsgraph_get())
    me = obj.data
    pos = np.empty(len(me.vertices) * 3, np.float32)
    me.vertices.foreach_get("co", pos)
    m = np.array(obj.matrix_world, np.float64)
    return pos.reshape(-1, 3).astype(np.float64) @ m[:3, :3].T + m[:3, 3]


def action_worlds(
    armature: bpy.types.Object, names: list[str], frames: np.ndarray
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
    return np.array(armature.matrix_world, np.float64) @ to_world(local, parents)


def _set_frame(scene, frame: float) -> None:
    whole = int(np.floor(frame))
    scene.frame_set(whole, subframe=float(frame - whole))


def sample_frames(
    context,
    frames: np.ndarray,
    armature: bpy.types.Object | None,
    names: list[str] | None,
    mesh: bpy.types.Object | None = None,
) -> tuple[np.ndarray | None, np.ndarray | None]:
    """Per frame: the world bone matrices 3ds Max would export (pose matrix with the
    bind scale put back, (Nf, Nb, 4, 4)) and the deformed world vertex positions of
    ``mesh`` ((Nf, V, 3)). Bone matrices come straight from the action's F-curves when
    nothing else moves the bones; otherwise each frame is set (and the scene's frame is
    restored afterwards)."""
    scene = context.scene
    frames = np.asarray(frames, np.float64)
    worlds = positions = None
    by_frame = False
    if armature is not None:
        worlds = action_worlds(armature, names, frames)
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
                worlds[f] = np.array(armature.matrix_world, np.float64) @ pose
            if mesh is not None:
                positions[f] = world_positions(mesh, evaluated=True)
    finally:
        scene.frame_set(keep[0], subframe=keep[1])
    if by_frame:
        worlds[..., :3, :3] *= bind_scale[None, :, None, :]
    return worlds, positions


def frame_shape_keys(
    context,
    obj: bpy.types.Object,
    positions: np.ndarray,
    frames: np.ndarray,
    name: str,
) -> bpy.types.Action:
    """One shape key per frame (object-space ``positions`` (Nf, V, 3)), each keyed to 1
    on its own frame and 0 on the others, with constant interpolation: the mesh shows
    frame f's positions exactly from frame f until the next one."""
    if obj.data.shape_keys is None:
        obj.shape_key_add(name="Basis", from_mix=False).value = 0.0
    keys = []
    for f in range(len(frames)):
        kb = obj.shape_key_add(name=f"{name} {_frame_label(frames[f])}", from_mix=False)
        compat.set_shape_key_coords(kb, np.ascontiguousarray(positions[f], np.float32).ravel())
        kb.value = 0.0
        keys.append(kb)
    key = obj.data.shape_keys
    action = bpy.data.actions.new(f"{name} shapes")
    if compat.HAS_SLOTS:
        action.slots.new(id_type="KEY", name=key.name)
    constant = compat.enum_value(bpy.types.Keyframe, "interpolation", "CONSTANT")
    nf = len(frames)
    for f, kb in enumerate(keys):
        path = f'key_blocks["{bpy.utils.escape_identifier(kb.name)}"].value'
        fc = compat.new_fcurve(action, path, 0, "BonesPro frames")
        pts = []
        if f > 0:
            pts.append((frames[f - 1], 0.0))
        pts.append((frames[f], 1.0))
        if f + 1 < nf:
            pts.append((frames[f + 1], 0.0))
        co = np.array(pts, np.float32)
        fc.keyframe_points.add(len(co))
        fc.keyframe_points.foreach_set("co", co.ravel())
        fc.keyframe_points.foreach_set("interpolation", np.full(len(co), constant, np.int32))
        fc.update()
    compat.assign_action(key, action)
    return action


def _frame_label(frame: float) -> str:
    return str(int(frame)) if float(frame).is_integer() else f"{frame:g}"
