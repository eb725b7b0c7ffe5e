"""Neutral scene -> clump for a target version (GTA III, Vice City, San Andreas).

The mesh's corners are welded back into RenderWare vertices (one per distinct
vertex, normal, UVs and colour); the Bin Mesh PLG is the file's while the
triangles are, else regenerated (as strips where the file had strips, else as
triangle lists); weights are sorted by weight, at most 4 per vertex and
normalised; the used-bone list is computed; the Skin PLG gets the layout its version uses.
Values the import kept as extras (frame flags, bone IDs, flags, split data,
bounding spheres, unknown plugins) come back when what they depend on is
unchanged, and are dropped with a warning otherwise.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..bounds import box_sphere
from ..codec import FormatError, Reader
from ..codec.errors import counted
from ..passes import run_passes
from ..scene import Attribute, ColorSet, Mesh, Skeleton, UVSet, morph_positions
from ..scene import MorphTarget as NeutralMorph
from ..scene import Skin as SkinSet
from ..transforms import compose_trs, parent_first_order, world_from_local
from .chunks import TARGETS, RawChunk, version_of
from .clump_import import (
    NORMAL_ATTRIBUTE,
    SKIN_SLOTS_ATTRIBUTE,
    FrameNode,
    ImportedClump,
    MaterialInfo,
    geometry_fingerprint,
    kept_uvs,
    zero_area,
)
from .dff import ATOMIC_COLLISION_TEST, ATOMIC_RENDER, Atomic, Clump, DffFile
from .extension import Extension
from .frames import FRAME_DTYPE, HANIM_NODE_DTYPE, FrameList, FrameName, HAnimPLG, hanim_flags
from .geometry import (
    LIGHT,
    MODULATE,
    NORMALS,
    POSITIONS,
    PRELIT,
    TEXTURED,
    TEXTURED2,
    TRISTRIP,
    Geometry,
    GeometryList,
    MorphTarget,
    bin_mesh_lists,
    bin_mesh_strips,
    positions_fingerprint,
    read_bin_mesh,
)
from .gta import NIGHT_ATTRIBUTE, NIGHT_COLORS, NOT_PER_VERTEX, night_colors_payload
from .materials import Material, MaterialList, Text, Texture
from .skin import DEADDEAD, Skin, SplitData

RIGHT_TO_RENDER = 0x1F
#: Parts of the shared fingerprint (``operators.blender.fingerprint``) a mesh's
#: ``rw_edits`` extra names when Blender's mesh no longer matches them.
EDIT_TOPOLOGY = "topology"
EDIT_WEIGHTS = "weights"
DEFAULT_TEXTURE_FLAGS = 0x1106  # linear mipmapped filtering, wrap U and V


@dataclass
class ExportMesh:
    mesh: Mesh  # in the space of its frame (skinned meshes: the skeleton's space)
    frame: int
    materials: list[MaterialInfo] = field(default_factory=list)
    welded: tuple | None = None  # weld(mesh), once it has been computed
    #: A skinned mesh not in the skeleton's space: where its space sits in the
    #: skeleton's (ImportedClump.skin_space); the inverse bind matrices are written
    #: relative to it.
    skin_space: np.ndarray | None = None


@dataclass
class ExportClump:
    frames: list[FrameNode]  # file order; bones have ``bone`` set
    meshes: list[ExportMesh]
    skeleton: Skeleton | None = None
    extras: dict[str, Any] = field(default_factory=dict)
    skeleton_offset: np.ndarray | None = None  # (4, 4) root bones' frames: offset @ local


def _raw(items) -> list[RawChunk]:
    return [RawChunk(int(e[0]), int(e[1]), bytes.fromhex(e[2])) for e in items or []]


def _with_raw(known: list, items) -> list:
    """``known`` sections with the stored unknown ones put back at their places."""
    out = list(known)
    for e in sorted(items or [], key=lambda e: e[3] if len(e) > 3 else len(out)):
        at = int(e[3]) if len(e) > 3 else len(out)
        out.insert(min(at, len(out)), RawChunk(int(e[0]), int(e[1]), bytes.fromhex(e[2])))
    return out


#: How shape keys become morph targets (the export option "Morph targets").
MORPH_MODES = {
    "AUTO": "as imported",
    "BASE": "base mesh only",
    "ALL": "every shape key",
}


def export_clump(
    data: ExportClump, target: str | int = "SA", morph_targets: str = "AUTO"
) -> tuple[DffFile, list[str]]:
    """A DffFile for ``target`` (a key of chunks.TARGETS, or a library ID stamp to
    write the exact version a clump came from) and the warnings.

    ``morph_targets``: "AUTO" writes as many morph targets as the geometry had in
    the file it came from (one for a new mesh), "BASE" one, "ALL" one more per
    shape key. GTA's games and DragonFF read only the first morph target, and
    rw-parser based tools fail on more: shape keys left out are warned about."""
    if morph_targets not in MORPH_MODES:
        raise ValueError(f"morph_targets must be one of {', '.join(MORPH_MODES)}")
    if isinstance(target, str):
        _, version, stamp = TARGETS[target]
    else:
        stamp, version = int(target), version_of(int(target))
    warnings: list[str] = []
    skeleton, perm = _depth_first(data.skeleton)
    if skeleton is not None and len(skeleton) > 255:
        raise FormatError(f"{len(skeleton)} bones: a Skin PLG holds at most 255")
    frame_list = _frame_list(data, skeleton, stamp)
    geometries, atomics = [], []
    meshes = [
        part
        for em in data.meshes
        for part in _fit(replace(em, mesh=em.mesh.with_corner_normals()), warnings)
    ]
    ctx = _ClumpContext(skeleton, perm, version, stamp, morph_targets, warnings)
    for k, em in enumerate(meshes):
        geo = _geometry(em, ctx)
        geometries.append(geo)
        e = em.mesh.extras
        tail = bytes.fromhex(e.get("rw_atomic_tail", "00000000"))
        ext_items: list = _with_raw([], e.get("rw_atomic_extension"))
        if geo.skin is not None and "rw_atomic_extension" not in e:
            ext_items.append(
                RawChunk(RIGHT_TO_RENDER, stamp, np.array([0x116, 1], "<u4").tobytes())
            )
        flags = int(e.get("rw_atomic_flags", ATOMIC_COLLISION_TEST | ATOMIC_RENDER))
        atomics.append(
            Atomic(stamp, stamp, em.frame, k, flags, tail, [Extension(stamp, ext_items)])
        )
    counts = [int(c) for c in data.extras.get("rw_clump_counts") or [0, 0, 0]]
    clump = Clump(stamp, stamp, [len(atomics), *counts[1:]])  # lights, cameras kept
    known = [frame_list, GeometryList(stamp, stamp, geometries), *atomics]
    clump.items = _clump_items(known, data.extras, stamp)
    before = _raw(data.extras.get("rw_file_chunks"))  # a UV animation dictionary ...
    trailing = bytes(int(data.extras.get("rw_trailing", 0)))
    return DffFile([*before, clump], trailing), warnings


def _clump_items(known: list, extras: dict, stamp: int) -> list:
    """The clump's sections: ``known`` with the extensions (as many as the file had,
    where it had them; one at the end for a new clump) and the kept raw sections
    (lights, cameras) back at their places."""
    same_version = extras.get("rw_stamp") == stamp
    stored = extras.get("rw_clump_extensions")
    if stored is None:  # a new clump, or one imported before the places were kept
        stored = [[len(known), stamp, extras.get("rw_clump_extension") or []]]
    placed = [
        (int(at), Extension(int(s) if same_version else stamp, _raw(items)))
        for at, s, items in stored
    ]
    placed += [
        (int(e[3]), RawChunk(int(e[0]), int(e[1]), bytes.fromhex(e[2])))
        for e in extras.get("rw_clump_items") or []
    ]
    out = list(known)
    for at, item in sorted(placed, key=lambda p: p[0]):
        out.insert(min(at, len(out)), item)
    return _after_atomics(out)


def _after_atomics(items: list) -> list:
    """Sections kept by their place in the file that now fall between atomics
    (the export has more atomics than the file had) moved after the last one,
    in their order: a reader takes the clump's atomics one after another."""
    at = [i for i, x in enumerate(items) if isinstance(x, Atomic)]
    if not at or at[-1] - at[0] + 1 == len(at):
        return items
    run = items[at[0] : at[-1] + 1]
    atomics = [x for x in run if isinstance(x, Atomic)]
    others = [x for x in run if not isinstance(x, Atomic)]
    return items[: at[0]] + atomics + others + items[at[-1] + 1 :]


def _depth_first(skeleton: Skeleton | None) -> tuple[Skeleton | None, np.ndarray | None]:
    """The skeleton in depth-first order (what HAnim needs) and old -> new indices."""
    if skeleton is None:
        return None, None
    order = np.array(parent_first_order(skeleton.parents), np.int64)
    if np.array_equal(order, np.arange(len(order))):
        return skeleton, order
    return skeleton.reordered(order)


def _frame_list(data: ExportClump, skeleton: Skeleton | None, stamp: int) -> FrameList:
    n = len(data.frames)
    rec = np.zeros(n, FRAME_DTYPE)
    extensions = []
    index = {name: i for i, name in enumerate(skeleton.names)} if skeleton is not None else {}
    ids = _bone_ids(skeleton)
    local = None
    if skeleton is not None:
        local = compose_trs(
            skeleton.local_translation, skeleton.local_rotation, skeleton.local_scale
        )
    # the hierarchy goes where the import found it, else on the root bone's frame
    hierarchy_at = next(
        (i for i, f in enumerate(data.frames) if f.extras.get("rw_hanim_root")), None
    )
    if hierarchy_at is None:
        hierarchy_at = next(
            (i for i, f in enumerate(data.frames) if f.bone >= 0 and index.get(f.name) == 0), -1
        )
    for i, f in enumerate(data.frames):
        b = index.get(f.name, -1) if f.bone >= 0 else -1
        m = _frame_matrix(data, skeleton, local, f, b)
        rec["rotation"][i] = np.asarray(m[:3, :3]).T
        rec["position"][i] = m[:3, 3]
        rec["parent"][i] = f.parent
        rec["flags"][i] = int(f.extras.get("rw_frame_flags", 0))
        items: list = []
        own_id = ids[b] if b >= 0 else f.extras.get("rw_bone_id")
        if skeleton is not None and i == hierarchy_at:
            own_id = ids[0] if own_id is None else own_id
            items.append(_hierarchy(data, skeleton, ids, own_id, stamp))
        elif own_id is not None:
            items.append(HAnimPLG(stamp, 0x100, int(own_id)))
        if not f.extras.get("rw_unnamed"):
            items.append(FrameName(stamp, frame_name_bytes(f)))
        extensions.append(Extension(stamp, _with_raw(items, f.extras.get("rw_extension"))))
    return FrameList(stamp, stamp, rec, extensions)


def _bone_ids(skeleton: Skeleton | None) -> dict[int, int]:
    """Each bone's HAnim ID: the imported one, else the next free one."""
    ids: dict[int, int] = {}
    if skeleton is None:
        return ids
    used = {int(e["rw_bone_id"]) for e in skeleton.extras if "rw_bone_id" in e}
    nxt = max(used, default=0) + 1
    for i, e in enumerate(skeleton.extras or [{}] * len(skeleton)):
        if "rw_bone_id" in e:
            ids[i] = int(e["rw_bone_id"])
        else:
            ids[i], nxt = nxt, nxt + 1
    return ids


def _frame_matrix(
    data: ExportClump,
    skeleton: Skeleton | None,
    local: np.ndarray | None,
    f: FrameNode,
    b: int,
) -> np.ndarray:
    """A frame's local matrix (a bone's from the skeleton); the file's own while it
    still matches, so unedited frames keep their exact floats."""
    m = f.matrix
    stored = f.extras.get("rw_frame_matrix")
    if b >= 0:
        m = local[b]
        if data.skeleton_offset is not None and skeleton.parents[b] < 0:
            m = data.skeleton_offset @ m
        stored = (skeleton.extras[b] if skeleton.extras else {}).get("rw_frame_matrix")
    if stored is not None:
        s = np.vstack([np.array(stored, np.float64).reshape(3, 4), [0, 0, 0, 1]])
        if np.allclose(s, m, atol=1e-5):
            m = s
    return m


def _hierarchy(
    data: ExportClump, skeleton: Skeleton, ids: dict[int, int], own_id: int, stamp: int
) -> HAnimPLG:
    """The HAnim plugin with the whole hierarchy, and the imported header fields."""
    hx = data.extras.get("rw_hanim") or {}
    nodes = np.zeros(len(skeleton), HANIM_NODE_DTYPE)
    nodes["id"] = [ids[j] for j in range(len(skeleton))]
    nodes["index"] = np.arange(len(skeleton))
    nodes["flags"] = hanim_flags(skeleton.parents)
    return HAnimPLG(
        stamp,
        int(hx.get("version", 0x100)),
        int(own_id),
        nodes,
        int(hx.get("flags", 0)),
        int(hx.get("key_frame_size", 36)),
    )


def frame_name_bytes(f: FrameNode) -> bytes:
    """The frame's name as the file had it while the frame keeps the name it was
    imported with (Blender's ".001" for a name taken in the blend file included)."""
    given = f.extras.get("rw_name")
    if given is not None and (
        f.name == given or re.fullmatch(re.escape(given) + r"\.\d{3,}", f.name)
    ):
        raw = f.extras.get("rw_name_raw")
        return bytes.fromhex(raw) if raw is not None else given.encode("utf-8")
    return f.name.encode("utf-8")


MAX_VERTICES = 0xFFFF


def _fit(em: ExportMesh, warnings: list[str], limit: int = MAX_VERTICES) -> list[ExportMesh]:
    """The mesh as parts of at most ``limit`` RenderWare vertices each (a geometry's
    triangles index vertices with 16 bits): halves by face order until they fit."""
    _restore_normals(em.mesh)
    if len(em.mesh.positions) <= limit:
        em.welded = weld(em.mesh)
        if len(em.welded[0]) <= limit:
            return [em]
    parts = [em.mesh]
    done: list[Mesh] = []
    while parts:
        m = parts.pop()
        nf = len(m.face_starts)
        if len(weld(m)[0]) <= limit or nf < 2:
            done.append(m)
            continue
        half = nf // 2
        parts += [_face_range(m, half, nf), _face_range(m, 0, half)]
    for k, m in enumerate(done):
        m.name = f"{em.mesh.name}_{k}"
    warnings.append(
        f"{em.mesh.name}: more vertices than a geometry holds ({limit}); "
        f"written as {len(done)} atomics"
    )
    return [ExportMesh(m, em.frame, em.materials, skin_space=em.skin_space) for m in done]


def _face_range(mesh: Mesh, f0: int, f1: int) -> Mesh:
    """Faces f0..f1 of a triangulated mesh with only the vertices they use."""
    c0, c1 = (
        int(mesh.face_starts[f0]),
        (int(mesh.face_starts[f1]) if f1 < len(mesh.face_starts) else len(mesh.corner_verts)),
    )
    used, local = np.unique(mesh.corner_verts[c0:c1], return_inverse=True)
    out = Mesh(
        mesh.name,
        mesh.positions[used],
        local.astype(np.int32),
        (mesh.face_starts[f0:f1] - c0).astype(np.int32),
        mesh.face_materials[f0:f1],
        materials=list(mesh.materials),
        extras={k: v for k, v in mesh.extras.items() if k != "rw_geometry_extension"},
    )
    if mesh.normals is not None:
        out.normals = mesh.normals[c0:c1]
    out.uv_sets = [UVSet(u.name, u.uv[c0:c1]) for u in mesh.uv_sets]
    out.colors = [ColorSet(c.name, c.color[c0:c1], c.byte) for c in mesh.colors]
    if mesh.skin is not None:
        out.skin = SkinSet(mesh.skin.joints[used], mesh.skin.weights[used])
    out.morphs = [
        NeutralMorph(m.name, m.position_offsets[used], m.default_weight) for m in mesh.morphs
    ]
    for a in mesh.attributes:
        if a.domain == "POINT":
            out.attributes.append(Attribute(a.name, a.domain, a.type, a.data[used]))
        elif a.domain == "CORNER":
            out.attributes.append(Attribute(a.name, a.domain, a.type, a.data[c0:c1]))
    return out


def weld(mesh: Mesh) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """RenderWare vertices from corners: (source vertex per new vertex, first corner
    per new vertex (-1 for a vertex no face uses), new vertex per corner)."""
    nv, nc = len(mesh.positions), len(mesh.corner_verts)
    cv = mesh.corner_verts.astype(np.int64)
    first_of = np.full(nv, -1, np.int64)
    first_of[cv[::-1]] = np.arange(nc - 1, -1, -1)
    per_corner = [mesh.normals] if mesh.normals is not None else []
    per_corner += [uv.uv for uv in mesh.uv_sets] + [c.color for c in mesh.colors]
    back = first_of[cv]
    # one set of values per vertex; a NaN the file gave a vertex is on all its corners
    if all(np.array_equal(a, a[back], equal_nan=True) for a in per_corner):
        return np.arange(nv), first_of, cv
    cols = [mesh.corner_verts.astype(np.float64)[:, None]]
    if mesh.normals is not None:
        cols.append(np.round(mesh.normals.astype(np.float64), 4))
    cols += [np.round(uv.uv.astype(np.float64), 6) for uv in mesh.uv_sets]
    cols += [np.round(c.color.astype(np.float64) * 255.0) for c in mesh.colors]
    key = np.hstack(cols)
    unused = np.setdiff1d(np.arange(nv), mesh.corner_verts)
    if len(unused):
        extra = np.zeros((len(unused), key.shape[1]))
        extra[:, 0] = unused
        key = np.vstack([key, extra])
    _, first, inverse = np.unique(key, axis=0, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    src = key[first, 0].astype(np.int64)
    first = np.where(first < nc, first, -1)
    return src, first, inverse[:nc]


@dataclass
class _ClumpContext:
    """What every geometry of one export shares."""

    skeleton: Skeleton | None  # depth first
    perm: np.ndarray | None  # the neutral skeleton's bone -> its depth-first place
    version: int
    stamp: int
    morph_targets: str  # a key of MORPH_MODES
    warnings: list[str]


@dataclass
class _GeometryPass:
    """What the passes of ``_geometry`` read and fill, in the order they run."""

    em: ExportMesh
    ctx: _ClumpContext
    src: np.ndarray = field(init=False)  # the mesh vertex of each welded vertex
    first: np.ndarray = field(init=False)  # a corner of each welded vertex (-1: none)
    tris: np.ndarray = field(init=False)
    n_slots: int = 1
    mats: np.ndarray = field(init=False)
    stored: dict = field(default_factory=dict)  # the imported geometry's fields
    same: bool = False  # the triangles are the imported ones
    #: The fingerprint parts Blender's mesh no longer matches (None: not known).
    edits: set[str] | None = None
    tri_ids: np.ndarray | None = None  # the file's own triangle material IDs
    has_face: np.ndarray = field(init=False)
    fc: np.ndarray = field(init=False)  # the corner each vertex's values come from
    positions: np.ndarray = field(init=False)
    normals: np.ndarray | None = None
    uvs: list[np.ndarray] = field(default_factory=list)
    colors: np.ndarray | None = None
    night_set: ColorSet | None = None
    flags: int = 0
    targets: list[MorphTarget] = field(default_factory=list)
    ext_items: list = field(default_factory=list)

    @property
    def mesh(self) -> Mesh:
        return self.em.mesh

    @property
    def nv(self) -> int:
        return len(self.src)


def _geometry(em: ExportMesh, ctx: _ClumpContext) -> Geometry:
    state = _GeometryPass(em, ctx)
    run_passes(
        state,
        _welded_faces,
        _vertex_data,
        _geometry_flags,
        _morph_targets,
        _geometry_extension,
    )
    return _assembled_geometry(state)


def _welded_faces(g: _GeometryPass) -> None:
    """Welded vertices, triangles and their materials; whether they are the imported ones."""
    mesh = g.mesh
    g.src, g.first, corner_new = g.em.welded if g.em.welded is not None else weld(mesh)
    if g.nv > MAX_VERTICES:
        raise FormatError(f"{mesh.name}: {g.nv} vertices (a geometry holds at most 65535)")
    g.tris = corner_new.reshape(-1, 3).astype(np.uint16)
    g.n_slots = max(len(mesh.materials), 1)
    g.mats = np.clip(mesh.face_materials, 0, g.n_slots - 1).astype(np.uint16)
    g.stored = mesh.extras.get("rw_geometry") or {}
    # the shared rule (Blender's mesh against its fingerprint at import), and the
    # welded triangles against the file's, which the kept Bin Mesh indexes
    edits = mesh.extras.get("rw_edits")
    g.edits = set(edits) if edits is not None else None
    g.same = g.stored.get("fingerprint") == geometry_fingerprint(g.nv, g.tris, g.mats) and (
        g.edits is None or EDIT_TOPOLOGY not in g.edits
    )
    if g.same:
        g.tri_ids = _stored_tri_materials(g.stored.get("tri_materials"), len(g.tris))
    g.has_face = g.first >= 0
    g.fc = np.where(g.has_face, g.first, 0)


def _vertex_data(g: _GeometryPass) -> None:
    """Positions, and normals, UVs and prelit colours from each vertex's corner."""
    mesh, has_face, fc, warnings = g.mesh, g.has_face, g.fc, g.ctx.warnings
    g.positions = mesh.positions[g.src].astype(np.float32)
    if mesh.normals is not None:
        g.normals = np.where(has_face[:, None], mesh.normals[fc], 0).astype(np.float32)
    for i, uv in enumerate(mesh.uv_sets[:8]):
        v = np.where(has_face[:, None], uv.uv[fc], 0).astype(np.float32)
        v[:, 1] = 1.0 - v[:, 1]
        g.uvs.append(kept_uvs(mesh, i, v, has_face, fc))
    if len(mesh.uv_sets) > 8:
        warnings.append(f"{mesh.name}: only the first 8 of {len(mesh.uv_sets)} UV maps written")
    prelit = [c for c in mesh.colors if c.name != NIGHT_ATTRIBUTE]
    g.night_set = next((c for c in mesh.colors if c.name == NIGHT_ATTRIBUTE), None)
    g.colors = None if not prelit else _vertex_colors(prelit[0].color, has_face, fc)
    if len(prelit) > 1:
        warnings.append(f"{mesh.name}: only colour attribute {prelit[0].name!r} written")
    if g.stored.get("unused"):
        _unused_values(g, g.stored["unused"])


def _unused_rows(g: _GeometryPass, unused: dict) -> tuple[np.ndarray, np.ndarray]:
    """The written vertices no triangle uses that the file had, and their places in
    the import's list of them: by index while the triangles are the file's, else by
    position (an edit elsewhere leaves such a vertex where it was)."""
    idx = np.asarray(unused.get("vertices") or [], np.int64)
    rows = np.flatnonzero(~g.has_face)
    if not len(idx) or not len(rows):
        return rows[:0], rows[:0]
    if g.same:
        at = np.searchsorted(idx, g.src[rows])
        ok = (at < len(idx)) & (idx[np.minimum(at, len(idx) - 1)] == g.src[rows])
        return rows[ok], at[ok]
    if not unused.get("positions"):
        return rows[:0], rows[:0]
    kept = np.frombuffer(bytes.fromhex(unused["positions"]), "<f4").reshape(-1, 3)
    _, ids = np.unique(np.vstack([kept, g.positions[rows]]), axis=0, return_inverse=True)
    ids = ids.reshape(-1)
    first = np.full(int(ids.max()) + 1, -1, np.int64)
    first[ids[: len(kept)][::-1]] = np.arange(len(kept) - 1, -1, -1)
    at = first[ids[len(kept) :]]
    return rows[at >= 0], at[at >= 0]


def _unused_night(g: _GeometryPass, unused: dict, colors: np.ndarray) -> None:
    """The file's night colours of the vertices no triangle uses, into ``colors``."""
    rows, at = _unused_rows(g, unused)
    night = unused.get("night")
    if night and len(rows):
        colors[rows] = np.frombuffer(bytes.fromhex(night), np.uint8).reshape(-1, 4)[at]


def _unused_values(g: _GeometryPass, unused: dict) -> None:
    """The file's normal, UVs and prelit colour of each vertex no triangle uses (it
    has no corner to hold them in Blender)."""
    rows, at = _unused_rows(g, unused)
    if not len(rows):
        return
    normals = unused.get("normals")
    if normals and g.normals is not None:
        g.normals[rows] = np.frombuffer(bytes.fromhex(normals), "<f4").reshape(-1, 3)[at]
    for uv, hexed in zip(g.uvs, unused.get("uvs") or [], strict=False):
        uv[rows] = np.frombuffer(bytes.fromhex(hexed), "<f4").reshape(-1, 2)[at]
    colors = unused.get("colors")
    if colors and g.colors is not None:
        g.colors[rows] = np.frombuffer(bytes.fromhex(colors), np.uint8).reshape(-1, 4)[at]


def _geometry_flags(g: _GeometryPass) -> None:
    """The file's flags with the data bits brought up to date, or a new geometry's."""
    if "flags" in g.stored:
        old = int(g.stored["flags"])
        flags = old & 0xFF & ~(TRISTRIP | PRELIT | NORMALS | TEXTURED | TEXTURED2)
        count_bits = bool((old >> 16) & 0xFF) or len(g.uvs) > 2
    else:
        flags, count_bits = POSITIONS | LIGHT | MODULATE, True
    flags |= (PRELIT if g.colors is not None else 0) | (NORMALS if g.normals is not None else 0)
    flags |= TEXTURED2 if len(g.uvs) >= 2 else (TEXTURED if g.uvs else 0)
    flags |= len(g.uvs) << 16 if count_bits else 0
    g.flags = flags


def _morph_targets(g: _GeometryPass) -> None:
    """The base and as many shape keys as the option asks for, with their spheres."""
    mesh, positions, mode = g.mesh, g.positions, g.ctx.morph_targets
    g.targets = [MorphTarget(_sphere(positions), positions, g.normals)]
    morphs = mesh.morphs[: _morph_count(mesh, g.stored, mode)]
    if len(morphs) < len(mesh.morphs):
        left = len(mesh.morphs) - len(morphs)
        g.ctx.warnings.append(
            f"{mesh.name}: {counted(left, 'shape key')} left out (Shape Keys: "
            f"{MORPH_MODES[mode]}, {len(morphs) + 1} written); GTA's games and "
            "DragonFF read only the first morph target, rw-parser based tools fail on more"
        )
    for m in morphs:
        offsets = m.position_offsets[g.src]
        g.targets.append(MorphTarget(_sphere(positions), morph_positions(positions, offsets), None))
    spheres = g.stored.get("spheres")
    moved = g.stored.get("positions") != positions_fingerprint([t.positions for t in g.targets])
    if g.same and not moved and spheres and len(spheres) == len(g.targets):
        for t, s in zip(g.targets, spheres, strict=True):
            t.sphere = np.array(s, np.float32)
    else:
        for t in g.targets:
            t.sphere = _sphere(t.positions)


def _geometry_extension(g: _GeometryPass) -> None:
    """Bin Mesh, Skin PLG, the kept plugins that still fit the mesh, and night colours."""
    mesh, stored, stamp = g.mesh, g.stored, g.ctx.stamp
    ext_items: list = [bin_mesh_lists(g.tris, g.mats, g.n_slots, stamp)]
    if g.same and stored.get("bin_mesh"):  # the file's own Bin Mesh (strips, order)
        ext_items[0] = read_bin_mesh(Reader(bytes.fromhex(stored["bin_mesh"])), stamp)
    elif int(stored.get("bin_mesh_flags") or 0) & 1:  # the file drew strips: re-stripped
        ext_items[0] = bin_mesh_strips(g.tris, g.mats, g.n_slots, stamp)
    g.flags |= TRISTRIP if ext_items[0].strips else 0
    if mesh.skin is not None and g.ctx.skeleton is not None:
        ext_items.append(_skin(g))
    raw = list(mesh.extras.get("rw_geometry_extension") or [])
    dropped = [c for c in raw if int(c[0]) not in NOT_PER_VERTEX]
    if dropped and not g.same:  # 2dfx and breakable models do not depend on the vertices
        g.ctx.warnings.append(
            f"{mesh.name}: the mesh changed, so "
            f"{counted(len(dropped), 'per-vertex plugin chunk')} "
            f"({', '.join(f'0x{int(c[0]):X}' for c in dropped)}) dropped"
        )
        raw = [c for c in raw if int(c[0]) in NOT_PER_VERTEX]
    if g.night_set is not None:  # from the colour attribute, so it follows every edit
        night = stored.get("night_colors") or {}
        colors = _vertex_colors(g.night_set.color, g.has_face, g.fc)
        if g.stored.get("unused"):
            _unused_night(g, g.stored["unused"], colors)
        payload = night_colors_payload(colors, int(night.get("flag", 1)))
        chunk_stamp = int(night.get("stamp", stamp)) if g.same else stamp
        raw.append([NIGHT_COLORS, chunk_stamp, payload.hex(), int(night.get("place", 1 << 30))])
    g.ext_items = _with_raw(ext_items, raw)


def _assembled_geometry(g: _GeometryPass) -> Geometry:
    stamp = g.ctx.stamp
    surface = None
    if g.ctx.version < 0x34000:
        surface = tuple(g.stored.get("surface") or (1.0, 1.0, 1.0))
    materials = [_material(mi, stamp) for mi in g.em.materials] or [_material(None, stamp)]
    while len(materials) < g.n_slots:
        materials.append(_material(None, stamp))
    ml = MaterialList(stamp, stamp, np.full(len(materials), -1, np.int32), materials)
    return Geometry(
        stamp,
        stamp,
        g.flags,
        g.nv,
        g.tris,
        g.mats if g.tri_ids is None else g.tri_ids,
        ml,
        Extension(stamp, g.ext_items),
        surface,
        g.colors,
        g.uvs,
        g.targets,
    )


def _morph_count(mesh: Mesh, stored: dict, mode: str) -> int:
    """How many shape keys become morph targets (after the base mesh)."""
    if mode == "ALL":
        return len(mesh.morphs)
    if mode == "BASE":
        return 0
    spheres = stored.get("spheres")  # one per morph target the file had
    return max(len(spheres) - 1, 0) if spheres else 0


def _vertex_colors(color: np.ndarray, has_face: np.ndarray, fc: np.ndarray) -> np.ndarray:
    """Per-corner colours (0..1) as one RGBA byte colour per RenderWare vertex."""
    c = np.where(has_face[:, None], color[fc], 1.0)
    return np.clip(np.rint(c * 255.0), 0, 255).astype(np.uint8)


def _stored_tri_materials(stored, count: int) -> np.ndarray | None:
    """The file's triangle material IDs kept by the import (0: all zero)."""
    if stored is None:
        return None
    if stored == 0:
        return np.zeros(count, np.uint16)
    ids = np.frombuffer(bytes.fromhex(stored), "<u2")
    return ids.astype(np.uint16) if len(ids) == count else None


def _restore_normals(mesh: Mesh) -> None:
    """Corner normals back to the file's values (not unit, or zero) where Blender's
    agree with them, and wherever Blender cannot hold one: corners of zero-area
    triangles and Blender normals that are not unit length. Edited ones stay."""
    stored = next((a for a in mesh.attributes if a.name == NORMAL_ATTRIBUTE), None)
    if stored is None or mesh.normals is None or len(stored.data) != len(mesh.positions):
        return
    cv = mesh.corner_verts.astype(np.int64)
    data = np.asarray(stored.data, np.float32)
    with np.errstate(invalid="ignore"):  # a file's NaN or infinite normal agrees with none
        length = np.linalg.norm(data, axis=1)  # per vertex, then per corner: the same numbers
        unit = data / np.maximum(length, 1e-12)[:, None]
        agree = (length[cv] < 1e-6) | ((unit[cv] * mesh.normals).sum(axis=1) > 0.999)
    held = np.abs(np.linalg.norm(mesh.normals, axis=1) - 1.0) < 1e-3
    raw = data[cv]
    normals = np.where((agree | ~held)[:, None], raw, mesh.normals).astype(np.float32)
    flat = zero_area(mesh.positions, cv.reshape(-1, 3))
    if not flat.any():
        mesh.normals = normals
        return
    flat = np.repeat(flat, 3)
    # a zero-area triangle shows no normal: its corners take the one their vertex has on
    # its other triangles (so the vertex is not split), else the file's
    shown = np.nonzero(~flat)[0][::-1]
    first = np.full(len(mesh.positions), -1, np.int64)
    first[cv[shown]] = shown
    other = first[cv]
    from_vertex = flat & (other >= 0)
    normals[from_vertex] = normals[other[from_vertex]]
    normals[flat & (other < 0)] = raw[flat & (other < 0)]
    mesh.normals = normals


def _sphere(p: np.ndarray) -> np.ndarray:
    _, _, c, r = box_sphere(p)
    return np.array([*c, r], np.float32)


def _skin(g: _GeometryPass) -> Skin:
    """The Skin PLG: four weights per vertex, the bind matrices, and the split data."""
    mesh, skeleton, perm, warnings = g.mesh, g.ctx.skeleton, g.ctx.perm, g.ctx.warnings
    joints, weights = _unheld_weights(g, *_skin_weights(g))
    nb = len(skeleton)
    inv = skeleton.inverse_bind
    if inv is None:
        inv = np.linalg.inv(skeleton.world_rest())
    if g.em.skin_space is not None:
        inv = np.asarray(inv, np.float64) @ g.em.skin_space
    mats = np.transpose(inv, (0, 2, 1)).astype(np.float32)
    stored = mesh.extras.get("rw_skin") or {}
    w = stored.get("matrix_w")
    if w is not None and len(w) == nb:
        wcol = np.array(w, np.float32)
        if perm is not None:
            wcol = wcol[np.argsort(perm)]
        mats[:, :, 3] = wcol
    else:
        mats[:, :, 3] = 0.0  # what the games' files have (FORMAT-NOTES)
    used = np.unique(joints[weights > 0]).astype(np.uint8)
    max_w = int((weights > 0).sum(axis=1).max()) if len(weights) else 0
    stamp = g.ctx.stamp
    skin = Skin(stamp, nb, used, max_w, joints.astype(np.uint8), weights.astype(np.float32), mats)
    if g.ctx.version < 0x34000:
        skin.used_bones = np.zeros(0, np.uint8)
        skin.max_weights = 0
        skin.fillers = np.full(nb, DEADDEAD, np.uint32)
        if stored.get("split") and not SplitData.from_json(stored["split"]).is_zero():
            warnings.append(f"{mesh.name}: the old skin layout has no split data; dropped")
        return skin
    split = SplitData()
    if stored.get("split") and not SplitData.from_json(stored["split"]).is_zero():
        weighted = g.edits is not None and EDIT_WEIGHTS in g.edits
        if g.same and not weighted and perm is not None and np.array_equal(perm, np.arange(nb)):
            split = SplitData.from_json(stored["split"])
        else:
            what = "weights" if g.same and weighted else "mesh or skeleton"
            warnings.append(f"{mesh.name}: the {what} changed; split data zeroed")
    skin.split = split
    return skin


def _skin_weights(g: _GeometryPass) -> tuple[np.ndarray, np.ndarray]:
    """The four heaviest bones of each welded vertex, normalised, in the file's slot order
    while the file's bones and slots are still there."""
    mesh, src, skeleton, perm = g.mesh, g.src, g.ctx.skeleton, g.ctx.perm
    joints = mesh.skin.joints[src].astype(np.int64)
    weights = mesh.skin.weights[src].astype(np.float64)
    if perm is not None:
        joints = perm[np.clip(joints, 0, len(perm) - 1)]
    weights = np.where((joints >= 0) & (joints < len(skeleton)), weights, 0.0)
    order = np.argsort(-weights, axis=1, kind="stable")[:, :4]
    joints = np.take_along_axis(joints, order, 1)
    weights = np.take_along_axis(weights, order, 1)
    if joints.shape[1] < 4:
        pad = 4 - joints.shape[1]
        joints = np.pad(joints, ((0, 0), (0, pad)))
        weights = np.pad(weights, ((0, 0), (0, pad)))
    sums = weights.sum(axis=1, keepdims=True)
    normal = np.divide(weights, sums, out=np.zeros_like(weights), where=sums > 0)
    # rows already normalised to float32 precision stay as they are (lossless)
    weights = np.where(np.abs(sums - 1.0) <= 1e-6, weights, normal)
    joints = np.where(weights > 0, joints, 0)
    slots = next((a for a in mesh.attributes if a.name == SKIN_SLOTS_ATTRIBUTE), None)
    identity = perm is None or np.array_equal(perm, np.arange(len(perm)))
    matrix_w = (mesh.extras.get("rw_skin") or {}).get("matrix_w")
    if slots is not None and len(slots.data) == len(mesh.positions) and identity:
        if matrix_w is not None and len(matrix_w) == len(skeleton):  # the file's bones
            joints, weights = _file_slot_order(joints, weights, slots.data[src], len(skeleton))
    unweighted = int((sums[:, 0] <= 0).sum())
    if unweighted:
        g.ctx.warnings.append(f"{mesh.name}: no weights on {counted(unweighted, 'vertex')}")
    return joints, weights


def _unheld_weights(
    g: _GeometryPass, joints: np.ndarray, weights: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The file's own bones and weights of the vertices whose weights Blender's groups
    could not hold (``unheld`` of the import's ``rw_skin``), while the triangles, the
    weights and the file's bones are unchanged; the other vertices as they are. The
    weights then come back as float32, which keeps a NaN's bits (float64 would quiet
    a signalling one)."""
    skeleton, perm = g.ctx.skeleton, g.ctx.perm
    stored = g.mesh.extras.get("rw_skin") or {}
    unheld = stored.get("unheld")
    unedited = g.same and g.edits is not None and EDIT_WEIGHTS not in g.edits
    identity = perm is None or np.array_equal(perm, np.arange(len(perm)))
    file_bones = len(stored.get("matrix_w") or []) == len(skeleton)
    if not (unheld and unedited and identity and file_bones):
        return joints, weights
    idx = np.asarray(unheld["vertices"], np.int64)
    at = np.searchsorted(idx, g.src)
    found = (at < len(idx)) & (idx[np.minimum(at, len(idx) - 1)] == g.src)
    file_j = np.frombuffer(bytes.fromhex(unheld["indices"]), np.uint8).reshape(-1, 4)
    file_w = np.frombuffer(bytes.fromhex(unheld["weights"]), "<f4").reshape(-1, 4)
    joints, weights = joints.copy(), weights.astype(np.float32)
    joints[found] = file_j[at[found]]
    weights[found] = file_w[at[found]]
    return joints, weights


def _file_slot_order(
    joints: np.ndarray, weights: np.ndarray, packed: np.ndarray, num_bones: int
) -> tuple[np.ndarray, np.ndarray]:
    """Each vertex's influences in the file's slot order (equal weights stay in their
    order, zero-weight slots keep the bone the file named) where the file's slots
    name every bone the vertex has; the other vertices as they are."""
    bits = np.asarray(packed).astype(np.int64).reshape(-1, 1) & 0xFFFFFFFF
    file_slots = (bits >> np.array([0, 8, 16, 24], np.int64)) & 0xFF
    used = weights > 0
    # match[v, k, m]: the file's slot k names influence m
    match = (file_slots[:, :, None] == joints[:, None, :]) & used[:, None, :]
    first = np.argmax(match, axis=1)  # (v, m): the first slot naming influence m
    found = match.any(axis=1)
    fits = np.all(found | ~used, axis=1) & np.all(file_slots < num_bones, axis=1)
    pairs = used[:, :, None] & used[:, None, :] & ~np.eye(used.shape[1], dtype=bool)
    fits &= ~(pairs & (first[:, :, None] == first[:, None, :])).any(axis=(1, 2))  # one slot each
    out_w = np.zeros_like(weights)
    rows = np.nonzero(fits)[0]
    for m in range(joints.shape[1]):
        take = rows[used[rows, m]]
        out_w[take, first[take, m]] = weights[take, m]
    # only an order the file could have had: the weights still strongest first
    w = out_w[:, : file_slots.shape[1]]
    later = np.triu(np.ones((w.shape[1], w.shape[1]), bool), 1)
    wrong = (w[:, :, None] < w[:, None, :]) & (w[:, :, None] > 0) & later
    fits &= ~wrong.any(axis=(1, 2))
    out_j = np.where(fits[:, None], file_slots, joints)
    return out_j, np.where(fits[:, None], out_w, weights)


def _material(mi: MaterialInfo | None, stamp: int) -> Material:
    if mi is None:
        return Material(
            stamp, stamp, 0, (255, 255, 255, 255), 0, 0, (1.0, 1.0, 1.0), None, Extension(stamp)
        )
    m = mi.extras.get("rw_material") or {}
    texture = None
    if mi.texture:
        t = mi.extras.get("rw_texture") or {}
        texture = Texture(
            stamp,
            stamp,
            int(t.get("flags", DEFAULT_TEXTURE_FLAGS)),
            _text(stamp, mi.texture, t.get("name_raw")),
            _text(stamp, t.get("mask", ""), t.get("mask_raw")),
            Extension(stamp, _raw(t.get("extension"))),
        )
    return Material(
        stamp,
        stamp,
        int(m.get("flags", 0)),
        tuple(int(c) for c in mi.color),
        int(m.get("unused", 0)),
        1 if texture is not None else 0,
        tuple(m.get("surface") or (1.0, 1.0, 1.0)),
        texture,
        Extension(stamp, _raw(m.get("extension"))),
    )


def _text(stamp: int, text: str, raw: str | None) -> Text:
    """A string chunk: the file's bytes (padding after the NUL included) while the
    text is the one they hold."""
    if raw:
        kept = Text(stamp, bytes.fromhex(raw))
        if kept.text == text:
            return kept
    return Text.make(stamp, text)


def from_imported(imp: ImportedClump) -> ExportClump:
    """What an import gives, ready for export again (the round trip without Blender)."""
    meshes = [
        ExportMesh(m, f, mats, skin_space=imp.skin_space if m.skin is not None else None)
        for m, f, mats in zip(imp.scene.meshes, imp.mesh_frames, imp.materials, strict=True)
    ]
    return ExportClump(
        imp.frames, meshes, imp.scene.skeleton, imp.scene.extras, _skeleton_offset(imp)
    )


def _skeleton_offset(imp: ImportedClump) -> np.ndarray | None:
    """Where the skeleton's space (the skin frame) sits on the root bone's parent frame:
    not the identity when the skinned atomics hang from a bone that is turned or moved."""
    skeleton = imp.scene.skeleton
    if skeleton is None or imp.skin_frame < 0:
        return None
    root = next(
        (i for i, f in enumerate(imp.frames) if f.bone >= 0 and skeleton.parents[f.bone] < 0),
        None,
    )
    if root is None:
        return None
    local = np.array([f.matrix for f in imp.frames], np.float64).reshape(-1, 4, 4)
    world = world_from_local(local, np.array([f.parent for f in imp.frames], np.int32))
    up = imp.frames[root].parent
    offset = (np.linalg.inv(world[up]) if up >= 0 else np.eye(4)) @ world[imp.skin_frame]
    return None if np.allclose(offset, np.eye(4), atol=1e-9) else offset
