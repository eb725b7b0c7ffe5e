"""Urho3D assets built in code, for what the real-file corpus does not have.

The corpus (``../shared/corpus``) has no vertex morphs, no 32-bit indices, no
UMD2 file beyond two simple meshes and only one skinned character. These
builders make native :class:`mdl.Model` / :class:`ani.Animation` objects that
fill those gaps. Tests, the demo and the benchmarks use them; everything is
pure numpy and vectorised (no per-vertex Python loops), so
``skinned_model(n_vertices=1_000_000)`` takes a second or two.

- :func:`skinned_model`: a tapering, twisting tentacle skinned to a bone chain,
  with normals, tangents, up to 4 UV sets, colours, 4 weights per vertex,
  collision spheres and boxes, LODs, vertex morphs, several geometries and
  per-geometry bone mappings when there are more than 64 bones.
- :func:`walk_animation`: a looping UANI animation for any skeleton.
- :func:`all_elements_model`: a UMD2 model with every element type and
  semantic, several vertex buffers, 16- and 32-bit indices and a line list.
- :func:`legacy_all_bits_model`: a UMDL model with every legacy mask bit.

Conventions follow the corpus (measured on the files written by Urho3D's
AssetImporter): triangles (a, b, c) have ``cross(b - a, c - a)`` along the
vertex normal; a tangent is the direction of increasing u and its w is the
sign of ``dot(cross(normal, tangent), direction of increasing v)``; bone
rotations are w x y z; the root bone's parent is its own index; offset matrices
are the 3x4 rows of the inverse world bind transform.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ..io_formats import transforms
from ..io_formats.posing import quat_multiply
from ..io_formats.urho3d import ani, mdl
from ..io_formats.urho3d.vertex_layout import (
    SEM_BINORMAL,
    SEM_BLENDINDICES,
    SEM_BLENDWEIGHTS,
    SEM_COLOR,
    SEM_NORMAL,
    SEM_OBJECTINDEX,
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
    VertexElement,
    elements_from_mask,
    vertex_dtype,
)

#: Urho3D's AssetImporter: a model with more bones than this gets a bone
#: mapping per geometry (blend indices then index that mapping).
MAX_SKIN_BONES = 64

MASK_POSITION = 0x1
MASK_NORMAL = 0x2
MASK_COLOR = 0x4
MASK_TEXCOORD1 = 0x8
MASK_TEXCOORD2 = 0x10
MASK_TANGENT = 0x80
MASK_BLENDWEIGHTS = 0x100
MASK_BLENDINDICES = 0x200
LEGACY_ALL_BITS = 0x3FFF  # 0x1 .. 0x2000

MORPH_KINDS = ("Bulge", "Curl", "Pinch")
MORPH_MASKS = (
    MASK_POSITION | MASK_NORMAL | MASK_TANGENT,
    MASK_POSITION | MASK_NORMAL,
    MASK_POSITION,
)


# --------------------------------------------------------------------------
# small vectorised helpers
# --------------------------------------------------------------------------
def _normalize(v: np.ndarray) -> np.ndarray:
    n = np.linalg.norm(v, axis=-1, keepdims=True)
    return v / np.where(n == 0, 1.0, n)


def quat_from_axis_angle(axis: np.ndarray, angle: np.ndarray) -> np.ndarray:
    """w x y z quaternions turning ``angle`` radians about unit ``axis`` (broadcasting)."""
    axis = _normalize(np.asarray(axis, np.float64))
    half = 0.5 * np.asarray(angle, np.float64)[..., None]
    return np.concatenate([np.cos(half), np.sin(half) * axis], axis=-1)


def _rest_arrays(bones: Sequence[mdl.Bone]):
    """Parents (-1 for roots), positions, rotations, scales of Urho bones."""
    parents = np.array([b.parent for b in bones], np.int64)
    parents[parents == np.arange(len(bones))] = -1
    pos = np.array([b.position for b in bones], np.float64).reshape(-1, 3)
    rot = np.array([b.rotation for b in bones], np.float64).reshape(-1, 4)
    scl = np.array([b.scale for b in bones], np.float64).reshape(-1, 3)
    return parents, pos, rot, scl


def world_bind_matrices(bones: Sequence[mdl.Bone]) -> np.ndarray:
    """(N, 4, 4) world bind transforms of Urho bones (parent world @ local TRS)."""
    parents, pos, rot, scl = _rest_arrays(bones)
    return transforms.world_from_local(transforms.compose_trs(pos, rot, scl), parents)


def _make_bones(names, parents, pos, rot, scl, world) -> list[mdl.Bone]:
    offsets = np.linalg.inv(world)[:, :3, :].astype(np.float32)
    bones = []
    for i, name in enumerate(names):
        parent = i if parents[i] < 0 else int(parents[i])
        bones.append(
            mdl.Bone(
                name,
                parent,
                pos[i].astype(np.float32),
                rot[i].astype(np.float32),
                scl[i].astype(np.float32),
                offsets[i],
            )
        )
    return bones


def _set_collision(bone: mdl.Bone, mask: int, pts_bone_space: np.ndarray) -> None:
    """Sphere and/or box around points given in the bone's own space."""
    if mask == 0 or len(pts_bone_space) == 0:
        bone.collision_mask = 0
        return
    bone.collision_mask = mask
    if mask & 1:
        bone.radius = float(np.linalg.norm(pts_bone_space, axis=1).max())
    if mask & 2:
        bone.bbox_min = pts_bone_space.min(axis=0).astype(np.float32)
        bone.bbox_max = pts_bone_space.max(axis=0).astype(np.float32)


def _grid_triangles(rows: np.ndarray, cols: np.ndarray, ncols: int, base: int) -> np.ndarray:
    """Triangles over a (row, column) vertex grid using only the given rows and
    columns, wound so that ``cross(b - a, c - a)`` points along
    ``cross(d/drow, d/dcol)``."""
    r0, r1 = rows[:-1, None], rows[1:, None]
    c0, c1 = cols[None, :-1], cols[None, 1:]
    a = base + r0 * ncols + c0
    b = base + r1 * ncols + c0
    c = base + r0 * ncols + c1
    d = base + r1 * ncols + c1
    tris = np.stack([a, b, c, c, b, d], axis=-1)
    return tris.reshape(-1)


def _lod_subset(n: int, step: int) -> np.ndarray:
    """0, step, 2*step, ... and always the last of ``n`` grid lines."""
    return np.unique(np.concatenate([np.arange(0, n, step), [n - 1]]))


def _bump(s: np.ndarray, centre: float, half_width: float):
    """A smooth raised-cosine bump (1 at ``centre``, 0 beyond ``half_width``) and its slope."""
    x = (s - centre) / half_width
    inside = np.abs(x) < 1
    value = np.where(inside, 0.5 * (1 + np.cos(math.pi * x)), 0.0)
    slope = np.where(inside, -0.5 * math.pi / half_width * np.sin(math.pi * x), 0.0)
    return value, slope


# --------------------------------------------------------------------------
# skinned tentacle
# --------------------------------------------------------------------------
def grid_for_vertices(n_vertices: int, geometries: int = 1) -> tuple[int, int]:
    """(rings, sides) of a tentacle with about ``n_vertices`` vertices."""
    sides = int(max(3, min(256, round(math.sqrt(n_vertices / 8)))))
    rings = int(max(geometries, round(n_vertices / (sides + 1)) - geometries))
    return rings, sides


def _surface(s, theta, radius_fn, shift_fn):
    """Points, normals, tangents and bitangent directions in the straight space.

    The surface is ``P(s, t) = (r(s) cos t + f(s), s, r(s) sin t)``: a tube along
    +Y. ``s`` has shape (R,), ``theta`` (C,); results are (R, C, 3).
    """
    r, dr = radius_fn(s)
    f, df = shift_fn(s)
    cos, sin = np.cos(theta)[None, :], np.sin(theta)[None, :]
    r, dr, f, df = r[:, None], dr[:, None], f[:, None], df[:, None]
    shape = (len(s), len(theta))
    p = np.empty(shape + (3,))
    p[..., 0] = r * cos + f
    p[..., 1] = s[:, None]
    p[..., 2] = r * sin
    d_theta = np.empty(shape + (3,))
    d_theta[..., 0] = -r * sin
    d_theta[..., 1] = 0.0
    d_theta[..., 2] = r * cos
    d_s = np.empty(shape + (3,))
    d_s[..., 0] = dr * cos + df
    d_s[..., 1] = 1.0
    d_s[..., 2] = dr * sin
    normal = _normalize(np.cross(d_s, d_theta))
    return p, normal, _normalize(d_theta), d_s


def _deform(blend: np.ndarray, p, normal, tangent, d_s):
    """Apply per-ring blended skinning matrices (R, 4, 4) to (R, C, 3) arrays."""
    m3t = blend[:, :3, :3].transpose(0, 2, 1)  # row vectors: v @ M^T == (M @ v^T)^T
    pos = p @ m3t + blend[:, None, :3, 3]
    nrm = _normalize(normal @ np.linalg.inv(m3t).transpose(0, 2, 1))
    tan = tangent @ m3t
    tan = _normalize(tan - nrm * np.sum(tan * nrm, axis=-1, keepdims=True))
    return pos, nrm, tan, d_s @ m3t


def _ring_ranges(rings: int, geometries: int) -> list[tuple[int, int]]:
    cuts = np.round(np.linspace(0, rings, geometries + 1)).astype(int)
    return [(int(cuts[g]), int(cuts[g + 1])) for g in range(geometries)]


def skinned_model(
    n_bones: int = 8,
    grid: tuple[int, int] = (32, 12),
    *,
    n_vertices: int | None = None,
    morphs: int = 2,
    legacy: bool = False,
    uv_sets: int = 2,
    color: bool = True,
    index_size: int | None = None,
    geometries: int = 1,
    lods: int = 1,
    centers: bool = True,
    collision: bool = True,
    length: float = 2.0,
    radius: float = 0.2,
    bend: float = 0.5 * math.pi,
    twist: float = 0.25,
    root_scale: float = 1.0,
) -> mdl.Model:
    """A tentacle: a tapering tube along a chain of ``n_bones`` bones, bent and
    twisted in its bind pose, skinned with smooth weights.

    ``grid`` is (rings along the length, sides around); ``n_vertices`` picks a
    grid with about that many vertices instead. Each geometry covers a stretch
    of the length with its own vertices (all in one vertex buffer and one index
    buffer); when there are more than 64 bones, geometries are added until each
    uses at most 64, each gets the sorted list of the bones it uses as its bone
    mapping and blend indices are local to it (AssetImporter's rule); otherwise
    mappings are empty and blend indices are global. ``lods`` levels per
    geometry share the vertex buffer, each skipping every other ring and side
    of the previous one, at distances 0, 10, 20, 40, ... Vertex morphs
    (``morphs`` of them: Bulge, Curl, Pinch, Bulge1, ... with masks
    position+normal+tangent, position+normal, position) move a band of rings;
    the vertex buffer's morph range spans every morphed vertex. ``legacy``
    writes UMDL (mask 0x1|0x2|0x4|0x8|0x10|0x80|0x100|0x200 for 2 UV sets),
    otherwise UMD2 with up to 4 UV sets. Bones cycle through collision masks
    sphere+box, sphere, box, none, fitted like AssetImporter does to the
    vertices weighted more than 0.33 to the bone. ``n_bones=0`` gives a static
    tube without skinning elements.
    """
    if n_bones < 0:
        raise ValueError("n_bones must be >= 0")
    if not 0 <= uv_sets <= (2 if legacy else 4):
        raise ValueError(
            f"uv_sets must be 0..{2 if legacy else 4} for {'UMDL' if legacy else 'UMD2'}"
        )
    if index_size not in (None, 2, 4):
        raise ValueError("index_size must be 2, 4 or None (automatic)")
    if geometries < 1 or lods < 1:
        raise ValueError("geometries and lods must be >= 1")
    rings, sides = grid_for_vertices(n_vertices, geometries) if n_vertices else grid
    if rings < 1 or sides < 3:
        raise ValueError("grid needs at least 1 ring and 3 sides")
    skinned = n_bones > 0
    nb = max(n_bones, 1)
    seg = length / nb

    # -- skeleton: a chain along +Y, each bone bent about Z and twisted about Y
    parents = np.arange(-1, nb - 1)
    pos = np.zeros((nb, 3))
    pos[1:, 1] = seg
    pos[0] = (0.05, 0.0, -0.1)
    step = bend / max(nb - 1, 1)
    rot = quat_multiply(
        quat_from_axis_angle(np.array([0.0, 0.0, 1.0]), np.full(nb, step)),
        quat_from_axis_angle(np.array([0.0, 1.0, 0.0]), np.full(nb, twist)),
    )
    rot[0] = quat_from_axis_angle(np.array([1.0, 0.0, 0.0]), np.array(0.2))
    scl = np.ones((nb, 3))
    scl[0] = root_scale
    world = transforms.world_from_local(transforms.compose_trs(pos, rot, scl), parents)
    straight = np.tile(np.eye(4), (nb, 1, 1))
    straight[:, 1, 3] = np.arange(nb) * seg
    bone_from_straight = world @ np.linalg.inv(straight)

    # -- weights per ring of the whole length (every vertex of a ring shares them)
    s_all = np.arange(rings + 1) * (length / rings)
    centres = (np.arange(nb) + 0.5) * seg
    dense = np.maximum(0.0, 1.0 - np.abs(s_all[:, None] - centres[None, :]) / (1.5 * seg))
    order = np.argsort(-dense, axis=1, kind="stable")[:, :4]
    if order.shape[1] < 4:
        order = np.pad(order, ((0, 0), (0, 4 - order.shape[1])))
    w4 = np.take_along_axis(dense, order, axis=1) * (np.arange(4) < nb)
    w4 /= w4.sum(axis=1, keepdims=True)
    order = np.where(w4 > 0, order, 0)
    w32 = w4.astype(np.float32)
    w32[:, 0] = np.float32(1) - w32[:, 1:].sum(axis=1, dtype=np.float32)

    # -- geometries: stretches of rings with at most 64 bones each when mapped
    def mappings_for(n_geom):
        out = []
        for a, b in _ring_ranges(rings, n_geom):
            used = order[a : b + 1][w32[a : b + 1] > 0]
            out.append(np.unique(used).astype(np.uint32))
        return out

    use_mapping = skinned and n_bones > MAX_SKIN_BONES
    n_geom = geometries
    mappings: list[np.ndarray] = []
    if use_mapping:
        n_geom = max(n_geom, math.ceil(n_bones / (MAX_SKIN_BONES - 6)))
        while n_geom <= rings:
            mappings = mappings_for(n_geom)
            if max(len(m) for m in mappings) <= MAX_SKIN_BONES:
                break
            n_geom += 1
        else:
            raise ValueError(
                f"{rings} rings cannot be split to keep {MAX_SKIN_BONES} bones a geometry"
            )
    if n_geom > rings:
        raise ValueError(f"{n_geom} geometries need at least as many rings (got {rings})")
    ranges = _ring_ranges(rings, n_geom)
    ring_ids = np.concatenate([np.arange(a, b + 1) for a, b in ranges])
    s = s_all[ring_ids]
    ring_w, ring_idx = w32[ring_ids], order[ring_ids]

    # -- base surface in the straight space, then bent by the blended bone matrices
    theta = np.arange(sides + 1) * (2 * math.pi / sides)
    taper = 0.65

    def base_radius(x):
        return radius * (1 - taper * x / length), np.full_like(x, -radius * taper / length)

    def no_shift(x):
        return np.zeros_like(x), np.zeros_like(x)

    blend = np.einsum("rk,rkij->rij", ring_w.astype(np.float64), bone_from_straight[ring_idx])
    p, nrm, tan, d_s = _deform(blend, *_surface(s, theta, base_radius, no_shift))
    ncols = sides + 1
    n_total = len(s) * ncols
    if n_total > 0xFFFFFFFF:
        raise ValueError("too many vertices")

    # tangent w: handedness of (tangent, d/dv) with v = 1 - s/length (DirectX style)
    w_sign = np.where(np.sum(np.cross(nrm, tan) * -d_s, axis=-1) < 0, -1.0, 1.0)
    u = np.broadcast_to(theta[None, :] / (2 * math.pi), (len(s), ncols))
    v = np.broadcast_to(1 - s[:, None] / length, (len(s), ncols))

    # -- vertex buffer
    if legacy:
        mask = MASK_POSITION | MASK_NORMAL | MASK_TANGENT
        mask |= (MASK_TEXCOORD1 if uv_sets >= 1 else 0) | (MASK_TEXCOORD2 if uv_sets >= 2 else 0)
        mask |= MASK_COLOR if color else 0
        mask |= (MASK_BLENDWEIGHTS | MASK_BLENDINDICES) if skinned else 0
        elements = elements_from_mask(mask)
    else:
        mask = None
        elements = [
            VertexElement(TYPE_VECTOR3, SEM_POSITION),
            VertexElement(TYPE_VECTOR3, SEM_NORMAL),
            VertexElement(TYPE_VECTOR4, SEM_TANGENT),
        ]
        elements += [VertexElement(TYPE_VECTOR2, SEM_TEXCOORD, i) for i in range(uv_sets)]
        if color:
            elements.append(VertexElement(TYPE_UBYTE4_NORM, SEM_COLOR))
        if skinned:
            elements.append(VertexElement(TYPE_VECTOR4, SEM_BLENDWEIGHTS))
            elements.append(VertexElement(TYPE_UBYTE4, SEM_BLENDINDICES))
    data = np.zeros(n_total, vertex_dtype(elements, legacy))
    data["position0"] = p.reshape(-1, 3)
    data["normal0"] = nrm.reshape(-1, 3)
    data["tangent0"][:, :3] = tan.reshape(-1, 3)
    data["tangent0"][:, 3] = w_sign.reshape(-1)
    uv_layers = [(u, v), (0.5 * v, 0.25 + 0.5 * u), (4 * u, 8 * v), (1 - u, v)]
    for i in range(uv_sets):
        data[f"texcoord{i}"] = np.stack(uv_layers[i], axis=-1).reshape(-1, 2)
    if color:
        rgba = np.stack(
            [255 * u, 255 * (1 - v), np.full_like(u, 128), np.full_like(u, 255)], axis=-1
        )
        data["color0"] = np.rint(rgba).astype(np.uint8).reshape(-1, 4)
    if skinned:
        data["blendweights0"] = np.repeat(ring_w, ncols, axis=0)
        local_idx = ring_idx.copy()
        if use_mapping:
            start = 0
            for (a, b), mapping in zip(ranges, mappings, strict=True):
                n = b - a + 1
                local = np.searchsorted(mapping, ring_idx[start : start + n])
                local_idx[start : start + n] = np.where(ring_w[start : start + n] > 0, local, 0)
                start += n
        data["blendindices0"] = np.repeat(local_idx, ncols, axis=0).astype(np.uint8)

    # -- index buffer: LOD after LOD, geometry after geometry (as AssetImporter)
    vstarts = np.cumsum([0] + [(b - a + 1) * ncols for a, b in ranges])
    chunks: list[np.ndarray] = []
    draw: dict[tuple[int, int], tuple[int, int]] = {}
    at = 0
    for level in range(lods):
        stride = 1 << level
        for g, (a, b) in enumerate(ranges):
            tris = _grid_triangles(
                _lod_subset(b - a + 1, stride), _lod_subset(ncols, stride), ncols, int(vstarts[g])
            )
            draw[g, level] = (at, len(tris))
            chunks.append(tris)
            at += len(tris)
    all_idx = np.concatenate(chunks)
    size = index_size or (2 if n_total <= 0x10000 else 4)
    if size == 2 and n_total > 0x10000:
        raise ValueError(f"{n_total} vertices need 32-bit indices")
    indices = all_idx.astype(np.uint16 if size == 2 else np.uint32)

    geoms = []
    for g in range(len(ranges)):
        lod_list = [
            mdl.GeometryLod(
                0.0 if level == 0 else 10.0 * 2 ** (level - 1),
                mdl.PRIMITIVE_TRIANGLES,
                0,
                0,
                *draw[g, level],
            )
            for level in range(lods)
        ]
        mapping = mappings[g] if use_mapping else np.zeros(0, np.uint32)
        geoms.append(mdl.Geometry(mapping, lod_list))

    # -- vertex morphs: bands of rings, deltas in model space
    morph_list = []
    morphed = []
    for i in range(morphs):
        kind = i % len(MORPH_KINDS)
        name = MORPH_KINDS[kind] + (str(i // len(MORPH_KINDS)) if i >= len(MORPH_KINDS) else "")
        centre = length * (0.15 + ((0.4, 0.7, 0.15)[kind] + 0.13 * (i // len(MORPH_KINDS))) % 0.75)
        bump, _ = _bump(s, centre, 0.15 * length)
        amount = (0.5, 0.6, -0.4)[kind] * radius

        def radius_fn(x, kind=kind, centre=centre, amount=amount):
            r, dr = base_radius(x)
            if kind == 1:
                return r, dr
            b, db = _bump(x, centre, 0.15 * length)
            return r + amount * b, dr + amount * db

        def shift_fn(x, kind=kind, centre=centre, amount=amount):
            if kind != 1:
                return no_shift(x)
            b, db = _bump(x, centre, 0.15 * length)
            return amount * b, amount * db

        rows = np.nonzero(bump > 0)[0]
        mp, mn, mt, _ = _deform(blend[rows], *_surface(s[rows], theta, radius_fn, shift_fn))
        mmask = MORPH_MASKS[kind]
        mdata = np.zeros(len(rows) * ncols, mdl.morph_dtype(mmask))
        mdata["index"] = (rows[:, None] * ncols + np.arange(ncols)[None, :]).reshape(-1)
        mdata["position"] = (mp - p[rows]).reshape(-1, 3)
        if mmask & MASK_NORMAL:
            mdata["normal"] = (mn - nrm[rows]).reshape(-1, 3)
        if mmask & MASK_TANGENT:
            mdata["tangent"] = (mt - tan[rows]).reshape(-1, 3)
        morph_list.append(mdl.Morph(name, [mdl.MorphBuffer(0, mmask, mdata)]))
        morphed.append(mdata["index"])
    morphed_idx = np.concatenate(morphed) if morphed else np.zeros(0, np.uint32)
    if len(morphed_idx):
        morph_start = int(morphed_idx.min())
        morph_count = int(morphed_idx.max()) - morph_start + 1
    else:
        morph_start = morph_count = 0
    vb = mdl.VertexBuffer(elements, data, morph_start, morph_count, mask)

    # -- bones with collision shapes fitted to the vertices they mostly move
    bones: list[mdl.Bone] = []
    if skinned:
        names = ["Tentacle_Root"] + [f"Tentacle_{j:03d}" for j in range(1, nb)]
        bones = _make_bones(names, parents, pos, rot, scl, world)
        ring_dense = np.zeros((len(s), nb), np.float32)
        for slot in range(4):  # zero-weight slots point at bone 0: add, never overwrite
            ring_dense[np.arange(len(s)), ring_idx[:, slot]] += ring_w[:, slot]
        offsets = np.linalg.inv(world)
        for j, bone in enumerate(bones):
            rows = np.nonzero(ring_dense[:, j] > 0.33)[0]
            pts = p[rows].reshape(-1, 3)
            local = pts @ offsets[j, :3, :3].T + offsets[j, :3, 3]
            _set_collision(bone, (3, 1, 2, 0)[j % 4] if collision else 0, local)

    pts = data["position0"]
    geom_centres = None
    if centers:
        geom_centres = np.array(
            [pts[vstarts[g] : vstarts[g + 1]].mean(axis=0) for g in range(len(ranges))],
            np.float32,
        )
    return mdl.Model(
        b"UMDL" if legacy else b"UMD2",
        [vb],
        [mdl.IndexBuffer(indices)],
        geoms,
        morph_list,
        bones,
        pts.min(axis=0),
        pts.max(axis=0),
        geom_centres,
    )


def with_unused_vertex(
    model: mdl.Model, vertex_buffer: int = 0, at: int | None = None
) -> mdl.Model:
    """``model`` with one more vertex in ``vertex_buffer`` that no draw uses, at
    place ``at`` (default: the middle), as some engine files have: a copy of the
    vertex there, moved along its normal so that it is no other vertex's twin.
    Indices, morph indices and the morph range after it shift by one."""
    vb = model.vertex_buffers[vertex_buffer]
    at = vb.count // 2 if at is None else at
    extra = vb.data[at : at + 1].copy()
    extra["position0"] += np.float32(0.05) * extra["normal0"] + np.float32(0.01)
    vb.data = np.concatenate([vb.data[:at], extra, vb.data[at:]])
    for geo in model.geometries:
        for d in geo.lods:
            if d.vertex_buffer != vertex_buffer:
                continue
            ib = model.index_buffers[d.index_buffer].indices
            part = ib[d.index_start : d.index_start + d.index_count]
            part[part >= at] += 1
    for m in model.morphs:
        for mb in m.buffers:
            if mb.vertex_buffer == vertex_buffer:
                mb.data["index"][mb.data["index"] >= at] += 1
    if vb.morph_count and vb.morph_start >= at:
        vb.morph_start += 1
    elif vb.morph_count and vb.morph_start + vb.morph_count > at:
        vb.morph_count += 1
    return model


def lod_buffer_model(**kwargs) -> mdl.Model:
    """:func:`skinned_model` with two LODs (no morphs), whose LOD 1 draws from a
    vertex and an index buffer of its own (the vertices it uses, in order), as
    exporters that write a buffer per LOD do."""
    model = skinned_model(lods=2, morphs=0, **kwargs)
    vb = model.vertex_buffers[0]
    ib = model.index_buffers[0].indices
    lod1 = [geo.lods[1] for geo in model.geometries]
    idx = np.concatenate([ib[d.index_start : d.index_start + d.index_count] for d in lod1])
    used = np.unique(idx)
    model.index_buffers[0].indices = ib[: min(d.index_start for d in lod1)]
    model.vertex_buffers.append(mdl.VertexBuffer(vb.elements, vb.data[used], 0, 0, vb.legacy_mask))
    model.index_buffers.append(mdl.IndexBuffer(np.searchsorted(used, idx).astype(ib.dtype)))
    start = 0
    for d in lod1:
        d.vertex_buffer, d.index_buffer, d.index_start = 1, 1, start
        start += d.index_count
    return model


#: Bone names Blender cannot hold: 70 bytes, empty, and two equal to the first in
#: their first 63 bytes (Blender cuts names to 63 bytes, then makes them unique).
UNHELD_BONE_NAMES = ("B" * 70, "", "B" * 63 + "Tail", "B" * 63)


def with_unheld_bone_names(model: mdl.Model) -> mdl.Model:
    """``model`` with bones 1 to 4 named :data:`UNHELD_BONE_NAMES` (it needs at
    least 5 bones)."""
    if len(model.bones) < 5:
        raise ValueError("the model needs at least 5 bones")
    for bone, name in zip(model.bones[1:5], UNHELD_BONE_NAMES, strict=True):
        bone.name = name
    return model


# --------------------------------------------------------------------------
# walk cycle
# --------------------------------------------------------------------------
def walk_animation(
    source: mdl.Model | Sequence[mdl.Bone] | Sequence[str],
    n_keys: int = 25,
    length: float = 1.0,
    *,
    name: str = "Walk",
    amplitude: float = 0.35,
    cycles: int = 1,
    scale_every: int = 4,
    rest: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
) -> ani.Animation:
    """A looping UANI animation with one track per bone.

    ``source`` is a model, its bones, or bone names (then ``rest`` gives
    (positions, w x y z rotations, scales) per bone, identity if omitted). Keys
    are evenly spaced from 0 to ``length`` inclusive and hold absolute local
    transforms: the rest rotation times a sine swing about a per-bone axis
    (a wave running down the chain, ``cycles`` full periods, so the last key
    equals the first), the rest position (the first bone also bobs), and for
    every ``scale_every``-th bone a pulsing scale (mask 7; the others mask 3).
    Quaternions are normalised and keep one hemisphere from key to key.
    """
    if isinstance(source, mdl.Model):
        source = source.bones
    if len(source) and isinstance(source[0], mdl.Bone):
        names = [b.name for b in source]
        _, pos, rot, scl = _rest_arrays(source)
    else:
        names = list(source)
        nb = len(names)
        if rest is None:
            pos, rot, scl = np.zeros((nb, 3)), np.tile([1.0, 0, 0, 0], (nb, 1)), np.ones((nb, 3))
        else:
            pos, rot, scl = (np.asarray(a, np.float64).reshape(nb, -1) for a in rest)
    if n_keys < 1:
        raise ValueError("n_keys must be >= 1")
    nb = len(names)
    times = np.linspace(0.0, length, n_keys) if n_keys > 1 else np.zeros(1)
    phase = 2 * math.pi * cycles * times[None, :] / (length or 1.0)
    phase = phase - 0.5 * math.pi * np.arange(nb)[:, None] / max(nb, 1)
    k = np.arange(nb)
    axes = np.stack([np.cos(0.7 * k), 0.3 * np.ones(nb), np.sin(0.7 * k)], axis=-1)
    swing = quat_from_axis_angle(axes[:, None, :], amplitude * np.sin(phase))
    q = _normalize(quat_multiply(_normalize(rot)[:, None, :], swing))
    # one hemisphere along each track
    flips = np.sum(q[:, 1:] * q[:, :-1], axis=-1) < 0
    sign = np.concatenate(
        [np.ones((nb, 1)), np.cumprod(np.where(flips, -1.0, 1.0), axis=1)], axis=1
    )
    q *= sign[..., None]

    p = np.repeat(pos[:, None, :], len(times), axis=1)
    if nb:
        p[0, :, 1] += 0.05 * amplitude * np.sin(2 * phase[0])
        p[0, :, 0] += 0.02 * amplitude * np.cos(phase[0])
    sc = scl[:, None, :] * (1 + 0.1 * np.sin(phase))[..., None]

    tracks = []
    for b in range(nb):
        mask = ani.CHANNEL_POSITION | ani.CHANNEL_ROTATION
        if scale_every and b % scale_every == scale_every - 1:
            mask |= ani.CHANNEL_SCALE
        keys = np.zeros(len(times), ani.keyframe_dtype(mask))
        keys["time"] = times
        keys["position"] = p[b]
        keys["rotation"] = q[b]
        if mask & ani.CHANNEL_SCALE:
            keys["scale"] = sc[b]
        tracks.append(ani.Track(names[b], mask, keys))
    return ani.Animation(name, float(np.float32(length)), tracks)


# --------------------------------------------------------------------------
# coverage models
# --------------------------------------------------------------------------
def _demo_skeleton(names, parents, pos, rot_axis_angles, masks, points) -> list[mdl.Bone]:
    """Bones with offsets from their world bind poses and collision fitted to ``points``."""
    parents = np.asarray(parents)
    pos = np.asarray(pos, np.float64)
    axes = np.array([a[:3] for a in rot_axis_angles], np.float64)
    rot = quat_from_axis_angle(axes, np.array([a[3] for a in rot_axis_angles]))
    scl = np.ones_like(pos)
    scl[-1] = (1.0, 1.5, 1.0)
    world = transforms.world_from_local(transforms.compose_trs(pos, rot, scl), parents)
    bones = _make_bones(names, parents, pos, rot, scl, world)
    offsets = np.linalg.inv(world)
    for j, bone in enumerate(bones):
        local = points @ offsets[j, :3, :3].T + offsets[j, :3, 3]
        _set_collision(bone, masks[j], local)
    return bones


def all_elements_model(big_vertices: int = 65600) -> mdl.Model:
    """A UMD2 model that uses every element type and semantic of the format.

    - vertex buffer 0 (96 vertices, a wavy sheet): position, normal, binormal
      (Vector3), tangent (Vector4), texcoord 0 and 1 (Vector2), texcoord 2
      (Vector3), texcoord 3 (Vector4), colour 0 (ubyte4 normalised), colour 1
      (float), blend weights (Vector4), blend indices (ubyte4), object index
      (int); 16-bit indices; two LODs; a bone mapping [3, 1, 0, 2] (the format
      allows one with few bones) with blend indices local to it;
    - vertex buffer 1 (``big_vertices`` > 65535, a long ribbon): position and
      texcoord 0, drawn with 32-bit indices that reach past 65535;
    - vertex buffer 2: position and colour, drawn as a line list with 16-bit
      indices;
    - morphs touching two vertex buffers at once with different masks, morph
      ranges on both; 4 bones (collision box, sphere, both, none; one bone
      with a non-uniform bind scale); bounding box and geometry centres.
    """
    if big_vertices <= 0xFFFF or big_vertices % 2:
        raise ValueError("big_vertices must be even and above 65535")
    # -- buffer 0: an 8 x 12 sheet with every element
    rows, cols = 8, 12
    ii, jj = np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij")
    x, z = jj / (cols - 1) * 2 - 1, ii / (rows - 1) * 2 - 1
    y = 0.1 * np.sin(3 * x) * np.cos(2 * z)
    dydx = 0.3 * np.cos(3 * x) * np.cos(2 * z)
    dydz = -0.2 * np.sin(3 * x) * np.sin(2 * z)
    d_col = _normalize(np.stack([np.ones_like(x), dydx, np.zeros_like(x)], -1))
    d_row = _normalize(np.stack([np.zeros_like(x), dydz, np.ones_like(x)], -1))
    normal = _normalize(np.cross(d_row, d_col))
    el0 = [
        VertexElement(TYPE_VECTOR3, SEM_POSITION),
        VertexElement(TYPE_VECTOR3, SEM_NORMAL),
        VertexElement(TYPE_VECTOR3, SEM_BINORMAL),
        VertexElement(TYPE_VECTOR4, SEM_TANGENT),
        VertexElement(TYPE_VECTOR2, SEM_TEXCOORD, 0),
        VertexElement(TYPE_VECTOR2, SEM_TEXCOORD, 1),
        VertexElement(TYPE_VECTOR3, SEM_TEXCOORD, 2),
        VertexElement(TYPE_VECTOR4, SEM_TEXCOORD, 3),
        VertexElement(TYPE_UBYTE4_NORM, SEM_COLOR, 0),
        VertexElement(TYPE_FLOAT, SEM_COLOR, 1),
        VertexElement(TYPE_VECTOR4, SEM_BLENDWEIGHTS),
        VertexElement(TYPE_UBYTE4, SEM_BLENDINDICES),
        VertexElement(TYPE_INT, SEM_OBJECTINDEX),
    ]
    n0 = rows * cols
    u, v = (jj / (cols - 1)).reshape(-1), (ii / (rows - 1)).reshape(-1)
    d0 = np.zeros(n0, vertex_dtype(el0, False))
    d0["position0"] = np.stack([x, y, z], -1).reshape(-1, 3)
    d0["normal0"] = normal.reshape(-1, 3)
    tangent = _normalize(d_col - normal * np.sum(d_col * normal, -1, keepdims=True))
    d0["tangent0"][:, :3] = tangent.reshape(-1, 3)
    d0["tangent0"][:, 3] = 1.0
    d0["binormal0"] = np.cross(normal, tangent).reshape(-1, 3)
    d0["texcoord0"] = np.stack([u, v], -1)
    d0["texcoord1"] = np.stack([v, u], -1)
    d0["texcoord2"] = d0["position0"]
    d0["texcoord3"] = np.stack([u, v, u * v, 1 - u], -1)
    d0["color0"] = np.stack([255 * u, 255 * v, 255 * (1 - u), np.full(n0, 255)], -1).astype(
        np.uint8
    )
    d0["color1"] = 0.5 + 0.5 * np.sin(7 * u)
    # weights between the bones along x: local indices into the mapping [3, 1, 0, 2]
    t = np.clip((u * 3), 0, 3)
    lo = np.minimum(np.floor(t), 2).astype(int)
    frac = t - lo
    w = np.zeros((n0, 4))
    w[:, 0], w[:, 1] = 1 - frac, frac
    d0["blendweights0"] = w
    d0["blendindices0"] = np.stack([lo, lo + 1, np.zeros(n0), np.zeros(n0)], -1)
    d0["objectindex0"] = np.arange(n0) % 5 - 2  # signed ints, negatives included
    tris0 = _grid_triangles(np.arange(rows), np.arange(cols), cols, 0)
    tris0_lod = _grid_triangles(_lod_subset(rows, 2), _lod_subset(cols, 2), cols, 0)

    # -- buffer 1: a ribbon with more vertices than 16-bit indices can reach
    n1 = big_vertices
    half = n1 // 2
    el1 = [VertexElement(TYPE_VECTOR3, SEM_POSITION), VertexElement(TYPE_VECTOR2, SEM_TEXCOORD)]
    d1 = np.zeros(n1, vertex_dtype(el1, False))
    k = np.arange(half)
    along = k / (half - 1)
    ang = 6 * math.pi * along
    centre = np.stack([3 * np.cos(ang), 4 * along, 3 * np.sin(ang)], -1)
    edge = np.array([0.0, 0.2, 0.0])
    d1["position0"] = np.stack([centre - edge, centre + edge], 1).reshape(-1, 3)
    d1["texcoord0"] = np.stack(
        [np.stack([along, np.zeros(half)], -1), np.stack([along, np.ones(half)], -1)], 1
    ).reshape(-1, 2)
    tris1 = _grid_triangles(np.arange(half), np.arange(2), 2, 0)

    # -- buffer 2: a line list (a small axis gizmo and a circle)
    el2 = [VertexElement(TYPE_VECTOR3, SEM_POSITION), VertexElement(TYPE_UBYTE4_NORM, SEM_COLOR)]
    circle = np.arange(16) * (2 * math.pi / 16)
    pts2 = np.concatenate(
        [
            np.array([[0, 0, 0], [1, 0, 0], [0, 0, 0], [0, 1, 0], [0, 0, 0], [0, 0, 1]], float),
            np.stack([np.cos(circle), np.zeros(16), np.sin(circle)], -1) * 0.5,
        ]
    )
    d2 = np.zeros(len(pts2), vertex_dtype(el2, False))
    d2["position0"] = pts2
    d2["color0"] = (
        [[255, 0, 0, 255]] * 2
        + [[0, 255, 0, 255]] * 2
        + [[0, 0, 255, 255]] * 2
        + [[255, 255, 255, 128]] * 16
    )
    ring = 6 + np.arange(16)
    lines2 = np.concatenate([np.arange(6), np.stack([ring, 6 + (ring - 5) % 16], -1).reshape(-1)])

    # -- morphs over two buffers with different masks
    sel0 = np.arange(20, 60)
    m0 = np.zeros(len(sel0), mdl.morph_dtype(MASK_POSITION | MASK_NORMAL | MASK_TANGENT))
    m0["index"] = sel0
    m0["position"] = d0["normal0"][sel0] * 0.1
    m0["normal"] = [0.0, 0.05, -0.05]
    m0["tangent"] = [0.01, 0.0, -0.01]
    sel1 = np.arange(n1 - 300, n1, 3)
    m1 = np.zeros(len(sel1), mdl.morph_dtype(MASK_POSITION))
    m1["index"] = sel1
    m1["position"] = [0.0, 0.5, 0.0]
    sel0b = np.arange(0, 12)
    m2 = np.zeros(len(sel0b), mdl.morph_dtype(MASK_NORMAL | MASK_TANGENT))
    m2["index"] = sel0b
    m2["normal"] = [0.1, 0.0, 0.0]
    m2["tangent"] = [0.0, 0.0, 0.1]
    morphs = [
        mdl.Morph(
            "Wave",
            [
                mdl.MorphBuffer(0, MASK_POSITION | MASK_NORMAL | MASK_TANGENT, m0),
                mdl.MorphBuffer(1, 1, m1),
            ],
        ),
        mdl.Morph("Shade", [mdl.MorphBuffer(0, MASK_NORMAL | MASK_TANGENT, m2)]),
    ]
    lo0, hi0 = min(sel0.min(), sel0b.min()), max(sel0.max(), sel0b.max())
    vb0 = mdl.VertexBuffer(el0, d0, int(lo0), int(hi0 - lo0 + 1))
    vb1 = mdl.VertexBuffer(el1, d1, int(sel1.min()), int(sel1.max() - sel1.min() + 1))
    vb2 = mdl.VertexBuffer(el2, d2)

    ib0 = np.concatenate([tris0, tris0_lod]).astype(np.uint16)
    ib1 = tris1.astype(np.uint32)
    ib2 = lines2.astype(np.uint16)
    geoms = [
        mdl.Geometry(
            np.array([3, 1, 0, 2], np.uint32),
            [
                mdl.GeometryLod(0.0, mdl.PRIMITIVE_TRIANGLES, 0, 0, 0, len(tris0)),
                mdl.GeometryLod(25.0, mdl.PRIMITIVE_TRIANGLES, 0, 0, len(tris0), len(tris0_lod)),
            ],
        ),
        mdl.Geometry(
            np.zeros(0, np.uint32),
            [mdl.GeometryLod(0.0, mdl.PRIMITIVE_TRIANGLES, 1, 1, 0, len(ib1))],
        ),
        mdl.Geometry(
            np.zeros(0, np.uint32), [mdl.GeometryLod(0.0, mdl.PRIMITIVE_LINES, 2, 2, 0, len(ib2))]
        ),
    ]
    bones = _demo_skeleton(
        ["Root", "Left", "Middle", "Right"],
        [-1, 0, 0, 2],
        [[-1, 0, 0], [0, 0.1, 0], [1, 0, 0], [1, 0, 0]],
        [(0, 1, 0, 0.3), (0, 0, 1, -0.2), (1, 0, 0, 0.4), (0, 1, 0, -0.5)],
        [2, 1, 3, 0],
        d0["position0"].astype(np.float64),
    )
    centres = np.array([d["position0"].mean(axis=0) for d in (d0, d1, d2)], np.float32)
    every = np.concatenate([d0["position0"], d1["position0"], d2["position0"]])
    return mdl.Model(
        b"UMD2",
        [vb0, vb1, vb2],
        [mdl.IndexBuffer(ib0), mdl.IndexBuffer(ib1), mdl.IndexBuffer(ib2)],
        geoms,
        morphs,
        bones,
        every.min(axis=0),
        every.max(axis=0),
        centres,
    )


def legacy_all_bits_model() -> mdl.Model:
    """A UMDL model whose first vertex buffer has every legacy mask bit (0x3FFF).

    A cube of 24 vertices with position, normal, colour, two UV sets, two cube
    texcoords, tangent, blend weights and indices, three instance-matrix rows
    and an object index; a second buffer (position + colour) drawn as a line
    list; one 16-bit index buffer shared by both geometries (each with its own
    draw range, the first with 2 LODs); a morph with mask position+tangent; two
    bones (sphere+box and box); no geometry centres (the older file layout).
    """
    normals = np.array([[1, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0], [0, 0, 1], [0, 0, -1]], float)
    ups = np.array([[0, 1, 0], [0, 1, 0], [0, 0, -1], [0, 0, 1], [0, 1, 0], [0, 1, 0]], float)
    rights = np.cross(ups, normals)
    corners = np.array([[-1, -1], [-1, 1], [1, -1], [1, 1]], float)  # (du, dv)
    pos = (
        normals[:, None, :] * 0.5
        + corners[None, :, 0:1] * rights[:, None, :] * 0.5
        + corners[None, :, 1:2] * ups[:, None, :] * 0.5
    ).reshape(-1, 3)
    n = len(pos)
    uv = np.tile((corners + 1) / 2, (6, 1))
    elements = elements_from_mask(LEGACY_ALL_BITS)
    data = np.zeros(n, vertex_dtype(elements, True))
    data["position0"] = pos
    data["normal0"] = np.repeat(normals, 4, axis=0)
    data["color0"] = np.rint(np.concatenate([(pos + 0.5) * 255, np.full((n, 1), 255)], 1))
    data["texcoord0"] = uv
    data["texcoord1"] = uv * 0.5
    data["cubetexcoord0"] = _normalize(pos)
    data["cubetexcoord1"] = -_normalize(pos)
    data["tangent0"][:, :3] = np.repeat(rights, 4, axis=0)
    data["tangent0"][:, 3] = 1.0
    w = np.clip(pos[:, 1] + 0.5, 0, 1)
    data["blendweights0"] = np.stack([1 - w, w, np.zeros(n), np.zeros(n)], -1)
    data["blendindices0"] = [0, 1, 0, 0]
    data["instancematrix0"] = [1, 0, 0, 0]
    data["instancematrix1"] = [0, 1, 0, 0]
    data["instancematrix2"] = [0, 0, 1, 0]
    data["objectindex0"] = np.repeat(np.arange(6), 4)
    # each face: corners 0 (-,-), 1 (-,+), 2 (+,-), 3 (+,+); right = up x normal
    quad = np.array([0, 2, 1, 1, 2, 3])  # (right, up, normal) is right-handed
    tris = (np.arange(6)[:, None] * 4 + quad[None, :]).reshape(-1)

    lines_mask = MASK_POSITION | MASK_COLOR
    lines = np.zeros(4, vertex_dtype(elements_from_mask(lines_mask), True))
    lines["position0"] = [[0, 0, 0], [0, 1, 0], [0, 1, 0], [0, 1.5, 0]]
    lines["color0"] = [[255, 255, 0, 255]] * 4
    line_idx = np.array([0, 1, 2, 3])
    lod1 = tris[:18]  # three faces only
    indices = np.concatenate([tris, lod1, line_idx]).astype(np.uint16)

    top = np.nonzero(pos[:, 1] > 0)[0]
    morph = np.zeros(len(top), mdl.morph_dtype(MASK_POSITION | MASK_TANGENT))
    morph["index"] = top
    morph["position"] = [0.0, 0.25, 0.0]
    morph["tangent"] = [0.0, 0.1, 0.0]

    geoms = [
        mdl.Geometry(
            np.zeros(0, np.uint32),
            [
                mdl.GeometryLod(0.0, mdl.PRIMITIVE_TRIANGLES, 0, 0, 0, len(tris)),
                mdl.GeometryLod(40.0, mdl.PRIMITIVE_TRIANGLES, 0, 0, len(tris), len(lod1)),
            ],
        ),
        mdl.Geometry(
            np.zeros(0, np.uint32),
            [mdl.GeometryLod(0.0, mdl.PRIMITIVE_LINES, 1, 0, len(tris) + len(lod1), 4)],
        ),
    ]
    bones = _demo_skeleton(
        ["Base", "Lid"],
        [-1, 0],
        [[0, -0.5, 0], [0, 1, 0]],
        [(0, 1, 0, 0.0), (1, 0, 0, 0.1)],
        [3, 2],
        pos,
    )
    every = np.concatenate([pos, lines["position0"]])
    return mdl.Model(
        b"UMDL",
        [
            mdl.VertexBuffer(
                elements, data, int(top.min()), int(top.max() - top.min() + 1), LEGACY_ALL_BITS
            ),
            mdl.VertexBuffer(elements_from_mask(lines_mask), lines, 0, 0, lines_mask),
        ],
        [mdl.IndexBuffer(indices)],
        geoms,
        [mdl.Morph("Open", [mdl.MorphBuffer(0, MASK_POSITION | MASK_TANGENT, morph)])],
        bones,
        every.min(axis=0).astype(np.float32),
        every.max(axis=0).astype(np.float32),
        None,
    )
