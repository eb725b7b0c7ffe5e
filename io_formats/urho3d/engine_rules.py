"""What the Urho3D engine needs of a model beyond a well-formed file.

A file can parse and still draw wrong: the engine's loader and its morph and
skinning code trust several relations between the parts of a model. These
are the facts this check holds a model to (Urho3D's ``Model``,
``VertexBuffer``, ``Geometry`` and ``AnimatedModel``, and rbfx's
``ModelView``):

- Vertex morphs are applied only to vertex buffers whose morph range count is
  above 0. The engine copies the range [start, start + count) into a dynamic
  buffer and writes each morph vertex at ``index - start`` inside it, so every
  morph vertex must lie in that range.
- A morph's data is read by its element mask (positions, normals, tangents),
  and applied through the mask it shares with its buffer: a bit the buffer
  lacks (or a bit other than those three) puts the morph data out of step.
- Skinning uploads one matrix per bone for a draw. GL2, GLES (mobile) and D3D9
  take at most 64 (``MAX_SKIN_MATRICES``); rbfx on GL3/D3D11 takes 128. Models
  with more bones give each geometry a bone mapping (a palette of global bone
  indices) and blend indices local to it. When any geometry has a mapping the
  engine skins every geometry through its own mapping, so a skinned geometry
  without one gets no matrices.
- Index sizes are 2 or 4 bytes; each draw range lies inside its index buffer,
  is whole primitives, and its indices lie inside its vertex buffer (the
  engine derives each draw's vertex range from the indices it uses).
"""

from __future__ import annotations

import numpy as np

from .mdl import PRIMITIVE_LINES, PRIMITIVE_TRIANGLES, Model, VertexBuffer
from .vertex_layout import (
    MASK_NORMAL,
    MASK_POSITION,
    MASK_TANGENT,
    SEM_BLENDINDICES,
    SEM_BLENDWEIGHTS,
    SEM_NORMAL,
    SEM_POSITION,
    SEM_TANGENT,
    TYPE_UBYTE4,
    TYPE_VECTOR3,
    TYPE_VECTOR4,
    VertexElement,
    field_names,
)

SKIN_MATRICES_EVERYWHERE = 64  # GL2, GLES (mobile), D3D9
SKIN_MATRICES_GL3_D3D11 = 128  # rbfx's larger palette on GL3 and D3D11
MORPH_MASK = MASK_POSITION | MASK_NORMAL | MASK_TANGENT
_MORPH_ELEMENTS = {
    MASK_POSITION: VertexElement(TYPE_VECTOR3, SEM_POSITION),
    MASK_NORMAL: VertexElement(TYPE_VECTOR3, SEM_NORMAL),
    MASK_TANGENT: VertexElement(TYPE_VECTOR4, SEM_TANGENT),
}
_BLEND_INDICES = VertexElement(TYPE_UBYTE4, SEM_BLENDINDICES)
_BLEND_WEIGHTS = VertexElement(TYPE_VECTOR4, SEM_BLENDWEIGHTS)


def morph_mask_of(vb: VertexBuffer) -> int:
    """The morphable elements (position, normal, tangent) the buffer has."""
    return sum(bit for bit, e in _MORPH_ELEMENTS.items() if e in vb.elements)


def _column(vb: VertexBuffer, element: VertexElement, legacy: bool) -> np.ndarray | None:
    if element not in vb.elements:
        return None
    names = field_names(vb.elements, legacy)
    return vb.data[names[vb.elements.index(element)]]


def check(model: Model, bone_limit: int = SKIN_MATRICES_EVERYWHERE) -> list[str]:
    """Every way ``model`` breaks the engine's rules, as sentences; empty when none.

    ``bone_limit`` is the number of skin matrices one draw may use: 64 for a
    model every Urho3D build draws, 128 for rbfx on GL3/D3D11 only."""
    out = _index_rules(model)
    out += _morph_rules(model)
    out += _skin_rules(model, bone_limit)
    return out


def _draw_indices(model: Model, g: int, lod: int) -> np.ndarray:
    d = model.geometries[g].lods[lod]
    return model.index_buffers[d.index_buffer].indices[
        d.index_start : d.index_start + d.index_count
    ]


def _index_rules(model: Model) -> list[str]:
    out = []
    for k, ib in enumerate(model.index_buffers):
        if ib.index_size not in (2, 4):
            out.append(
                f"index buffer {k} has {ib.index_size}-byte indices; the engine takes 2 or 4"
            )
    for g, geo in enumerate(model.geometries):
        if not geo.lods:
            out.append(f"geometry {g} has no LOD levels: the engine draws nothing for it")
        for lod, d in enumerate(geo.lods):
            where = f"geometry {g} LOD {lod}"
            if d.primitive_type not in (PRIMITIVE_TRIANGLES, PRIMITIVE_LINES):
                out.append(f"{where} has primitive type {d.primitive_type}; expected 0 or 1")
                continue
            if d.vertex_buffer >= len(model.vertex_buffers):
                out.append(f"{where} refers to vertex buffer {d.vertex_buffer}, which is absent")
                continue
            if d.index_buffer >= len(model.index_buffers):
                out.append(f"{where} refers to index buffer {d.index_buffer}, which is absent")
                continue
            n_idx = len(model.index_buffers[d.index_buffer].indices)
            if d.index_start + d.index_count > n_idx:
                out.append(
                    f"{where} draws indices {d.index_start}+{d.index_count}, beyond the "
                    f"{n_idx} of index buffer {d.index_buffer}"
                )
                continue
            per = 3 if d.primitive_type == PRIMITIVE_TRIANGLES else 2
            if d.index_count % per:
                out.append(f"{where} draws {d.index_count} indices, not whole primitives of {per}")
            idx = _draw_indices(model, g, lod)
            n_vertices = model.vertex_buffers[d.vertex_buffer].count
            if len(idx) and int(idx.max()) >= n_vertices:
                out.append(
                    f"{where} uses vertex {int(idx.max())}, beyond the {n_vertices} of "
                    f"vertex buffer {d.vertex_buffer}"
                )
    return out


def _morph_rules(model: Model) -> list[str]:
    out = []
    for k, vb in enumerate(model.vertex_buffers):
        if vb.morph_count and vb.morph_start + vb.morph_count > vb.count:
            out.append(
                f"vertex buffer {k}'s morph range {vb.morph_start}+{vb.morph_count} goes "
                f"beyond its {vb.count} vertices"
            )
    for m in model.morphs:
        for mb in m.buffers:
            where = f"morph {m.name!r} on vertex buffer {mb.vertex_buffer}"
            if mb.vertex_buffer >= len(model.vertex_buffers):
                out.append(f"{where}: the buffer is absent")
                continue
            vb = model.vertex_buffers[mb.vertex_buffer]
            if mb.mask & ~MORPH_MASK:
                out.append(
                    f"{where} has element mask 0x{mb.mask:X}; morphs hold only positions, "
                    "normals and tangents (0x83)"
                )
            missing = mb.mask & MORPH_MASK & ~morph_mask_of(vb)
            if missing:
                out.append(
                    f"{where} has element mask 0x{mb.mask:X}, which the buffer lacks "
                    f"(0x{missing:X}): the engine reads the morph data out of step"
                )
            if not len(mb.data):
                continue
            if not vb.morph_count:
                out.append(
                    f"{where}: the buffer's morph range is empty (count 0), so the engine "
                    "never applies the morph"
                )
                continue
            idx = mb.data["index"].astype(np.int64)
            outside = (idx < vb.morph_start) | (idx >= vb.morph_start + vb.morph_count)
            if outside.any():
                out.append(
                    f"{where}: {int(outside.sum())} of its {len(idx)} vertices (e.g. "
                    f"{int(idx[outside][0])}) lie outside the buffer's morph range "
                    f"[{vb.morph_start}, {vb.morph_start + vb.morph_count})"
                )
    return out


def _skin_rules(model: Model, bone_limit: int) -> list[str]:
    if not model.bones:
        return []
    legacy = model.magic == b"UMDL"
    n_bones = len(model.bones)
    mapped = any(len(g.bone_mapping) for g in model.geometries)
    out = []
    if not mapped and n_bones > bone_limit:
        skinned = [
            g
            for g, geo in enumerate(model.geometries)
            if any(
                d.vertex_buffer < len(model.vertex_buffers)
                and _BLEND_INDICES in model.vertex_buffers[d.vertex_buffer].elements
                for d in geo.lods
            )
        ]
        if skinned:
            out.append(
                f"the model has {n_bones} bones and no bone mappings: each draw uploads "
                f"{n_bones} skin matrices, more than the {bone_limit} the engine takes "
                f"(64 on GL2, GLES and D3D9; 128 on GL3/D3D11)"
            )
    for g, geo in enumerate(model.geometries):
        palette = len(geo.bone_mapping) if mapped else n_bones
        if mapped and len(geo.bone_mapping) > bone_limit:
            out.append(
                f"geometry {g}'s bone mapping has {len(geo.bone_mapping)} bones, more than "
                f"the {bone_limit} skin matrices one draw takes"
            )
        for lod, d in enumerate(geo.lods):
            if d.vertex_buffer >= len(model.vertex_buffers):
                continue
            vb = model.vertex_buffers[d.vertex_buffer]
            joints = _column(vb, _BLEND_INDICES, legacy)
            if joints is None:
                continue
            weights = _column(vb, _BLEND_WEIGHTS, legacy)
            idx = _draw_indices(model, g, lod)
            idx = idx[idx < vb.count]
            used = np.zeros(vb.count, bool)
            used[idx] = True
            j = joints[used].astype(np.int64)
            live = weights[used] > 0 if weights is not None else np.ones(j.shape, bool)
            top = int(j[live].max(initial=-1))
            if top < 0:
                continue
            if mapped and not len(geo.bone_mapping):
                out.append(
                    f"geometry {g} is skinned but has no bone mapping while other geometries "
                    "have one: the engine gives it no skin matrices"
                )
                break
            if top >= palette:
                what = "its bone mapping's" if mapped else "the model's"
                out.append(
                    f"geometry {g} LOD {lod} has blend index {top}, beyond {what} {palette} bones"
                )
    return out
