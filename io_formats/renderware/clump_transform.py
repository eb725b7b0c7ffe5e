"""A global transform on an exportable clump: the axes and scale options.

A clump's frames hold transforms, so a rotation and offset need only go on its
root frames. A scale is pushed down instead (frames of a ped carry none, and
GTA's games assume that): every frame below a root moves by the scale, every
vertex, morph offset and bounding sphere scales, the bones' translations and
the skin's inverse bind matrices follow. The result is the clump the objects
make in the transformed space, with rigid frames where they were rigid.
"""

from __future__ import annotations

import numpy as np

from ..codec import FormatError
from ..global_transform import split
from .clump_export import ExportClump


def _root_bones_on_top(data: ExportClump) -> bool:
    """True when the skeleton's root bones are root frames (no frame above them):
    their frames are ``skeleton_offset @ local``, so the offset takes a root's
    transform."""
    skeleton = data.skeleton
    if skeleton is None:
        return False
    parents = np.asarray(skeleton.parents)
    return any(f.bone >= 0 and parents[f.bone] < 0 and f.parent < 0 for f in data.frames)


def move_roots(data: ExportClump, matrix: np.ndarray) -> None:
    """``matrix`` (4x4) before every root frame, in place: the whole clump moves
    with it, nothing below the roots changes."""
    m = np.asarray(matrix, np.float64)
    for f in data.frames:
        if f.parent < 0 and f.bone < 0:
            f.matrix = m @ np.asarray(f.matrix, np.float64)
    if _root_bones_on_top(data):
        offset = np.eye(4) if data.skeleton_offset is None else data.skeleton_offset
        data.skeleton_offset = m @ offset


def bake_clump(data: ExportClump, matrix: np.ndarray) -> None:
    """``matrix`` (rotation, uniform scale, offset) into the clump, in place: root
    frames take the rotation and offset, everything else the scale (see the
    module's text). FormatError when the matrix mirrors, shears or scales unevenly."""
    try:
        r, s, t = split(matrix)
    except ValueError as err:
        raise FormatError(f"the export's axes and scale cannot be written: {err}") from None
    rigid = np.eye(4)
    rigid[:3, :3], rigid[:3, 3] = r, t
    for f in data.frames:
        if f.bone >= 0:
            continue
        m = np.array(f.matrix, np.float64)
        m[:3, 3] *= s
        f.matrix = rigid @ m if f.parent < 0 else m
    skeleton = data.skeleton
    if skeleton is not None:
        skeleton.local_translation = np.asarray(skeleton.local_translation, np.float64) * s
        if skeleton.inverse_bind is not None:
            ib = np.array(skeleton.inverse_bind, np.float64)
            ib[:, :3, 3] *= s
            skeleton.inverse_bind = ib
        offset = None if data.skeleton_offset is None else np.array(data.skeleton_offset)
        if offset is not None:
            offset[:3, 3] *= s
        if _root_bones_on_top(data):
            offset = rigid @ (np.eye(4) if offset is None else offset)
        data.skeleton_offset = offset
    for em in data.meshes:
        if em.skin_space is not None:
            em.skin_space = np.array(em.skin_space, np.float64)
            em.skin_space[:3, 3] *= s
        mesh = em.mesh
        mesh.positions = (np.asarray(mesh.positions, np.float64) * s).astype(np.float32)
        for morph in mesh.morphs:
            morph.position_offsets = (np.asarray(morph.position_offsets, np.float64) * s).astype(
                np.float32
            )
        stored = mesh.extras.get("rw_geometry")
        if isinstance(stored, dict) and stored.get("spheres"):
            mesh.extras["rw_geometry"] = {
                **stored,
                "spheres": [[float(v) * s for v in sphere] for sphere in stored["spheres"]],
            }
