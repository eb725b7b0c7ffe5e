"""Unigine MESH -> neutral scene.

One mesh object for the whole file: positions are the coordinate vertices of
every surface (target 0), corners come from the coordinate/triangle index
pairs, and each surface is a material slot. What Blender has no place for is
kept so the exporter can write it back: the surface vertex of each corner and
the file's tangent quaternions (corner attributes), the tangents of the other
morph targets, the surfaces' morph target lists and which optional arrays
each surface had (an object property), the bone order (a bone property).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np

from ..codec import FormatError
from ..passes import run_passes
from ..scene import (
    Attribute,
    ColorSet,
    Mesh,
    MorphTarget,
    Scene,
    Skeleton,
    Skin,
    UVSet,
    morph_offsets,
)
from ..transforms import parent_first_order
from . import mesh as native
from .anim_convert import bind_wxyz, mesh_animation_to_neutral
from .common import FRAME_RATE
from .mesh_kept import KEPT_KEY, record

VERTEX_ATTRIBUTE = "unigine:vertex"
TANGENT_ATTRIBUTE = "unigine:tangent"
MORPH_TANGENT = "unigine:morph_tangent:{}"
SURFACES_KEY = "unigine_surfaces"
ANIMATIONS_KEY = "_unigine_animations"
BONE_INDEX_KEY = "unigine_index"
UV_NAMES = ("UVMap", "UVMap2")
COLOR_NAME = "Color"


def skeleton_from_file(bones: list[native.Bone], bind: np.ndarray) -> Skeleton | None:
    if not bones:
        return None
    parents = np.array([b.parent for b in bones], np.int32)
    try:
        parent_first_order(parents)
    except ValueError as err:
        raise FormatError(f"bad skeleton: {err}") from None
    t, q, s = bind_wxyz(bind)
    return Skeleton(
        names=[b.name for b in bones],
        parents=parents,
        local_translation=t.copy(),
        local_rotation=q.copy(),
        local_scale=s.copy(),
        extras=[{BONE_INDEX_KEY: i} for i in range(len(bones))],
    )


def tangent_normals(tangents: np.ndarray) -> np.ndarray:
    """Where each tangent quaternion (x y z w shorts) turns +Z: the vertex normal."""
    x, y, z, w = (tangents[:, i].astype(np.float32) for i in range(4))
    n = np.empty((len(tangents), 3), np.float32)
    n[:, 0] = 2 * (x * z + y * w)
    n[:, 1] = 2 * (y * z - x * w)
    n[:, 2] = w * w + z * z - x * x - y * y
    return n / np.maximum(np.sqrt((n * n).sum(axis=1, keepdims=True)), 1e-30)


def _face_normals(positions: np.ndarray, corner_verts: np.ndarray) -> np.ndarray:
    p = positions[corner_verts].reshape(-1, 3, 3).astype(np.float64)
    n = np.cross(p[:, 1] - p[:, 0], p[:, 2] - p[:, 0])
    n /= np.maximum(np.linalg.norm(n, axis=1, keepdims=True), 1e-30)
    return np.repeat(n, 3, axis=0)


@dataclass
class _SurfacesPass:
    """What the passes of ``mesh_from_file`` read and fill, in the order they run."""

    surfs: list[native.Surface]
    name: str
    coord_off: np.ndarray = field(init=False)  # first mesh vertex of each surface
    sv_off: np.ndarray = field(init=False)  # first surface vertex of each surface
    corner_sv: np.ndarray = field(init=False)  # the file-wide surface vertex of each corner
    out: Mesh = field(init=False)

    def __post_init__(self) -> None:
        n_coord = np.array([s.n_coords for s in self.surfs], np.int64)
        n_sv = np.array([s.n_vertices for s in self.surfs], np.int64)
        self.coord_off = np.concatenate([[0], np.cumsum(n_coord)])
        self.sv_off = np.concatenate([[0], np.cumsum(n_sv)])

    @property
    def n_corners(self) -> int:
        return len(self.out.corner_verts)

    @property
    def n_vertices(self) -> int:
        return len(self.out.positions)

    def per_corner(self, get, width: int, fill: float, dtype=np.float32) -> np.ndarray:
        """A per-surface-vertex array gathered to the corners (``fill`` where missing)."""
        res = np.empty((self.n_corners, width), dtype)
        start = 0
        for s in self.surfs:
            arr = get(s)
            end = start + len(s.tris)
            if arr is not None and len(arr):
                res[start:end] = arr[s.tris]
            else:
                res[start:end] = fill
            start = end
        return res


def mesh_from_file(m: native.Mesh, name: str) -> Mesh:
    state = _SurfacesPass(m.surfaces, name)
    run_passes(
        state,
        _topology,
        _normals_and_tangents,
        _uvs_and_colors,
        _skin,
        _morphs,
        _surface_record,
    )
    return state.out


def _topology(p: _SurfacesPass) -> None:
    """Positions of every surface's coordinate vertices; a material slot per surface."""
    surfs = p.surfs
    empty3 = np.zeros((0, 3), np.float32)
    positions = np.concatenate([s.targets[0].positions if s.targets else empty3 for s in surfs])
    corner_verts = np.concatenate(
        [s.coords + p.coord_off[i] for i, s in enumerate(surfs)] or [np.zeros(0, np.int64)]
    )
    p.corner_sv = np.concatenate(
        [s.tris + p.sv_off[i] for i, s in enumerate(surfs)] or [np.zeros(0, np.int64)]
    )
    face_materials = np.concatenate(
        [np.full(len(s.tris) // 3, i, np.int32) for i, s in enumerate(surfs)]
        or [np.zeros(0, np.int32)]
    )
    p.out = Mesh(
        name=p.name,
        positions=positions.astype(np.float32, copy=False),
        corner_verts=corner_verts.astype(np.int32),
        face_starts=np.arange(0, len(corner_verts), 3, dtype=np.int32),
        face_materials=face_materials,
        materials=[s.name for s in surfs],
    )


def _has_tangents(s: native.Surface) -> bool:
    return bool(s.targets) and len(s.targets[0].tangents) > 0


def _normals_and_tangents(p: _SurfacesPass) -> None:
    """Normals from the tangent quaternions (face normals on surfaces without), and the
    quaternions themselves; then the surface vertex of each corner."""
    out = p.out
    if any(_has_tangents(s) for s in p.surfs):
        normals = np.empty((p.n_corners, 3), np.float32)
        start = 0
        for s in p.surfs:
            end = start + len(s.tris)
            if _has_tangents(s):
                normals[start:end] = tangent_normals(s.targets[0].tangents)[s.tris]
            else:
                normals[start:end] = _face_normals(out.positions, out.corner_verts[start:end])
            start = end
        out.normals = normals
        tangents = p.per_corner(lambda s: s.targets[0].tangents if s.targets else None, 4, 0.0)
        out.attributes.append(Attribute(TANGENT_ATTRIBUTE, "CORNER", "FLOAT_COLOR", tangents))
    out.attributes.append(
        Attribute(VERTEX_ATTRIBUTE, "CORNER", "INT", p.corner_sv.astype(np.int32))
    )


def _uvs_and_colors(p: _SurfacesPass) -> None:
    for k, attr in enumerate(("uv0", "uv1")):
        if any(len(getattr(s, attr)) for s in p.surfs):
            p.out.uv_sets.append(
                UVSet(UV_NAMES[k], p.per_corner(lambda s, a=attr: getattr(s, a), 2, 0.0))
            )
    if any(len(s.colors) for s in p.surfs):
        col = p.per_corner(lambda s: s.colors, 4, 255, np.uint8)
        p.out.colors.append(ColorSet(COLOR_NAME, col.astype(np.float32) / 255.0, True))


def _skin(p: _SurfacesPass) -> None:
    """Weights per coordinate vertex, as many per vertex as the most any surface has."""
    if not any(len(s.weights) for s in p.surfs):
        return
    k = max(int(s.weights.counts.max(initial=0)) for s in p.surfs)
    k = max(k, 1)
    joints = np.zeros((p.n_vertices, k), np.int32)
    weights = np.zeros((p.n_vertices, k), np.float32)
    for i, s in enumerate(p.surfs):
        if len(s.weights):
            j, w = s.weights.padded(k)
            joints[p.coord_off[i] : p.coord_off[i + 1]] = j
            weights[p.coord_off[i] : p.coord_off[i + 1]] = w / 65535.0
    p.out.skin = Skin(joints, weights)


def _morphs(p: _SurfacesPass) -> None:
    """A shape key per morph target name, in the order the surfaces first list them."""
    morph_names: list[str] = []
    for s in p.surfs:
        for t in s.targets[1:]:
            if t.name not in morph_names:
                morph_names.append(t.name)
    for mname in morph_names:
        offsets = np.zeros((p.n_vertices, 3), np.float32)
        for i, s in enumerate(p.surfs):
            for t in s.targets[1:]:
                if t.name == mname:
                    offsets[p.coord_off[i] : p.coord_off[i + 1]] = morph_offsets(
                        s.targets[0].positions, t.positions
                    )
                    break
        p.out.morphs.append(MorphTarget(mname, offsets))
        _morph_tangents(p, mname)


def _morph_tangents(p: _SurfacesPass, mname: str) -> None:
    """A morph target's own tangents, kept only where they differ from the base tangents."""

    def own_tangents(s: native.Surface):
        for t in s.targets[1:]:
            if t.name == mname:
                return t.tangents
        return s.targets[0].tangents if s.targets else None

    own = [own_tangents(s) for s in p.surfs]
    if any(
        t is not None and s.targets and not np.array_equal(t, s.targets[0].tangents)
        for s, t in zip(p.surfs, own, strict=True)
    ):
        p.out.attributes.append(
            Attribute(
                MORPH_TANGENT.format(mname),
                "CORNER",
                "FLOAT_COLOR",
                p.per_corner(own_tangents, 4, 0.0),
            )
        )


def _surface_record(p: _SurfacesPass) -> None:
    """Each surface's morph target list and which optional arrays it had."""
    p.out.extras[SURFACES_KEY] = json.dumps(
        [
            {
                "name": s.name,
                "targets": [t.name for t in s.targets],
                "tangents": [len(t.tangents) > 0 for t in s.targets],
                "uv0": len(s.uv0) > 0,
                "uv1": len(s.uv1) > 0,
                "colors": len(s.colors) > 0,
                "weights": len(s.weights) > 0,
            }
            for s in p.surfs
        ]
    )


def _parent_first(scene: Scene) -> None:
    """Put the bones parent-first (depth first, children in file order): the order
    Blender keeps them in, so bone indices mean the same on both sides. Each bone
    keeps its file index as ``unigine_index`` for the exporter."""
    scene.skeleton, place = scene.skeleton.reordered(parent_first_order(scene.skeleton.parents))
    for me in scene.meshes:
        if me.skin is not None:
            me.skin.joints = place[me.skin.joints].astype(np.int32)


def import_mesh(m: native.Mesh, name: str, fps: float = FRAME_RATE) -> Scene:
    """The file as a neutral scene; embedded animations become animations at ``fps``."""
    skeleton = skeleton_from_file(m.bones, m.bind)
    scene = Scene(name, skeleton, [mesh_from_file(m, name)])
    scene.meshes[0].extras[KEPT_KEY] = record(m)
    if skeleton is not None:
        _parent_first(scene)
    names = [b.name for b in m.bones]
    scene.animations = [mesh_animation_to_neutral(a, names, m.bind, fps) for a in m.animations]
    if m.animations:
        scene.extras[ANIMATIONS_KEY] = json.dumps([a.name for a in m.animations])
    return scene
