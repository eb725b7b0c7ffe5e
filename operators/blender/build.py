"""Neutral scene -> Blender objects.

Everything a build creates is recorded, so a failure removes it all again and
leaves the blend file as it was. Every mesh, armature and action goes through
the guard (``guard.py``) first: what no supported Blender can hold is left out
of the Blender data, counted in one note, and kept on the mesh for export.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import bpy
import numpy as np
from mathutils import Matrix

from ...io_formats.codec import FormatError
from ...io_formats.codec.errors import counted
from ...io_formats.exact_keys import (
    KeptTrack,
    basis_digests,
    block_digests,
    given_tracks,
    times_digest,
)
from ...io_formats.finite import finite_rows
from ...io_formats.names import action_name
from ...io_formats.posing import basis_to_local, locals_to_bases, uniform_rests
from ...io_formats.scene import Animation, Attribute, BoneTrack, Mesh, MorphTarget, Scene, Skeleton
from ...io_formats.transforms import decompose_trs, matrix_to_quat, remove_scale
from . import compat, exact_keys, guard, kept_keys
from .actions import keep_actions
from .guard import NAME_BYTES, blender_name
from .weights import assign_vertex_groups

# Kept per bone while the rest pose is unchanged (hidden: kept_keys.py).
BIND_SCALE = "_rigport_bind_scale"
REST = "_rigport_rest"
LOCAL = "_rigport_local"
INVERSE_BIND = "_rigport_inverse_bind"
#: An action's length in seconds as the file has it (may end after its last key).
LENGTH = "_rigport_length"
#: A mesh's vertex, face and corner counts as imported: an edit since changes them.
COUNTS = "_rigport_counts"
EDGE_ORDER = "rigport:edge_order"


@dataclass
class Built:
    """What a build made, in creation order."""

    objects: list = field(default_factory=list)
    meshes: list = field(default_factory=list)
    armatures: list = field(default_factory=list)
    materials: list = field(default_factory=list)
    actions: list = field(default_factory=list)
    collections: list = field(default_factory=list)
    armature: bpy.types.Object | None = None
    #: The last armature's bone names in skeleton order (skin joints index these);
    #: ``armature.data.bones`` lists parents before children instead.
    bone_names: list[str] = field(default_factory=list)
    #: The materials this build created, by the name the file asked for: its
    #: meshes share them (one file's surfaces of one name are one material).
    material_names: dict = field(default_factory=dict)
    #: Where asked for (``build_scene``'s ``filled``): the neutral mesh each
    #: Blender mesh was filled from, after the guard, by ``as_pointer()`` of the
    #: mesh datablock (an import's fingerprint hashes these, not a read-back).
    filled: dict | None = None

    def discard(self) -> None:
        """Remove everything this build added to the blend file."""
        for coll, items in (
            (bpy.data.objects, self.objects),
            (bpy.data.meshes, self.meshes),
            (bpy.data.armatures, self.armatures),
            (bpy.data.materials, self.materials),
            (bpy.data.actions, self.actions),
            (bpy.data.collections, self.collections),
        ):
            for item in reversed(items):
                try:
                    coll.remove(item)
                except (ReferenceError, RuntimeError):
                    pass
        for items in (self.objects, self.meshes, self.armatures, self.materials, self.actions):
            items.clear()


def set_prop(holder, key: str, value) -> None:
    """Custom property ``key`` = ``value`` in a form Blender holds: dicts and nested
    lists as JSON text; ``None`` as ``"null"``; text that is not UTF-8, and lists
    holding such text or integers beyond 32 bits, as JSON text (``read_prop``
    decodes them); a single integer beyond 32 bits as a float (exact below 2**53,
    ``read_prop`` gives the integer back). Kept file data goes under a hidden
    name (``kept_keys.HIDDEN``)."""
    key = kept_keys.stored_name(blender_name(key))
    if isinstance(value, dict) or (
        isinstance(value, list) and value and isinstance(value[0], list)
    ):
        holder[key] = json.dumps(value)
    elif value is None:
        holder[key] = "null"
    elif isinstance(value, bool):
        holder[key] = value
    elif isinstance(value, int | np.integer) and not guard.INT32[0] <= value <= guard.INT32[1]:
        holder[key] = float(value)
    elif isinstance(value, str) and not guard.is_utf8(value):
        holder[key] = json.dumps(value)
    elif isinstance(value, list | tuple) and any(
        (isinstance(v, str) and not guard.is_utf8(v))
        or (isinstance(v, int) and not guard.INT32[0] <= v <= guard.INT32[1])
        for v in value
    ):
        holder[key] = json.dumps(list(value))
    else:
        holder[key] = value


#: The file's own name of a bone, object or action whose name Blender could not hold
#: (JSON text: non-UTF-8 bytes stay as surrogate escapes).
NAME = "_rigport_name"


def keep_name(holder, name: str, unique: bool = False, shown: bool = False) -> None:
    """Keep ``name`` on ``holder`` when Blender holds it as something else: as
    text, or with the name Blender gave beside it (which says whether the user
    renamed it since) when Blender cut it to 63 bytes or gave an empty one a name,
    with ``unique`` when it made it unique (names of one skeleton), and with
    ``shown`` when the holder was named otherwise on purpose (an action named
    after its file)."""
    if holder.name == name:
        return
    if unique or shown or not name or len(name.encode("utf-8", "surrogateescape")) > NAME_BYTES:
        holder[NAME] = json.dumps([name, holder.name])
    elif blender_name(name) != name:
        holder[NAME] = json.dumps(name)


def held_bone_names(armature) -> dict[str, str]:
    """The file's name -> Blender's name of each bone whose whole name Blender
    could not hold (:func:`keep_name`), and is not renamed since: animation
    tracks name bones by the file's names."""
    out = {}
    for bone in armature.data.bones:
        kept = bone.get(NAME)
        if not (isinstance(kept, str) and kept.startswith("[")):
            continue
        try:
            pair = json.loads(kept)
        except ValueError:  # edited by hand: Blender's name is all there is
            continue
        if isinstance(pair, list) and len(pair) == 2 and pair[1] == bone.name:
            out[str(pair[0])] = bone.name
    return out


def _ensure_object_mode(context) -> None:
    if context.mode != "OBJECT" and context.view_layer.objects.active is not None:
        bpy.ops.object.mode_set(mode="OBJECT")


def build_armature(
    context, skeleton: Skeleton, name: str, built: Built, collection
) -> bpy.types.Object:
    """An armature whose rest pose is the engine's bind pose with scale taken out."""
    original = skeleton
    skeleton, bind, note = guard.guard_skeleton(skeleton)
    guard.note(f"armature {blender_name(name)!r}", note)
    name = blender_name(name)
    arm = bpy.data.armatures.new(name)
    built.armatures.append(arm)
    obj = bpy.data.objects.new(name, arm)
    built.objects.append(obj)
    collection.objects.link(obj)
    rest = remove_scale(bind)
    bind_scale = np.linalg.norm(bind[:, :3, :3], axis=1)
    heads = rest[:, :3, 3]
    n = len(skeleton)
    lengths = np.full(n, 0.0)
    children: list[list[int]] = [[] for _ in range(n)]
    for i, p in enumerate(skeleton.parents.tolist()):
        if p >= 0:
            children[p].append(i)
    extent = float(np.ptp(heads, axis=0).max()) if n > 1 else 1.0
    default = max(extent * 0.05, 1e-3)
    for i in range(n):
        dists = [np.linalg.norm(heads[c] - heads[i]) for c in children[i]]
        dists = [d for d in dists if d > 1e-5]
        lengths[i] = min(dists) if dists else default
    _ensure_object_mode(context)
    context.view_layer.objects.active = obj
    obj.select_set(True)
    bpy.ops.object.mode_set(mode="EDIT")
    try:
        ebs = []
        for i, bname in enumerate(skeleton.names):
            eb = arm.edit_bones.new(bname)
            eb.head = (0.0, 0.0, 0.0)
            eb.tail = (0.0, float(lengths[i]), 0.0)
            eb.matrix = Matrix(rest[i].tolist())
            ebs.append(eb)
        for i, p in enumerate(skeleton.parents.tolist()):
            if p >= 0:
                ebs[i].parent = ebs[p]
        names = [eb.name for eb in ebs]
        built.bone_names = names
    finally:
        bpy.ops.object.mode_set(mode="OBJECT")
    local_t, local_q, local_s = (  # the file's own values, for export
        original.local_translation,
        original.local_rotation,
        original.local_scale,
    )
    inv = original.inverse_bind if original.inverse_bind is not None else guard.inverse(bind)
    for i, bname in enumerate(names):
        bone = arm.bones[bname]
        bone[BIND_SCALE] = [float(v) for v in bind_scale[i]]
        bone[REST] = [float(v) for v in np.asarray(bone.matrix_local).ravel()]
        bone[LOCAL] = [float(v) for v in (*local_t[i], *local_q[i], *local_s[i])]
        bone[INVERSE_BIND] = [float(v) for v in inv[i].ravel()]
        keep_name(bone, original.names[i], unique=True)
        for key, value in (skeleton.extras[i] if i < len(skeleton.extras) else {}).items():
            set_prop(bone, key, value)
    return obj


def _loose_edge_places(me: bpy.types.Mesh, loose: np.ndarray) -> np.ndarray:
    """Where each given loose edge ended up after ``calc_edges`` (which may reorder and
    turn edges round); records the original order and direction as ``EDGE_ORDER``."""
    n = len(me.edges)
    got = np.empty(n * 2, np.int32)
    me.edges.foreach_get("vertices", got)
    got = got.reshape(n, 2).astype(np.int64)
    key_got = np.minimum(got[:, 0], got[:, 1]) << 32 | np.maximum(got[:, 0], got[:, 1])
    want = loose.astype(np.int64)
    key_want = np.minimum(want[:, 0], want[:, 1]) << 32 | np.maximum(want[:, 0], want[:, 1])
    order = np.argsort(key_got, kind="stable")
    place = order[np.searchsorted(key_got[order], key_want)]
    code = np.full(n, -1, np.int32)
    flipped = got[place, 0] != want[:, 0]
    code[place] = np.arange(len(want)) * 2 + flipped
    attr = me.attributes.new(EDGE_ORDER, "INT", "EDGE")
    attr.data.foreach_set("value", code)
    return place


#: The ``foreach_get``/``foreach_set`` property of each attribute type RigPort keeps.
ATTR_PROP = {
    "INT": "value",
    "FLOAT": "value",
    "BOOLEAN": "value",
    "FLOAT_VECTOR": "vector",
    "FLOAT2": "vector",
    "FLOAT_COLOR": "color",
    "INT8": "value",
}


def _add_attribute(me: bpy.types.Mesh, a: Attribute, edge_place=None) -> None:
    attr = me.attributes.new(blender_name(a.name), a.type, a.domain)
    prop = ATTR_PROP[a.type]
    dtype = np.int32 if a.type == "INT" else (bool if a.type == "BOOLEAN" else np.float32)
    data = np.ascontiguousarray(a.dense(len(me.vertices)), dtype)
    if a.domain == "EDGE" and edge_place is not None:
        full = np.full((len(me.edges),) + data.shape[1:], -1, dtype)
        full[edge_place] = data
        data = full
    attr.data.foreach_set(prop, data.ravel())


def build_mesh_data(
    mesh: Mesh,
    n_bones: int | None = None,
    reuse_materials: bool = False,
    created: dict | None = None,
    filled: dict | None = None,
) -> bpy.types.Mesh:
    """Mesh datablock with geometry, normals, UVs, colours and attributes; what
    Blender cannot hold left out (see ``guard.guard_mesh``) and kept on it.
    Materials are new ones unless ``reuse_materials`` (the blend file's material
    of the same name is used then, as the FBX importer's option does).
    ``created`` maps the names asked for to the materials this import created:
    they are shared, new ones are added, and undoing the import removes only them.
    ``filled`` gets the guarded mesh the datablock holds (see ``Built.filled``)."""
    mesh, kept, note = guard.guard_mesh(mesh, n_bones)
    guard.note(f"mesh {blender_name(mesh.name)!r}", note)
    me = bpy.data.meshes.new(blender_name(mesh.name))
    try:
        _fill_mesh(me, mesh, reuse_materials, created)
        if kept is not None:
            me[guard.KEPT] = guard.dumps(kept)
        me[COUNTS] = [len(me.vertices), len(me.polygons), len(me.loops)]
    except Exception:
        bpy.data.meshes.remove(me)
        raise
    if filled is not None:
        filled[me.as_pointer()] = mesh
    return me


def _fill_mesh(
    me: bpy.types.Mesh, mesh: Mesh, reuse_materials: bool = False, created: dict | None = None
) -> None:
    nv, nc, nf = len(mesh.positions), len(mesh.corner_verts), len(mesh.face_starts)
    me.vertices.add(nv)
    ne = len(mesh.loose_edges)
    if ne:
        me.edges.add(ne)
        me.edges.foreach_set("vertices", np.ascontiguousarray(mesh.loose_edges, np.int32).ravel())
    me.loops.add(nc)
    me.polygons.add(nf)
    if nv:  # a mesh without vertices has no position attribute (5.0+)
        me.attributes["position"].data.foreach_set(
            "vector", np.ascontiguousarray(mesh.positions, np.float32).ravel()
        )
    if nc:
        me.attributes[".corner_vert"].data.foreach_set(
            "value", np.ascontiguousarray(mesh.corner_verts, np.int32)
        )
        me.polygons.foreach_set("loop_start", np.ascontiguousarray(mesh.face_starts, np.int32))
    me.update(calc_edges=True)
    if nf and np.any(mesh.face_materials):
        me.attributes.new("material_index", "INT", "FACE").data.foreach_set(
            "value", np.ascontiguousarray(mesh.face_materials, np.int32)
        )
    for uv in mesh.uv_sets:
        layer = me.uv_layers.new(name=blender_name(uv.name), do_init=False)
        layer.uv.foreach_set("vector", np.ascontiguousarray(uv.uv, np.float32).ravel())
    for col in mesh.colors:
        ca = me.color_attributes.new(
            blender_name(col.name), "BYTE_COLOR" if col.byte else "FLOAT_COLOR", "CORNER"
        )
        ca.data.foreach_set(
            "color_srgb" if col.byte else "color",
            np.ascontiguousarray(col.color, np.float32).ravel(),
        )
    edge_place = _loose_edge_places(me, mesh.loose_edges) if ne else None
    for a in mesh.attributes:
        _add_attribute(me, a, edge_place)
    if mesh.normals is not None and nc:  # a new mesh's faces are smooth already
        _set_custom_normals(me, mesh)
    for mat_name in map(blender_name, mesh.materials):
        mat = created.get(mat_name) if created is not None else None
        if mat is None and reuse_materials:
            mat = bpy.data.materials.get(mat_name)
        if mat is None:
            mat = bpy.data.materials.new(mat_name)
            if created is not None:
                created[mat_name] = mat
        me.materials.append(mat)


def _set_custom_normals(me: bpy.types.Mesh, mesh: Mesh) -> None:
    """Custom normals: per vertex where the format stores them so; exact through
    the attribute where Blender has it (4.5+); else per vertex when every corner
    of a vertex has the same normal (4.2's
    per-vertex setter is several times faster than the per-corner one, and
    engine formats mostly store normals per vertex)."""
    normals = np.ascontiguousarray(mesh.normals, np.float32)
    if mesh.normal_domain == "POINT":
        compat.set_vertex_normals(me, normals)
        return
    if compat.HAS_NORMAL_ATTRIBUTE:
        compat.set_corner_normals(me, normals)
        return
    cv = np.asarray(mesh.corner_verts, np.int64)
    per_vertex = np.zeros((len(mesh.positions), 3), np.float32)
    # rows as one 12-byte item each: 1-D scatter and take, where 2-D fancy indexing is slow
    row = np.dtype((np.void, 12))
    per_vertex.view(row).ravel()[cv] = normals.view(row).ravel()
    if np.array_equal(np.take(per_vertex, cv, axis=0), normals):
        compat.set_vertex_normals(me, per_vertex)
    else:
        compat.set_corner_normals(me, normals)


def morph_coords(mesh: Mesh, morph: MorphTarget) -> np.ndarray:
    """The flat float32 coordinates of ``morph``'s shape key, as ``shape_keys``
    gives them to Blender: the positions plus the offsets, non-finite ones 0. A
    non-finite position is 0 first, as in the basis (see ``guard.guard_mesh``): a
    file's target position there is the offset (``scene.morph_offsets``)."""
    co = np.array(mesh.positions, np.float32)
    co[~finite_rows(co)] = 0
    if morph.vertices is None:
        co += morph.position_offsets
    else:  # sparse: dense only here, one key at a time
        co[morph.vertices] += np.asarray(morph.position_offsets, np.float32)
    co[~np.isfinite(co)] = 0  # the guard counted them (see guard_mesh)
    return co.ravel()


def shape_keys(obj: bpy.types.Object, mesh: Mesh) -> None:
    basis = obj.shape_key_add(name="Basis", from_mix=False)
    basis.value = 0.0
    renamed = {}
    n = len(mesh.positions)
    names = guard.unique_names([m.name for m in mesh.morphs], {basis.name})
    for i, (m, name) in enumerate(zip(mesh.morphs, names, strict=True)):
        sk = obj.shape_key_add(name=name, from_mix=False)
        if len(sk.data) != n:
            raise FormatError(
                f"Blender made shape key {i + 1} of {len(mesh.morphs)} ({m.name!r}) with "
                f"{len(sk.data)} of the mesh's {n} vertices: the model was not imported"
            )
        if sk.name != m.name:
            renamed[sk.name] = m.name
        compat.set_shape_key_coords(sk, morph_coords(mesh, m))
        sk.value = float(m.default_weight) if np.isfinite(m.default_weight) else 0.0
    if renamed:  # the file's own names, by Blender's (shape keys hold no properties)
        obj.data.shape_keys[NAME] = json.dumps(renamed)


def build_mesh_object(
    context,
    mesh: Mesh,
    built: Built,
    collection,
    armature=None,
    bone_names=None,
    reuse_materials: bool = False,
) -> bpy.types.Object:
    n_bones = len(bone_names) if bone_names is not None else None
    skin = mesh.skin if armature is not None else None
    made = dict(built.material_names)
    try:
        me = build_mesh_data(mesh, n_bones, reuse_materials, built.material_names, built.filled)
    finally:
        for name, mat in built.material_names.items():  # a reused one is the artist's: kept
            if name not in made:
                built.materials.append(mat)
    built.meshes.append(me)
    obj = bpy.data.objects.new(blender_name(mesh.name), me)
    keep_name(obj, mesh.name)
    built.objects.append(obj)
    collection.objects.link(obj)
    for key, value in mesh.extras.items():
        set_prop(obj, key, value)
    if armature is not None:
        obj.parent = armature
        if skin is not None:  # before the shape keys: see assign_vertex_groups
            assign_vertex_groups(context, obj, skin.joints, skin.weights, list(bone_names))
        mod = obj.modifiers.new("Armature", "ARMATURE")
        mod.object = armature
    if mesh.morphs:
        shape_keys(obj, mesh)
    return obj


def build_scene(
    context,
    scene: Scene,
    progress: Callable[[float], None] | None = None,
    fps: float | None = None,
    reuse_materials: bool = False,
    filled: dict | None = None,
) -> Built:
    """Create the scene's objects in the active collection; all or nothing (shape
    keys Blender cannot hold are refused before anything: ``guard.check_shape_keys``)."""
    guard.check_shape_keys(scene.meshes)
    built = Built(filled=filled)
    try:
        root = context.collection
        armature = None
        names = None
        if scene.skeleton is not None:
            armature = build_armature(context, scene.skeleton, scene.name, built, root)
            built.armature = armature
            names = built.bone_names
            for key, value in scene.extras.items():
                set_prop(armature, key, value)
        for i, mesh in enumerate(scene.meshes):
            target = root
            if mesh.collection:
                target = bpy.data.collections.get(blender_name(mesh.collection))
                if target is None or target in built.collections:
                    if target is None:
                        target = bpy.data.collections.new(blender_name(mesh.collection))
                        built.collections.append(target)
                        root.children.link(target)
            obj = build_mesh_object(context, mesh, built, target, armature, names, reuse_materials)
            if armature is None:
                for key, value in scene.extras.items():
                    set_prop(obj, key, value)
            if progress:
                progress((i + 1) / max(len(scene.meshes), 1))
        if armature is not None:
            rest = rest_relative(armature.data) if scene.animations else None
            for anim in scene.animations:
                built.actions.append(build_action(armature, anim, fps or scene_fps(context), rest))
            if built.actions:
                keep_actions(armature, built.actions)
    except Exception:
        built.discard()
        raise
    return built


def scene_fps(context) -> float:
    """The scene's frame rate in frames per second."""
    r = context.scene.render
    return r.fps / r.fps_base


def rest_relative(
    arm: bpy.types.Armature, legacy: bool = False
) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
    """Per bone: rest translation and rotation relative to the parent, parent and own bind scale.

    A bone's ``matrix_local`` is rigid, so the parent-relative rest is
    ``Rp^T Rc`` and ``Rp^T (tc - tp)``, in plain numpy: a LAPACK inverse (and
    determinant) of these small matrices cost 10 to 340 ms on a loaded machine
    through OpenBLAS's threads. ``legacy``: the rest as builds before exact-keys
    record version 3 worked it out (``np.linalg.inv``), which differs in the last
    bits; only for an action whose record such a build made
    (``exact_keys.LEGACY_REST``), so its unedited tracks still match their digests."""
    bones = list(arm.bones)
    if not bones:
        return {}
    names = [b.name for b in bones]
    index = {name: i for i, name in enumerate(names)}
    # one bulk read: Blender's matrices are column-major float32, the same values
    # mathutils gives bone by bone
    flat = np.empty(len(bones) * 16, np.float32)
    arm.bones.foreach_get("matrix_local", flat)
    rests = flat.reshape(-1, 4, 4).transpose(0, 2, 1).astype(np.float64, order="C")
    scales = np.array([kept_keys.get(b, BIND_SCALE, (1.0, 1.0, 1.0)) for b in bones], np.float64)
    parents = np.array([-1 if (p := b.parent) is None else index[p.name] for b in bones])
    child = parents >= 0
    pscales = np.where(child[:, None], scales[np.maximum(parents, 0)], 1.0)
    if legacy:
        rel = rests.copy()
        rel[child] = np.linalg.inv(rests[parents[child]]) @ rests[child]
        t, q, _ = decompose_trs(rel)
    else:
        t, q = _rigid_relative(rests, parents)
    return dict(zip(names, zip(t, q, pscales, scales, strict=True), strict=True))


def _rigid_relative(rests: np.ndarray, parents: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Translations and w x y z rotations of rigid (N, 4, 4) ``rests`` relative to
    their parents' (``parents`` -1: the bone's own), as ``decompose_trs`` reads them
    (column norms out, the sign of the determinant in x), without LAPACK."""
    p = np.maximum(parents, 0)
    root = (parents < 0)[:, None]
    rot_p = np.where(root[:, :, None], np.eye(3), rests[p, :3, :3])
    t_p = np.where(root, 0.0, rests[p, :3, 3])
    basis = np.einsum("nji,njk->nik", rot_p, rests[:, :3, :3])
    t = np.einsum("nji,nj->ni", rot_p, rests[:, :3, 3] - t_p)
    s = np.sqrt(np.einsum("nij,nij->nj", basis, basis))
    det = np.einsum("ni,ni->n", basis[:, :, 0], _cross(basis[:, :, 1], basis[:, :, 2]))
    s[:, 0] *= np.where(det < 0, -1.0, 1.0)
    return t, matrix_to_quat(basis / np.where(s == 0, 1.0, s)[:, None, :])


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``np.cross`` of (N, 3) rows: its own products and differences, in its order
    (so the same bits), without its axis handling."""
    ax, ay, az = a[:, 0], a[:, 1], a[:, 2]
    bx, by, bz = b[:, 0], b[:, 1], b[:, 2]
    return np.stack([ay * bz - az * by, az * bx - ax * bz, ax * by - ay * bx], axis=1)


def _track_channels(
    track: BoneTrack, rels: dict, k: int, uniform: bool, standins: dict
) -> list[np.ndarray]:
    """A track's engine-local translation, rotation and scale keys, and for a
    channel it does not key, a stand-in that is never keyed. With uniform bind
    scales (``uniform``) each channel converts on its own, so the stand-in is
    identity (a view, made once per key count in ``standins``); otherwise the
    channels mix in the conversion and the stand-in is the engine-local rest."""
    channels = [track.translation, track.rotation, track.scale]
    if channels[0] is not None and channels[1] is not None and channels[2] is not None:
        return channels
    if uniform:
        rest = standins.get(k)
        if rest is None:
            rest = standins[k] = [
                np.broadcast_to(r, (k, r.shape[1]))
                for r in (np.zeros((1, 3)), np.array([[1.0, 0, 0, 0]]), np.ones((1, 3)))
            ]
        return [c if c is not None else r for c, r in zip(channels, rest, strict=True)]
    identity = (np.zeros((1, 3)), np.array([[1.0, 0, 0, 0]]), np.ones((1, 3)))
    rest = basis_to_local(*rels[track.bone], *identity)
    return [
        c if c is not None else np.broadcast_to(r[:1], (k, r.shape[1]))
        for c, r in zip(channels, rest, strict=True)
    ]


class _TakenActionNames:
    """Whether an action already has a name, asked with the name as the file spells
    it (``bpy.data.actions`` refuses text that is not UTF-8)."""

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and bpy.data.actions.get(blender_name(name)) is not None


def build_action(
    armature: bpy.types.Object,
    anim: Animation,
    fps: float,
    rest: dict | None = None,
    file_stem: str | None = None,
    clips: int = 1,
) -> bpy.types.Action:
    """An action keyed in pose space from engine-local tracks (linear keys).

    ``rest`` is :func:`rest_relative` of the armature: an importer that builds many
    actions onto one armature computes it once (it was a third of an IFP import).
    ``file_stem`` names the action when the clip's own name is generic or taken
    (``io_formats/names.py``; ``clips``: how many the file holds); the clip's name
    is kept for the exporter."""
    shown = action_name(anim.name, file_stem, _TakenActionNames(), clips)
    action = bpy.data.actions.new(blender_name(shown))
    keep_name(action, anim.name or "Animation", shown=True)
    try:
        _fill_action(action, armature, anim, fps, rest)
    except Exception:
        bpy.data.actions.remove(action)
        raise
    return action


def _fill_action(action, armature, anim: Animation, fps: float, rest: dict | None) -> None:
    arm = armature.data
    rels = rest if rest is not None else rest_relative(arm)
    action["rigport_fps"] = float(fps)
    action[LENGTH] = float(anim.length)
    for key, value in anim.extras.items():
        set_prop(action, key, value)
    linear = compat.enum_value(bpy.types.Keyframe, "interpolation", "LINEAR")
    linear_runs: dict[int, np.ndarray] = {}
    make_fcurve = compat.fcurve_maker(action)
    missing = []
    seen: set[str] = set()
    repeated = bad_keys = 0
    held = held_bone_names(armature)
    coords: dict[str, dict[str, dict[int, tuple]]] = {}  # what Blender was given, not in given
    given: dict[int, KeptTrack] = {}  # tracks given as shared ascending frames, by index
    shared: set[str] = set()  # bones keyed at ascending frames, the same on every curve
    lossy: set[int] = set()  # tracks that lost NaN/Inf keys, by index: keep needs no second look
    keyed_tracks: list[tuple[int, BoneTrack]] = []
    for i, (track, lost) in enumerate(guard.guard_tracks(anim.tracks)):
        if lost:
            lossy.add(i)
        if track.bone in held:
            track = replace(track, bone=held[track.bone])
        bad_keys += lost
        if track.bone in seen:  # a second track for one bone: Blender has one curve
            repeated += 1
            continue
        seen.add(track.bone)
        if arm.bones.get(track.bone) is None:
            missing.append(track.bone)
            continue
        keyed_tracks.append((i, track))
    keyed_rests = [rels[t.bone] for _, t in keyed_tracks]
    uniform = uniform_rests(keyed_rests)  # local_to_basis's own test, for all bones at once
    standins: dict[int, list[np.ndarray]] = {}
    poses = locals_to_bases(  # all bones at once: one product per key count
        keyed_rests,
        [
            _track_channels(t, rels, len(t.times), u, standins)
            for (_, t), u in zip(keyed_tracks, uniform, strict=True)
        ],
        uniform,
    )
    fps = float(fps)
    keys = _KeyedGroups(keyed_tracks, poses, fps, anim, lossy, rels)
    pose_bones = armature.pose.bones
    for n, (i, track) in enumerate(keyed_tracks):
        k = len(track.times)
        pose_bone = pose_bones[track.bone]
        if pose_bone.rotation_mode != "QUATERNION":  # setting it runs its update even so
            pose_bone.rotation_mode = "QUATERNION"
        path = f'pose.bones["{bpy.utils.escape_identifier(track.bone)}"]'
        ascending = keys.ascending[n]
        if ascending:
            shared.add(track.bone)
        if k not in linear_runs:
            linear_runs[k] = np.full(k, linear, np.uint8)  # the byte field: a plain copy
        runs = linear_runs[k]
        record = keys.given.get(n)
        bone_coords: dict[str, dict[int, tuple]] = {}  # for a track not given: its curves
        for prop, co in keys.blocks[n]:
            data_path = f"{path}.{prop}"
            chan = bone_coords.setdefault(prop, {})
            for index, block in enumerate(co):
                fc = make_fcurve(data_path, index, track.bone)
                points = fc.keyframe_points
                points.add(k)
                points.foreach_set("co", block.reshape(-1))
                points.foreach_set("interpolation", runs)
                fc.update()
                if record is None:
                    chan[index] = (fc, block if ascending else None)
        if record is not None:
            given[i] = record
        elif i not in lossy:
            coords[track.bone] = bone_coords
    if missing:
        action["rigport_missing_bones"] = missing
    from .extract import tracks_from_coords  # extract imports this module

    rebuilt = tracks_from_coords(armature, coords, rels, fps, shared) if coords else []
    exact_keys.keep(action, armature, anim, rels, set(missing), rebuilt, lossy, given)
    note = ", ".join(
        f"{n} {what}"
        for what, n in (("tracks repeating a bone", repeated), ("keys with NaN/Inf", bad_keys))
        if n
    )
    late = _late_note(keys.late, fps)
    guard.note(f"action {action.name!r}", ", ".join(filter(None, (note, late))))


class _KeyedGroups:
    """What ``_fill_action`` gives Blender for its keyed tracks, worked out per
    key count for all tracks at once (a file keys most bones alike): per track
    (by position in ``keyed``) whether its float32 frames ascend, its ``co``
    blocks (prop, (width, k, 2) float32) and, for a track given as shared
    ascending frames, its version-4 record; and the frames beyond Blender's
    range. The same float64 and float32 operations per element as one track at
    a time, so the same bits."""

    PROPS = ("location", "rotation_quaternion", "scale")

    def __init__(self, keyed: list, poses: list, fps: float, anim: Animation, lossy, rels):
        n = len(keyed)
        self.ascending: list[bool] = [False] * n
        self.blocks: list[list[tuple[str, np.ndarray]]] = [[] for _ in range(n)]
        self.given: dict[int, KeptTrack] = {}
        self.late: list[np.ndarray] = []
        by_count: dict[int, list[int]] = {}
        for pos, (_, track) in enumerate(keyed):
            by_count.setdefault(len(track.times), []).append(pos)
        digests: dict[int, dict[str, bytes]] = {}
        for members in by_count.values():
            self._group(members, keyed, poses, fps, anim.settle is None, lossy, digests)
        if digests:
            order = list(digests)
            bases = basis_digests([rels[keyed[p][1].bone] for p in order], fps)
            originals = given_tracks([anim.tracks[keyed[p][0]] for p in order])
            for p, basis, original in zip(order, bases, originals, strict=True):
                self.given[p] = KeptTrack(
                    original.bone, {"basis": basis} | digests[p], given=original
                )

    def _group(self, members, keyed, poses, fps, exact, lossy, digests) -> None:
        frames = np.array([keyed[p][1].times for p in members], np.float64) * fps
        self.late.append(frames[np.abs(frames) > LAST_FRAME])
        at = frames.astype(np.float32)
        ascending = (at[:, 1:] > at[:, :-1]).all(axis=1).tolist()
        # F-curve update() sorts keys: unsorted or repeated frames are read back instead;
        # tracks the guard took keys from are not kept; a format that quantises keeps
        # residues (its settled values need none, smaller than its arrays)
        kept = [
            exact and up and keyed[p][0] not in lossy
            for p, up in zip(members, ascending, strict=True)
        ]
        bits = at.view(np.uint32)
        as_first = (bits == bits[:1]).all(axis=1).tolist()  # most files key all bones alike
        first = None  # the first row's times digest, once worked out
        for j, p in enumerate(members):
            self.ascending[p] = ascending[j]
            if kept[j]:
                if not as_first[j]:
                    digests[p] = {"times": times_digest(at[j])}
                    continue
                if first is None:
                    first = times_digest(at[0])
                digests[p] = {"times": first}
        channels = [
            (t.translation is not None, t.rotation is not None, t.scale is not None)
            for t in (keyed[p][1] for p in members)
        ]
        for c, prop in enumerate(self.PROPS):
            rows = [j for j, on in enumerate(channels) if on[c]]
            if not rows:
                continue
            values = np.array([poses[members[j]][c] for j in rows], np.float64)
            co = np.empty((len(rows), values.shape[2], at.shape[1], 2), np.float32)
            co[..., 0] = (at if len(rows) == len(members) else at[rows])[:, None, :]
            co[..., 1] = values.transpose(0, 2, 1)
            for j, block in zip(rows, co, strict=True):
                self.blocks[members[j]].append((prop, block))
            hashed = [r for r, j in enumerate(rows) if kept[j]]
            for r, digest in zip(hashed, block_digests(co, hashed), strict=True):
                digests[members[rows[r]]][prop] = digest


#: Blender's last frame (MAXFRAME): a scene's range stops there, the timeline
#: plays no frame beyond it (and none before its negative).
LAST_FRAME = 1_048_574


def _late_note(late: list[np.ndarray], fps: float) -> str:
    """What the artist loses of keys beyond Blender's frame range ("" when none):
    they stay on the action but never play, the scene's range stops at the limit,
    and far out Blender's float frames round their times."""
    frames = np.concatenate(late) if late else np.zeros(0)
    if not len(frames):
        return ""
    rounded = int(np.count_nonzero(frames.astype(np.float32) != frames))
    text = (
        f"{counted(len(frames), 'key')} beyond frame {LAST_FRAME:,} "
        f"(up to {np.abs(frames).max() / fps:.6g} s "
        f"at {fps:g} fps), Blender's last: they are on the action but never play, and the "
        f"scene's frame range stops at {LAST_FRAME:,}"
    )
    if rounded:
        text += f"; Blender's frames round the times of {rounded} of them"
    return text
