"""Blender objects -> neutral scene (the mirror of build.py)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field

import bpy
import numpy as np

from ...io_formats import exact_keys as ek
from ...io_formats.codec import FormatError
from ...io_formats.exact_keys import KeptTrack
from ...io_formats.posing import bases_to_locals, uniform_scale
from ...io_formats.scene import (
    Animation,
    Attribute,
    BoneTrack,
    ColorSet,
    Mesh,
    MorphTarget,
    Skeleton,
    Skin,
    UVSet,
)
from ...io_formats.transforms import decompose_trs
from ..result import Result
from . import compat, exact_keys, guard, kept_keys
from .armatures import mesh_armature
from .build import (
    ATTR_PROP,
    BIND_SCALE,
    EDGE_ORDER,
    INVERSE_BIND,
    LENGTH,
    LOCAL,
    NAME,
    REST,
    held_bone_names,
    rest_relative,
)
from .weights import weight_triplets

#: Custom properties RigPort keeps for itself (not the file's extras).
_OWN = ("rigport_", "_rigport")

_ATTR_WIDTH = {
    "INT": 1,
    "FLOAT": 1,
    "BOOLEAN": 1,
    "FLOAT_VECTOR": 3,
    "FLOAT2": 2,
    "FLOAT_COLOR": 4,
    "INT8": 1,
}


def read_prop(holder, key: str, default=None):
    """A custom property as plain Python (JSON text decoded); kept data from its
    hidden name, or from the visible name an earlier RigPort wrote."""
    name = kept_keys.find(holder, key)
    if name is None:
        return default
    value = holder[name]
    if isinstance(value, str) and value[:1] in "[{n":
        try:
            return json.loads(value)
        except ValueError:
            return value
    if isinstance(value, str) and value[:1] == '"':  # text that is not UTF-8 (build.set_prop)
        try:
            decoded = json.loads(value)
        except ValueError:
            return value
        return decoded if isinstance(decoded, str) and not guard.is_utf8(decoded) else value
    if (
        isinstance(value, float)
        and value.is_integer()
        and not (guard.INT32[0] <= value <= guard.INT32[1])
    ):
        return int(value)  # an integer beyond 32 bits (build.set_prop)
    if hasattr(value, "to_list"):
        return value.to_list()
    if hasattr(value, "to_dict"):
        return value.to_dict()
    return value


def read_extras(holder) -> dict:
    """The file's extras kept on ``holder``, under the codecs' names (RigPort's own
    bookkeeping, ``rigport_*``, left out)."""
    return {
        key: read_prop(holder, key)
        for key, _name in kept_keys.extras_keys(holder)
        if not key.startswith(_OWN)
    }


def extract_skeleton(armature: bpy.types.Object) -> Skeleton:
    """Bones in armature order; stored engine values where the rest pose is unchanged."""
    bones = list(armature.data.bones)
    index = {b.name: i for i, b in enumerate(bones)}
    n = len(bones)
    rest = np.array([np.array(b.matrix_local) for b in bones], np.float64).reshape(n, 4, 4)
    scale = np.array(
        [kept_keys.get(b, BIND_SCALE, (1.0, 1.0, 1.0)) for b in bones], np.float64
    ).reshape(n, 3)
    world = rest.copy()
    world[:, :3, :3] *= scale[:, None, :]
    parents = np.array([index[b.parent.name] if b.parent else -1 for b in bones], np.int32)
    t = np.zeros((n, 3))
    q = np.zeros((n, 4))
    s = np.zeros((n, 3))
    world_inv = np.linalg.inv(world)  # all at once: one call per bone cost 40 ms for 64
    inv = world_inv.copy()
    extras = []
    for i, b in enumerate(bones):
        stored = kept_keys.get(b, REST)
        kept_local = kept_keys.get(b, LOCAL)
        kept_inverse = kept_keys.get(b, INVERSE_BIND)
        p = parents[i]
        if (
            stored is not None
            and np.allclose(np.array(stored).reshape(4, 4), rest[i], atol=1e-5)
            and kept_local is not None
            and kept_inverse is not None
        ):
            vals = np.array(kept_local, np.float64)
            t[i], q[i], s[i] = vals[:3], vals[3:7], vals[7:10]
            inv[i] = np.array(kept_inverse, np.float64).reshape(4, 4)
        else:
            local = world[i] if p < 0 else world_inv[p] @ world[i]
            lt, lq, ls = decompose_trs(local[None])
            t[i], q[i], s[i] = lt[0], lq[0], ls[0]
        extras.append(read_extras(b))
    return Skeleton([file_name(b) for b in bones], parents, t, q, s, inv, extras)


def file_name(holder) -> str:
    """The file's own name of a bone, object or action: kept when Blender could not
    hold it (``build.keep_name``), else Blender's."""
    kept = holder.get(NAME)
    if isinstance(kept, str):
        try:
            name = json.loads(kept)
        except ValueError:
            return holder.name
        if isinstance(name, list) and len(name) == 2 and all(isinstance(x, str) for x in name):
            return name[0] if name[1] == holder.name else holder.name  # [file's, Blender's]
        if isinstance(name, str) and guard.blender_name(name) == holder.name:  # not renamed
            return name
    return holder.name


def _attribute_array(attr, n: int) -> np.ndarray:
    width = _ATTR_WIDTH[attr.data_type]
    dtype = (
        np.int32
        if attr.data_type in ("INT", "INT8")
        else (bool if attr.data_type == "BOOLEAN" else np.float32)
    )
    out = np.empty(n * width, dtype)
    attr.data.foreach_get(ATTR_PROP[attr.data_type], out)
    return out.reshape(n, width) if width > 1 else out


def int_attribute(me, name: str, n: int, width: int = 1) -> np.ndarray:
    """An integer attribute as (n,) or (n, width) int32; zeros when it is absent
    (``material_index`` is absent while every face uses slot 0)."""
    attr = me.attributes.get(name)
    out = np.zeros(n * width, np.int32)
    if attr is not None and n:
        attr.data.foreach_get("value", out)
    return out.reshape(n, width) if width > 1 else out


def face_starts(me) -> np.ndarray:
    """Each face's first corner (int32). A mesh of 3 corners a face is triangles
    only, whose starts need no read: ``loop_start`` is read one face at a time
    (15 to 50 ms for 200k faces)."""
    nf, nl = len(me.polygons), len(me.loops)
    if nl == 3 * nf:
        return np.arange(0, nl, 3, dtype=np.int32)
    starts = np.empty(nf, np.int32)
    me.polygons.foreach_get("loop_start", starts)
    return starts


def corner_normals(me, nl: int) -> np.ndarray:
    """The (``nl``, 3) float32 corner normals Blender holds (``compat.get_corner_normals``),
    with a normal where it holds none. On 4.5+ an import's normals are free custom
    normals, and geometry the artist adds later holds (0, 0, 0) there (Blender
    shades with it too): such a corner takes the area-weighted normal of the
    triangles around its vertex, from the positions (Blender's vertex and face
    normals gave 0 there as well). On 4.2 new geometry gets Blender's own normals,
    and a corner of a degenerate triangle keeps what Blender gives it."""
    normals = np.empty(nl * 3, np.float32)
    compat.get_corner_normals(me, normals)
    normals = normals.reshape(nl, 3)
    if not compat.HAS_NORMAL_ATTRIBUTE:
        return normals
    with np.errstate(invalid="ignore", over="ignore"):
        lost = np.flatnonzero(~(np.einsum("ij,ij->i", normals, normals) > 1e-12))
    if not len(lost):
        return normals
    nv = len(me.vertices)
    pos = np.empty(nv * 3, np.float32)
    me.attributes["position"].data.foreach_get("vector", pos)
    pos = pos.reshape(nv, 3).astype(np.float64)
    corner_vert = int_attribute(me, ".corner_vert", nl).astype(np.int64)
    tri = corner_vert[triangle_corners(me)[0].reshape(-1, 3)]
    verts = corner_vert[lost]
    t = tri[np.isin(tri, verts).any(axis=1)]  # the triangles around those vertices
    cross = np.cross(pos[t[:, 1]] - pos[t[:, 0]], pos[t[:, 2]] - pos[t[:, 0]])
    summed = np.zeros((nv, 3))
    for k in range(3):
        np.add.at(summed, t[:, k], cross)
    around = summed[verts]
    length = np.linalg.norm(around, axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        normals[lost] = np.where(length > 0, around / length, 0.0)
    return normals


def triangle_corners(me) -> tuple[np.ndarray, np.ndarray]:
    """(corner of each triangle corner, face of each triangle), as Blender's
    ``loop_triangles`` give them. A mesh of triangles only is its own
    triangulation, in face order: no per-triangle RNA read of ``loop_triangles``
    (0.55 s for 600k triangles). Other meshes use Blender's triangulation (it
    splits a quad along either diagonal, by its shape)."""
    nf = len(me.polygons)
    nl = len(me.loops)
    if nl == 3 * nf:
        return np.arange(nl, dtype=np.int32), np.arange(nf, dtype=np.int32)
    me.calc_loop_triangles()
    nt = len(me.loop_triangles)
    tri_loops = np.empty(nt * 3, np.int32)
    me.loop_triangles.foreach_get("loops", tri_loops)
    tri_poly = np.empty(nt, np.int32)
    me.loop_triangle_polygons.foreach_get("value", tri_poly)
    return tri_loops, tri_poly


@dataclass
class _Reading:
    """One mesh being read: its counts, the guard's restorer, and ``pick``, which
    gathers per-corner data into the triangles' corners."""

    me: bpy.types.Mesh
    nv: int
    nl: int
    ne: int
    restore: guard.Restorer
    pick: Callable[[np.ndarray], np.ndarray]
    loose: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))


def extract_mesh(
    obj: bpy.types.Object,
    bone_names: list[str] | None = None,
    tangents: bool = False,
    normalize_weights: bool = True,
    max_weights: int = 4,
) -> Mesh:
    """The object's mesh as triangles with per-corner data, in object space; with
    the faces and values the import guard left out of Blender back in place while
    the mesh is unedited. Passes: positions and triangles, loose edges, normals,
    UV sets, colours, format attributes, tangents, skin, shape keys, extras."""
    me = obj.data
    nv = len(me.vertices)
    if nv == 0:
        raise FormatError(f"mesh object {obj.name!r} has no vertices: nothing to export")
    pos = np.empty(nv * 3, np.float32)
    if nv:  # a mesh without vertices has no position attribute (5.0+)
        me.attributes["position"].data.foreach_get("vector", pos)
    restore = _restorer(me)
    pos = restore.positions(pos.reshape(nv, 3))
    tri_loops, tri_mat = _triangles(me, restore)
    nt = len(tri_mat)
    nl = len(me.loops)
    # A mesh of triangles only (and no faces the guard put back) is its own
    # triangulation: no gathers through tri_loops.
    plain = nt * 3 == nl and "faces" not in restore.kept
    pick = (lambda a: a) if plain else (lambda a: a[tri_loops])
    r = _Reading(me, nv, nl, len(me.edges), restore, pick)
    # The topology attributes, not the loops/edges RNA (an emulation, 50-100x slower).
    loop_vert = restore.corners("verts", int_attribute(me, ".corner_vert", nl))
    mesh = Mesh(
        name=file_name(obj),
        positions=pos,
        corner_verts=pick(loop_vert),
        face_starts=np.arange(0, nt * 3, 3, dtype=np.int32),
        face_materials=tri_mat,
        loose_edges=_loose_edges(r),
        materials=[s.material.name if s.material else "" for s in obj.material_slots],
    )
    if nl:
        mesh.normals = pick(restore.corners("normals", corner_normals(me, nl)))
    _read_uv_sets(r, mesh)
    _read_colors(r, mesh)
    _read_attributes(r, mesh)
    if tangents and me.uv_layers and nt:
        mesh.attributes.append(
            Attribute(
                "rigport:tangent",
                "CORNER",
                "FLOAT_COLOR",
                pick(restore.corners("tangent", _tangents(me, nl))),
            )
        )
    if bone_names is not None and obj.vertex_groups:
        mesh.skin = read_skin(obj, bone_names, normalize_weights, max_weights)
    if me.shape_keys is not None:
        mesh.morphs = _morphs(me, nv)
    mesh.extras.update(read_extras(obj))
    return mesh


def _loose_edges(r: _Reading) -> np.ndarray:
    """The edges no face uses, in the order the import recorded (``EDGE_ORDER``,
    each the way round it had); sets ``r.loose``, their indices."""
    me, ne = r.me, r.ne
    loop_edge = int_attribute(me, ".corner_edge", r.nl)
    edges = int_attribute(me, ".edge_verts", ne, 2).reshape(ne, 2)
    loose = np.ones(ne, bool)
    loose[loop_edge] = False
    loose = np.nonzero(loose)[0]
    order_attr = me.attributes.get(EDGE_ORDER)
    if order_attr is not None and order_attr.domain == "EDGE" and len(loose):
        code = np.empty(ne, np.int32)
        order_attr.data.foreach_get("value", code)
        code = code[loose]
        flip = (code >= 0) & (code % 2 == 1)
        edges[loose[flip]] = edges[loose[flip]][:, ::-1]
        loose = loose[np.lexsort((loose, np.where(code >= 0, code, np.iinfo(np.int32).max)))]
    r.loose = loose
    return edges[loose]


def _read_uv_sets(r: _Reading, mesh: Mesh) -> None:
    for k, layer in enumerate(r.me.uv_layers):
        uv = np.empty(r.nl * 2, np.float32)
        layer.uv.foreach_get("vector", uv)
        uv = r.restore.corners(f"uv:{k}", uv.reshape(r.nl, 2))
        mesh.uv_sets.append(UVSet(layer.name, r.pick(uv)))


def _read_colors(r: _Reading, mesh: Mesh) -> None:
    """Colour attributes, per corner (point colours spread to the corners)."""
    for ca in r.me.color_attributes:
        if ":" in ca.name:  # a format's own attribute (_read_attributes)
            continue
        n = r.nl if ca.domain == "CORNER" else r.nv
        byte = ca.data_type == "BYTE_COLOR"
        col = np.empty(n * 4, np.float32)
        ca.data.foreach_get("color_srgb" if byte else "color", col)
        col = col.reshape(n, 4)
        if ca.domain == "CORNER":
            col = r.pick(r.restore.corners(f"color:{len(mesh.colors)}", col))
        else:
            col = col[mesh.corner_verts]
        mesh.colors.append(ColorSet(ca.name, col, byte))


def _read_attributes(r: _Reading, mesh: Mesh) -> None:
    """A format's own attributes (``format:name``) on points, corners and loose edges."""
    for attr in r.me.attributes:
        if (
            ":" not in attr.name
            or attr.name.startswith(".")
            or attr.name == EDGE_ORDER
            or attr.data_type not in ATTR_PROP
        ):
            continue
        domain = attr.domain
        if domain == "POINT":
            data = _attribute_array(attr, r.nv)
        elif domain == "CORNER":
            data = r.pick(r.restore.corners(f"attr:{attr.name}", _attribute_array(attr, r.nl)))
        elif domain == "EDGE":
            data = _attribute_array(attr, r.ne)[r.loose]
        else:
            continue
        mesh.attributes.append(Attribute(attr.name, domain, attr.data_type, data))


def _restorer(me) -> guard.Restorer:
    """What the import guard left out of ``me``, to put back while it is unedited."""
    kept = me.get(guard.KEPT)
    return guard.Restorer(
        guard.loads(kept) if isinstance(kept, str) else None,
        len(me.vertices),
        len(me.loops),
        len(me.polygons),
    )


def _triangles(me, restore: guard.Restorer) -> tuple[np.ndarray, np.ndarray]:
    """Corner indices (3 per triangle) and material of every triangle, in the order
    :func:`extract_mesh` writes them (the guard's dropped faces back in place)."""
    tri_loops, tri_poly = triangle_corners(me)
    face_mat = int_attribute(me, "material_index", len(me.polygons))
    tri_mat = face_mat[tri_poly] if len(face_mat) else np.zeros(len(tri_poly), np.int32)
    return restore.triangles(tri_loops, tri_poly, tri_mat)


def triangle_tangents(obj: bpy.types.Object) -> np.ndarray:
    """Blender's tangents (xyz, bitangent sign) per triangle corner, in the corner
    order of :func:`extract_mesh` (so also for faces the import guard left out)."""
    me = obj.data
    restore = _restorer(me)
    tri_loops, _ = _triangles(me, restore)
    return restore.corners("tangent", _tangents(me, len(me.loops)))[tri_loops]


def _tangents(me, nl: int) -> np.ndarray:
    """Blender's tangents (xyz, bitangent sign) per corner, from the first UV map.
    Blender computes them for triangles and quads only: a mesh with n-gons is
    triangulated first (:func:`_triangulated_tangents`)."""
    nf = len(me.polygons)
    if nl != 3 * nf:  # 3 corners a face: triangles only, no read of each face's size
        totals = np.empty(nf, np.int32)
        me.polygons.foreach_get("loop_total", totals)
        if nf and int(totals.max()) > 4:
            return _triangulated_tangents(me, nl)
    return _calc_tangents(me, nl)


def _calc_tangents(me, nl: int) -> np.ndarray:
    me.calc_tangents(uvmap=me.uv_layers[0].name)
    tan = np.empty(nl * 3, np.float32)
    me.loops.foreach_get("tangent", tan)
    sign = np.empty(nl, np.float32)
    me.loops.foreach_get("bitangent_sign", sign)
    me.free_tangents()
    return np.concatenate([tan.reshape(nl, 3), sign[:, None]], axis=1)


def _triangulated_tangents(me, nl: int) -> np.ndarray:
    """Tangents per corner of a mesh with n-gons: computed on a temporary mesh of
    its triangles (Blender's triangulation, the same positions, first UV map and
    corner normals), each corner taking the tangent of a triangle corner it
    became (the triangles of a flat face share their tangent frame)."""
    nv = len(me.vertices)
    tri_loops, _ = triangle_corners(me)
    nc = len(tri_loops)
    pos = np.empty(nv * 3, np.float32)
    me.attributes["position"].data.foreach_get("vector", pos)
    corner_vert = int_attribute(me, ".corner_vert", nl)
    uv = np.empty(nl * 2, np.float32)
    me.uv_layers[0].uv.foreach_get("vector", uv)
    normals = corner_normals(me, nl).reshape(-1)
    tm = bpy.data.meshes.new("rigport-tangents")
    try:
        tm.vertices.add(nv)
        tm.vertices.foreach_set("co", pos)
        tm.loops.add(nc)
        tm.loops.foreach_set("vertex_index", corner_vert[tri_loops])
        tm.polygons.add(nc // 3)
        tm.polygons.foreach_set("loop_start", np.arange(0, nc, 3, dtype=np.int32))
        tm.update(calc_edges=True)
        layer = tm.uv_layers.new(name=me.uv_layers[0].name)
        layer.uv.foreach_set("vector", uv.reshape(nl, 2)[tri_loops].ravel())
        tm.polygons.foreach_set("use_smooth", np.ones(nc // 3, bool))
        compat.set_corner_normals(tm, normals.reshape(nl, 3)[tri_loops])
        per_triangle_corner = _calc_tangents(tm, nc)
    finally:
        bpy.data.meshes.remove(tm)
    out = np.zeros((nl, 4), np.float32)
    out[tri_loops] = per_triangle_corner
    return out


def read_skin(
    obj: bpy.types.Object, bone_names: list[str], normalize: bool = False, max_weights: int = 4
) -> Skin:
    """The strongest ``max_weights`` influences per vertex, strongest first (ties by
    bone order); zero slots have joint 0. Read in bulk where Blender allows."""
    arm = mesh_armature(obj)
    held = held_bone_names(arm) if arm is not None else {}  # whole file names -> Blender's
    bone_names = [held.get(n, guard.blender_name(n)) for n in bone_names]  # the groups' names
    triplets = weight_triplets(bpy.context, obj, bone_names)
    owner, bone, weight = triplets if triplets is not None else triplets_by_vertex(obj, bone_names)
    nv = len(obj.data.vertices)
    keep = (bone >= 0) & (weight > 0)
    if not keep.all():
        owner, bone, weight = owner[keep], bone[keep], weight[keep]
    owner, bone, weight = _strongest_first(owner, bone, weight, nv, len(bone_names))
    # each influence's place among its vertex's (owner is sorted): from the counts,
    # not a binary search per influence
    counts = np.bincount(owner, minlength=nv)
    slot = np.arange(len(owner)) - (np.cumsum(counts) - counts)[owner]
    ok = slot < max_weights
    joints = np.zeros((nv, max_weights), np.int32)
    weights = np.zeros((nv, max_weights), np.float32)
    joints[owner[ok], slot[ok]] = bone[ok]
    weights[owner[ok], slot[ok]] = weight[ok]
    if normalize:
        sums = weights.sum(axis=1, keepdims=True)
        np.divide(weights, sums, out=weights, where=sums > 0)
    return Skin(joints, weights)


_ONE_BITS = int(np.float32(1.0).view(np.uint32))  # weights are in [0, 1]


def _strongest_first(
    owner: np.ndarray, bone: np.ndarray, weight: np.ndarray, nv: int, nb: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The influences (weights in (0, 1], bones in ``[0, nb)``) ordered by vertex,
    then weight (strongest first), then bone. Where they fit, one packed int64
    key per influence (a positive float's bits sort like its value) is sorted
    and unpacked: no argsort and no gathers (4 million influences: 0.12 s
    against 0.18 s); else a lexsort."""
    bone_bits = max(1, (nb - 1).bit_length())
    if (max(nv - 1, 1)).bit_length() + 30 + bone_bits > 63 or not np.all(weight <= 1.0):
        order = np.lexsort((bone, -weight, owner))
        return owner[order], bone[order], weight[order]
    key = _ONE_BITS - weight.astype(np.float32).view(np.uint32).astype(np.int64)
    key <<= bone_bits
    key |= owner.astype(np.int64) << (30 + bone_bits)
    key |= bone.astype(np.int64)
    key.sort(kind="stable")  # timsort: the keys come in runs, one per bone
    bone = key & ((1 << bone_bits) - 1)
    key >>= bone_bits
    bits = (_ONE_BITS - (key & ((1 << 30) - 1))).astype(np.uint32)
    key >>= 30
    return key, bone, bits.view(np.float32)


def triplets_by_vertex(obj, bone_names: list[str]):
    """(vertex, bone, weight) through ``MeshVertex.groups``, each vertex's entries in
    Blender's order for it (bone -1 for a group that is no bone): the slow path."""
    index = {n: i for i, n in enumerate(bone_names)}
    group_to_bone = np.full(len(obj.vertex_groups) + 1, -1, np.int64)
    for g in obj.vertex_groups:
        group_to_bone[g.index] = index.get(g.name, -1)
    verts = obj.data.vertices
    nv = len(verts)
    counts = np.fromiter((len(v.groups) for v in verts), np.int64, nv)
    total = int(counts.sum())
    flat = np.fromiter(
        (x for v in verts for g in v.groups for x in (g.group, g.weight)), np.float64, 2 * total
    ).reshape(total, 2)
    owner = np.repeat(np.arange(nv), counts)
    return owner, group_to_bone[flat[:, 0].astype(np.int64)], flat[:, 1].astype(np.float32)


def _morphs(me, nv: int) -> list[MorphTarget]:
    blocks = me.shape_keys.key_blocks
    ref = me.shape_keys.reference_key
    base = np.empty(nv * 3, np.float32)
    compat.get_shape_key_coords(ref, base)
    kept = me.shape_keys.get(NAME)
    names = json.loads(kept) if isinstance(kept, str) else {}  # the file's own names
    out = []
    for kb in blocks:
        if kb == ref:
            continue
        co = np.empty(nv * 3, np.float32)
        compat.get_shape_key_coords(kb, co)
        name = names.get(kb.name, kb.name)
        out.append(MorphTarget(name, (co - base).reshape(nv, 3), float(kb.value)))
    return out


def extract_animation(
    armature: bpy.types.Object,
    action: bpy.types.Action,
    fps: float | None = None,
    use_recorded_fps: bool = True,
    rest: dict | None = None,
    result: Result | None = None,
) -> Animation:
    """Engine-local tracks at the action's keyframes, one per keyed bone. Key
    times convert at the rate the action was imported with (so they come back
    exactly), else at ``fps``; ``use_recorded_fps=False`` makes ``fps`` win
    (an export's explicit frame rate).

    ``rest`` is :func:`rest_relative` of the armature: an exporter that writes many
    actions of one armature computes it once (each bone's matrix inverted per action
    otherwise).

    Unedited tracks come back as the imported file had them, bit for bit, and the
    tracks of bones the armature lacks are carried through, all in the file's
    order (:func:`exact_keys.restore`; ``result`` gets a line on what it did)."""
    recorded = action.get("rigport_fps") if use_recorded_fps else None
    fps = float(recorded if recorded is not None else (fps or 24.0))
    kept = exact_keys.record(action)
    if exact_keys.legacy_rest(kept):  # an older build's record: its tracks, its rest
        rels = rest_relative(armature.data, legacy=True)
    else:
        rels = rest_relative(armature.data) if rest is None else rest
    per_bone = read_key_coords(action, rels)
    given = _given_keys(armature, per_bone, rels, fps, kept) if kept else None
    tracks = tracks_from_coords(armature, per_bone, rels, fps)
    tracks = exact_keys.restore(action, tracks, result, kept, given)
    stored = float(kept_keys.get(action, LENGTH, 0.0))
    length = max([stored] + [float(t.times[-1]) for t in tracks if len(t.times)])
    return Animation(
        file_name(action),
        length,
        tracks,
        read_extras(action),
    )


#: Per bone name, per channel (``location``, ``rotation_quaternion``, ``scale``),
#: per array index: the F-curve and its keys as (n, 2) float32 (frame, value),
#: ``None`` for keys still to be read from the F-curve.
KeyCoords = dict[str, dict[str, dict[int, tuple[object, np.ndarray | None]]]]


def read_key_coords(action: bpy.types.Action, rels: dict) -> KeyCoords:
    """The Blender half of :func:`extract_animation`: every pose-bone transform
    F-curve's keys (one ``foreach_get`` each), for the bones ``rels`` has."""
    per_bone: KeyCoords = {}
    for fc in compat.fcurves(action):
        path = fc.data_path
        if not path.startswith('pose.bones["'):
            continue
        name, _, prop = path[len('pose.bones["') :].partition('"].')
        name = name.replace('\\"', '"').replace("\\\\", "\\")
        if prop not in ("location", "rotation_quaternion", "scale") or name not in rels:
            continue
        per_bone.setdefault(name, {}).setdefault(prop, {})[fc.array_index] = (fc, _key_coords(fc))
    return per_bone


def _given_keys(
    armature: bpy.types.Object,
    per_bone: KeyCoords,
    rels: dict,
    fps: float,
    kept: list[KeptTrack],
) -> dict[str, frozenset[str] | None]:
    """Per file bone name of each version-4 given track Blender still keys, the
    channels (``translation`` ...) whose keys are what the import gave Blender
    (None: the rest, frame rate or frames differ, so the whole track is
    Blender's). A bone whose every channel is as given, with no new one, is
    taken out of ``per_bone``: the export writes the file's arrays unconverted."""
    by_file = {k.bone: k for k in kept if k.given is not None}
    out: dict[str, frozenset[str] | None] = {}
    if not by_file:
        return out
    bones = armature.data.bones
    for name in list(per_bone):
        k = by_file.get(file_name(bones[name]))
        if k is None:
            continue
        chans = per_bone[name]
        match = _given_match(k, chans, rels[name], fps)
        out[k.bone] = match
        if match is not None and len(match) == len(chans) == len(k.digests) - 2:
            del per_bone[name]  # every channel as given, none added: nothing to convert
    return out


def _given_match(
    k: KeptTrack, chans: dict[str, dict[int, tuple]], rel: tuple, fps: float
) -> frozenset[str] | None:
    """:func:`_given_keys` for one bone (``chans``: its :data:`KeyCoords`)."""
    if ek.basis_digest(rel, fps) != k.digests["basis"]:
        return None
    match = frozenset(
        ek.GIVEN_ARRAY[prop]
        for prop in ek.GIVEN_CHANNELS
        if prop in k.digests
        and prop in chans
        and ek.channel_digest([(i, co) for i, (_, co) in sorted(chans[prop].items())])
        == k.digests[prop]
    )
    if len(match) == len(chans) == len(k.digests) - 2:
        return match
    # Something differs: the other channels are the file's only at the file's frames,
    # and only while each channel converts on its own (uniform bind scales).
    coords = [co for c in chans.values() for _, co in c.values()]
    first = coords[0][:, 0]
    if (
        not all(len(co) == len(first) and np.array_equal(co[:, 0], first) for co in coords)
        or ek.times_digest(first) != k.digests["times"]
        or not (uniform_scale(rel[2]) and uniform_scale(rel[3]))
    ):
        return None
    return match


def tracks_from_coords(
    armature: bpy.types.Object,
    per_bone: KeyCoords,
    rels: dict,
    fps: float,
    shared: set[str] | frozenset[str] = frozenset(),
) -> list[BoneTrack]:
    """The numpy half of :func:`extract_animation`: engine-local tracks, in the
    armature's bone order, from F-curve keys (:func:`read_key_coords`, or the
    arrays ``build_action`` gave Blender, which then are the same bits). A curve
    is evaluated only at a frame it has no key on. ``shared``: bones whose curves
    all key the same ascending frames (as ``build_action`` keys them), taken as
    they are: what the checks of :func:`_shared_frames` and :func:`sample_fcurve`
    would find, without them."""
    bones, rests, keys, frame_sets = [], [], [], []
    for bone in armature.data.bones:
        chans = per_bone.get(bone.name)
        if not chans:
            continue
        for c in chans.values():
            for index, (fc, co) in c.items():
                if co is None:
                    c[index] = (fc, _key_coords(fc))
        coords = [co for c in chans.values() for _, co in c.values()]
        same = bone.name in shared
        frames = (
            coords[0][:, 0].astype(np.float64)
            if same
            else _shared_frames([co[:, 0] for co in coords])
        )
        k = len(frames)
        values = []
        for prop, width, default in (
            ("location", 3, 0.0),
            ("rotation_quaternion", 4, None),
            ("scale", 3, 1.0),
        ):
            arr = np.zeros((k, width))
            if prop == "rotation_quaternion":
                arr[:, 0] = 1.0
            elif default:
                arr[:] = default
            for index, (fc, co) in chans.get(prop, {}).items():
                if index < width:
                    arr[:, index] = co[:, 1] if same else sample_fcurve(fc, frames, co)
            values.append(arr)
        bones.append(bone)
        rests.append(rels[bone.name])
        keys.append(tuple(values))
        frame_sets.append(frames)
    tracks = []
    for bone, frames, (lt, lq, ls) in zip(
        bones, frame_sets, bases_to_locals(rests, keys), strict=True
    ):
        chans = per_bone[bone.name]
        tracks.append(
            BoneTrack(
                file_name(bone),
                frames / fps,
                lt if "location" in chans else None,
                lq if "rotation_quaternion" in chans else None,
                ls if "scale" in chans else None,
            )
        )
    return tracks


def _key_coords(fc) -> np.ndarray:
    """An F-curve's keys as (n, 2) float32 (frame, value), read once."""
    n = len(fc.keyframe_points)
    co = np.empty(n * 2, np.float32)
    fc.keyframe_points.foreach_get("co", co)
    return co.reshape(n, 2)


def _shared_frames(key_frames: list[np.ndarray]) -> np.ndarray:
    """Every frame any of the curves keys, ascending, as float64: the curves' own
    frames when they all key the same ones (a bone keyed as a whole), else merged."""
    first = key_frames[0]
    if np.all(first[1:] > first[:-1]) and all(np.array_equal(first, f) for f in key_frames[1:]):
        return first.astype(np.float64)
    return np.unique(np.concatenate(key_frames).astype(np.float64))


def sample_fcurve(fc, frames: np.ndarray, co: np.ndarray | None = None) -> np.ndarray:
    """An F-curve's values at ``frames``: its keys where they sit there (compared in
    float32, as Blender stores them), else evaluated. ``co``: its keys from
    ``_key_coords`` when already read."""
    co = _key_coords(fc) if co is None else co
    n = len(co)
    kf, kv = co[:, 0], co[:, 1].astype(np.float64)
    at = np.asarray(frames, np.float32)
    if np.array_equal(kf, at) and np.all(kf[1:] > kf[:-1]):  # key i sits at frame i
        return kv
    out = np.empty(len(at))
    pos = np.minimum(np.searchsorted(kf, at), max(n - 1, 0))
    hit = (kf[pos] == at) if n else np.zeros(len(at), bool)
    out[hit] = kv[pos[hit]]
    for i in np.nonzero(~hit)[0].tolist():
        out[i] = fc.evaluate(float(frames[i]))
    return out
