"""A global rotation, uniform scale and offset baked into a neutral scene.

Importers apply the axes and scale options to the root objects they create (the
data stays exactly the file's); exporters bake whatever transform separates the
exported objects from the file's space into the data with :func:`bake`. The
transform is ``x -> s * R @ x + t``: ``R`` a rotation, ``s`` a positive scale.
Bones carry no scale: it goes into their translations, bind matrices and
animation translations, so a rig scaled by 0.01 is a rig whose bones are 100
times shorter, as the engines store it.
"""

from __future__ import annotations

import numpy as np

from .codec import FormatError
from .posing import quat_multiply
from .scene import Animation, Mesh, Scene, Skeleton
from .transforms import matrix_to_quat

#: How far from a rotation times a uniform scale a matrix may be and still be baked.
TOLERANCE = 1e-5


#: What an artist can do about a transform a file cannot hold.
APPLY_SCALE = (
    "apply the object's rotation and scale first (Object > Apply > Rotation & Scale), "
    "or export with the transform As Imported"
)


def split(matrix: np.ndarray) -> tuple[np.ndarray, float, np.ndarray]:
    """``matrix`` (4x4) as rotation, uniform scale and translation; FormatError (a
    ValueError) when it shears, scales unevenly or mirrors: bones and engine
    transforms cannot hold that, and an export reports the sentence."""
    m = np.asarray(matrix, np.float64)
    if not np.all(np.isfinite(m)):
        raise FormatError("the objects' transform is not finite: nothing exported")
    basis = m[:3, :3]
    scale = float(np.cbrt(np.linalg.det(basis)))
    if scale <= 0:
        raise FormatError(
            f"the objects' transform mirrors or flattens them, which the file cannot hold: "
            f"{APPLY_SCALE}"
        )
    rotation = basis / scale
    if not np.allclose(rotation @ rotation.T, np.eye(3), atol=TOLERANCE):
        raise FormatError(
            f"the objects' transform scales unevenly or shears, which the file cannot hold: "
            f"{APPLY_SCALE}"
        )
    return rotation, scale, m[:3, 3].copy()


def is_identity(matrix: np.ndarray) -> bool:
    return bool(np.array_equal(np.asarray(matrix, np.float64), np.eye(4)))


def affine(matrix: np.ndarray) -> tuple[np.ndarray, float]:
    """``matrix`` checked by :func:`split` and rebuilt exactly as ``s * R`` and
    ``t`` (4x4), with its scale ``s``: what every bake multiplies by."""
    r, s, t = split(matrix)
    g = np.eye(4)
    g[:3, :3], g[:3, 3] = s * r, t
    return g, s


def _points(a: np.ndarray | None, r: np.ndarray, s: float, t: np.ndarray) -> np.ndarray | None:
    if a is None:
        return None
    return (np.asarray(a, np.float64) @ (s * r).T + t).astype(a.dtype)


def _directions(a: np.ndarray | None, r: np.ndarray) -> np.ndarray | None:
    if a is None:
        return None
    out = np.array(a, copy=True)
    out[:, :3] = (np.asarray(a[:, :3], np.float64) @ r.T).astype(a.dtype)
    return out


def bake_mesh(mesh: Mesh, matrix: np.ndarray, vectors: tuple[str, ...] = ()) -> None:
    """Positions, morph offsets, normals and the named direction attributes of
    ``mesh``, in place (``vectors``: attribute names holding directions, e.g. kept
    file tangents; their fourth component, a sign, is left alone)."""
    r, s, t = split(matrix)
    mesh.positions = _points(mesh.positions, r, s, t)
    mesh.normals = _directions(mesh.normals, r)
    for morph in mesh.morphs:
        morph.position_offsets = _points(morph.position_offsets, r, s, np.zeros(3))
    for attr in mesh.attributes:
        if attr.name in vectors:
            attr.data = _directions(attr.data.reshape(len(attr.data), -1), r).reshape(
                attr.data.shape
            )


def bake_skeleton(skeleton: Skeleton, matrix: np.ndarray) -> None:
    """Root bones move with the transform, every bone's offset scales; the inverse
    bind matrices follow, so the bind pose stays where the meshes are."""
    r, s, t = split(matrix)
    roots = np.asarray(skeleton.parents) < 0
    tr = np.array(skeleton.local_translation, np.float64) * s
    tr[roots] = tr[roots] @ r.T + t
    skeleton.local_translation = tr
    q = matrix_to_quat(r[None])[0]
    rot = np.array(skeleton.local_rotation, np.float64)
    rot[roots] = quat_multiply(q, rot[roots])
    skeleton.local_rotation = rot
    if skeleton.inverse_bind is not None:
        g, _ = affine(matrix)
        # new bone world = G @ old @ diag(1/s): bones hold no scale, so the
        # inverse is diag(s) @ old inverse @ G^-1
        ib = np.array(skeleton.inverse_bind, np.float64) @ np.linalg.inv(g)
        ib[:, :3, :] *= s
        skeleton.inverse_bind = ib


def bake_animation(anim: Animation, skeleton: Skeleton | None, matrix: np.ndarray) -> None:
    """Keys of the root bones move with the transform; every translation scales."""
    r, s, t = split(matrix)
    roots: set[str] = set()
    if skeleton is not None:
        roots = {n for n, p in zip(skeleton.names, skeleton.parents.tolist(), strict=True) if p < 0}
    q = matrix_to_quat(r[None])[0]
    for track in anim.tracks:
        root = skeleton is None or track.bone in roots
        if track.translation is not None:
            tr = np.asarray(track.translation, np.float64) * s
            track.translation = tr @ r.T + t if root else tr
        if track.rotation is not None and root:
            track.rotation = quat_multiply(q, np.asarray(track.rotation, np.float64))


def bake(scene: Scene, matrix: np.ndarray, vectors: tuple[str, ...] = ()) -> None:
    """Everything of ``scene`` through ``matrix``, in place; nothing when it is
    the identity (the data stays bit for bit)."""
    if is_identity(matrix):
        return
    for mesh in scene.meshes:
        bake_mesh(mesh, matrix, vectors)
    if scene.skeleton is not None:
        bake_skeleton(scene.skeleton, matrix)
    for anim in scene.animations:
        bake_animation(anim, scene.skeleton, matrix)
