"""A turn, uniform scale and offset baked into BonesPro world-space data.

Every BonesPro transform and vertex position is in 3ds Max world space, so an
export whose objects are not in the file's space (an explicit Scale or Axes, an
armature moved after its import) writes them through ``x -> s * R @ x + t``
(:func:`io_formats.global_transform.split`). Bones hold no scale: a bone or node
matrix ``B`` becomes ``G @ B @ diag(1/s)``, so the scale goes into its
translation only, and box sizes scale with the bones' lengths.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..global_transform import affine, is_identity
from .convert import matrix_to_rows, rows_to_matrix
from .structure import Structure


def bake_points(points: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """(..., 3) positions through ``matrix``."""
    g, _ = affine(matrix)
    return np.asarray(points, np.float64) @ g[:3, :3].T + g[:3, 3]


def bake_matrices(m: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """(..., 4, 4) world bone or node matrices through ``matrix`` (scale into the
    translation only)."""
    g, s = affine(matrix)
    out = g @ np.asarray(m, np.float64)
    out[..., :3, :3] /= s
    return out


def bake_structure(s: Structure, matrix: np.ndarray) -> Structure:
    """A structure through ``matrix``; ``s`` itself when it is the identity."""
    if is_identity(matrix):
        return s
    _, scale = affine(matrix)
    return replace(
        s,
        boxes=np.asarray(s.boxes, np.float64) * scale,
        bone_transforms=matrix_to_rows(bake_matrices(rows_to_matrix(s.bone_transforms), matrix)),
        node_transforms=matrix_to_rows(bake_matrices(rows_to_matrix(s.node_transforms), matrix)),
        positions=bake_points(s.positions, matrix),
    )
