"""BonesPro values <-> matrices and the neutral scene.

3ds Max writes row-vector transforms: rows R0, R1, R2 are where the X, Y and Z
axes go and ``p' = p R + T``. The neutral scene (like Blender) uses column
vectors, so a BonesPro ``R, T`` is the 4x4 ``[[R^T, T], [0, 1]]``. 3ds Max and
Blender are both right-handed and Z up: no axis change.
"""

from __future__ import annotations

import numpy as np

from ..codec import FormatError
from ..scene import Animation as NeutralAnimation
from ..scene import BoneTrack, Mesh, Scene, Skeleton, Skin
from ..transforms import compose_trs, decompose_trs, parent_first_order
from . import animation as anim_file
from .euler import euler_to_matrix, matrix_to_euler
from .structure import Structure

BOX = "_bonespro_box"
NODE = "_bonespro_node"
BONE = "_bonespro_bone"
INDEX = "_bonespro_index"


def rows_to_matrix(rows: np.ndarray) -> np.ndarray:
    """(..., 4, 3) or (..., 12) BonesPro R rows + T -> (..., 4, 4) column-vector matrices."""
    rows = np.asarray(rows, np.float64)
    if rows.shape[-1] == 12:
        rows = rows.reshape(rows.shape[:-1] + (4, 3))
    out = np.zeros(rows.shape[:-2] + (4, 4))
    out[..., :3, :3] = np.swapaxes(rows[..., :3, :], -1, -2)
    out[..., :3, 3] = rows[..., 3, :]
    out[..., 3, 3] = 1.0
    return out


def matrix_to_rows(m: np.ndarray) -> np.ndarray:
    """(..., 4, 4) column-vector matrices -> (..., 4, 3) R rows + T."""
    m = np.asarray(m, np.float64)
    out = np.empty(m.shape[:-2] + (4, 3))
    out[..., :3, :] = np.swapaxes(m[..., :3, :3], -1, -2)
    out[..., 3, :] = m[..., :3, 3]
    return out


def values_to_matrix(values: np.ndarray, representation: str, order: str, units: str) -> np.ndarray:
    """Transforms as written (12 matrix numbers or E0 E1 E2 Tx Ty Tz) -> (..., 4, 4)."""
    values = np.asarray(values, np.float64)
    if representation == anim_file.MATRIX:
        return rows_to_matrix(values)
    angles = values[..., :3]
    if units == anim_file.DEGREES:
        angles = np.radians(angles)
    out = np.zeros(values.shape[:-1] + (4, 4))
    out[..., :3, :3] = euler_to_matrix(angles, order)
    out[..., :3, 3] = values[..., 3:6]
    out[..., 3, 3] = 1.0
    return out


def matrix_to_values(m: np.ndarray, representation: str, order: str, units: str) -> np.ndarray:
    """(..., 4, 4) -> the numbers a file of this representation holds (12 or 6 per transform).

    Euler angles hold rotation only: scale in ``m`` is removed first.
    """
    m = np.asarray(m, np.float64)
    if representation == anim_file.MATRIX:
        return matrix_to_rows(m).reshape(m.shape[:-2] + (12,))
    basis = m[..., :3, :3]
    norms = np.linalg.norm(basis, axis=-2, keepdims=True)
    angles = matrix_to_euler(basis / np.where(norms == 0, 1.0, norms), order)
    if units == anim_file.DEGREES:
        angles = np.degrees(angles)
    return np.concatenate([angles, m[..., :3, 3]], axis=-1)


def affine_inverse(m: np.ndarray) -> np.ndarray:
    """Inverse of (..., 4, 4) affine matrices, by the 3x3 adjugate (much faster than
    ``np.linalg.inv`` on millions of small matrices)."""
    a = np.asarray(m, np.float64)[..., :3, :3]
    c0 = np.cross(a[..., :, 1], a[..., :, 2])
    c1 = np.cross(a[..., :, 2], a[..., :, 0])
    c2 = np.cross(a[..., :, 0], a[..., :, 1])
    det = np.einsum("...i,...i->...", a[..., :, 0], c0)
    inv3 = np.stack([c0, c1, c2], axis=-2) / det[..., None, None]
    out = np.zeros(np.shape(m))
    out[..., :3, :3] = inv3
    out[..., :3, 3] = -np.einsum("...ij,...j->...i", inv3, np.asarray(m)[..., :3, 3])
    out[..., 3, 3] = 1.0
    return out


def to_world(local: np.ndarray, parents: np.ndarray) -> np.ndarray:
    """(..., Nb, 4, 4) parent-relative -> world, for any bone order (vectorised over frames)."""
    world = np.empty_like(local)
    for b in parent_first_order(parents):
        p = parents[b]
        world[..., b, :, :] = (
            local[..., b, :, :] if p < 0 else world[..., p, :, :] @ local[..., b, :, :]
        )
    return world


def to_relative(world: np.ndarray, parents: np.ndarray) -> np.ndarray:
    """(..., Nb, 4, 4) world -> relative to the parent (roots stay world)."""
    parents = np.asarray(parents)
    out = world.copy()
    has = parents >= 0
    if has.any():
        out[..., has, :, :] = affine_inverse(world[..., parents[has], :, :]) @ world[..., has, :, :]
    return out


# ---------------------------------------------------------------- structure <-> scene
def structure_to_scene(s: Structure, name: str) -> Scene:
    """The skeleton (bone transforms as the bind pose, file order) and a vertex-only mesh
    with the weights. Box sizes and node transforms go into the bones' extras."""
    bind = rows_to_matrix(s.bone_transforms)
    with np.errstate(all="ignore"):
        det = np.linalg.det(bind[:, :3, :3]) if len(bind) else np.zeros(0)
        inverse_bind = affine_inverse(bind)
    bad = ~np.isfinite(det) | (det == 0) | ~np.isfinite(inverse_bind).all(axis=(1, 2))
    if bad.any():
        b = int(np.argmax(bad))
        raise FormatError(
            f"bone {b} <{s.names[b]}>: its transform is singular or not finite, so it "
            "has no inverse bind matrix"
        )
    local = to_relative(bind, s.parents)
    t, q, sc = decompose_trs(local)
    extras = [
        {
            INDEX: i,
            BOX: [float(v) for v in s.boxes[i]],
            NODE: [float(v) for v in s.node_transforms[i].ravel()],
            BONE: [float(v) for v in s.bone_transforms[i].ravel()],
        }
        for i in range(len(s.names))
    ]
    skeleton = Skeleton(list(s.names), s.parents.astype(np.int32), t, q, sc, inverse_bind, extras)
    nv = len(s.positions)
    width = int(s.weight_counts.max(initial=0))
    joints = np.full((nv, width), -1, np.int32)
    weights = np.zeros((nv, width), np.float32)
    starts = s.weight_starts
    owner = np.repeat(np.arange(nv), s.weight_counts)
    rank = np.arange(len(owner)) - np.repeat(starts, s.weight_counts)
    joints[owner, rank] = s.weight_bones
    weights[owner, rank] = s.weights
    mesh = Mesh(
        name,
        s.positions.astype(np.float32),
        np.zeros(0, np.int32),
        np.zeros(0, np.int32),
        np.zeros(0, np.int32),
        skin=Skin(joints, weights),
    )
    return Scene(name, skeleton, [mesh])


def scene_to_structure(
    skeleton: Skeleton,
    positions: np.ndarray,
    weight_counts: np.ndarray,
    weight_bones: np.ndarray,
    weights: np.ndarray,
    lengths: np.ndarray | None = None,
) -> Structure:
    """A structure file from a skeleton (its bind matrices; stored BonesPro values where
    they still agree) and ragged per-vertex weights. ``lengths`` (bone display lengths)
    give the box size of bones without a stored one."""
    n = len(skeleton)
    bind = skeleton.bind_matrices()
    bone_rows = matrix_to_rows(bind)
    node_rows = bone_rows.copy()
    boxes = np.zeros((n, 3))
    for i in range(n):
        extra = skeleton.extras[i] if i < len(skeleton.extras) else {}
        stored = extra.get(BONE)
        if stored is not None and np.allclose(
            rows_to_matrix(np.asarray(stored, np.float64)), bind[i], rtol=1e-6, atol=1e-5
        ):
            bone_rows[i] = np.asarray(stored, np.float64).reshape(4, 3)
        if extra.get(NODE) is not None:
            node_rows[i] = np.asarray(extra[NODE], np.float64).reshape(4, 3)
        if extra.get(BOX) is not None:
            boxes[i] = extra[BOX]
        elif lengths is not None:
            boxes[i] = (lengths[i], lengths[i] * 0.25, lengths[i] * 0.25)
    return Structure(
        list(skeleton.names),
        np.asarray(skeleton.parents, np.int32),
        boxes,
        bone_rows,
        node_rows,
        np.asarray(positions, np.float64),
        np.asarray(weight_counts, np.int32),
        np.asarray(weight_bones, np.int32),
        np.asarray(weights, np.float64),
    )


# ---------------------------------------------------------------- animation <-> matrices
def bone_worlds(a: anim_file.Animation, parents: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Bones mode: world bone and node matrices (Nf, Nb, 4, 4)."""
    if a.mode != anim_file.BONES:
        raise ValueError(f"{a.mode} files hold no bone transforms")
    args = (a.representation, a.euler_order, a.angle_units)
    bone = values_to_matrix(a.bone_values, *args)
    node = values_to_matrix(a.node_values, *args)
    if a.system == anim_file.RELATIVE:
        bone = to_world(bone, parents)
        node = to_world(node, parents)
    return bone, node


def worlds_to_bones_animation(
    bone: np.ndarray,
    node: np.ndarray,
    boxes: np.ndarray,
    parents: np.ndarray,
    template: anim_file.Animation,
) -> anim_file.Animation:
    """Bones mode file values from world matrices, in ``template``'s header settings."""
    out = anim_file.Animation(**{k: getattr(template, k) for k in _HEADER})
    out.mode = anim_file.BONES
    nf, nb = bone.shape[:2]
    out.bone_count, out.frame_count = nb, nf
    if out.system == anim_file.RELATIVE:
        bone = to_relative(bone, parents)
        node = to_relative(node, parents)
    args = (out.representation, out.euler_order, out.angle_units)
    out.boxes = np.asarray(boxes, np.float64).reshape(nf, nb, 3)
    out.bone_values = matrix_to_values(bone, *args)
    out.node_values = matrix_to_values(node, *args)
    return out


_HEADER = (
    "bone_count",
    "vertex_count",
    "frame_count",
    "mode",
    "system",
    "representation",
    "euler_order",
    "angle_units",
    "first_frame",
    "last_frame",
    "step",
    "quoted",
)


def header(a: anim_file.Animation) -> dict:
    """The header settings as a plain dict (kept on an imported action)."""
    return {k: getattr(a, k) for k in _HEADER}


def bones_to_neutral(
    a: anim_file.Animation, names: list[str], parents: np.ndarray, fps: float, name: str
) -> tuple[NeutralAnimation, float]:
    """Bones mode as parent-relative tracks (one key per exported frame), and how far
    translation-rotation-scale keys are from the file's matrices (shear they cannot
    hold; 0 for rigid or scaled bones)."""
    world, _ = bone_worlds(a, parents)
    local = to_relative(world, parents)
    times = a.frames() / fps
    tracks = []
    error = 0.0
    for b, bone_name in enumerate(names):
        t, q, s = decompose_trs(local[:, b])
        if len(t):
            error = max(error, float(np.abs(compose_trs(t, q, s) - local[:, b]).max()))
        tracks.append(BoneTrack(bone_name, times, t, _continuous(q), s))
    length = float(times[-1] - times[0]) if len(times) else 0.0
    return NeutralAnimation(name, length, tracks), error


def _continuous(q: np.ndarray) -> np.ndarray:
    """Quaternion signs flipped so neighbouring keys are in the same hemisphere."""
    if len(q) < 2:
        return q
    dots = np.einsum("ij,ij->i", q[1:], q[:-1])
    flips = np.concatenate([[1.0], np.cumprod(np.where(dots < 0, -1.0, 1.0))])
    return q * flips[:, None]


def block_world_positions(
    a: anim_file.Animation, bone_world: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mesh (bones c.s): world positions (Nf, Nv, 3) through ``bone_world`` (Nf, Nb, 4, 4),
    averaged over the bones that list a vertex; also how many bones listed each vertex
    (Nf, Nv) and, per frame, the largest distance between two bones' answers."""
    nf, nv = a.frame_count, a.vertex_count
    counts = a.block_counts.astype(np.int64)
    frame = np.repeat(np.arange(nf)[:, None], a.bone_count, axis=1)
    row_frame = np.repeat(frame.ravel(), counts.ravel())
    row_bone = np.repeat(a.block_bones.astype(np.int64).ravel(), counts.ravel())
    m = bone_world[row_frame, row_bone]
    world = np.einsum("kij,kj->ki", m[:, :3, :3], a.block_positions) + m[:, :3, 3]
    flat_index = row_frame * nv + a.block_vertices
    sums = np.zeros((nf * nv, 3))
    np.add.at(sums, flat_index, world)
    hits = np.bincount(flat_index, minlength=nf * nv).astype(np.float64)
    mean = sums / np.maximum(hits, 1.0)[:, None]
    spread = np.zeros(nf)
    if len(world):
        dist = np.linalg.norm(world - mean[flat_index], axis=1)
        np.maximum.at(spread, row_frame, dist)
    return mean.reshape(nf, nv, 3), hits.reshape(nf, nv), spread


def world_positions_to_blocks(
    positions: np.ndarray,
    bone_world: np.ndarray,
    members: list[np.ndarray],
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Mesh (bones c.s) blocks from world positions (Nf, Nv, 3): per frame, bone ``b``
    lists the vertices ``members[b]`` in its own frame at that frame."""
    nf, nb = bone_world.shape[:2]
    counts = np.array([len(m) for m in members], np.int32)
    inv = affine_inverse(bone_world)
    verts_one = np.concatenate(members).astype(np.int32) if nb else np.zeros(0, np.int32)
    bone_one = np.repeat(np.arange(nb), counts)
    rows = []
    for f in range(nf):
        m = inv[f, bone_one]
        p = positions[f, verts_one]
        rows.append(np.einsum("kij,kj->ki", m[:, :3, :3], p) + m[:, :3, 3])
    block_positions = np.concatenate(rows) if rows else np.zeros((0, 3))
    return (
        np.tile(np.arange(nb, dtype=np.int32), (nf, 1)),
        np.tile(counts, (nf, 1)),
        np.tile(verts_one, nf),
        block_positions,
    )


#: How far Blender's float32 pose gives back an unedited transform: measured up to
#: 8e-7 of the transform's size (matrix entries, translations) on the sample rigs in
#: every system and representation; an edit smaller than this is not told apart.
POSE_ROUNDING = 1e-5


def _close(a: np.ndarray, b: np.ndarray, tolerance: float, axes: tuple[int, ...]) -> np.ndarray:
    """Every entry of ``a`` over ``axes`` within ``tolerance`` of ``b``'s size there."""
    size = np.maximum(1.0, np.abs(b).max(axis=axes))
    return np.abs(a - b).max(axis=axes) <= tolerance * size


def keep_unedited(
    out: anim_file.Animation, source: anim_file.Animation, tolerance: float = POSE_ROUNDING
) -> int:
    """Put the file's own values into ``out`` (an animation Blender's pose gave) wherever
    they are the same transform: per frame and bone in Bones mode (the bone and node
    matrices within ``tolerance``, the box equal in float32), per vertex row in Mesh
    (bones c.s). Blender's float32 pose rounds every value a little; only an edit
    moves it further. Nothing is put in when the two do not line up (other header
    settings, frames, bones or blocks). Returns how many frames of bones or rows of
    ``out`` still differ from the file (edited)."""
    if header(out) != header(source):
        return -1
    if out.mode == anim_file.BONES:
        if out.bone_values.shape != source.bone_values.shape:
            return -1
        spec = (out.representation, out.euler_order, out.angle_units)
        ok = _close(values_to_matrix(out.bone_values, *spec),
                    values_to_matrix(source.bone_values, *spec), tolerance, (-2, -1))  # fmt: skip
        ok &= _close(values_to_matrix(out.node_values, *spec),
                     values_to_matrix(source.node_values, *spec), tolerance, (-2, -1))  # fmt: skip
        ok &= (out.boxes.astype(np.float32) == source.boxes.astype(np.float32)).all(axis=-1)
        pick = ok[..., None]  # new arrays: out's may be read-only views
        out.bone_values = np.where(pick, source.bone_values, out.bone_values)
        out.node_values = np.where(pick, source.node_values, out.node_values)
        out.boxes = np.where(pick, source.boxes, out.boxes)
        return int(np.count_nonzero(~ok))
    if out.mode == anim_file.MESH_BONES:
        lined_up = (
            np.array_equal(out.block_bones, source.block_bones)
            and np.array_equal(out.block_counts, source.block_counts)
            and np.array_equal(out.block_vertices, source.block_vertices)
        )
        if not lined_up:
            return -1
        ok = _close(out.block_positions, source.block_positions, tolerance, (-1,))
        out.block_positions = np.where(ok[:, None], source.block_positions, out.block_positions)
        return int(np.count_nonzero(~ok))
    return 0
