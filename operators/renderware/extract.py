"""Blender -> an exportable clump: frames from empties and bones, one atomic per mesh.

The frames are the empties above and around the exported meshes, and the mesh
objects the import made of a frame holding one atomic (kept in the order the
import recorded), then the armature's bones (frames of the HAnim
hierarchy, under the frame the armature sits on, offset by where the armature
sits on it). A scene without empties gets one root frame (unless its bones
came from a clump whose frames were all bones); a mesh that is not on a frame
of its own gets one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ...io_formats import kept as kept_text
from ...io_formats.codec import FormatError
from ...io_formats.codec.errors import counted
from ...io_formats.renderware.clump_export import ExportClump, ExportMesh
from ...io_formats.renderware.clump_import import FrameNode, MaterialInfo
from ...io_formats.renderware.geometry import NORMALS
from ...io_formats.scene import ColorSet, Mesh, Skeleton, UVSet
from ..blender import compat, fingerprint, guard, kept_keys
from ..blender.armatures import mesh_armature, one_armature
from ..blender.extract import extract_mesh, extract_skeleton, read_prop, read_skin
from ..blender.weights import reader_groups_kept
from ..conventions import IMPORT_TRANSFORM
from .build import (
    FINGERPRINT,
    PROP_ATOMIC,
    PROP_COLOR,
    PROP_FRAME,
    PROP_KEPT_FACE_POSITIONS,
    PROP_SKIN_SPACE,
    PROP_TEXTURE,
)

LOD_NAME = re.compile(r"[_.\- ]lod_?(\d+)$", re.IGNORECASE)
SCENE_KEYS = (
    "rw_version",
    "rw_stamp",
    "rw_hanim",
    "rw_clump_extension",
    "rw_clump_extensions",
    "rw_clump_items",
    "rw_clump_counts",
    "rw_file_chunks",
    "rw_trailing",
)


def _linear_to_srgb(c: np.ndarray) -> np.ndarray:
    c = np.clip(np.asarray(c, np.float64), 0.0, 1.0)
    return np.where(c <= 0.0031308, c * 12.92, 1.055 * c ** (1 / 2.4) - 0.055)


def material_info(mat, slot: int) -> MaterialInfo:
    """A material's RenderWare fields: stored ones, unless the colour was edited."""
    if mat is None:
        return MaterialInfo(f"material{slot}", (255, 255, 255, 255), None)
    rgba = np.array(mat.diffuse_color, np.float64)
    bsdf = None
    texture = mat.get(PROP_TEXTURE)
    if compat.material_uses_nodes(mat) and mat.node_tree is not None:
        bsdf = next((n for n in mat.node_tree.nodes if n.type == "BSDF_PRINCIPLED"), None)
        image = next((n for n in mat.node_tree.nodes if n.type == "TEX_IMAGE"), None)
        if texture is None and image is not None:
            texture = image.label or (image.image.name.rsplit(".", 1)[0] if image.image else None)
    if bsdf is not None and not bsdf.inputs["Base Color"].is_linked:
        rgba = np.array(bsdf.inputs["Base Color"].default_value, np.float64)
    color = tuple(int(v) for v in np.rint(np.append(_linear_to_srgb(rgba[:3]), rgba[3]) * 255.0))
    stored = mat.get(PROP_COLOR)
    if stored is not None:
        stored = tuple(int(v) for v in stored)
        linked = bsdf is not None and bsdf.inputs["Base Color"].is_linked
        if linked or max(abs(a - b) for a, b in zip(stored, color, strict=True)) <= 1:
            color = stored
    extras = {k: read_prop(mat, k) for k in ("rw_material", "rw_texture") if kept_keys.has(mat, k)}
    return MaterialInfo(mat.name, color, texture or None, extras)


#: The values of a frame a mesh object holds beside its atomic's (see ``build``).
FRAME_KEYS = frozenset(
    {
        "rw_frame_index",
        "rw_frame_flags",
        "rw_frame_matrix",
        "rw_bone_id",
        "rw_extension",
        "rw_unnamed",
        "rw_name",
        "rw_name_raw",
        "rw_hanim_root",
    }
)


def _frame_extras(holder) -> dict:
    wanted = (lambda k: k in FRAME_KEYS) if holder.type == "MESH" else (lambda k: True)
    return {
        k: read_prop(holder, k)
        for k, _ in kept_keys.extras_keys(holder)
        if k.startswith("rw_") and wanted(k)
    }


def is_frame(obj) -> bool:
    """An empty, or a mesh object the import made of a frame holding one atomic."""
    return obj.type == "EMPTY" or (obj.type == "MESH" and kept_keys.has(obj, "rw_frame_index"))


def _world_of(obj) -> np.ndarray:
    return np.array(obj.matrix_world, np.float64)


def _to_space(mesh: Mesh, m: np.ndarray) -> None:
    """Positions, normals and shape keys moved by ``m`` (object -> frame space)."""
    if np.allclose(m, np.eye(4), atol=1e-9):
        return
    mesh.positions = (mesh.positions @ m[:3, :3].T + m[:3, 3]).astype(np.float32)
    for morph in mesh.morphs:
        morph.position_offsets = (morph.position_offsets @ m[:3, :3].T).astype(np.float32)
    if mesh.normals is not None:
        n = mesh.normals @ np.linalg.inv(m[:3, :3])
        n /= np.maximum(np.linalg.norm(n, axis=1, keepdims=True), 1e-12)
        mesh.normals = n.astype(np.float32)


def _drop_unstored(mesh: Mesh) -> None:
    """No normals where the imported geometry had none; the prelit colours first."""
    stored = mesh.extras.get("rw_geometry")
    if isinstance(stored, dict) and not int(stored.get("flags", NORMALS)) & NORMALS:
        mesh.normals = None
    mesh.colors.sort(key=lambda c: c.name != "prelit")


def lod_level(obj) -> int:
    """The object's level of detail: a model format's LOD property (``urho_lod``), else
    a name ending in ``_LOD<n>`` (any case), else 0."""
    level = obj.get("urho_lod")
    if isinstance(level, int):
        return level
    m = LOD_NAME.search(obj.name)
    return int(m.group(1)) if m else 0


def _most_detailed(meshes: list, warnings: list[str]) -> list:
    """Only the most detailed LOD level: GTA keeps each LOD as a model (.dff) of its own,
    and a clump drawing them all would show every level on top of each other."""
    levels = {o.name: lod_level(o) for o in meshes}
    best = min(levels.values())
    left = sorted(n for n, lv in levels.items() if lv != best)
    if left:
        warnings.append(
            f"{len(left)} mesh(es) of other LOD levels left out ({', '.join(left[:5])}): "
            "GTA keeps each LOD as a .dff of its own; export each level with Selected Objects"
        )
    return [o for o in meshes if levels[o.name] == best]


def _triangles_only(obj, mesh: Mesh, warnings: list[str]) -> bool:
    """False for a mesh without triangles; loose edges (line primitives) are left out."""
    if len(mesh.loose_edges):
        warnings.append(
            f"{obj.name}: {len(mesh.loose_edges)} loose edges (line primitives) left out: "
            "a clump holds triangles only"
        )
    if not len(mesh.face_starts):
        warnings.append(f"{obj.name}: no triangles, left out")
        return False
    return True


def _file_triangles_back(obj, mesh: Mesh, warnings: list[str]) -> None:
    """The file's duplicate and repeated-vertex triangles after an edit.

    Blender cannot hold them, so the import keeps them aside (``guard``) and the
    extraction puts them back while the mesh is unedited. After an edit that kept
    the vertices (their indices still name the same ones) they are appended: a
    duplicate while a triangle on its vertices is still there, a repeated-vertex one
    always; their corners take the file's values, else another corner's of the
    vertex. After an edit that renumbered the vertices they are found by the
    positions the import stored (:func:`_by_position`). Otherwise they are left
    out with a warning."""
    me = obj.data
    kept = me.get(guard.KEPT)
    kept = guard.loads(kept) if isinstance(kept, str) else {}
    faces = kept.get("faces")
    counts = kept.get("counts", {})
    edited = counts != {
        "vertices": len(me.vertices),
        "faces": len(me.polygons),
        "corners": len(me.loops),
    }
    if faces is None and isinstance(obj.get(PROP_KEPT_FACE_POSITIONS), str):
        # an evaluated copy (modifiers applied): what the guard kept is of the source
        warnings.append(
            f"{obj.name}: the file's duplicate or repeated-vertex triangles are left out, "
            "for its modifiers were applied: apply them in Blender first, or export "
            "without Apply Modifiers, to keep them"
        )
        return
    if faces is None or not edited:
        return
    sizes = np.asarray(faces["sizes"], np.int64)
    verts = np.asarray(faces["verts"], np.int64)
    first = np.cumsum(sizes) - sizes
    fans = sizes - 2
    owner = np.repeat(np.arange(len(sizes)), fans)
    step = np.arange(len(owner)) - np.repeat(np.cumsum(fans) - fans, fans)
    kc = np.stack([first[owner], first[owner] + step + 1, first[owner] + step + 2], axis=1)
    nv = len(mesh.positions)
    tri_verts = verts[kc]
    if counts.get("vertices") != nv or (len(verts) and verts.max() >= nv):
        tri_verts, keep = _by_position(obj, mesh, tri_verts, kc)
    else:
        tv = np.sort(tri_verts, axis=1)
        repeated = (tv[:, 0] == tv[:, 1]) | (tv[:, 1] == tv[:, 2])
        have = np.sort(np.asarray(mesh.corner_verts, np.int64).reshape(-1, 3), axis=1)
        keep = repeated | np.isin(_tri_keys(tv, nv), _tri_keys(have, nv))
    if not keep.all():
        warnings.append(
            f"{obj.name}: {counted(int((~keep).sum()), 'duplicate or repeated-vertex triangle')} "
            "of the "
            "file left out (their vertices or the triangles they repeat were edited away)"
        )
    if not keep.any():
        return
    _append_corners(mesh, faces, kc[keep].ravel(), tri_verts[keep].ravel(), owner[keep])


def _tri_keys(tv: np.ndarray, nv: int) -> np.ndarray:
    return (tv[:, 0] * nv + tv[:, 1]) * nv + tv[:, 2]


def _by_position(obj, mesh: Mesh, tri_verts: np.ndarray, kc: np.ndarray):
    """The kept triangles' vertices after an edit that renumbered the vertices, found
    by the positions the import stored: a duplicate takes the vertices of a triangle
    it still repeats (the same three positions), a repeated-vertex one the first
    vertex at each position. (vertices (T, 3), found (T,))."""
    stored = obj.get(PROP_KEPT_FACE_POSITIONS)
    nothing = np.zeros(len(kc), bool)
    if not isinstance(stored, str) or not len(kc):
        return tri_verts, nothing
    try:
        kept = np.asarray(kept_text.loads(stored)["positions"], np.float32).reshape(-1, 3)
    except (ValueError, KeyError, TypeError):  # not a record this version wrote
        return tri_verts, nothing
    if len(kept) <= int(kc.max()):
        return tri_verts, nothing
    cur = np.asarray(mesh.positions, np.float32).reshape(-1, 3)
    nv = len(cur)
    _, ids = np.unique(np.vstack([cur, kept[kc.ravel()]]), axis=0, return_inverse=True)
    ids = ids.reshape(-1)
    cur_id, kid = ids[:nv], ids[nv:].reshape(-1, 3)
    first = np.full(int(ids.max()) + 1, -1, np.int64)
    first[cur_id[::-1]] = np.arange(nv - 1, -1, -1)
    by_first = first[kid]
    sk = np.sort(kid, axis=1)
    repeated = ((sk[:, 0] == sk[:, 1]) | (sk[:, 1] == sk[:, 2])) & (by_first >= 0).all(axis=1)
    # a duplicate: the current triangle on the same three positions, corner by corner
    have = np.asarray(mesh.corner_verts, np.int64).reshape(-1, 3)
    n_ids = int(ids.max()) + 1
    have_keys = _tri_keys(np.sort(cur_id[have], axis=1), n_ids)
    order = np.argsort(have_keys, kind="stable")
    want = _tri_keys(sk, n_ids)
    at = np.clip(np.searchsorted(have_keys[order], want), 0, max(len(order) - 1, 0))
    found = (have_keys[order][at] == want) if len(order) else np.zeros(len(kid), bool)
    twin = have[order[at]] if len(order) else np.zeros_like(kid)
    twin_ids = cur_id[twin]
    pick = np.stack([np.argmax(twin_ids == kid[:, [j]], axis=1) for j in range(3)], axis=1)
    dup_verts = np.take_along_axis(twin, pick, axis=1)
    out = np.where(repeated[:, None], by_first, dup_verts)
    return out, repeated | (found & ~repeated)


def _append_corners(mesh: Mesh, faces: dict, kc: np.ndarray, cv: np.ndarray, owner) -> None:
    """Triangles on vertices ``cv`` with the kept corners ``kc``'s values appended."""
    kept_corners = faces["corners"]
    at = np.full(len(mesh.positions), 0, np.int64)
    at[np.asarray(mesh.corner_verts)[::-1]] = np.arange(len(mesh.corner_verts) - 1, -1, -1)

    def more(key: str, a: np.ndarray) -> np.ndarray:
        extra = kept_corners.get(key)
        extra = a[at[cv]] if extra is None else np.asarray(extra)[kc]
        return np.concatenate([a, np.asarray(extra, a.dtype).reshape((-1,) + a.shape[1:])])

    if mesh.normals is not None:
        mesh.normals = more("normals", mesh.normals)
    mesh.uv_sets = [UVSet(u.name, more(f"uv:{k}", u.uv)) for k, u in enumerate(mesh.uv_sets)]
    mesh.colors = [
        ColorSet(c.name, more(f"color:{k}", c.color), c.byte) for k, c in enumerate(mesh.colors)
    ]
    mesh.attributes = [
        replace(a, data=more(f"attr:{a.name}", np.asarray(a.data))) if a.domain == "CORNER" else a
        for a in mesh.attributes
    ]
    mats = faces.get("materials")
    mats = np.zeros(len(owner), np.int32) if mats is None else np.asarray(mats)[owner]
    mesh.corner_verts = np.concatenate([mesh.corner_verts, cv]).astype(np.int32)
    mesh.face_starts = np.arange(0, len(mesh.corner_verts), 3, dtype=np.int32)
    mesh.face_materials = np.concatenate([mesh.face_materials, mats]).astype(np.int32)


#: Sort key of frames the import did not record (after every recorded one).
UNRECORDED = 1 << 30

#: A frame in :attr:`_Clump.entries`: ("root",), ("empty", name), ("bone", name)
#: or ("mesh", name).
FrameKey = tuple


@dataclass
class _Clump:
    """What :func:`extract_clump`'s passes read and fill, in pass order."""

    meshes: list
    armature: Any
    warnings: list[str]
    #: The empties at and under the exported objects' roots: frames.
    empties: list = field(default_factory=list)
    empty_set: set = field(default_factory=set)
    #: A mesh frame's object replaced for the export by its evaluated copy
    #: (``conventions.evaluated_meshes``) -> the copy, which names the frame.
    alias: dict = field(default_factory=dict)
    scene_extras: dict = field(default_factory=dict)
    #: key -> (sort key, FrameNode, parent key, world matrix; None for a bone)
    entries: dict = field(default_factory=dict)
    skeleton: Skeleton | None = None
    #: The frame the armature sits on, and where it sits on it (when not exactly there).
    arm_key: FrameKey | None = None
    skeleton_offset: np.ndarray | None = None
    #: (mesh in its frame's space, frame key, materials, skin space) per atomic, in
    #: atomic order.
    atomics: list = field(default_factory=list)

    def frame_above(self, obj) -> FrameKey | None:
        """The frame ``obj`` hangs from: the nearest empty above it, else the root frame."""
        p = obj.parent
        while p is not None and p not in self.empty_set:
            p = p.parent
        if p is not None:
            return ("empty", self.alias.get(p, p).name)
        return ("root",) if ("root",) in self.entries else None


def extract_clump(context, objects: list) -> tuple[ExportClump, list[str], str | int]:
    """The exportable clump, warnings, and the default target: the stamp the clump
    was imported with, else San Andreas."""
    clump = _chosen_objects(objects)
    _read_scene_extras(clump)
    _add_root_frame(clump)
    _add_empty_frames(clump)
    _add_bone_frames(clump)
    _add_atomics(clump)
    nodes, position = _ordered_frames(clump)
    export_meshes = [
        ExportMesh(mesh, position[key] if key is not None else 0, materials, skin_space=space)
        for mesh, key, materials, space in clump.atomics
    ]
    stamp = clump.scene_extras.get("rw_stamp")
    default = int(stamp) if isinstance(stamp, int) and stamp else "SA"
    data = ExportClump(
        nodes, export_meshes, clump.skeleton, clump.scene_extras, clump.skeleton_offset
    )
    return data, clump.warnings, default


def _chosen_objects(objects: list) -> _Clump:
    """The meshes of the most detailed LOD level, their one armature, and the
    empties of their hierarchies."""
    meshes = [o for o in objects if o.type == "MESH"]
    if not meshes:
        raise FormatError("no mesh objects to export")
    warnings: list[str] = []
    meshes = _most_detailed(meshes, warnings)
    armature = one_armature(meshes, "a clump (one HAnim hierarchy)")
    clump = _Clump(meshes, armature, warnings)
    roots = {}
    for obj in meshes + ([armature] if armature else []):
        top = obj
        while top.parent is not None:
            top = top.parent
        roots[top.name] = top
    for name in sorted(roots):
        root = roots[name]
        clump.empties += [o for o in [root, *root.children_recursive] if is_frame(o)]
    # a mesh frame read through its evaluated copy: the copy is the frame, and the
    # frames on the source hang from it
    copies = {f"{m.name}.rigport-source": m for m in meshes if is_frame(m)}
    clump.alias = {o: copies[o.name] for o in clump.empties if o.name in copies}
    clump.empty_set = set(clump.empties)
    clump.empties = [o for o in clump.empties if o not in clump.alias]
    clump.empties += [m for m in clump.alias.values() if m not in clump.empties]
    clump.empties = _one_mesh_per_frame(clump.empties)
    clump.empty_set = set(clump.empties) | set(clump.alias)
    return clump


def _one_mesh_per_frame(frames: list) -> list:
    """The frame objects without the copies of a mesh frame (Shift+D copies its
    values): of the meshes holding one frame's values, the first by name is the
    frame; the others are atomics on the frame above them (a skinned one on its
    recorded frame), as any mesh is."""
    first: dict = {}
    for o in frames:
        if o.type == "MESH":
            i = kept_keys.get(o, "rw_frame_index")
            if i not in first or o.name < first[i].name:
                first[i] = o
    return [o for o in frames if o.type != "MESH" or first[kept_keys.get(o, "rw_frame_index")] is o]


def _read_scene_extras(clump: _Clump) -> None:
    """The clump's own values the import kept, from the armature, else the empties."""
    for holder in ([clump.armature] if clump.armature else []) + clump.empties:
        for k in SCENE_KEYS:
            if kept_keys.has(holder, k) and k not in clump.scene_extras:
                clump.scene_extras[k] = read_prop(holder, k)


def _add_root_frame(clump: _Clump) -> None:
    """A clump root frame, as the games' files have, when there is no empty to be
    one (unless the bones came from a clump whose frames were all bones)."""
    armature = clump.armature
    imported_bones = armature is not None and any(
        kept_keys.has(b, "rw_frame_index") for b in armature.data.bones
    )
    if clump.empties or imported_bones:
        return
    root_name = armature.name if armature is not None else clump.meshes[0].name + "_root"
    root_world = _world_of(armature) if armature is not None else np.eye(4)
    node = FrameNode(root_name, -1, root_world)
    clump.entries[("root",)] = ((-1, ""), node, None, root_world)


def _add_empty_frames(clump: _Clump) -> None:
    """A frame per empty, in the order the import recorded."""
    for obj in clump.empties:
        node = FrameNode(obj.name, -1, np.eye(4), extras=_frame_extras(obj))
        order = (int(kept_keys.get(obj, "rw_frame_index", UNRECORDED)), obj.name)
        clump.entries[("empty", obj.name)] = (order, node, clump.frame_above(obj), _world_of(obj))


def _add_bone_frames(clump: _Clump) -> None:
    """A frame per bone (the HAnim hierarchy), under the frame the armature sits on."""
    armature = clump.armature
    if armature is None:
        return
    skeleton = clump.skeleton = extract_skeleton(armature)
    names = skeleton.names
    arm_key = clump.arm_key = clump.frame_above(armature)
    frame_world = clump.entries[arm_key][3] if arm_key is not None else np.eye(4)
    offset = np.linalg.inv(frame_world) @ _world_of(armature)
    if not np.allclose(offset, np.eye(4), atol=1e-9):
        clump.skeleton_offset = offset  # root bones: where the armature sits on its frame
    for i, name in enumerate(names):
        extras = {k: v for k, v in skeleton.extras[i].items() if k.startswith("rw_")}
        node = FrameNode(name, -1, np.eye(4), bone=i, extras=extras)
        p = int(skeleton.parents[i])
        parent = ("bone", names[p]) if p >= 0 else arm_key
        order = (int(extras.get("rw_frame_index", UNRECORDED)), f"~{i:06d}")
        clump.entries[("bone", name)] = (order, node, parent, None)


def _add_atomics(clump: _Clump) -> None:
    """An atomic per mesh with triangles (in the order the import recorded), in
    the space of the frame it hangs from."""
    armature = clump.armature
    names = clump.skeleton.names if clump.skeleton is not None else None
    ordered = sorted(
        clump.meshes, key=lambda o: (int(kept_keys.get(o, PROP_ATOMIC, UNRECORDED)), o.name)
    )
    with reader_groups_kept():  # one weight-reading node group for every atomic
        skins = {
            obj.name: read_skin(obj, names)  # in bulk; normalised in the export
            for obj in ordered
            if armature is not None and mesh_armature(obj) is armature and obj.vertex_groups
        }
        # the parts of the fingerprint the mesh no longer matches (the weights read
        # with the same node group where the groups are the bones, in bone order)
        edits = {obj.name: fingerprint.changed(obj, FINGERPRINT) for obj in ordered}
    for obj in ordered:
        mesh = extract_mesh(obj, None)
        if not _triangles_only(obj, mesh, clump.warnings):
            continue
        if edits[obj.name] is not None:  # what the kept geometry data no longer describes
            mesh.extras["rw_edits"] = sorted(edits[obj.name])
        _file_triangles_back(obj, mesh, clump.warnings)
        mesh.skin = skins.get(obj.name)
        key, space = _atomic_frame(clump, obj)
        skin_space = _skin_space(clump, obj) if mesh.skin is not None else None
        if skin_space is not None:
            space = _world_of(obj)
        _to_space(mesh, np.linalg.inv(space) @ _world_of(obj))
        _drop_unstored(mesh)
        materials = [material_info(s.material, j) for j, s in enumerate(obj.material_slots)]
        clump.atomics.append((mesh, key, materials, skin_space))
    if not clump.atomics:
        raise FormatError(
            f"nothing to write: no triangles in {', '.join(o.name for o in ordered[:5])}"
            ", and a clump holds triangles only (no line primitives)"
        )


def _atomic_frame(clump: _Clump, obj) -> tuple[FrameKey | None, np.ndarray]:
    """The frame the mesh ``obj`` hangs from, and the world matrix of the space its
    vertices go in: a skinned mesh on the frame it hung from, else the
    armature's frame (in the armature's space); another on the frame above it, or
    on a frame of its own when it is not exactly there (one is added)."""
    armature = clump.armature
    if armature is not None and mesh_armature(obj) is armature:
        key = _recorded_frame(clump.entries, kept_keys.get(obj, PROP_FRAME)) or clump.arm_key
        if key is None:  # no frame above the armature: the root bone's
            parents = np.asarray(clump.skeleton.parents)
            key = ("bone", clump.skeleton.names[int(np.nonzero(parents < 0)[0][0])])
        return key, _world_of(armature)
    if obj in clump.empty_set:  # the mesh is its frame's object
        key = ("empty", obj.name)
        return key, clump.entries[key][3]
    key = clump.frame_above(obj)
    own = (
        obj.parent is None
        or key is None
        or not np.allclose(np.array(obj.matrix_local), np.eye(4), atol=1e-6)
    )
    if own and not kept_keys.has(obj, PROP_FRAME):
        node = FrameNode(obj.name, -1, np.eye(4))
        clump.entries[("mesh", obj.name)] = ((UNRECORDED + 1, obj.name), node, key, _world_of(obj))
        key = ("mesh", obj.name)
    return key, clump.entries[key][3] if key is not None else np.eye(4)


def _skin_space(clump: _Clump, obj) -> np.ndarray | None:
    """Where a skinned mesh sits in its armature's space when the import put it
    there (its atomic hung from another frame than the armature's: a turned bone):
    its vertices stay in its own space and the inverse bind matrices are written
    relative to it. None for a mesh in the armature's space."""
    recorded = kept_keys.get(obj, PROP_FRAME)
    offset = np.linalg.inv(_world_of(clump.armature)) @ _world_of(obj)
    if recorded is None or np.allclose(offset, np.eye(4), atol=1e-9):
        return None
    above = clump.entries[clump.arm_key][1] if clump.arm_key in clump.entries else None
    if above is not None and above.extras.get("rw_frame_index") == int(recorded):
        return None
    kept = kept_keys.get(obj, PROP_SKIN_SPACE)
    if kept is not None and len(kept) == 16:
        kept = np.array(kept, np.float64).reshape(4, 4)
        if np.allclose(kept, offset, atol=1e-6):  # not moved: the file's exact values
            return kept
    return offset


def _ordered_frames(clump: _Clump) -> tuple[list[FrameNode], dict]:
    """The frames in file order, each matrix relative to its parent's; and each
    frame key's place."""
    entries = clump.entries
    keys = sorted(entries, key=lambda k: entries[k][0])
    position = {k: i for i, k in enumerate(keys)}
    nodes = []
    for k in keys:
        _, node, parent, world = entries[k]
        node.parent = -1 if parent is None else position[parent]
        if world is not None:
            pworld = entries[parent][3] if parent is not None else np.eye(4)
            node.matrix = np.linalg.inv(pworld) @ world
        nodes.append(node)
    return nodes, position


def clump_root(objects: list):
    """The object at the top of the exported meshes' hierarchy (whose recorded
    import transform says what space the clump was in): the first, by name, that
    RigPort imported as a root, else the first; None without objects."""
    tops = {}
    for obj in objects:
        top = obj
        while top.parent is not None:
            top = top.parent
        tops[top.name] = top
    ordered = [tops[n] for n in sorted(tops)]
    return next((o for o in ordered if IMPORT_TRANSFORM in o), ordered[0] if ordered else None)


def _recorded_frame(entries: dict, frame_index) -> tuple | None:
    """The bone or empty frame a skinned atomic hung from (by its imported frame index)."""
    if frame_index is None:
        return None
    for key, (_, node, _, _) in entries.items():
        if key[0] in ("bone", "empty") and node.extras.get("rw_frame_index") == int(frame_index):
            return key
    return None
