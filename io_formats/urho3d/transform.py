"""An export's axes and scale transform baked into what an Urho3D model writes.

:mod:`io_formats.global_transform` moves the neutral meshes and skeleton; this
adds what only Urho3D keeps: the file's own normals, tangents and morph
normals/tangents (attributes of the import), each bone's collision radius and
box (bone space: they scale), and the imported layout's geometry centres, box
and LOD distances (model space, in the file's axes).
"""

from __future__ import annotations

import copy

import numpy as np

from ..global_transform import affine, bake_mesh, bake_skeleton, is_identity, split
from ..scene import Mesh, Skeleton
from . import axes
from .model_export import COMPUTED_TANGENT
from .model_import import MORPH_NORMAL, MORPH_TANGENT, NORMAL_ATTRIBUTE, TANGENT_ATTRIBUTE

_DIRECTION_PREFIXES = (MORPH_NORMAL.format(""), MORPH_TANGENT.format(""))


def direction_attributes(mesh: Mesh) -> tuple[str, ...]:
    """The names of ``mesh``'s attributes that hold directions (kept file normals,
    tangents, Blender's tangents, morph normal and tangent offsets)."""
    return tuple(
        a.name
        for a in mesh.attributes
        if a.name in (NORMAL_ATTRIBUTE, TANGENT_ATTRIBUTE, COMPUTED_TANGENT)
        or a.name.startswith(_DIRECTION_PREFIXES)
    )


def bake_meshes(meshes: list[Mesh], matrix: np.ndarray) -> None:
    """Positions, normals, morphs and the kept direction attributes, in place."""
    if is_identity(matrix):
        return
    for mesh in meshes:
        bake_mesh(mesh, matrix, direction_attributes(mesh))


def bake_bones(skeleton: Skeleton, matrix: np.ndarray) -> None:
    """The skeleton and every bone's collision radius and box, in place."""
    if is_identity(matrix):
        return
    bake_skeleton(skeleton, matrix)
    _, s, _ = split(matrix)
    for extra in skeleton.extras:
        if "urho_radius" in extra:
            extra["urho_radius"] = float(extra["urho_radius"]) * s
        if "urho_bbox" in extra:
            extra["urho_bbox"] = [float(v) * s for v in extra["urho_bbox"]]


def bake_layout(layout: dict | None, matrix: np.ndarray, convert: bool) -> dict | None:
    """A copy of the imported layout with its geometry centres moved and its LOD
    distances scaled; its bounding box is dropped (the export computes the new
    one from the moved vertices). ``convert``: the layout is in the file's
    axes, the matrix in Blender's."""
    if layout is None or is_identity(matrix):
        return layout
    g, s = affine(matrix)
    out = copy.deepcopy(layout)
    out["bbox"] = None
    if out.get("centers") is not None:
        c = axes.vectors(np.array(out["centers"], np.float64).reshape(-1, 3), convert)
        c = axes.vectors(c @ g[:3, :3].T + g[:3, 3], convert)
        out["centers"] = [[float(v) for v in row] for row in c]
    for geometry in out.get("geometries", []):
        for lod in geometry.get("lods", []):
            lod[0] = float(lod[0]) * s
    return out
