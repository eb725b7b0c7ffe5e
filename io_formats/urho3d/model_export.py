"""Neutral meshes and skeleton -> Urho3D model.

An unchanged imported mesh comes back with its original buffers, draw ranges
and bone mappings (from the layout kept on the object); anything else gets a
fresh layout like Urho3D's AssetImporter writes: a vertex and an index buffer
per geometry, every LOD of a geometry in its index buffer.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from ..bounds import box
from ..codec import FormatError
from ..codec.errors import counted
from ..passes import run_passes
from ..scene import Mesh, MorphTarget, Skeleton
from . import axes
from .engine_rules import SKIN_MATRICES_EVERYWHERE, SKIN_MATRICES_GL3_D3D11
from .mdl import (
    PRIMITIVE_LINES,
    PRIMITIVE_TRIANGLES,
    Bone,
    Geometry,
    GeometryLod,
    IndexBuffer,
    Model,
    Morph,
    MorphBuffer,
    VertexBuffer,
)
from .model_import import (
    BONE_INDEX_KEY,
    GEOMETRY_ATTRIBUTE,
    MORPH_LISTED,
    MORPH_NORMAL,
    MORPH_POSITION,
    MORPH_TANGENT,
    NORMAL_ATTRIBUTE,
    SOURCE_ATTRIBUTE,
    TANGENT_ATTRIBUTE,
    UV_ATTRIBUTE,
    element_attribute,
)
from .vertex_layout import (
    LEGACY_ELEMENTS,
    MASK_NORMAL,
    MASK_POSITION,
    MASK_TANGENT,
    SEM_BLENDINDICES,
    SEM_BLENDWEIGHTS,
    SEM_COLOR,
    SEM_NORMAL,
    SEM_POSITION,
    SEM_TANGENT,
    SEM_TEXCOORD,
    TYPE_UBYTE4,
    TYPE_UBYTE4_NORM,
    TYPE_VECTOR2,
    TYPE_VECTOR3,
    TYPE_VECTOR4,
    VertexElement,
    field_names,
    mask_from_elements,
    morph_dtype,
    vertex_dtype,
)

COMPUTED_TANGENT = "rigport:tangent"  # per corner, Blender's tangent space


@dataclass
class ExportOptions:
    magic: bytes = b"UMD2"
    convert_axes: bool = True
    tangents: bool = True
    recompute_tangents: bool = False
    bone_limit: int = 64
    layout: dict | None = None  # model_layout() of the imported file, when unchanged
    lod_distances: dict[int, float] = field(default_factory=dict)
    #: what each material slot of the meshes is, for sentences ("object 'Body',
    #: material 'Skin'"); a slot past its end is named by its number and material
    slot_names: tuple[str, ...] = ()


def imported_bone_limit(layout: dict | None) -> int:
    """Skin matrices per draw as imported: 64 (every build), or 128 for a model
    that already skinned more than 64 bones in one draw (GL3/D3D11 only)."""
    palette = int((layout or {}).get("skin_palette", 0))
    if palette > SKIN_MATRICES_EVERYWHERE:
        return SKIN_MATRICES_GL3_D3D11
    return SKIN_MATRICES_EVERYWHERE


@dataclass
class _Draw:
    geometry: int
    lod: int
    primitive: int
    vertex_buffer: int
    candidates: np.ndarray  # structured vertex records (one per distinct vertex of the draw)
    sources: np.ndarray  # (n,) original vertex index in its buffer, -1 for new
    indices: np.ndarray  # (m,) into candidates
    # morph -> (n, 11): listed flag, position, normal, tangent, place in the file's list
    morph_rows: dict[int, np.ndarray] = field(default_factory=dict)
    out_index: np.ndarray | None = None  # indices into the assembled vertex buffer
    vertex_place: np.ndarray | None = None  # candidate -> place in the vertex buffer


def _attr(mesh: Mesh, name: str, domain: str = "POINT") -> np.ndarray | None:
    for a in mesh.attributes:
        if a.name == name and a.domain == domain:
            return a.dense(len(mesh.positions))
    return None


def fresh_elements(mesh: Mesh, skinned: bool, legacy: bool, tangents: bool) -> list[VertexElement]:
    """The elements AssetImporter would write for what the mesh has."""
    els = [VertexElement(TYPE_VECTOR3, SEM_POSITION), VertexElement(TYPE_VECTOR3, SEM_NORMAL)]
    if mesh.colors:
        els.append(VertexElement(TYPE_UBYTE4_NORM, SEM_COLOR))
    n_uv = min(len(mesh.uv_sets), 2 if legacy else 4)
    els += [VertexElement(TYPE_VECTOR2, SEM_TEXCOORD, i) for i in range(n_uv)]
    if tangents and n_uv:
        els.append(VertexElement(TYPE_VECTOR4, SEM_TANGENT))
    if skinned:
        els += [
            VertexElement(TYPE_VECTOR4, SEM_BLENDWEIGHTS),
            VertexElement(TYPE_UBYTE4, SEM_BLENDINDICES),
        ]
    if legacy:
        els.sort(key=LEGACY_ELEMENTS.index)
    return els


@dataclass
class _CornerData:
    """What the corner split reads: per-corner columns (``cols``); for some of
    them, the corners that hold their vertex's own value by construction
    (``kept_at``: no comparison needed there); and columns that are per vertex
    outright (``by_vertex``: a stored tangent, which never splits a vertex)."""

    cols: dict[str, np.ndarray] = field(default_factory=dict)
    kept_at: dict[str, np.ndarray] = field(default_factory=dict)
    by_vertex: dict[str, np.ndarray] = field(default_factory=dict)


def _corner_columns(mesh: Mesh, elements, opts: ExportOptions) -> _CornerData:
    """Per-corner values of the elements that live on corners in Blender."""
    data = _CornerData()
    cols = data.cols
    conv = opts.convert_axes
    for e in elements:
        key = e.key + f"_t{e.type}"
        if e.semantic == SEM_NORMAL and e.index == 0 and e.type == TYPE_VECTOR3:
            if mesh.normals is not None:
                normals, kept_at = _kept_normals(mesh)
                cols[key] = axes.vectors(normals, conv).astype(np.float32, copy=False)
                if kept_at is not None:
                    data.kept_at[key] = kept_at
        elif e.semantic == SEM_TEXCOORD and e.type == TYPE_VECTOR2 and e.index < len(mesh.uv_sets):
            cols[key] = _corner_uvs(mesh, e.index, data, key)
        elif e.semantic == SEM_COLOR and e.type in (TYPE_UBYTE4_NORM, TYPE_VECTOR4):
            if e.index < len(mesh.colors):
                c = mesh.colors[e.index].color
                cols[key] = (
                    np.clip(np.rint(c * 255), 0, 255).astype(np.uint8)
                    if e.type == TYPE_UBYTE4_NORM
                    else c.astype(np.float32)
                )
        elif e.semantic == SEM_TANGENT and e.index == 0 and e.type == TYPE_VECTOR4:
            stored = _attr(mesh, TANGENT_ATTRIBUTE)
            computed = _attr(mesh, COMPUTED_TANGENT, "CORNER")
            if stored is not None and not opts.recompute_tangents:
                data.by_vertex[key] = axes.tangents(stored, conv).astype(np.float32)
            elif computed is not None:
                cols[key] = _engine_tangents(computed, conv)
    return data


def _corner_uvs(mesh: Mesh, index: int, data: _CornerData, key: str) -> np.ndarray:
    """UV set ``index`` per corner, V flipped into the engine's direction; the
    file's own values (kept per vertex) where Blender's are unedited, and those
    corners marked in ``data.kept_at`` (every corner of an unedited mesh)."""
    held = mesh.uv_sets[index].uv.astype(np.float32, copy=False)
    kept = _attr(mesh, UV_ATTRIBUTE.format(index))
    same = None
    if kept is not None:
        kept = np.take(kept, mesh.corner_verts, axis=0).astype(np.float32, copy=False)
        flip = np.float32(1.0) - kept[:, 1]
        same = (kept[:, 0] == held[:, 0]) & (flip == held[:, 1])
        data.kept_at[key] = same
        if same.all():
            return kept
    uv = held.copy()
    uv[:, 1] = 1.0 - uv[:, 1]
    return uv if same is None else np.where(same[:, None], kept, uv)


def _engine_tangents(computed: np.ndarray, convert: bool) -> np.ndarray:
    """Blender's tangents (bitangent = w * normal x tangent) as the engine's
    (bitangent = w * tangent x normal: Urho3D's shaders). Swapped factors turn
    the cross product round, and so does the mirror of the axes: w stays when
    the axes are converted, and turns when they are not. With the axes
    converted, the tangents AssetImporter wrote into the stock models come
    back sign for sign."""
    out = np.array(computed, np.float32)
    out[:, :3] = axes.vectors(out[:, :3], convert)
    if not convert:
        out[:, 3] = -out[:, 3]
    return out


def _kept_normals(mesh: Mesh) -> tuple[np.ndarray, np.ndarray | None]:
    """Blender's corner normals, or the file's own where they still agree (unedited)
    or where Blender has none to give (corners of degenerate triangles, whose
    custom normals Blender cannot hold: their length is not 1); and the corners
    given the file's own (None: no file normals are kept)."""
    stored = _attr(mesh, NORMAL_ATTRIBUTE)
    if stored is None:
        return mesh.normals, None
    per_corner = np.take(stored, mesh.corner_verts, axis=0)
    normals = mesh.normals
    with np.errstate(invalid="ignore"):
        close = np.abs(per_corner[:, 0] - normals[:, 0]) <= 0.05
        for c in (1, 2):
            close &= np.abs(per_corner[:, c] - normals[:, c]) <= 0.05
    far = np.flatnonzero(~close)
    if len(far):
        close[far] = unheld_normals(normals[far])
    return np.where(close[:, None], per_corner, normals), close


def unheld_normals(normals: np.ndarray) -> np.ndarray:
    """Per corner: Blender holds no usable normal there (degenerate triangles)."""
    length = np.sqrt(np.einsum("ij,ij->i", normals, normals))  # linalg.norm, 4x faster
    return np.abs(length - 1.0) > 1e-3


def _skin_columns(mesh: Mesh, mapping: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(V, 4) weights and blend indices local to ``mapping`` (empty = global)."""
    n = len(mesh.positions)
    if mesh.skin is None:
        return np.zeros((n, 4), np.float32), np.zeros((n, 4), np.uint8)
    joints = mesh.skin.joints[:, :4]
    weights = mesh.skin.weights[:, :4].astype(np.float32)
    pad = 4 - joints.shape[1]
    if pad:
        joints = np.pad(joints, ((0, 0), (0, pad)))
        weights = np.pad(weights, ((0, 0), (0, pad)))
    if len(mapping):
        lookup = np.zeros(max(int(mapping.max()), int(joints.max(initial=0))) + 1, np.int64)
        lookup[mapping] = np.arange(len(mapping))
        joints = lookup[joints]
    joints = np.where(weights > 0, joints, 0)
    return weights, joints.astype(np.uint8)


def _held_joints(weights: np.ndarray, joints: np.ndarray) -> np.ndarray:
    """The joints of the slots that hold a weight; the others past every joint."""
    return np.where(weights > 0, joints.astype(np.int64), 1 << 20)


def _same_influences(wa: np.ndarray, ja: np.ndarray, wb: np.ndarray, jb: np.ndarray) -> np.ndarray:
    """Per vertex: the same joints with the same weights (within 1e-6), whatever
    their slots. Vertices whose slots already agree one by one need no sorting
    (sorting both by the same joints keeps them agreeing); only the rest are put
    into joint order."""
    ha, hb = _held_joints(wa, ja), _held_joints(wb, jb)
    same = np.all(ha == hb, axis=1) & np.all(np.abs(wa - wb) <= 1e-6, axis=1)
    rest = np.flatnonzero(~same)
    if len(rest):
        oa = np.argsort(ha[rest], axis=1, kind="stable")
        ob = np.argsort(hb[rest], axis=1, kind="stable")
        same[rest] = np.all(
            np.take_along_axis(ha[rest], oa, 1) == np.take_along_axis(hb[rest], ob, 1), axis=1
        ) & np.all(
            np.abs(np.take_along_axis(wa[rest], oa, 1) - np.take_along_axis(wb[rest], ob, 1))
            <= 1e-6,
            axis=1,
        )
    return same


def _kept_skin(mesh: Mesh, weights: np.ndarray, joints: np.ndarray):
    """The file's own slot order per vertex where its influences are unchanged."""
    raw_w = _attr(mesh, element_attribute(VertexElement(TYPE_VECTOR4, SEM_BLENDWEIGHTS)))
    raw_j = _attr(mesh, element_attribute(VertexElement(TYPE_UBYTE4, SEM_BLENDINDICES)))
    if raw_w is None or raw_j is None or len(raw_w) != len(weights):
        return weights, joints
    raw_j = np.ascontiguousarray(raw_j, "<i4").view(np.uint8).reshape(-1, 4)
    # compared as the import gave them to Blender: NaN, infinite and non-positive
    # weights reached no group, and the file's own values go back where the rest hold
    given = np.where(np.isfinite(raw_w) & (raw_w > 0), raw_w, np.float32(0))
    total = given.sum(axis=1, keepdims=True)
    norm_w = np.divide(given, total, out=np.zeros_like(given), where=total > 0)
    same = _same_influences(norm_w, raw_j, weights, joints)
    return (
        np.where(same[:, None], raw_w, weights).astype(np.float32),
        np.where(same[:, None], raw_j, joints).astype(np.uint8),
    )


def _vertex_value(mesh: Mesh, e: VertexElement, opts: ExportOptions) -> np.ndarray | None:
    """Per-vertex values for elements that live on points."""
    if e.semantic == SEM_POSITION and e.index == 0 and e.type == TYPE_VECTOR3:
        return axes.vectors(mesh.positions, opts.convert_axes).astype(np.float32)
    data = _attr(mesh, element_attribute(e))
    if data is None:
        return None
    if e.type in (TYPE_UBYTE4, TYPE_UBYTE4_NORM):
        return np.ascontiguousarray(data, "<i4").view(np.uint8).reshape(-1, 4)
    return data


def _draw_candidates(s: _ModelPass, g: int, lod: int, prim: int) -> _Draw:
    """The distinct vertices of geometry ``g``'s draw at ``lod``, as vertex records."""
    mesh = s.meshes[lod]
    vb = s.draw_vb[(g, lod)]
    elements = s.vb_elements[vb]
    corner_data = _corner_columns(mesh, elements, s.opts)
    verts, corners = _draw_vertices(mesh, g, prim, s.opts.convert_axes)
    weights, joints = _skin_columns(mesh, s.mappings[g])
    # One row of per-corner data per corner; a vertex splits where its rows differ.
    corner_cols = corner_data.cols
    corner_keys = [k for k in (e.key + f"_t{e.type}" for e in elements) if k in corner_cols]
    if corners is not None and corner_keys:
        rep_corner, rep_vert, indices = _split_corners(
            verts, corners, corner_keys, corner_cols, corner_data.kept_at
        )
    else:
        pick, indices = _first_seen(verts, int(verts.max()) + 1 if len(verts) else 0)
        rep_vert = verts[pick]
        rep_corner = None
    weights, joints = _kept_skin(mesh, weights, joints)
    rec = np.zeros(len(rep_vert), vertex_dtype(elements, s.legacy))
    names = field_names(elements, s.legacy)
    for name, e in zip(names, elements, strict=True):
        key = e.key + f"_t{e.type}"
        if e.semantic == SEM_BLENDWEIGHTS and e.index == 0 and e.type == TYPE_VECTOR4:
            rec[name] = np.take(weights, rep_vert, axis=0)
        elif e.semantic == SEM_BLENDINDICES and e.index == 0 and e.type == TYPE_UBYTE4:
            rec[name] = np.take(joints, rep_vert, axis=0)
        elif rep_corner is not None and key in corner_cols:
            rec[name] = np.take(corner_cols[key], rep_corner, axis=0)
        elif rep_corner is not None and key in corner_data.by_vertex:
            rec[name] = np.take(corner_data.by_vertex[key], rep_vert, axis=0)
        else:
            value = _vertex_value(mesh, e, s.opts)
            if value is not None:
                rec[name] = np.take(value, rep_vert, axis=0)
    src = _attr(mesh, SOURCE_ATTRIBUTE)
    sources = src[rep_vert].astype(np.int64) if src is not None else np.full(len(rep_vert), -1)
    draw = _Draw(g, lod, prim, vb, rec, sources, indices.astype(np.int64))
    draw.morph_rows = _morph_rows(mesh, rep_vert, s.opts)
    return draw


def _draw_vertices(
    mesh: Mesh, g: int, prim: int, convert: bool
) -> tuple[np.ndarray, np.ndarray | None]:
    """The vertex of each corner (triangles) or edge end (lines) of geometry ``g``; the
    corners themselves for triangles, rewound into the engine's order when ``convert``
    mirrors the axes."""
    if prim == PRIMITIVE_TRIANGLES:
        tri = np.nonzero(mesh.face_materials == g)[0]
        corners = axes.rewind((tri[:, None] * 3 + np.arange(3)).reshape(-1), convert)
        return mesh.corner_verts[corners], corners
    geo = _attr(mesh, GEOMETRY_ATTRIBUTE, "EDGE")
    sel = (geo == g) if geo is not None else np.ones(len(mesh.loose_edges), bool)
    return mesh.loose_edges[sel].reshape(-1), None


def rewind_mesh(mesh: Mesh) -> None:
    """Swap every triangle's second and third corners and their per-corner data,
    in place: a triangle mesh whose corners are in the file's order (a .blend
    saved before imports rewound them) into Blender's, or a mesh mirrored by
    its placement back to facing out."""
    order = axes.rewind(np.arange(len(mesh.corner_verts)), True)
    mesh.corner_verts = mesh.corner_verts[order]
    if mesh.normals is not None:
        mesh.normals = mesh.normals[order]
    for uv_set in mesh.uv_sets:
        uv_set.uv = uv_set.uv[order]
    for color_set in mesh.colors:
        color_set.color = color_set.color[order]
    for attr in mesh.attributes:
        if attr.domain == "CORNER":
            attr.data = attr.data[order]


def _first_seen(ids: np.ndarray, bound: int) -> tuple[np.ndarray, np.ndarray]:
    """(first position of each distinct id, in order of first appearance; each
    position's rank in that order) for ids in ``[0, bound)``: what ``np.unique``
    with a stable argsort of first indices gives, without sorting every id."""
    n = len(ids)
    first = np.full(bound, n, np.int64)
    first[ids[::-1]] = np.arange(n - 1, -1, -1)  # the last write (smallest) wins
    pick = np.sort(first[first < n])
    rank = np.empty(bound, np.int64)
    rank[ids[pick]] = np.arange(len(pick))
    return pick, rank[ids]


def _packed_rows(cols, keys, corners) -> np.ndarray:
    """The corners' data of ``keys`` side by side, one row of uint64 words per
    corner (every column is whole 4-byte words: float32, int32 or 4 x uint8)."""
    n = len(corners)
    words = [_words(cols[k]) for k in keys]
    words = [w.reshape(len(w), -1).view(np.uint32) for w in words]
    width = sum(w.shape[1] for w in words)
    rows = np.zeros((n, width + width % 2), np.uint32)
    at = 0
    for w in words:
        rows[:, at : at + w.shape[1]] = np.take(w, corners, axis=0)
        at += w.shape[1]
    return rows.view(np.uint64)


def _words(col: np.ndarray) -> np.ndarray:
    """A column's rows as unsigned words, bit for bit: one uint64 (or uint32) per
    row where a row is 8 (or 4) bytes, else rows of them."""
    a = np.ascontiguousarray(col)
    size = a.itemsize * (a.size // len(a) if len(a) else 1)
    word = np.uint64 if size % 8 == 0 else np.uint32
    w = a.view(word).reshape(len(a), -1)
    return w[:, 0] if w.shape[1] == 1 else w


def _differs(words: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Rows ``a`` and ``b`` of ``words`` are not bit for bit the same (column by
    column: ``any(axis=1)`` over millions of short rows is slow)."""
    x, y = np.take(words, a, axis=0), np.take(words, b, axis=0)
    if x.ndim == 1:
        return x != y
    out = x[:, 0] != y[:, 0]
    for c in range(1, x.shape[1]):
        out |= x[:, c] != y[:, c]
    return out


def _unlike_first(verts, corners, ref, keys, cols, kept_at) -> np.ndarray:
    """Per corner: its data differs bit for bit from its vertex's first corner's.
    A column that holds the vertex's own value at some corners (``kept_at``) is
    compared only where one of the two corners does not."""
    out = np.zeros(len(corners), bool)
    first = corners[ref]
    for k in keys:
        mask = kept_at.get(k)
        if mask is None:
            out |= _differs(_words(cols[k]), corners, first)
            continue
        check = np.flatnonzero(~(np.take(mask, corners) & np.take(mask, first)))
        if len(check):
            out[check] |= _differs(_words(cols[k]), corners[check], first[check])
    return out


def _split_corners(verts, corners, keys, cols, kept_at=None):
    """One vertex per Blender vertex and distinct corner data.

    Corners whose data is within a tolerance of the vertex's first corner (the
    small noise of Blender's custom normal encoding) count as that corner, so
    an unchanged mesh keeps its vertex count; real seams still split. Corners
    whose data is bit for bit their vertex's first corner's are the same vertex
    at once (all of them in an unedited mesh, whose split is then one pass over
    the vertex ids); only the others are compared with the tolerance and grouped.
    ``kept_at`` is :attr:`_CornerData.kept_at`.
    """
    nv = int(verts.max()) + 1 if len(verts) else 0
    n = len(corners)
    first_corner = np.empty(nv, np.int64)
    first_corner[verts[::-1]] = np.arange(n - 1, -1, -1)  # the last write (smallest) wins
    ref = first_corner[verts]
    near = np.flatnonzero(_unlike_first(verts, corners, ref, keys, cols, kept_at or {}))
    ids = verts.astype(np.int64)
    if len(near):
        same = np.ones(len(near), bool)
        for k in keys:
            a = np.take(cols[k], corners[near], axis=0)
            b = np.take(cols[k], corners[ref[near]], axis=0)
            tol = 2e-4 if k.startswith(("normal", "tangent")) else 1e-6
            if a.dtype.kind == "f":
                same &= np.all(np.abs(a - b) <= tol, axis=1)
            else:
                same &= np.all(a == b, axis=1)
        # Corners like their vertex's first corner share the vertex's id; only the
        # others (seams) are grouped by their data.
        diff = near[~same]
        if len(diff):
            rows = _packed_rows(cols, keys, corners[diff])
            keyed = np.concatenate([verts[diff].astype(np.uint64)[:, None], rows], axis=1)
            void = np.ascontiguousarray(keyed).view(np.dtype((np.void, keyed.shape[1] * 8)))
            _, dinv = np.unique(void.reshape(-1), return_inverse=True)
            ids[diff] = nv + dinv.reshape(-1)
    pick, indices = _first_seen(ids, int(ids.max()) + 1 if n else 0)
    return corners[pick], verts[pick], indices


def _morph_rows(mesh: Mesh, rep_vert: np.ndarray, opts: ExportOptions) -> dict[int, np.ndarray]:
    # The kept normal/tangent deltas and vertex lists are numbered by the file's
    # morph order: find each shape key's by its name (keys may have been removed,
    # reordered or added since the import).
    file_index = {i: i for i in range(len(mesh.morphs))}
    if opts.layout is not None:
        names = [m.get("name") for m in opts.layout.get("morphs", [])]
        file_index = {i: names.index(m.name) for i, m in enumerate(mesh.morphs) if m.name in names}
    rows = {}
    for i, m in enumerate(mesh.morphs):
        j = file_index.get(i, -1)
        pos = axes.vectors(_morph_offsets(mesh, m, j)[rep_vert], opts.convert_axes)
        nor = _attr(mesh, MORPH_NORMAL.format(j))
        tan = _attr(mesh, MORPH_TANGENT.format(j))
        listed = _attr(mesh, MORPH_LISTED.format(j))
        nor = np.zeros_like(pos) if nor is None else axes.vectors(nor[rep_vert], opts.convert_axes)
        tan = np.zeros_like(pos) if tan is None else axes.vectors(tan[rep_vert], opts.convert_axes)
        row = np.empty((len(rep_vert), 11), np.float64)  # flag, pos, nor, tan, place
        row[:, 1:4], row[:, 4:7], row[:, 7:10] = pos, nor, tan
        row[:, 10] = 0 if listed is None else listed[rep_vert]
        row[:, 0] = np.any(row[:, 1:] != 0, axis=1)
        rows[i] = row
    return rows


def _morph_offsets(mesh: Mesh, morph: MorphTarget, j: int) -> np.ndarray:
    """A shape key's offsets per vertex: the file's own (kept at import for the
    file's morph ``j``) where Blender's offset is still what the key, built from
    them on the same basis, gives back; Blender's everywhere else (an edited key
    or basis vertex, a moved or transformed mesh)."""
    n = len(mesh.positions)
    held = np.asarray(morph.dense(n), np.float32)
    kept = _attr(mesh, MORPH_POSITION.format(j))
    if kept is None:
        return held
    kept = kept.astype(np.float32, copy=False)
    base = np.asarray(mesh.positions, np.float32)
    with np.errstate(all="ignore"):
        same = np.all((base + kept) - base == held, axis=1)
    return np.where(same[:, None], kept, held)


def _used_bones(mesh: Mesh, verts: np.ndarray) -> np.ndarray:
    """The bones weighting ``verts``, ascending: each vertex once (not once per
    corner), counted instead of sorted."""
    if mesh.skin is None or not len(verts):
        return np.zeros(0, np.int64)
    on = np.zeros(len(mesh.skin.joints), bool)
    on[verts] = True
    j = mesh.skin.joints[on][mesh.skin.weights[on] > 0].astype(np.int64)
    if not len(j) or j.min() < 0:
        return np.unique(j)
    return np.flatnonzero(np.bincount(j))


def _geometry_plan(lods: list[tuple[int, Mesh]]) -> tuple[list[tuple[int, int, int]], list[str]]:
    """(geometry, lod, primitive) for every draw the meshes hold, in geometry order,
    and a sentence per level whose loose edges are left out: a geometry draws one
    primitive type per level, so edges in a slot that also has faces (as a Delete
    Faces leaves them) are not drawn; a slot of edges only draws lines."""
    plan = set()
    notes = []
    for lod, mesh in lods:
        faces = set(np.unique(mesh.face_materials).tolist())
        for g in faces:
            plan.add((g, lod, PRIMITIVE_TRIANGLES))
        if not len(mesh.loose_edges):
            continue
        geo = _attr(mesh, GEOMETRY_ATTRIBUTE, "EDGE")
        geo = geo if geo is not None else np.zeros(len(mesh.loose_edges), np.int64)
        for g in np.unique(geo).tolist():
            if g not in faces:
                plan.add((g, lod, PRIMITIVE_LINES))
        dropped = int(np.isin(geo, list(faces)).sum())
        if dropped:
            notes.append(
                f"LOD {lod}: {counted(dropped, 'loose edge')} left out (a Urho3D geometry draws "
                "either triangles or lines, and their material slot has faces)"
            )
    return sorted(plan), notes


@dataclass
class _ModelPass:
    """What the passes of ``export_model`` read and fill, in the order they run."""

    lods: list[tuple[int, Mesh]]
    skeleton: Skeleton | None
    opts: ExportOptions
    warnings: list[str] = field(default_factory=list)
    layout: dict | None = None  # the imported layout, when its axes match the export's
    use_layout: bool = False  # every draw has its place in ``layout``: keep its buffers
    plan: list[tuple[int, int, int]] = field(default_factory=list)
    meshes: dict[int, Mesh] = field(default_factory=dict)
    geometry_ids: list[int] = field(default_factory=list)
    vb_elements: list[list[VertexElement]] = field(default_factory=list)
    draw_vb: dict[tuple[int, int], int] = field(default_factory=dict)
    mappings: dict[int, np.ndarray] = field(default_factory=dict)
    draws: list[_Draw] = field(default_factory=list)
    vertex_buffers: list[VertexBuffer] = field(default_factory=list)
    index_buffers: list[IndexBuffer] = field(default_factory=list)
    geometries: list[Geometry] = field(default_factory=list)
    morphs: list[Morph] = field(default_factory=list)
    model: Model | None = None

    @property
    def legacy(self) -> bool:
        return self.opts.magic == b"UMDL"

    @property
    def n_bones(self) -> int:
        return len(self.skeleton) if self.skeleton is not None else 0

    @property
    def kept_layout(self) -> dict | None:
        return self.layout if self.use_layout else None


def export_model(
    lods: list[tuple[int, Mesh]], skeleton: Skeleton | None, opts: ExportOptions
) -> tuple[Model, list[str]]:
    """Build a model from the meshes of each LOD level (level, mesh)."""
    lods = [(level, mesh.with_corner_normals()) for level, mesh in lods]
    state = _ModelPass(lods, skeleton, opts)
    run_passes(
        state,
        _plan_draws,
        _choose_layout,
        _vertex_elements,
        _mappings_and_candidates,
        _assemble_buffers,
        _assemble_model,
    )
    return state.model, state.warnings


def _plan_draws(s: _ModelPass) -> None:
    s.layout = s.opts.layout
    if s.layout is not None and s.layout.get("axes", True) != s.opts.convert_axes:
        s.layout = None
    s.plan, notes = _geometry_plan(s.lods)
    s.warnings += notes
    if not s.plan:
        raise FormatError("nothing to export: the meshes have no faces or edges")
    s.meshes = dict(s.lods)
    s.geometry_ids = sorted({g for g, _, _ in s.plan})
    s.warnings += _left_out_slots(s)


def _left_out_slots(s: _ModelPass) -> list[str]:
    """A sentence per material slot no LOD level draws anything with (no faces, no
    edges): it gets no geometry, and the geometries after it move up, since the
    engine refuses a geometry with no LOD levels."""
    n_slots = max([len(m.materials) for m in s.meshes.values()] + [s.geometry_ids[-1] + 1])
    out = []
    for g in sorted(set(range(n_slots)) - set(s.geometry_ids)):
        if g < len(s.opts.slot_names):
            what = s.opts.slot_names[g]
        else:
            names = [m.materials[g] for m in s.meshes.values() if g < len(m.materials)]
            what = f"material slot {g}" + (f" ({names[0]!r})" if names and names[0] else "")
        out.append(f"{what}: no faces or edges use it, so it is left out of the model")
    return out


def _choose_layout(s: _ModelPass) -> None:
    """The imported layout is kept when it still has a draw for every planned one."""
    if s.layout is None:
        return
    orig_draw = {}
    for g, geo in enumerate(s.layout["geometries"]):
        for lod, d in enumerate(geo["lods"]):
            orig_draw[(g, lod)] = d
    s.use_layout = all((g, lod) in orig_draw for g, lod, _ in s.plan)
    if not s.use_layout:
        s.warnings.append("the meshes no longer match the imported layout: writing a fresh one")
        return
    for g, lod, _ in s.plan:
        s.draw_vb[(g, lod)] = orig_draw[(g, lod)][2]


def _vertex_elements(s: _ModelPass) -> None:
    """Which vertex buffer and elements each draw uses: the kept ones, or a fresh
    buffer per geometry as AssetImporter writes."""
    if s.use_layout:
        for vbinfo in s.layout["vertex_buffers"]:
            s.vb_elements.append([VertexElement.from_descriptor(d) for d in vbinfo["elements"]])
        if s.legacy and any(mask_from_elements(els) is None for els in s.vb_elements):
            raise FormatError("these vertex elements cannot be written as UMDL; choose UMD2")
        return
    skinned = s.n_bones > 0 and any(m.skin is not None for m in s.meshes.values())
    first = next(iter(s.meshes.values()))
    els = fresh_elements(first, skinned, s.legacy, s.opts.tangents)
    for k, g in enumerate(s.geometry_ids):
        s.vb_elements.append(list(els))
        for lod in s.meshes:
            s.draw_vb[(g, lod)] = k


def _mappings_and_candidates(s: _ModelPass) -> None:
    """Each geometry's bone mapping, then each draw's distinct vertices."""
    s.mappings, notes = _bone_mappings(s.meshes, s.geometry_ids, s.n_bones, s.kept_layout, s.opts)
    s.warnings += notes
    for g, lod, prim in s.plan:
        s.draws.append(_draw_candidates(s, g, lod, prim))
    for lod, mesh in s.meshes.items():
        s.draws += _loose_draws(s, lod, mesh)


def _loose_draws(s: _ModelPass, lod: int, mesh: Mesh) -> list[_Draw]:
    """The vertices of ``mesh`` no face or edge uses, as draws with no indices: a
    file's unused vertices stay in their vertex buffer (by their source index
    while the layout is kept), any other in the first buffer. Their elements are
    the kept ones (Blender holds no corner data for them) and their position."""
    on = np.ones(len(mesh.positions), bool)
    on[mesh.corner_verts] = False
    on[mesh.loose_edges.reshape(-1)] = False
    verts = np.flatnonzero(on)
    if not len(verts):
        return []
    src = _attr(mesh, SOURCE_ATTRIBUTE)
    sources = src[verts].astype(np.int64) if src is not None else np.full(len(verts), -1)
    vb_of = np.zeros(len(verts), np.int64)
    if s.use_layout:
        base = np.cumsum([0] + [vb["count"] for vb in s.layout["vertex_buffers"]])
        inside = (sources >= 0) & (sources < base[-1])
        vb_of = np.where(inside, np.searchsorted(base, sources, side="right") - 1, 0)
        sources = np.where(inside, sources, -1)
    weights, joints = _kept_skin(mesh, *_skin_columns(mesh, np.zeros(0, np.int64)))
    out = []
    for k in np.unique(vb_of).tolist():
        rep_vert = verts[vb_of == k]
        elements = s.vb_elements[k]
        rec = np.zeros(len(rep_vert), vertex_dtype(elements, s.legacy))
        for name, e in zip(field_names(elements, s.legacy), elements, strict=True):
            if e.semantic == SEM_BLENDWEIGHTS and e.index == 0 and e.type == TYPE_VECTOR4:
                rec[name] = np.take(weights, rep_vert, axis=0)
            elif e.semantic == SEM_BLENDINDICES and e.index == 0 and e.type == TYPE_UBYTE4:
                rec[name] = np.take(joints, rep_vert, axis=0)
            else:
                value = _vertex_value(mesh, e, s.opts)
                if value is not None:
                    rec[name] = np.take(value, rep_vert, axis=0)
        draw = _Draw(-1, lod, -1, k, rec, sources[vb_of == k], np.zeros(0, np.int64))
        draw.morph_rows = _morph_rows(mesh, rep_vert, s.opts)
        out.append(draw)
    return out


def _assemble_buffers(s: _ModelPass) -> None:
    """Vertex and index buffers, geometries and morphs from the draws."""
    s.vertex_buffers = _assemble_vertex_buffers(s.draws, s.vb_elements, s.legacy, s.kept_layout)
    s.index_buffers, lod_records = _assemble_index_buffers(
        s.draws, s.vertex_buffers, s.kept_layout, s.opts
    )
    distances = {lod: r.distance for recs in lod_records.values() for lod, r in recs}
    levels = [(lod, distances.get(lod, s.opts.lod_distances.get(lod, 0.0))) for lod in s.meshes]
    for g in s.geometry_ids:  # a slot with nothing to draw has no geometry (_left_out_slots)
        s.geometries.append(
            Geometry(
                s.mappings.get(g, np.zeros(0, np.int64)).astype(np.uint32),
                _level_records(lod_records.get(g, []), sorted(levels)),
            )
        )
    s.morphs = _assemble_morphs(s.draws, s.meshes, s.vertex_buffers, s.kept_layout)
    _set_morph_ranges(s.vertex_buffers, s.morphs)


def _level_records(recs: list[tuple[int, GeometryLod]], levels: list) -> list[GeometryLod]:
    """A geometry's draws, one per LOD level up to its last: the engine and importers
    number a geometry's levels by their place in its list, so a level where the
    geometry has no faces (its slot is empty on that level's objects, as after a
    Separate) gets a draw of no indices, and the later levels keep their number."""
    by_level = dict(recs)
    last = max(by_level, default=-1)
    out = []
    for lod, distance in levels:
        if lod > last:
            break
        if lod in by_level:
            out.append(by_level[lod])
            continue
        ref = by_level[min(k for k in by_level if k > lod)]
        out.append(
            GeometryLod(distance, ref.primitive_type, ref.vertex_buffer, ref.index_buffer, 0, 0)
        )
    return out


def _assemble_model(s: _ModelPass) -> None:
    bones = _bones(s.skeleton, s.opts) if s.skeleton is not None else []
    bbox_min, bbox_max = _bounding_box(s.vertex_buffers, s.draws, s.layout)
    s.model = Model(
        s.opts.magic,
        s.vertex_buffers,
        s.index_buffers,
        s.geometries,
        s.morphs,
        bones,
        bbox_min,
        bbox_max,
        _centers(s),
    )


def _bounding_box(
    vertex_buffers: list[VertexBuffer], draws: list[_Draw], layout: dict | None
) -> tuple[np.ndarray, np.ndarray]:
    """The box of every drawn position (a vertex no draw uses is never seen), or
    the kept box while it still holds them."""
    parts = [np.zeros((0, 3), np.float32)]
    for k, vb in enumerate(vertex_buffers):
        field = next((f for f in vb.data.dtype.names if f.startswith("position")), None)
        mine = [d.out_index for d in _indexed(draws) if d.vertex_buffer == k]
        if field is None or not mine:
            continue
        drawn = np.zeros(vb.count, bool)
        for idx in mine:
            drawn[idx] = True
        parts.append(vb.data[field] if drawn.all() else vb.data[field][drawn])
    lo, hi = box(np.concatenate(parts))
    if layout is not None and layout.get("bbox") is not None:
        old = np.array(layout["bbox"], np.float32)
        # The kept box still holds every vertex: keep it (engines pad boxes).
        if np.all(old[:3] <= lo + 1e-6) and np.all(old[3:] >= hi - 1e-6):
            return old[:3], old[3:]
    return lo.astype(np.float32), hi.astype(np.float32)


def _centers(s: _ModelPass) -> np.ndarray | None:
    """The kept geometry centers, fresh ones, or none when the imported file had none."""
    layout = s.layout
    if (
        s.use_layout
        and layout.get("centers") is not None
        and len(layout["centers"]) == len(s.geometries)
    ):
        return np.array(layout["centers"], np.float32)
    if layout is None or layout.get("centers") is not None:
        return _geometry_centers(s.geometries, s.vertex_buffers, s.index_buffers)
    return None


def _bone_mappings(
    meshes: dict[int, Mesh],
    geometry_ids: list[int],
    n_bones: int,
    layout: dict | None,
    opts: ExportOptions,
) -> tuple[dict[int, np.ndarray], list[str]]:
    """Each geometry's bone mapping (empty: the skeleton's own order).

    Every Urho3D build skins up to 64 bones per draw, so a larger skeleton gets
    a mapping per geometry (the bones it uses, as AssetImporter writes); a
    geometry may use up to ``opts.bone_limit`` of them (128 draws on GL3/D3D11
    only). When one geometry has a mapping the engine skins all through their
    own, so all get one. An unedited import keeps the mappings it had, and a
    model that had none keeps none while its bones fit ``opts.bone_limit``."""
    used = _geometry_bones(meshes, geometry_ids)
    old: dict[int, np.ndarray] = {}
    if layout is not None:
        for g in geometry_ids:
            if g < len(layout["geometries"]):
                old[g] = np.array(layout["geometries"][g]["bone_mapping"], np.int64)
    kept = {g: m for g, m in old.items() if len(m) and np.isin(used[g], m).all()}
    had_none = layout is not None and not any(len(m) for m in old.values())
    mapped = n_bones > SKIN_MATRICES_EVERYWHERE or bool(kept)
    if had_none and n_bones <= opts.bone_limit:
        mapped = False
    out: dict[int, np.ndarray] = {}
    for g in geometry_ids:
        if not mapped:
            out[g] = np.zeros(0, np.int64)
            continue
        out[g] = kept.get(g, used[g])
        if len(out[g]) > opts.bone_limit:
            raise FormatError(
                f"geometry {g} uses {len(out[g])} bones, more than the limit of "
                f"{opts.bone_limit} skin matrices per draw: split it into several material slots"
            )
    notes: list[str] = []
    palette = max((len(m) for m in out.values()), default=0) if mapped else n_bones
    if any(len(u) for u in used.values()) and palette > SKIN_MATRICES_EVERYWHERE:
        notes.append(
            f"a draw skins {palette} bones: only GL3/D3D11 builds draw it "
            f"(GL2, GLES and D3D9 take {SKIN_MATRICES_EVERYWHERE})"
        )
    return out, notes


def _geometry_bones(meshes: dict[int, Mesh], geometry_ids: list[int]) -> dict[int, np.ndarray]:
    """The bones each geometry's triangles use, over every LOD."""
    used: dict[int, np.ndarray] = {}
    for g in geometry_ids:
        parts = [
            _used_bones(m, m.corner_verts[np.repeat(m.face_materials == g, 3)])
            for m in meshes.values()
        ]
        used[g] = np.unique(np.concatenate(parts + [np.zeros(0, np.int64)]))
    return used


def _set_morph_ranges(vbs: list[VertexBuffer], morphs: list[Morph]) -> None:
    """Each buffer's morph range covers every vertex its morphs move (the
    engine applies morphs only inside it): the kept range while it still
    covers them, else the smallest one, from the first to the last."""
    for k, vb in enumerate(vbs):
        idx = [mb.data["index"] for m in morphs for mb in m.buffers if mb.vertex_buffer == k]
        idx = np.concatenate(idx) if idx else np.zeros(0, np.uint32)
        if not len(idx):
            continue
        lo, hi = int(idx.min()), int(idx.max())
        if vb.morph_count and vb.morph_start <= lo and hi < vb.morph_start + vb.morph_count:
            continue
        vb.morph_start, vb.morph_count = lo, hi - lo + 1


def _geometry_centers(geometries, vbs, ibs) -> np.ndarray:
    out = np.zeros((len(geometries), 3), np.float32)
    for g, geo in enumerate(geometries):
        drawn = [d for d in geo.lods if d.index_count]
        if not drawn:
            continue
        d = drawn[0]
        idx = ibs[d.index_buffer].indices[d.index_start : d.index_start + d.index_count]
        pos_field = next(
            f for f in vbs[d.vertex_buffer].data.dtype.names if f.startswith("position")
        )
        positions = vbs[d.vertex_buffer].data[pos_field]
        used = np.zeros(len(positions), bool)  # the drawn vertices: a mask, not a sort
        used[idx] = True
        pts = positions[used]
        if len(pts):
            out[g] = (pts.min(axis=0) + pts.max(axis=0)) / 2
    return out


def _assemble_vertex_buffers(draws, vb_elements, legacy, layout) -> list[VertexBuffer]:
    """Merge the draws' vertex records per buffer: original vertices at their
    original place, identical records shared, new ones appended."""
    out = []
    for k, els in enumerate(vb_elements):
        mine = [d for d in draws if d.vertex_buffer == k]
        dtype = vertex_dtype(els, legacy)
        if not mine:
            out.append(
                VertexBuffer(
                    els, np.zeros(0, dtype), 0, 0, mask_from_elements(els) if legacy else None
                )
            )
            continue
        recs = np.concatenate([d.candidates for d in mine])
        srcs = np.concatenate([d.sources for d in mine])
        morphed = np.concatenate([_morphed(d) for d in mine])
        first, inverse = _merged_records(recs, srcs)
        order = _vertex_order(srcs[first], first, morphed[first])
        place = np.empty_like(order)
        place[order] = np.arange(len(order))
        data = recs[first[order]]
        offset = 0
        for d in mine:
            n = len(d.candidates)
            d.out_index = place[inverse[offset : offset + n]][d.indices]
            d.vertex_place = place[inverse[offset : offset + n]]
            offset += n
        morph_start, morph_count = 0, 0
        if layout is not None and k < len(layout["vertex_buffers"]):
            info = layout["vertex_buffers"][k]
            if info["count"] == len(data):
                morph_start, morph_count = info["morph_start"], info["morph_count"]
        mask = None
        if legacy:
            mask = mask_from_elements(els)
        out.append(VertexBuffer(els, data, morph_start, morph_count, mask))
    return out


def _merged_records(recs: np.ndarray, srcs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Identical records with the same source share a vertex: the first record of each
    vertex, and each record's vertex (numbered in any order: the sort keys below are
    distinct, so which group comes first never matters).

    Copies of one source vertex (one per LOD object) share the first copy's data, so
    records with a source merge by their source alone; the others (new vertices) by
    their bytes."""
    if _distinct_sources(srcs):
        # Every candidate is its own source vertex (an unedited single-object
        # model): no two can merge.
        first = np.arange(len(recs))
        return first, first
    group = srcs.astype(np.int64)
    new = np.flatnonzero(group < 0)
    if len(new):
        raw = np.ascontiguousarray(recs[new]).view(np.uint8).reshape(len(new), -1)
        keyed = np.concatenate([srcs[new].astype("<i8").view(np.uint8).reshape(-1, 8), raw], 1)
        group[new] = int(group.max(initial=-1)) + 1 + _same_rows(keyed)
    _, first, inverse = np.unique(group, return_index=True, return_inverse=True)
    return first, inverse.reshape(-1)


def _same_rows(rows: np.ndarray) -> np.ndarray:
    """A group number per row of bytes (uint8, (n, k)): equal rows, equal numbers.
    The rows are hashed into one uint64 each and grouped by the hash (a sort of
    integers, not of byte strings); any two rows sharing a hash are compared, and
    only a true collision falls back to grouping the byte strings themselves."""
    n, k = rows.shape
    width = -(-k // 8) * 8
    padded = np.zeros((n, width), np.uint8)
    padded[:, :k] = rows
    words = padded.view(np.uint64)
    h = np.zeros(n, np.uint64)
    for c in range(words.shape[1]):
        h ^= words[:, c]
        h *= np.uint64(0x9E3779B97F4A7C15)
        h ^= h >> np.uint64(29)
    _, rep, inverse = np.unique(h, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    owner = rep[inverse]
    same = np.ones(n, bool)
    for c in range(words.shape[1]):
        same &= words[:, c] == words[owner, c]
    if same.all():
        return inverse
    void = padded.view(np.dtype((np.void, width))).reshape(-1)
    return np.unique(void, return_inverse=True)[1].reshape(-1)


def _vertex_order(usrc: np.ndarray, first: np.ndarray, morphed: np.ndarray) -> np.ndarray:
    """The merged vertices in buffer order. A source index taken twice (edited copies)
    keeps its place only once. New vertices follow the kept ones, those shape keys move
    first: the engine's morph range (from the first to the last moved vertex) stays small."""
    big = np.int64(1) << 40
    sort_key = np.where(usrc >= 0, usrc, big + np.where(morphed, 0, big) + first)
    dup = np.zeros(len(first), bool)
    order0 = np.lexsort((first, sort_key))
    s_sorted = sort_key[order0]
    dup[order0[1:]] = (s_sorted[1:] == s_sorted[:-1]) & (s_sorted[1:] < big)
    sort_key = np.where(dup, big + first, sort_key)
    return np.argsort(sort_key, kind="stable")


def _distinct_sources(srcs: np.ndarray) -> bool:
    """Every candidate names a source vertex, and no two the same one."""
    if not len(srcs) or srcs.min() < 0:
        return False
    return int(np.bincount(srcs).max()) == 1


def _morphed(d: _Draw) -> np.ndarray:
    """Per candidate vertex of a draw: whether a morph lists it."""
    flags = np.zeros(len(d.candidates), bool)
    for rows in d.morph_rows.values():
        flags |= rows[:, 0] != 0
    return flags


def _assemble_index_buffers(draws, vbs, layout, opts):
    """The index buffers and each geometry's (lod, GeometryLod) records: the imported
    buffers with the draws at their places while every draw still fits its range,
    else fresh ones."""
    if _fits_layout(draws, vbs, layout):
        return _kept_index_buffers(draws, vbs, layout)
    return _fresh_index_buffers(draws, vbs, layout, opts)


def _indexed(draws: list[_Draw]) -> list[_Draw]:
    """The draws of faces and edges (not those of unused vertices)."""
    return [d for d in draws if d.geometry >= 0]


def _fits_layout(draws: list[_Draw], vbs: list[VertexBuffer], layout: dict | None) -> bool:
    """Every vertex buffer has its imported size and every draw its imported range."""
    exact = layout is not None and all(
        layout["vertex_buffers"][k]["count"] == vb.count for k, vb in enumerate(vbs)
    )
    if exact:
        for d in _indexed(draws):
            old = layout["geometries"][d.geometry]["lods"][d.lod]
            if old[5] != len(d.out_index) or old[1] != d.primitive:
                exact = False
    return exact


def _kept_index_buffers(draws: list[_Draw], vbs: list[VertexBuffer], layout: dict):
    lod_records: dict[int, list] = {}
    ibs = []
    for k, info in enumerate(layout["index_buffers"]):
        top = max(
            (
                vbs[d.vertex_buffer].count
                for d in _indexed(draws)
                if layout["geometries"][d.geometry]["lods"][d.lod][3] == k
            ),
            default=0,
        )
        size = info["size"] if top <= 65536 else 4
        ibs.append(np.zeros(info["count"], np.uint16 if size == 2 else np.uint32))
    for d in _indexed(draws):
        dist, prim, vb, ib, start, count = layout["geometries"][d.geometry]["lods"][d.lod]
        ibs[ib][start : start + count] = d.out_index
        lod_records.setdefault(d.geometry, []).append(
            (d.lod, GeometryLod(dist, prim, vb, ib, start, count))
        )
    return [IndexBuffer(a) for a in ibs], lod_records


def _fresh_index_buffers(
    draws: list[_Draw], vbs: list[VertexBuffer], layout: dict | None, opts: ExportOptions
):
    """One index buffer per vertex buffer, draws in geometry then LOD order."""
    lod_records: dict[int, list] = {}
    ibs = []
    for k, vb in enumerate(vbs):
        mine = [d for d in _indexed(draws) if d.vertex_buffer == k]
        dtype = np.uint16 if vb.count <= 65536 else np.uint32
        start = 0
        parts = []
        for d in mine:
            dist = opts.lod_distances.get(d.lod, 0.0)
            if layout is not None:
                old = layout["geometries"][d.geometry]["lods"]
                if d.lod < len(old):
                    dist = old[d.lod][0]
            lod_records.setdefault(d.geometry, []).append(
                (d.lod, GeometryLod(dist, d.primitive, k, len(ibs), start, len(d.out_index)))
            )
            parts.append(d.out_index)
            start += len(d.out_index)
        if mine:
            ibs.append(IndexBuffer(np.concatenate(parts).astype(dtype)))
    return ibs, lod_records


def _assemble_morphs(draws, meshes, vbs, layout) -> list[Morph]:
    """A morph per shape key name: per vertex buffer, the vertices it lists, in the
    imported buffer order and masks where the layout has them."""
    names: list[str] = []
    for mesh in meshes.values():
        for m in mesh.morphs:
            if m.name not in names:
                names.append(m.name)
    out = []
    for name in names:
        per_vb: dict[int, tuple[list, list]] = {}
        for d in draws:
            mesh = meshes[d.lod]
            i = next((i for i, m in enumerate(mesh.morphs) if m.name == name), None)
            if i is None:
                continue
            rows = d.morph_rows[i]
            listed = rows[:, 0] != 0
            places, chunks = per_vb.setdefault(d.vertex_buffer, ([], []))
            places.append(d.vertex_place[listed])
            chunks.append(rows[listed])
        masks = {}
        if layout is not None:
            for m in layout["morphs"]:
                if m["name"] == name:
                    masks = {vb: mask for vb, mask in m["buffers"]}
        buffers = []
        order = [vb for vb in masks if vb in per_vb]
        for vb in order + sorted(vb for vb in per_vb if vb not in masks):
            buffer = _morph_buffer(vb, masks.get(vb), *per_vb[vb])
            if buffer is not None:
                buffers.append(buffer)
        out.append(Morph(name, buffers))
    return out


def _morph_buffer(vb: int, kept_mask: int | None, places: list, chunks: list) -> MorphBuffer | None:
    """One morph buffer from the draws' listed rows; None for an empty new one."""
    mask = MASK_POSITION | MASK_NORMAL if kept_mask is None else kept_mask
    idx, first = np.unique(np.concatenate(places), return_index=True)
    if not len(idx) and kept_mask is None:
        return None
    rows = np.concatenate(chunks)[first]
    # The file's order for the vertices it listed, then new ones by index.
    place = rows[:, 10]
    order = np.argsort(np.where(place > 0, place, len(rows) + idx + 2**32), kind="stable")
    idx, rows = idx[order], rows[order]
    data = np.zeros(len(idx), morph_dtype(mask))
    data["index"] = idx
    if mask & MASK_POSITION:
        data["position"] = rows[:, 1:4]
    if mask & MASK_NORMAL:
        data["normal"] = rows[:, 4:7]
    if mask & MASK_TANGENT:
        data["tangent"] = rows[:, 7:10]
    return MorphBuffer(vb, mask, data)


def file_order(skeleton: Skeleton) -> Skeleton:
    """The skeleton in the file's bone order (each bone's ``urho_index``; bones
    without one follow in armature order). Blender keeps bones parent-first,
    Urho3D files need not: a child may come before its parent."""
    n = len(skeleton)
    extras = skeleton.extras if len(skeleton.extras) == n else [{} for _ in range(n)]
    keys = [
        (0, e[BONE_INDEX_KEY], i) if type(e.get(BONE_INDEX_KEY)) is int else (1, i, i)
        for i, e in enumerate(extras)
    ]
    order = [k[2] for k in sorted(keys)]
    return replace(skeleton, extras=extras).reordered(order)[0]


def _bones(skeleton: Skeleton, opts: ExportOptions) -> list[Bone]:
    conv = opts.convert_axes
    t = axes.vectors(skeleton.local_translation, conv)
    q = axes.quats(skeleton.local_rotation, conv)
    s = axes.vectors(skeleton.local_scale, conv)
    inv = skeleton.inverse_bind
    if inv is None:
        inv = np.linalg.inv(skeleton.world_rest())
    inv = axes.matrices(inv, conv)
    bones = []
    for i, name in enumerate(skeleton.names):
        extra = skeleton.extras[i] if i < len(skeleton.extras) else {}
        p = int(skeleton.parents[i])
        b = Bone(
            name,
            i if p < 0 else p,
            t[i].astype(np.float32),
            q[i].astype(np.float32),
            s[i].astype(np.float32),
            inv[i, :3, :].astype(np.float32),
        )
        b.collision_mask = int(extra.get("urho_collision_mask", 0))
        b.radius = float(extra.get("urho_radius", 0.0))
        kept_box = np.array(extra.get("urho_bbox", [0.0] * 6), np.float32)
        b.bbox_min, b.bbox_max = kept_box[:3], kept_box[3:]
        bones.append(b)
    return bones
