"""Neutral scene -> Unigine MESH.

Surfaces come from the material slots. Per surface, the coordinate vertices are
the mesh vertices its triangles use (in vertex order), and a surface vertex is
made per distinct combination of coordinate vertex, UVs, colour and tangent
quaternion (and the imported surface vertex, so vertices the file kept apart
stay apart). Tangent quaternions are the imported ones while they still agree
with the normal, else built from Blender's normal, tangent and bitangent sign.
Index widths, weights summing to 65535 and bounds follow the format's rules.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np

from ..codec import FormatError
from ..codec.quantize import normalize_weights_to_sum
from ..passes import run_passes
from ..scene import Animation, Mesh, MorphTarget, Scene, Skeleton, Skin, morph_positions
from ..transforms import matrix_to_quat
from . import mesh as native
from .anim_convert import (
    BONES_KEY,
    FLAG_KEY,
    ROTATION_MASK,
    dense_values,
    json_list,
    quat_to_short,
    to_mesh_animation,
)
from .common import FRAME_RATE, SCALE_MASK, TRANSLATION_MASK, Bone, compute_bounds
from .mesh_import import (
    BONE_INDEX_KEY,
    MORPH_TANGENT,
    SURFACES_KEY,
    TANGENT_ATTRIBUTE,
    VERTEX_ATTRIBUTE,
)
from .mesh_kept import KEPT_KEY, Kept, parse, vertex_weights

#: How closely a kept tangent quaternion's normal must match Blender's normal.
KEEP_TANGENT_DOT = 0.9995


@dataclass
class ExportOptions:
    base_name: str = "base"  # name of morph target 0 when the mesh has none stored
    #: Blender's tangents per corner (xyz and the bitangent sign), asked for only when
    #: some corner needs a new tangent quaternion (they are slow to compute)
    tangent_source: Callable[[], np.ndarray] | None = None
    #: the mesh's faces and vertex count are the import's (the Blender side's
    #: fingerprint says so): each vertex no triangle uses goes back to its surface
    topology_holds: bool = False
    #: and its weights are the import's too: the file's weight bytes are written
    weights_hold: bool = False


def _attr(mesh: Mesh, name: str):
    return next((a for a in mesh.attributes if a.name == name), None)


def tangent_quaternions(normals: np.ndarray, tangents: np.ndarray | None) -> np.ndarray:
    """(C, 4) x y z w shorts turning +Z into the normal, +X toward the tangent; w < 0
    where the bitangent is left-handed. ``tangents`` is (C, 4): xyz and the sign."""
    n = np.asarray(normals, np.float64)
    n = n / np.maximum(np.linalg.norm(n, axis=1, keepdims=True), 1e-30)
    if tangents is None:
        t = np.zeros_like(n)
        t[:, 0] = 1.0
        sign = np.ones(len(n))
    else:
        t = np.asarray(tangents[:, :3], np.float64)
        sign = np.where(np.asarray(tangents[:, 3]) < 0, -1.0, 1.0)
    t = t - n * (t * n).sum(axis=1, keepdims=True)
    bad = np.linalg.norm(t, axis=1) < 1e-6
    if bad.any():  # no usable tangent: any direction across the normal
        alt = np.where(np.abs(n[bad, 0:1]) < 0.9, [[1.0, 0, 0]], [[0, 1.0, 0]])
        t[bad] = alt - n[bad] * (alt * n[bad]).sum(axis=1, keepdims=True)
    t /= np.linalg.norm(t, axis=1, keepdims=True)
    basis = np.stack([t, np.cross(n, t), n], axis=-1)
    q = matrix_to_quat(basis) * sign[:, None]
    return quat_to_short(q)


def rotate_kept_tangents(mesh: Mesh, rotation: np.ndarray) -> None:
    """Turn the file's tangent quaternions kept on ``mesh`` (base and morph targets)
    by ``rotation`` (3x3), in place, as its positions and normals were turned; each
    keeps the sign of its w, which says whether its bitangent is left-handed."""
    r = matrix_to_quat(np.asarray(rotation, np.float64)[None])[0]  # w x y z
    rw, rv = r[0], r[1:]
    for attr in mesh.attributes:
        if attr.name != TANGENT_ATTRIBUTE and not attr.name.startswith(MORPH_TANGENT.format("")):
            continue
        q = np.asarray(attr.data, np.float64).reshape(-1, 4) / 32767.0  # x y z w
        v, w = q[:, :3], q[:, 3]
        out = np.empty_like(q)
        out[:, 3] = rw * w - v @ rv
        out[:, :3] = rw * v + w[:, None] * rv + np.cross(rv, v)
        flip = np.where((out[:, 3] < 0) != (w < 0), -1.0, 1.0)
        short = np.clip(np.rint(out * flip[:, None] * 32767), -32767, 32767)
        attr.data = short.astype(np.asarray(attr.data).dtype).reshape(np.shape(attr.data))


def _normals_of(mesh: Mesh) -> np.ndarray:
    if mesh.normals is not None:
        return np.asarray(mesh.normals, np.float32)
    p = mesh.positions[mesh.corner_verts].reshape(-1, 3, 3).astype(np.float64)
    n = np.cross(p[:, 1] - p[:, 0], p[:, 2] - p[:, 0])
    n /= np.maximum(np.linalg.norm(n, axis=1, keepdims=True), 1e-30)
    return np.repeat(n, 3, axis=0).astype(np.float32)


def _kept_fits(q: np.ndarray, normals: np.ndarray) -> np.ndarray:
    """Which kept quaternions still turn +Z into the (unit) corner normal."""
    x, y, z, w = (q[:, i].astype(np.float32) for i in range(4))
    norm2 = x * x + y * y + z * z + w * w
    dot = (
        2 * (x * z + y * w) * normals[:, 0]
        + 2 * (y * z - x * w) * normals[:, 1]
        + (w * w + z * z - x * x - y * y) * normals[:, 2]
    )
    return (norm2 > 0) & (dot >= KEEP_TANGENT_DOT * norm2)


def corner_tangents(mesh: Mesh, opts: ExportOptions) -> tuple[np.ndarray, np.ndarray]:
    """Tangent quaternions per corner: the file's where they still fit the normals, else
    new ones; and which corners kept theirs."""
    normals = _normals_of(mesh)
    kept = _attr(mesh, TANGENT_ATTRIBUTE)
    if kept is not None:
        q = np.rint(np.asarray(kept.data, np.float32)).astype(np.int16)
        ok = _kept_fits(q, normals)
    else:
        q = np.zeros((len(normals), 4), np.int16)
        ok = np.zeros(len(normals), bool)
    if not ok.all():
        redo = ~ok
        source = _attr(mesh, "rigport:tangent")
        tangents = source.data if source is not None else None
        if tangents is None and opts.tangent_source is not None and mesh.uv_sets:
            tangents = opts.tangent_source()
        q[redo] = tangent_quaternions(
            normals[redo], tangents[redo] if tangents is not None else None
        )
    return q, ok


def _surface_info(mesh: Mesh, n_surfaces: int) -> list[dict] | None:
    info = json_list(mesh.extras.get(SURFACES_KEY))
    if info is None or len(info) != n_surfaces or not all(isinstance(d, dict) for d in info):
        return None
    return info


def _group_corners(
    fields: list[np.ndarray], key: np.ndarray, bound: int
) -> tuple[np.ndarray, np.ndarray]:
    """Corners with equal fields share a surface vertex. Returns the first corner of each
    vertex and each corner's vertex number; vertices are numbered by the first two
    fields (surface, imported surface vertex), then by first appearance.

    ``key`` (ints in ``[0, bound)``, a function of the fields) names each corner's
    likely vertex: each corner is compared with the first corner of its key, and
    those equal to it share its vertex at once (every corner of an unedited import
    keyed by its imported surface vertex). Only the others are grouped by sorting
    their fields.
    """
    n = len(key)
    first_of = np.empty(bound, np.int64)
    first_of[key[::-1]] = np.arange(n - 1, -1, -1)  # the last write (smallest) wins
    ref = first_of[key]
    differ = np.zeros(n, bool)
    for f in fields:
        differ |= f != f[ref]
    ids = key.astype(np.int64)
    total = bound
    odd = np.flatnonzero(differ)
    if len(odd):
        rows = np.stack([f[odd] for f in fields], axis=1)
        void = rows.view(np.dtype((np.void, rows.shape[1] * rows.itemsize))).reshape(-1)
        _, inverse = np.unique(void, return_inverse=True)
        ids[odd] = bound + inverse.reshape(-1)
        total += int(inverse.max()) + 1
    first = np.full(total, n, np.int64)
    first[ids[::-1]] = np.arange(n - 1, -1, -1)
    pick = np.sort(first[first < n])  # each vertex's first corner, in corner order
    order = pick[np.lexsort((pick, fields[1][pick], fields[0][pick]))]
    rank = np.empty(total, np.int64)
    rank[ids[order]] = np.arange(len(order))
    return order, rank[ids]


def _distinct(key: np.ndarray, bound: int) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(key, return_inverse=True)`` for ints in ``[0, bound)``: counted, not
    sorted, where ``bound`` is not much more than the number of keys."""
    if bound > 4 * len(key) + 64:
        values, inverse = np.unique(key, return_inverse=True)
        return values, inverse.reshape(-1)
    present = np.zeros(bound, bool)
    present[key] = True
    number = np.cumsum(present, dtype=np.int64)
    number -= 1
    return np.flatnonzero(present), number[key]


def _words(a: np.ndarray) -> np.ndarray:
    """The rows of a C-contiguous 2-D array of 4 or 8 bytes per row as one integer each."""
    a = np.ascontiguousarray(a)
    size = a.shape[1] * a.itemsize
    return a.view({4: np.uint32, 8: np.int64}[size]).reshape(-1)


@dataclass
class _SurfacesPass:
    """What the passes of ``build_surfaces`` read and fill, in the order they run."""

    mesh: Mesh
    n_bones: int
    opts: ExportOptions
    warnings: list[str]
    n_slots: int = 0
    surf_of: np.ndarray = field(init=False)  # the surface of each corner
    info: list[dict] | None = None  # each surface's record from the import
    corner_q: np.ndarray = field(init=False)  # tangent quaternion per corner
    kept: np.ndarray = field(init=False)  # corners whose imported quaternion is kept
    svid: np.ndarray = field(init=False)  # imported surface vertex per corner (or 0)
    has_svid: bool = False
    verts: np.ndarray = field(init=False)
    colors: np.ndarray | None = None  # the first colour layer as bytes per corner
    no_tangents: np.ndarray = field(init=False)  # surfaces the file wrote without tangents
    fields: list[np.ndarray] = field(default_factory=list)  # what makes a surface vertex
    first: np.ndarray = field(init=False)  # each surface vertex's first corner
    sv: np.ndarray = field(init=False)  # each corner's surface vertex
    sv_start: np.ndarray = field(init=False)  # first surface vertex of each surface
    cindex: np.ndarray = field(init=False)  # each corner's coordinate vertex
    c_vertex: np.ndarray = field(init=False)  # each coordinate vertex's mesh vertex
    c_start: np.ndarray = field(init=False)  # first coordinate vertex of each surface
    corner_order: np.ndarray = field(init=False)  # corners by surface
    k_start: np.ndarray = field(init=False)  # first of each surface in corner_order
    record: Kept | None = None  # what the import kept of the file
    kept_weights: native.Weights | None = None  # the file's weights, every vertex
    kept_bounds: int = 0  # surfaces written with the file's own bounds
    morph_q: dict[str, np.ndarray] = field(default_factory=dict)
    by_name: dict[str, MorphTarget] = field(default_factory=dict)
    listed: set[str] = field(default_factory=set)  # morph targets some imported surface had
    surfaces: list[native.Surface] = field(default_factory=list)

    @property
    def n_corners(self) -> int:
        return len(self.mesh.corner_verts)


def build_surfaces(
    mesh: Mesh,
    n_bones: int,
    opts: ExportOptions,
    warnings: list[str],
    bone_names: list[str] | None = None,
) -> _SurfacesPass:
    """The surfaces of ``mesh`` (``.surfaces``), with what was kept of the file."""
    state = _SurfacesPass(mesh, n_bones, opts, warnings)
    state.record = parse(mesh.extras.get(KEPT_KEY))
    if state.record is not None and opts.weights_hold and bone_names and mesh.skin is not None:
        state.kept_weights = state.record.weights_for(bone_names, len(mesh.positions))
    run_passes(
        state,
        _slots,
        _corner_fields,
        _surface_vertices,
        _coordinate_vertices,
        _morph_quaternions,
        _surfaces,
    )
    return state


def _slots(p: _SurfacesPass) -> None:
    """A surface per material slot; warnings for what the format has no place for."""
    mesh, nc = p.mesh, p.n_corners
    p.n_slots = max(len(mesh.materials), 1)
    fm = (
        np.clip(mesh.face_materials, 0, p.n_slots - 1) if len(mesh.materials) else np.zeros(nc // 3)
    )
    p.surf_of = np.repeat(fm.astype(np.int64), 3)
    p.info = _surface_info(mesh, p.n_slots)
    if len(mesh.uv_sets) > 2:
        p.warnings.append(
            f"{mesh.name}: {len(mesh.uv_sets)} UV maps, only the first two are written"
        )
    if len(mesh.colors) > 1:
        p.warnings.append(
            f"{mesh.name}: only the first of {len(mesh.colors)} colour layers is written"
        )


def _corner_fields(p: _SurfacesPass) -> None:
    """Per corner, what makes a surface vertex: surface, imported surface vertex, mesh
    vertex, UVs, colour and tangent quaternion."""
    mesh, nc, info = p.mesh, p.n_corners, p.info
    p.corner_q, p.kept = corner_tangents(mesh, p.opts)
    svid_attr = _attr(mesh, VERTEX_ATTRIBUTE)
    p.has_svid = svid_attr is not None
    p.svid = np.asarray(svid_attr.data, np.int64) if p.has_svid else np.zeros(nc, np.int64)
    p.verts = mesh.corner_verts.astype(np.int64)
    p.fields = [p.surf_of, p.svid, p.verts]
    for uv in mesh.uv_sets[:2]:
        p.fields.append(_words(np.asarray(uv.uv, np.float32)))  # both floats' bits
    if mesh.colors:
        p.colors = np.clip(np.rint(mesh.colors[0].color * 255), 0, 255).astype(np.uint8)
        p.fields.append(_words(p.colors))
    p.no_tangents = np.array(
        [bool(info) and info[si].get("tangents", [True])[:1] == [False] for si in range(p.n_slots)]
    )
    if p.no_tangents.any() and (mesh.uv_sets or p.colors is not None):
        grouped_q = np.where(p.no_tangents[p.surf_of][:, None], 0, p.corner_q)
    else:
        p.no_tangents[:] = False
        grouped_q = p.corner_q
    p.fields.append(_words(grouped_q.astype(np.int16)))


def _surface_vertices(p: _SurfacesPass) -> None:
    """Corners are keyed by their imported surface vertex where it names one, else by vertex."""
    nc, n_slots, svid = p.n_corners, p.n_slots, p.svid
    n_sv = int(svid.max()) + 1 if p.has_svid and nc else 0
    if n_sv and svid.min() >= 0 and n_sv * n_slots <= 4 * nc:
        p.first, p.sv = _group_corners(p.fields, p.surf_of * n_sv + svid, n_sv * n_slots)
    else:
        p.first, p.sv = _group_corners(p.fields, p.verts, len(p.mesh.positions))
    p.sv_start = np.searchsorted(p.surf_of[p.first], np.arange(n_slots + 1))


def _loose_keys(p: _SurfacesPass, n_pos: int) -> np.ndarray:
    """The coordinate keys of the vertices no triangle uses: each in the surface it
    came from while the topology is the import's; else left out, with a warning."""
    loose = np.ones(len(p.mesh.positions), bool)
    loose[p.verts] = False
    vertices = np.flatnonzero(loose)
    if not len(vertices):
        return vertices
    origin = p.record.surface_of_vertex() if p.record is not None else None
    if (
        p.opts.topology_holds
        and origin is not None
        and len(origin) == len(loose)
        and origin.max(initial=0) < p.n_slots
    ):
        return origin[vertices] * n_pos + vertices
    p.warnings.append(
        f"{p.mesh.name}: {len(vertices)} vertices no triangle uses are left out "
        "(a Unigine surface holds only the vertices of its triangles)"
    )
    return vertices[:0]


def _coordinate_vertices(p: _SurfacesPass) -> None:
    """The mesh vertices each surface uses, in vertex order (and those it had that
    no triangle uses); the corners of each surface."""
    n_pos = max(len(p.mesh.positions), 1)
    ckey = np.concatenate([p.surf_of * n_pos + p.verts, _loose_keys(p, n_pos)])
    cunique, cindex = _distinct(ckey, p.n_slots * n_pos)
    p.cindex = cindex[: p.n_corners]
    c_surface = cunique // n_pos
    p.c_vertex = cunique % n_pos
    p.c_start = np.searchsorted(c_surface, np.arange(p.n_slots + 1))
    p.corner_order = np.argsort(p.surf_of, kind="stable")
    p.k_start = np.searchsorted(p.surf_of[p.corner_order], np.arange(p.n_slots + 1))


def _morph_quaternions(p: _SurfacesPass) -> None:
    """The shape keys by name; the file's morph tangents, where the base tangent was kept."""
    p.by_name = {m.name: m for m in p.mesh.morphs}
    p.listed = {str(n) for d in p.info or () for n in (d.get("targets") or [])[1:]}
    for m in p.mesh.morphs:
        a = _attr(p.mesh, MORPH_TANGENT.format(m.name))
        if a is not None:
            mq = np.rint(np.asarray(a.data, np.float32)).astype(np.int16)
            p.morph_q[m.name] = np.where(p.kept[:, None], mq, p.corner_q)


def _surfaces(p: _SurfacesPass) -> None:
    mesh = p.mesh
    for si in range(p.n_slots):
        d = p.info[si] if p.info else {}
        name = d.get("name") or (mesh.materials[si] if mesh.materials else "") or mesh.name
        corners = p.corner_order[p.k_start[si] : p.k_start[si + 1]]
        rep = p.first[p.sv_start[si] : p.sv_start[si + 1]]
        coord_ids = p.c_vertex[p.c_start[si] : p.c_start[si + 1]]
        base = mesh.positions[coord_ids].astype(np.float32)
        bounds = p.record.bounds_for(si, base) if p.record is not None else None
        p.kept_bounds += bounds is not None
        if bounds is None:
            bounds = compute_bounds(base)
        surf = native.Surface(name, bounds, _targets(p, si, d, base, rep, coord_ids))
        for k, uv in enumerate(mesh.uv_sets[:2]):
            if d.get(f"uv{k}", True):
                setattr(surf, f"uv{k}", uv.uv[rep].astype(np.float32))
        if p.colors is not None and d.get("colors", True):
            surf.colors = p.colors[rep]
        if p.kept_weights is not None and d.get("weights", True) and p.n_bones:
            surf.weights = vertex_weights(p.kept_weights, coord_ids)
        elif mesh.skin is not None and d.get("weights", True) and p.n_bones:
            surf.weights = _weights(
                mesh.skin.joints[coord_ids], mesh.skin.weights[coord_ids], p.n_bones
            )
        surf.coords = p.cindex[corners] - p.c_start[si]
        surf.tris = p.sv[corners] - p.sv_start[si]
        p.surfaces.append(surf)


def _targets(
    p: _SurfacesPass, si: int, d: dict, base: np.ndarray, rep: np.ndarray, coord_ids: np.ndarray
) -> list[native.MorphTarget]:
    """Surface ``si``'s morph targets: the base, then the imported list followed by the
    shape keys added since, or every shape key."""
    tangents = p.corner_q[rep]
    if p.no_tangents[si]:
        tangents = tangents[:0]  # the file's surface had none
    stored = d.get("targets")
    names = stored[1:] + _added_targets(p, stored, coord_ids) if stored else list(p.by_name)
    targets = [native.MorphTarget(stored[0] if stored else p.opts.base_name, base, tangents)]
    has_tangents = d.get("tangents") or []
    for j, tname in enumerate(names, 1):
        m = p.by_name.get(tname)
        if m is None:
            continue
        tq = p.morph_q[tname][rep] if tname in p.morph_q and len(tangents) else tangents
        if j < len(has_tangents) and has_tangents[j] is False:
            tq = tq[:0]  # the file's target had none
        pos = morph_positions(base, m.position_offsets[coord_ids])
        targets.append(native.MorphTarget(tname, pos, tq))
    return targets


def _added_targets(p: _SurfacesPass, stored: list, coord_ids: np.ndarray) -> list[str]:
    """The shape keys a surface writes beyond its imported list: those no imported
    surface had (on every surface, as on a fresh mesh), and those another surface had
    that now move a vertex of this one."""
    out = []
    for name, m in p.by_name.items():
        if name in stored:
            continue
        if name not in p.listed or np.any(m.position_offsets[coord_ids]):
            out.append(name)
    return out


def _weights(joints: np.ndarray, weights: np.ndarray, n_bones: int) -> native.Weights:
    """Strongest first, at most 4, as ushorts summing to 65535 per vertex."""
    w = np.where((joints >= 0) & (joints < n_bones), weights, 0.0).astype(np.float64)
    order = np.argsort(-w, axis=1, kind="stable")[:, :4]
    j = np.take_along_axis(joints, order, 1)
    w = np.take_along_axis(w, order, 1)
    q = normalize_weights_to_sum(w, 65535)
    keep = q > 0
    return native.Weights(
        keep.sum(axis=1).astype(np.uint8),
        j[keep].astype(np.int16),
        q[keep].astype(np.uint16),
    )


def _rest(skeleton: Skeleton) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return skeleton.local_translation, skeleton.local_rotation, skeleton.local_scale


def animation_bones(anim: Animation, skeleton: Skeleton) -> list[str]:
    """The bones an animation writes: its stored list where every bone still exists,
    else every keyed bone in skeleton order."""
    stored = json_list(anim.extras.get(BONES_KEY))
    if stored and all(n in skeleton.names for n in stored):
        return [str(n) for n in stored]
    keyed = {t.bone for t in anim.tracks}
    return [n for n in skeleton.names if n in keyed]


def animation_flag(anim: Animation, mask: int) -> int:
    flag = anim.extras.get(FLAG_KEY)
    if isinstance(flag, int) and 0 <= flag < 256:
        return flag
    out = 0
    for bit in (TRANSLATION_MASK, ROTATION_MASK, SCALE_MASK):
        if mask & bit:
            out |= bit
    return out


def animation_frames(anim: Animation, skeleton: Skeleton, fps: float):
    names = animation_bones(anim, skeleton)
    index = np.array([skeleton.names.index(n) for n in names], np.int64)
    rt, rq, rs = _rest(skeleton)
    t, q, s, mask = dense_values(anim, names, (rt[index], rq[index], rs[index]), fps)
    return index, t, q, s, animation_flag(anim, mask)


def skeleton_bind(skeleton: Skeleton) -> np.ndarray:
    t, q, s = _rest(skeleton)
    return np.concatenate([t, q[:, 1:], q[:, :1], s], axis=1).astype(np.float32)


def skeleton_bones(skeleton: Skeleton) -> list[Bone]:
    return [Bone(n, int(p)) for n, p in zip(skeleton.names, skeleton.parents.tolist(), strict=True)]


def export_mesh(
    mesh: Mesh,
    skeleton: Skeleton | None,
    animations: list[tuple[Animation, float]],
    opts: ExportOptions | None = None,
) -> tuple[native.Mesh, list[str]]:
    """The native file for one mesh, its skeleton (file bone order) and animations."""
    mesh = mesh.with_corner_normals()
    opts = opts or ExportOptions()
    warnings: list[str] = []
    if (
        len(mesh.face_starts)
        and (np.diff(np.append(mesh.face_starts, len(mesh.corner_verts))) != 3).any()
    ):
        raise FormatError(f"{mesh.name}: the exporter needs triangles")
    n_bones = len(skeleton) if skeleton is not None else 0
    names = skeleton.names if skeleton is not None else None
    built = build_surfaces(mesh, n_bones, opts, warnings, names)
    surfaces = built.surfaces
    all_pos = (
        np.concatenate([s.targets[0].positions for s in surfaces]) if surfaces else np.zeros((0, 3))
    )
    kept = built.record
    if kept is not None and built.kept_bounds == len(surfaces) == len(kept.surface_bounds):
        bounds = kept.bounds  # every surface is where the file had it
    else:
        bounds = compute_bounds(all_pos)
    bones = skeleton_bones(skeleton) if skeleton is not None else []
    bind = skeleton_bind(skeleton) if skeleton is not None else np.zeros((0, 10), np.float32)
    anims = []
    for anim, fps in animations:
        if skeleton is None:
            warnings.append(f"animation {anim.name!r} skipped: the mesh has no armature")
            continue
        index, t, q, s, flag = animation_frames(anim, skeleton, fps)
        anims.append(to_mesh_animation(anim, index, t, q, s, flag))
    return native.Mesh(bounds, bones, bind, anims, surfaces), warnings


def file_order(skeleton: Skeleton) -> Skeleton:
    """The skeleton in the file's bone order (each bone's ``unigine_index``; bones
    without one follow in armature order). Blender keeps bones parent-first."""
    n = len(skeleton)
    extras = skeleton.extras if len(skeleton.extras) == n else [{} for _ in range(n)]
    keys = [
        (0, int(e[BONE_INDEX_KEY]), i) if isinstance(e.get(BONE_INDEX_KEY), int) else (1, i, i)
        for i, e in enumerate(extras)
    ]
    order = [k[2] for k in sorted(keys)]
    return replace(skeleton, extras=extras).reordered(order)[0]


def merge_files(parts: list[native.Mesh]) -> native.Mesh:
    """Several objects exported together: their surfaces one after the other (one
    object: its file as it is, bounds included)."""
    first = parts[0]
    if len(parts) == 1:
        return first
    surfaces = [s for p in parts for s in p.surfaces]
    pos = [s.targets[0].positions for s in surfaces if s.targets]
    bounds = compute_bounds(np.concatenate(pos)) if pos else first.bounds
    return native.Mesh(bounds, first.bones, first.bind, first.animations, surfaces)


def export_scene(scene: Scene, fps: float = FRAME_RATE) -> tuple[native.Mesh, list[str]]:
    """A neutral scene (as :func:`mesh_import.import_mesh` makes it) straight to a file,
    with no Blender in between: bones back in file order, skin indices to match."""
    skeleton = file_order(scene.skeleton) if scene.skeleton is not None else None
    parts, warnings = [], []
    for i, m in enumerate(scene.meshes):
        if m.skin is not None and skeleton is not None:
            index = {n: k for k, n in enumerate(skeleton.names)}
            remap = np.array([index[n] for n in scene.skeleton.names], np.int32)
            m = replace(m, skin=Skin(remap[m.skin.joints], m.skin.weights))
        anims = [(a, fps) for a in scene.animations] if i == 0 else []
        part, w = export_mesh(
            m, skeleton, anims, ExportOptions(topology_holds=True, weights_hold=True)
        )
        parts.append(part)
        warnings += w
    return merge_files(parts), warnings
