"""Several neutral meshes as one (objects that export into one model or LOD).

Nothing is dropped silently: a UV or colour set that only some meshes have is
filled for the others (zeros, white) and a generic attribute that cannot be
joined is left out; each case comes back as a warning.
"""

from __future__ import annotations

import numpy as np

from .scene import Attribute, ColorSet, Mesh, MorphTarget, Skin, UVSet


def merge_meshes(
    meshes: list[Mesh], slot_attributes: tuple[str, ...] = ()
) -> tuple[Mesh, list[str]]:
    """One mesh whose material slots are the meshes' slots in order, and warnings.

    ``slot_attributes`` name integer attributes whose values are material slot
    indices (like ``face_materials``): they are offset the same way.
    """
    if len(meshes) == 1:
        return meshes[0], []
    warnings: list[str] = []
    v_off = np.cumsum([0] + [len(m.positions) for m in meshes])
    s_off = np.cumsum([0] + [max(len(m.materials), 1) for m in meshes])
    out = Mesh(
        meshes[0].name,
        np.concatenate([m.positions for m in meshes]),
        np.concatenate([m.corner_verts + v_off[i] for i, m in enumerate(meshes)]),
        np.zeros(0, np.int32),
        np.concatenate([m.face_materials + s_off[i] for i, m in enumerate(meshes)]),
        loose_edges=np.concatenate([m.loose_edges + v_off[i] for i, m in enumerate(meshes)]),
        materials=[n for m in meshes for n in (m.materials or [""])],
    )
    out.face_starts = np.arange(0, len(out.corner_verts), 3, dtype=np.int32)
    if all(m.normals is not None for m in meshes):
        out.normals = np.concatenate([m.with_corner_normals().normals for m in meshes])
    out.uv_sets = _uv_sets(meshes, warnings)
    out.colors = _color_sets(meshes, warnings)
    out.attributes = _attributes(meshes, warnings, slot_attributes, s_off)
    out.skin = _skin(meshes, warnings)
    out.morphs = _morphs(meshes, v_off)
    return out, warnings


def _uv_sets(meshes: list[Mesh], warnings: list[str]) -> list[UVSet]:
    n = max(len(m.uv_sets) for m in meshes)
    sets = []
    for i in range(n):
        parts = []
        for m in meshes:
            if i < len(m.uv_sets):
                parts.append(m.uv_sets[i].uv)
            else:
                warnings.append(f"{m.name}: no UV set {i + 1}; written as zeros")
                parts.append(np.zeros((len(m.corner_verts), 2), np.float32))
        name = next(m.uv_sets[i].name for m in meshes if i < len(m.uv_sets))
        sets.append(UVSet(name, np.concatenate(parts)))
    return sets


def _color_sets(meshes: list[Mesh], warnings: list[str]) -> list[ColorSet]:
    n = max(len(m.colors) for m in meshes)
    sets = []
    for i in range(n):
        first = next(m.colors[i] for m in meshes if i < len(m.colors))
        parts = []
        for m in meshes:
            if i < len(m.colors):
                parts.append(m.colors[i].color)
            else:
                warnings.append(f"{m.name}: no colour set {i + 1}; written as white")
                parts.append(np.ones((len(m.corner_verts), 4), np.float32))
        sets.append(ColorSet(first.name, np.concatenate(parts), first.byte))
    return sets


def _attributes(
    meshes: list[Mesh], warnings: list[str], slot_attributes: tuple[str, ...], s_off: np.ndarray
) -> list[Attribute]:
    kept = []
    names = dict.fromkeys(a.name for m in meshes for a in m.attributes)
    for name in names:
        found = [next((a for a in m.attributes if a.name == name), None) for m in meshes]
        first = next(a for a in found if a is not None)
        shape = (first.domain, first.type, first.data.shape[1:])
        if all(a is not None and (a.domain, a.type, a.data.shape[1:]) == shape for a in found):
            parts = [a.data for a in found]
            if name in slot_attributes:
                parts = [p + p.dtype.type(s_off[i]) for i, p in enumerate(parts)]
            data = np.concatenate(parts)
            kept.append(Attribute(name, first.domain, first.type, data))
        else:
            warnings.append(f"attribute {name!r} is not on every merged object alike; left out")
    return kept


def _skin(meshes: list[Mesh], warnings: list[str]) -> Skin | None:
    skinned = [m for m in meshes if m.skin is not None]
    if not skinned:
        return None
    k = max(m.skin.joints.shape[1] for m in skinned)
    joints, weights = [], []
    for m in meshes:
        nv = len(m.positions)
        j = np.zeros((nv, k), np.int32)
        w = np.zeros((nv, k), np.float32)
        if m.skin is None:
            warnings.append(f"{m.name}: not skinned; its vertices get no bone weights")
        else:
            kk = m.skin.joints.shape[1]
            j[:, :kk], w[:, :kk] = m.skin.joints, m.skin.weights
        joints.append(j)
        weights.append(w)
    return Skin(np.concatenate(joints), np.concatenate(weights))


def _morphs(meshes: list[Mesh], v_off: np.ndarray) -> list[MorphTarget]:
    """Morphs by name; a mesh without one has zero offsets in it."""
    names = dict.fromkeys(t.name for m in meshes for t in m.morphs)
    out = []
    for name in names:
        offsets = np.zeros((int(v_off[-1]), 3), np.float32)
        weight = 0.0
        for i, m in enumerate(meshes):
            for t in m.morphs:
                if t.name == name:
                    offsets[v_off[i] : v_off[i + 1]] = t.position_offsets
                    weight = t.default_weight
        out.append(MorphTarget(name, offsets, weight))
    return out
