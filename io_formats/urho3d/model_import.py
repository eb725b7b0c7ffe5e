"""Urho3D model -> neutral scene."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..codec import FormatError
from ..gather import rows_at
from ..passes import run_passes
from ..scene import Attribute, ColorSet, Mesh, MorphTarget, Scene, Skeleton, Skin, UVSet
from ..transforms import parent_first_order
from . import axes
from .layout import model_layout
from .mdl import PRIMITIVE_LINES, Model
from .vertex_layout import (
    SEM_BLENDINDICES,
    SEM_BLENDWEIGHTS,
    SEM_COLOR,
    SEM_NORMAL,
    SEM_POSITION,
    SEM_TANGENT,
    SEM_TEXCOORD,
    TYPE_FLOAT,
    TYPE_INT,
    TYPE_UBYTE4,
    TYPE_UBYTE4_NORM,
    TYPE_VECTOR2,
    TYPE_VECTOR3,
    TYPE_VECTOR4,
    field_names,
)

SOURCE_ATTRIBUTE = "urho:source"
GEOMETRY_ATTRIBUTE = "urho:geometry"
TANGENT_ATTRIBUTE = "urho:tangent"
NORMAL_ATTRIBUTE = "urho:normal"  # the file's exact normals; Blender's encoding rounds them
UV_ATTRIBUTE = "urho:uv:{}"  # the file's UVs where flipping V twice does not give them back
EXTRA_PREFIX = "urho:e:"
MORPH_NORMAL = "urho:morph_normal:{}"
MORPH_TANGENT = "urho:morph_tangent:{}"
MORPH_LISTED = "urho:morph_listed:{}"
#: The file's position offsets where Blender's shape key (basis + offset, float32)
#: minus the basis does not give them back
MORPH_POSITION = "urho:morph_position:{}"
BONE_INDEX_KEY = "urho_index"  # a bone's place in the file (Blender keeps parents first)
#: The layout's mark that the import rewound the triangles into Blender's order
#: (see :func:`axes.rewind`); a layout without it (a .blend saved before) holds
#: the file's order, which the exporter turns into Blender's before it writes.
REWOUND_KEY = "rewound"
_SKIN_OR_POSITION = (SEM_POSITION, SEM_BLENDINDICES, SEM_BLENDWEIGHTS)
_ATTRIBUTE_TYPES = {
    TYPE_INT: "INT",
    TYPE_FLOAT: "FLOAT",
    TYPE_VECTOR2: "FLOAT2",
    TYPE_VECTOR3: "FLOAT_VECTOR",
    TYPE_VECTOR4: "FLOAT_COLOR",
    TYPE_UBYTE4: "INT",
    TYPE_UBYTE4_NORM: "INT",
}


def skeleton_from_model(model: Model, convert: bool) -> Skeleton | None:
    if not model.bones:
        return None
    n = len(model.bones)
    parents = np.array(
        [-1 if b.parent == i else b.parent for i, b in enumerate(model.bones)], np.int32
    )
    try:
        parent_first_order(parents)
    except ValueError as err:
        raise FormatError(f"bad skeleton: {err}") from None
    t = np.array([b.position for b in model.bones], np.float64)
    q = np.array([b.rotation for b in model.bones], np.float64)
    s = np.array([b.scale for b in model.bones], np.float64)
    inv = np.zeros((n, 4, 4))
    inv[:, :3, :] = np.array([b.offset_matrix for b in model.bones], np.float64)
    inv[:, 3, 3] = 1.0
    extras = []
    for i, b in enumerate(model.bones):
        extra: dict = {BONE_INDEX_KEY: i, "urho_collision_mask": int(b.collision_mask)}
        if b.collision_mask & 1:
            extra["urho_radius"] = float(b.radius)
        if b.collision_mask & 2:
            extra["urho_bbox"] = [float(v) for v in (*b.bbox_min, *b.bbox_max)]
        extras.append(extra)
    return Skeleton(
        names=[b.name for b in model.bones],
        parents=parents,
        local_translation=axes.vectors(t, convert),
        local_rotation=axes.quats(q, convert),
        local_scale=axes.vectors(s, convert),
        inverse_bind=axes.matrices(inv, convert),
        extras=extras,
    )


def _lod_draws(model: Model, lod: int) -> list[tuple[int, object]]:
    return [(g, geo.lods[lod]) for g, geo in enumerate(model.geometries) if lod < len(geo.lods)]


@dataclass
class _LodPass:
    """What the passes of ``mesh_from_lod`` read and fill, in the order they run."""

    model: Model
    name: str
    lod: int
    convert: bool
    unused: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))  # see unused_by_lod
    base: np.ndarray = field(init=False)  # first global vertex of each vertex buffer
    draws: list[tuple[int, object]] = field(init=False)
    index_lists: list[np.ndarray] = field(default_factory=list)  # global indices per draw
    local_lists: list[np.ndarray] = field(default_factory=list)  # mesh vertices per draw
    used: np.ndarray = field(init=False)  # global index of each mesh vertex
    loose: np.ndarray = field(init=False)  # mesh vertices no draw uses (kept from the file)
    every: bool = False  # the mesh has every global vertex: mesh vertex k is global k
    only_lod: bool = False  # the model's one LOD: every global vertex is the mesh's
    local_of: np.ndarray | None = None  # mesh vertex of each global index (not when every)
    mesh: Mesh = field(init=False)
    has_lines: bool = False  # line vertices have no corners: keep every field per point
    per_vertex: dict[str, np.ndarray] = field(default_factory=dict)
    normals: np.ndarray = field(init=False)
    have_normals: bool = False
    joints: np.ndarray = field(init=False)
    weights: np.ndarray = field(init=False)
    have_skin: bool = False

    def __post_init__(self) -> None:
        self.base = np.cumsum([0] + [vb.count for vb in self.model.vertex_buffers])
        self.draws = _lod_draws(self.model, self.lod)

    @property
    def n_vertices(self) -> int:
        return len(self.used)

    def vb_of(self, vertices: np.ndarray | slice) -> np.ndarray:
        """The vertex buffer of each of these mesh vertices."""
        return np.searchsorted(self.base, self.used[vertices], side="right") - 1


def mesh_from_lod(
    model: Model, name: str, lod: int, convert: bool, unused: np.ndarray | None = None
) -> Mesh:
    """One Blender-ready mesh for LOD level ``lod``: the vertices its draws use
    and the ``unused`` ones (global indices no draw uses, as loose vertices, from
    :func:`unused_by_lod`), in buffer order, one Blender vertex per engine vertex."""
    state = _LodPass(model, name, lod, convert)
    if unused is not None:  # the model's unused vertices, all of them (none: not known)
        state.unused = unused
        state.only_lod = max((len(g.lods) for g in model.geometries), default=0) == 1
    run_passes(
        state,
        _draw_indices,
        _used_vertices,
        _topology,
        _vertex_fields,
        _corner_fields,
        _point_attributes,
        _skin_and_morphs,
    )
    return state.mesh


def _draw_indices(s: _LodPass) -> None:
    """Each draw's whole primitives, as global vertex indices."""
    for _, d in s.draws:
        idx = s.model.index_buffers[d.index_buffer].indices[
            d.index_start : d.index_start + d.index_count
        ]
        if d.primitive_type == PRIMITIVE_LINES:
            idx = idx[: len(idx) // 2 * 2]
        else:
            idx = idx[: len(idx) // 3 * 3]
        s.index_lists.append(_global(idx, int(s.base[d.vertex_buffer])))


def _global(idx: np.ndarray, base: int) -> np.ndarray:
    """A draw's indices into its buffer as global vertex indices: the file's own
    array (its unsigned type) where the buffer starts at 0, no int64 copy."""
    return idx if not base else idx.astype(np.int64) + base


def _used_vertices(s: _LodPass) -> None:
    """Used vertices by a mask and a running count: linear, where np.unique sorts.
    A model of one LOD has them all: what no draw uses is that LOD's (``unused_by_lod``)."""
    if s.only_lod:
        s.every = True
        s.used = np.arange(int(s.base[-1]))
        s.loose = np.asarray(s.unused, np.int64)
        return
    is_used = _drawn(s.index_lists, int(s.base[-1]))
    loose = np.zeros(len(is_used), bool)
    loose[s.unused] = True
    is_used |= loose
    s.every = bool(is_used.all())
    if s.every:  # the usual model: no map of global to mesh vertices to build
        s.used = np.arange(len(is_used))
        s.loose = np.flatnonzero(loose)
        return
    s.used = np.flatnonzero(is_used)
    s.loose = np.flatnonzero(loose[s.used])
    s.local_of = (np.cumsum(is_used, dtype=np.int64) - 1).astype(np.int32)


def _drawn(index_lists: list[np.ndarray], n: int) -> np.ndarray:
    """The global vertices the index lists draw, as a mask over all ``n``, set
    at every index: np.bincount is faster on memory touched before but converts
    the indices to intp first (at a million vertices, 48 MB of new pages)."""
    drawn = np.zeros(n, bool)
    for idx in index_lists:
        drawn[idx] = True
    return drawn


def _topology(s: _LodPass) -> None:
    """The mesh: triangles with their geometry as material, lines as loose edges."""
    tri_mats, edges, edge_geo = [], [], []
    lines = [d.primitive_type == PRIMITIVE_LINES for _, d in s.draws]
    n_corners = sum(len(idx) for idx, line in zip(s.index_lists, lines, strict=True) if not line)
    corner_verts = np.empty(n_corners, np.int32)  # each draw's rewound corners go in place
    at = 0
    for (g, _), idx, line in zip(s.draws, s.index_lists, lines, strict=True):
        local = idx if s.local_of is None else np.take(s.local_of, idx)
        s.local_lists.append(local)
        if line:
            edges.append(local.reshape(-1, 2).astype(np.int32, copy=False))
            edge_geo.append(np.full(len(local) // 2, g, np.int32))
        else:
            axes.rewind(local, s.convert, out=corner_verts[at : at + len(local)])
            at += len(local)
            tri_mats.append(np.full(len(local) // 3, g, np.int32))
    n_faces = len(corner_verts) // 3
    s.mesh = Mesh(
        name=s.name,
        positions=np.zeros((s.n_vertices, 3), np.float32),
        corner_verts=corner_verts,
        face_starts=np.arange(0, 3 * n_faces, 3, dtype=np.int32),
        face_materials=np.concatenate(tri_mats) if tri_mats else np.zeros(0, np.int32),
        loose_edges=np.concatenate(edges) if edges else np.zeros((0, 2), np.int32),
        materials=[f"{s.name}_geometry{g}" for g in range(len(s.model.geometries))],
    )
    s.has_lines = bool(edges)
    if edges:
        s.mesh.attributes.append(
            Attribute(GEOMETRY_ATTRIBUTE, "EDGE", "INT", np.concatenate(edge_geo))
        )
    s.mesh.attributes.append(Attribute(SOURCE_ATTRIBUTE, "POINT", "INT", s.used.astype(np.int32)))


def _vertex_fields(s: _LodPass) -> None:
    """Every element of every vertex buffer, for the vertices the LOD uses."""
    n = s.n_vertices
    s.normals = np.zeros((n, 3), np.float32)
    s.joints = np.zeros((n, 4), np.int32)
    s.weights = np.zeros((n, 4), np.float32)
    legacy = s.model.magic == b"UMDL"
    only = s.every and n > 0 and len(s.model.vertex_buffers) == 1
    vb_of = None if only else s.vb_of(slice(None))
    for k, vb in enumerate(s.model.vertex_buffers):
        if only:  # every vertex of the one buffer, in order: plain copies, no scatter
            sel, rows = slice(None), vb.data
        else:
            sel = np.nonzero(vb_of == k)[0]
            if not len(sel):
                continue
            # sorted and unique: as many as the buffer holds means all of it, in order
            rows = vb.data if len(sel) == vb.count else vb.data[s.used[sel] - s.base[k]]
            if len(sel) == n:  # the only buffer used: plain copies, no scatter
                sel = slice(None)
        names = field_names(vb.elements, legacy)
        for part, part_rows in _row_blocks(sel, rows):
            for fname, e in zip(names, vb.elements, strict=True):
                col = part_rows[fname]
                _vertex_element(s, part, fname, e, col)
                if s.has_lines and e.semantic not in _SKIN_OR_POSITION:
                    _scatter(s.per_vertex, element_attribute(e), part, _raw(col, e), n)


#: Vertices per block when a whole buffer is read element by element: each
#: element's strided copy reads the block again, so a block stays in the CPU's
#: cache (8,192 vertices of 76 bytes: 608 KiB) where the whole buffer would be
#: read from memory once per element (18 times for a skinned, tangent, 2-UV model).
BLOCK_ROWS = 8192


def _row_blocks(sel: np.ndarray | slice, rows: np.ndarray):
    """(vertices, their rows) in blocks of :data:`BLOCK_ROWS` where ``sel`` is every
    vertex of a large buffer; else ``sel`` and ``rows`` themselves."""
    if not _whole(sel) or len(rows) <= BLOCK_ROWS:
        yield sel, rows
        return
    for start in range(0, len(rows), BLOCK_ROWS):
        stop = min(start + BLOCK_ROWS, len(rows))
        yield slice(start, stop), rows[start:stop]


def _whole(sel: np.ndarray | slice) -> bool:
    """``sel`` is every vertex, in order (arrays are taken or copied whole)."""
    return isinstance(sel, slice) and sel == slice(None)


def _vertex_element(s: _LodPass, sel: np.ndarray | slice, fname: str, e, col: np.ndarray) -> None:
    """One element's values: into the mesh where Blender has a place, else kept per vertex."""
    n, convert = s.n_vertices, s.convert
    if e.semantic == SEM_POSITION and e.index == 0 and e.type == TYPE_VECTOR3:
        if _whole(sel):
            s.mesh.positions = _owned(axes.vectors(col, convert))
        else:
            s.mesh.positions[sel] = axes.vectors(col, convert)
    elif e.semantic == SEM_NORMAL and e.index == 0 and e.type == TYPE_VECTOR3:
        if _whole(sel):
            s.normals = _owned(axes.vectors(col, convert))
        else:
            s.normals[sel] = axes.vectors(col, convert)
        s.have_normals = True
        s.per_vertex[NORMAL_ATTRIBUTE] = s.normals  # the kept attribute shares them: read only
    elif e.semantic == SEM_BLENDINDICES and e.index == 0 and e.type == TYPE_UBYTE4:
        s.joints[sel] = col
        s.have_skin = True
        _scatter(s.per_vertex, element_attribute(e), sel, _raw(col, e), n)
    elif e.semantic == SEM_BLENDWEIGHTS and e.index == 0 and e.type == TYPE_VECTOR4:
        if _whole(sel):
            s.weights = _owned(col)
        else:
            s.weights[sel] = col
        s.per_vertex[element_attribute(e)] = s.weights  # the skin shares them: read only
    elif e.semantic == SEM_TANGENT and e.index == 0 and e.type == TYPE_VECTOR4:
        _scatter(s.per_vertex, TANGENT_ATTRIBUTE, sel, axes.tangents(col, convert), n)
    elif e.semantic == SEM_TEXCOORD and e.type == TYPE_VECTOR2 and fname.startswith("tex"):
        _scatter(s.per_vertex, f"uv:{e.index}", sel, col, n)
    elif e.semantic == SEM_COLOR and e.type in (TYPE_UBYTE4_NORM, TYPE_VECTOR4):
        data = col / 255.0 if e.type == TYPE_UBYTE4_NORM else col
        _scatter(s.per_vertex, f"color:{e.index}:{e.type}", sel, data, n)
    else:
        _scatter(s.per_vertex, element_attribute(e), sel, _raw(col, e), n)


def _corner_fields(s: _LodPass) -> None:
    """Normals (per vertex, as the file has them), UV sets and colour sets (per corner)."""
    mesh, per_vertex = s.mesh, s.per_vertex
    if s.have_normals and len(mesh.corner_verts):
        mesh.normals, mesh.normal_domain = s.normals, "POINT"
    cv = mesh.corner_verts
    for key in sorted(k for k in per_vertex if k.startswith("uv:")):
        flipped = per_vertex[key].astype(np.float32)  # flip per vertex, then expand
        flipped[:, 1] = 1.0 - flipped[:, 1]
        uv = rows_at(flipped, cv)
        mesh.uv_sets.append(UVSet(f"UVMap{'' if key == 'uv:0' else int(key[3:]) + 1}", uv))
        if np.any(np.float32(1.0) - flipped[:, 1] != per_vertex[key][:, 1]):
            # 1 - (1 - v) rounds for some v in float32: keep the file's values
            # (the per-vertex array is the import's own: taken as it is)
            kept = np.asarray(per_vertex[key], np.float32)
            mesh.attributes.append(Attribute(UV_ATTRIBUTE.format(key[3:]), "POINT", "FLOAT2", kept))
    for key in sorted(k for k in per_vertex if k.startswith("color:")):
        _, index, etype = key.split(":")
        mesh.colors.append(
            ColorSet(
                f"Color{'' if index == '0' else int(index) + 1}",
                rows_at(per_vertex[key].astype(np.float32), cv),  # narrow, then expand
                byte=int(etype) == TYPE_UBYTE4_NORM,
            )
        )


def _point_attributes(s: _LodPass) -> None:
    """The file's exact normals and tangents, and the elements Blender has no place for."""
    per_vertex, attributes = s.per_vertex, s.mesh.attributes
    if NORMAL_ATTRIBUTE in per_vertex:
        normals = per_vertex[NORMAL_ATTRIBUTE].astype(np.float32, copy=False)
        attributes.append(Attribute(NORMAL_ATTRIBUTE, "POINT", "FLOAT_VECTOR", normals))
    if TANGENT_ATTRIBUTE in per_vertex:
        tangents = per_vertex[TANGENT_ATTRIBUTE].astype(np.float32, copy=False)
        attributes.append(Attribute(TANGENT_ATTRIBUTE, "POINT", "FLOAT_COLOR", tangents))
    for key in sorted(k for k in per_vertex if k.startswith(EXTRA_PREFIX)):
        etype = int(key.rsplit("_t", 1)[1])
        attributes.append(Attribute(key, "POINT", _ATTRIBUTE_TYPES[etype], per_vertex[key]))
    if len(s.loose) and not s.has_lines:
        _loose_attributes(s)


def _loose_attributes(s: _LodPass) -> None:
    """Every element of the vertices no draw uses, where Blender holds only their
    position: they have no corners for normals, UVs and colours. Sparse: rows
    for those vertices only (zeros where a vertex's buffer lacks the element)."""
    legacy = s.model.magic == b"UMDL"
    have = {a.name for a in s.mesh.attributes}
    rows_of: dict[str, tuple[int, np.ndarray]] = {}
    for k, vb in enumerate(s.model.vertex_buffers):
        at = np.flatnonzero(s.vb_of(s.loose) == k)
        if not len(at):
            continue
        rows = vb.data[s.used[s.loose[at]] - s.base[k]]
        for fname, e in zip(field_names(vb.elements, legacy), vb.elements, strict=True):
            key = element_attribute(e)
            if e.semantic in _SKIN_OR_POSITION or key in have:
                continue
            values = _raw(rows[fname], e)
            if key not in rows_of:
                shape = (len(s.loose),) + values.shape[1:]
                rows_of[key] = (e.type, np.zeros(shape, values.dtype))
            rows_of[key][1][at] = values
    for key, (etype, values) in sorted(rows_of.items()):
        s.mesh.attributes.append(
            Attribute(key, "POINT", _ATTRIBUTE_TYPES[etype], values, s.loose.astype(np.int64))
        )


def _skin_and_morphs(s: _LodPass) -> None:
    if s.have_skin:
        s.mesh.skin = Skin(_global_joints(s.model, s.draws, s.local_lists, s.joints), s.weights)
    s.mesh.morphs = _morphs(s.model, s.used, s.base, s.convert, s.mesh.attributes)
    for i, m in enumerate(s.mesh.morphs):
        kept = unheld_offsets(s.mesh.positions, m.position_offsets, m.vertices)
        if kept is not None:
            s.mesh.attributes.append(
                Attribute(MORPH_POSITION.format(i), "POINT", "FLOAT_VECTOR", kept[1], kept[0])
            )


def element_attribute(e) -> str:
    """Name of the point attribute that keeps an element Blender has no place for."""
    return f"{EXTRA_PREFIX}{e.key}_t{e.type}"


def _raw(col: np.ndarray, e) -> np.ndarray:
    if e.type in (TYPE_UBYTE4, TYPE_UBYTE4_NORM):
        return np.ascontiguousarray(col).view("<i4").reshape(-1)
    return col


def _owned(values: np.ndarray) -> np.ndarray:
    """Every vertex's float32 vectors as an array of their own: a converted copy
    as it is, a view of the file's buffer copied (one pass and one allocation
    fewer than filling a zeroed array: at a million vertices, 12 MB of new pages)."""
    if values.base is None and values.dtype == np.float32 and values.flags.c_contiguous:
        return values
    return np.array(values, np.float32)


def _scatter(store: dict, key: str, sel: np.ndarray | slice, values: np.ndarray, n: int) -> None:
    if key not in store and _whole(sel):  # every vertex, in order
        # a view of the file's buffer is copied; an array of its own is taken as it is
        store[key] = values if values.base is None else np.array(values)
        return
    if key not in store:
        store[key] = np.zeros((n,) + values.shape[1:], values.dtype)
    store[key][sel] = values


def _global_joints(model: Model, draws, local_lists, joints) -> np.ndarray:
    """Blend indices are local to each geometry's bone mapping (when it has one);
    indices of no bone become 0. ``joints`` itself where nothing changes."""
    out = joints
    for (g, _), local_idx in zip(draws, local_lists, strict=True):
        mapping = model.geometries[g].bone_mapping
        if not len(mapping):
            continue
        if out is joints:
            out = joints.copy()
        on = np.zeros(len(joints), bool)  # the draw's vertices, by a mask (no sort)
        on[local_idx] = True
        verts = np.flatnonzero(on)
        local = joints[verts]
        out[verts] = mapping[np.minimum(local, len(mapping) - 1)]
    n_bones = max(len(model.bones), 1)
    if not out.size or int(out.max()) < n_bones:
        return out
    return np.where(out < n_bones, out, 0).astype(np.int32)


def _morphs(
    model: Model, used: np.ndarray, base: np.ndarray, convert: bool, attributes: list
) -> list[MorphTarget]:
    """Shape key offsets; normal and tangent offsets and the listed vertices as
    attributes. All sparse (the vertices each morph lists): a file of many small
    morphs costs memory in proportion to its data, not morphs x vertices. A
    vertex listed twice takes the later value, as the engine's does; normal and
    tangent attributes only for morphs that carry them."""
    out = []
    n = len(used)
    for i, m in enumerate(model.morphs):
        listed: list[tuple[np.ndarray, np.ndarray]] = []
        fields: dict[str, list[tuple[np.ndarray, np.ndarray]]] = {
            "position": [],
            "normal": [],
            "tangent": [],
        }
        rank = 0
        for mb in m.buffers:
            gid = mb.data["index"].astype(np.int64) + base[mb.vertex_buffer]
            where = np.searchsorted(used, gid)
            ok = (where < n) & (used[np.minimum(where, n - 1)] == gid) if n else np.zeros(0, bool)
            where = where[ok]
            listed.append((where, (rank + 1 + np.flatnonzero(ok)).astype(np.int32)))
            rank += len(ok)
            for name, rows in fields.items():
                if name in mb.data.dtype.names:
                    rows.append((where, axes.vectors(mb.data[name][ok], convert)))
        verts, pos = _last_wins(fields["position"], (0, 3), np.float32)
        out.append(MorphTarget(m.name, pos, float(m.weight), verts))
        verts, places = _last_wins(listed, (0,), np.int32)
        attributes.append(Attribute(MORPH_LISTED.format(i), "POINT", "INT", places, verts))
        for name, key in (("normal", MORPH_NORMAL), ("tangent", MORPH_TANGENT)):
            if fields[name]:
                verts, rows = _last_wins(fields[name], (0, 3), np.float32)
                attributes.append(Attribute(key.format(i), "POINT", "FLOAT_VECTOR", rows, verts))
    return out


def unheld_offsets(
    positions: np.ndarray, offsets: np.ndarray, verts: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray] | None:
    """(vertices, the file's offsets) where a shape key held as absolute float32
    positions gives another offset back (``(basis + offset) - basis`` rounds, or
    turns -0 into 0); None where every one comes back. Finite ones only (Blender
    gets 0 for the others, as the guard says)."""
    if verts is None:
        verts = np.arange(len(offsets))
    if not len(verts):
        return None
    base = np.asarray(positions, np.float32)[verts]
    off = np.asarray(offsets, np.float32)
    held = base + off
    back = held - base
    bits = back.view(np.uint32) != off.view(np.uint32)
    keep = np.any(bits, axis=1) & np.all(np.isfinite(held), axis=1)
    if not keep.any():
        return None
    return verts[keep].astype(np.int64), off[keep]


def _last_wins(
    parts: list[tuple[np.ndarray, np.ndarray]], empty: tuple, dtype
) -> tuple[np.ndarray, np.ndarray]:
    """(vertices ascending, their values) of (vertices, values) writes in order,
    the last write of a vertex winning (as assigning them into a dense array)."""
    if not parts:
        return np.zeros(0, np.int64), np.zeros(empty, dtype)
    where = np.concatenate([w for w, _ in parts]).astype(np.int64)
    values = np.concatenate([np.asarray(v, dtype) for _, v in parts])
    if np.all(where[1:] > where[:-1]):  # the usual morph: each vertex once, in order
        return where, values
    verts, last = np.unique(where[::-1], return_index=True)
    return verts, values[::-1][last]


_NONE = np.zeros(0, np.int64)


def unused_by_lod(model: Model) -> dict[int, np.ndarray]:
    """The vertices no draw of any LOD uses (global indices, ascending), by the
    LOD whose mesh keeps them as loose vertices: the first LOD that draws from
    their vertex buffer (LOD 0 for a buffer no draw uses)."""
    base = np.cumsum([0] + [vb.count for vb in model.vertex_buffers])
    is_used = np.zeros(int(base[-1]), bool)
    owner = np.zeros(len(model.vertex_buffers), np.int64)
    seen = np.zeros(len(model.vertex_buffers), bool)
    for geo in model.geometries:
        for lod, d in enumerate(geo.lods):
            idx = model.index_buffers[d.index_buffer].indices[
                d.index_start : d.index_start + d.index_count
            ]
            n = 2 if d.primitive_type == PRIMITIVE_LINES else 3
            is_used[_global(idx[: len(idx) // n * n], int(base[d.vertex_buffer]))] = True
            k = d.vertex_buffer
            owner[k] = lod if not seen[k] else min(owner[k], lod)
            seen[k] = True
    unused = np.flatnonzero(~is_used)
    if not len(unused):
        return {}
    lods = owner[np.searchsorted(base, unused, side="right") - 1]
    return {int(lod): unused[lods == lod] for lod in np.unique(lods)}


def import_model(model: Model, name: str, all_lods: bool = False, convert: bool = True) -> Scene:
    """Neutral scene for ``model``: LOD 0, or every LOD as its own mesh."""
    scene = Scene(name=name, skeleton=skeleton_from_model(model, convert))
    n_lods = max((len(g.lods) for g in model.geometries), default=0)
    levels = range(n_lods) if all_lods else range(min(1, n_lods))
    layout = model_layout(model, convert)
    layout[REWOUND_KEY] = True
    if model.version is not None:
        layout["version"] = model.version
    unused = unused_by_lod(model)
    for lod in levels:
        mesh_name = name if lod == 0 and not all_lods else f"{name}_LOD{lod}"
        mesh = mesh_from_lod(model, mesh_name, lod, convert, unused.get(lod, _NONE))
        mesh.extras = {"rigport_format": "urho3d", "urho_lod": lod, "urho_layout": layout}
        if all_lods and n_lods > 1:
            mesh.collection = f"{name}_LODs"
        scene.meshes.append(mesh)
    scene.extras = {"rigport_format": "urho3d", "urho_lod_count": n_lods}
    return scene
