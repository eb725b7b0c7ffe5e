"""Clump -> neutral scene: frames, skeleton from the HAnim hierarchy, one mesh per atomic.

RenderWare and Blender share axes (right-handed, Z up), so nothing is turned.
What Blender has no place for is returned as JSON-able ``extras`` that the
exporter reads back: frame flags and unknown frame plugins, HAnim bone IDs,
geometry flags, bounding spheres, the Skin PLG's layout and split data, the
material and texture fields, and every unknown plugin chunk.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..codec import FormatError
from ..codec.errors import counted
from ..passes import run_passes
from ..scene import (
    Attribute,
    ColorSet,
    Mesh,
    MorphTarget,
    Scene,
    Skeleton,
    Skin,
    UVSet,
    morph_offsets,
)
from ..transforms import decompose_trs, world_from_local
from .chunks import RawChunk, version_of
from .dff import Atomic, Clump, DffFile
from .extension import Extension
from .frames import FrameName, HAnimPLG, frame_matrices, hanim_parents
from .geometry import BinMesh, Geometry, bin_mesh_lists, positions_fingerprint, strip_triangles
from .gta import NIGHT_ATTRIBUTE, NIGHT_COLORS, read_night_colors
from .materials import Material, Text
from .skin import Skin as SkinPLG

#: A point attribute with the normals as the file has them.
NORMAL_ATTRIBUTE = "rw:normal"
UV_ATTRIBUTE = "rw:uv:{}"  # the file's UVs (as x, y) where flipping V twice rounds
#: A point attribute with the Skin PLG's four bone indices per vertex as stored
#: (byte k = slot k): the slot order of equal weights and the bones named in
#: zero-weight slots, which Blender's vertex groups cannot hold.
SKIN_SLOTS_ATTRIBUTE = "rw:skin_slots"
#: Agreement between the inverse bind matrices and the frame hierarchy.
BIND_TOLERANCE = 1e-3


@dataclass
class FrameNode:
    """One frame: a local matrix (column vectors) relative to ``parent`` (-1: root)."""

    name: str
    parent: int
    matrix: np.ndarray  # (4, 4) float64
    bone: int = -1  # skeleton index when the frame is a bone
    extras: dict[str, Any] = field(default_factory=dict)


@dataclass
class MaterialInfo:
    name: str
    color: tuple[int, int, int, int]
    texture: str | None
    extras: dict[str, Any] = field(default_factory=dict)


@dataclass
class ImportedClump:
    scene: Scene
    frames: list[FrameNode]
    mesh_frames: list[int]  # frame of each mesh (atomic)
    materials: list[list[MaterialInfo]]  # per mesh, per slot
    skin_frame: int = -1  # the frame whose space the skeleton lives in (-1: the world)
    #: Where the skinned atomics' frame sits in the skeleton's space, when the skeleton
    #: cannot live there (see :func:`_skeleton_space`); their vertices stay in it.
    skin_space: np.ndarray | None = None
    warnings: list[str] = field(default_factory=list)


def raw_list(items: list) -> list[list]:
    """Unknown plugin chunks as JSON: [type, stamp, hex payload, place in the list]."""
    return [
        [c.type, c.stamp, c.payload.hex(), i]
        for i, c in enumerate(items)
        if isinstance(c, RawChunk)
    ]


def zero_area(positions: np.ndarray, triangles: np.ndarray) -> np.ndarray:
    """Per triangle: True where its corners lie on a line or a point (no normal). A
    triangle with a NaN or infinite corner is not one."""
    t = np.asarray(triangles, np.int64).reshape(-1, 3)
    if not len(t):
        return np.zeros(0, bool)
    with np.errstate(invalid="ignore", over="ignore"):
        p = np.asarray(positions, np.float64)
        a, b, c = p[t[:, 0]], p[t[:, 1]], p[t[:, 2]]
        cross = np.linalg.norm(np.cross(b - a, c - a), axis=1)
        size = np.maximum(np.linalg.norm(b - a, axis=1), np.linalg.norm(c - a, axis=1))
        return cross <= 1e-6 * np.maximum(size * size, 1e-12)


def geometry_fingerprint(num_vertices: int, triangles: np.ndarray, materials: np.ndarray) -> str:
    """What must be unchanged for per-vertex data (split data, spheres, the Bin Mesh)
    to stay valid."""
    h = hashlib.sha1(np.ascontiguousarray(triangles, "<u2").tobytes())
    h.update(np.ascontiguousarray(materials, "<u2").tobytes())
    h.update(str(num_vertices).encode())
    return h.hexdigest()


def unique_names(names: list[str]) -> list[str]:
    seen: dict[str, int] = {}
    out = []
    for n in names:
        base = n
        k = seen.get(base, 0)
        while n in seen:
            k += 1
            n = f"{base}.{k:03d}"
        seen[base] = k
        seen[n] = 0
        out.append(n)
    return out


def import_dff(f: DffFile, name: str) -> list[ImportedClump]:
    """Every clump of a file; the chunks before the first clump (a UV animation
    dictionary) and the trailing padding go with the first one."""
    out = []
    for i, clump in enumerate(f.clumps):
        out.append(import_clump(clump, name if i == 0 else f"{name}_{i}"))
    first = f.chunks.index(f.clumps[0])
    extras = out[0].scene.extras
    if first:
        extras["rw_file_chunks"] = raw_list(f.chunks[:first])
    if f.trailing:
        extras["rw_trailing"] = len(f.trailing)
    if len(f.chunks) - first > len(out):
        out[0].warnings.append("chunks between or after the clumps are not imported")
    return out


def _inv(m: np.ndarray, what: str, names: list[str] | None = None) -> np.ndarray:
    """The inverse of a matrix or a stack of them; FormatError naming ``what`` and, for a
    stack, the first element (``names[i]``, else its index) that has none."""
    try:
        out = np.linalg.inv(m)
    except np.linalg.LinAlgError:
        out = None
    if out is not None and np.isfinite(out).all():
        return out
    if m.ndim == 3:  # only on the error path: find the element
        det = np.linalg.det(m)
        bad = ~np.isfinite(m).all(axis=(1, 2)) | ~np.isfinite(det) | (det == 0)
        if out is not None:
            bad |= ~np.isfinite(out).all(axis=(1, 2))
        i = int(np.argmax(bad))
        what = f"{what}, {names[i] if names else f'element {i}'}"
    raise FormatError(f"{what}: the matrix is singular or not finite")


def import_clump(clump: Clump, name: str) -> ImportedClump:
    """The clump as neutral data; FormatError for what cannot be imported.

    Non-finite floats in a file pass through as they are (no numpy warnings).
    """
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        return _import_clump(clump, name)


def _import_clump(clump: Clump, name: str) -> ImportedClump:
    fl = clump.frame_list
    local = frame_matrices(fl.frames)
    parents = fl.frames["parent"].astype(np.int32)
    world = world_from_local(local, parents)
    result = ImportedClump(Scene(name), _frames(clump, name, local, parents), [], [])
    _clump_extras(clump, result)
    skinned = [a for a in clump.atomics if clump.atomic_geometry(a).skin is not None]
    if skinned:
        _skeleton(clump, result, world, skinned)
    for k, atomic in enumerate(clump.atomics):
        _mesh(clump, atomic, k, result)
    return result


def _frames(clump: Clump, name: str, local: np.ndarray, parents: np.ndarray) -> list[FrameNode]:
    """Every frame with a unique name; its flags, bone ID, plugins and raw name as extras."""
    fl = clump.frame_list
    raws = [
        None if (p := fl.extensions[i].find(FrameName)) is None else p.raw for i in range(len(fl))
    ]
    clean = [None if r is None else r.split(b"\0", 1)[0].decode("utf-8", "replace") for r in raws]
    names = unique_names(
        [clean[i] or (name if i == 0 else f"{name}_frame{i}") for i in range(len(fl))]
    )
    frames = []
    for i in range(len(fl)):
        ext = fl.extensions[i]
        extras: dict[str, Any] = {
            "rw_frame_index": i,
            "rw_frame_flags": int(fl.frames["flags"][i]),
            "rw_frame_matrix": local[i][:3, :].ravel().tolist(),
        }
        h = ext.find(HAnimPLG)
        if h is not None:
            extras["rw_bone_id"] = int(h.node_id)
        raw = raw_list(ext.items)
        if raw:
            extras["rw_extension"] = raw
        if raws[i] is None:
            extras["rw_unnamed"] = True
        elif names[i].encode("utf-8") != raws[i]:  # made unique, or bytes a name cannot hold
            extras["rw_name"] = names[i]
            extras["rw_name_raw"] = raws[i].hex()
        frames.append(FrameNode(names[i], int(parents[i]), local[i], extras=extras))
    return frames


def _clump_extras(clump: Clump, result: ImportedClump) -> None:
    """The clump's version and stamp, its extensions, and sections kept as they are."""
    extras = result.scene.extras
    extras["rw_version"] = clump.version
    extras["rw_stamp"] = clump.stamp
    # every clump extension as it is: its place, stamp and plugins (a file may have
    # none, or a second, empty one at the end)
    extras["rw_clump_extensions"] = [
        [i, item.stamp, raw_list(item.items)]
        for i, item in enumerate(clump.items)
        if isinstance(item, Extension)
    ]
    if any(isinstance(i, RawChunk) for i in clump.items):
        kinds = sorted({f"0x{i.type:X}" for i in clump.items if isinstance(i, RawChunk)})
        extras["rw_clump_items"] = raw_list(clump.items)
        extras["rw_clump_counts"] = list(clump.counts)
        result.warnings.append(
            f"clump sections {', '.join(kinds)} (lights, cameras ...) are kept as they are, "
            "not as Blender objects"
        )


def _skeleton(clump: Clump, result: ImportedClump, world: np.ndarray, skinned: list) -> None:
    """The skeleton from the HAnim hierarchy: its bones' frames, rest pose and inverse binds."""
    skin: SkinPLG = clump.atomic_geometry(skinned[0]).skin
    geometry = skinned[0].geometry
    root = _hanim_root(clump, skin, geometry)
    h = clump.frame_list.hanim(root)
    nodes = h.nodes
    bone_frames = _bone_frames(clump, root, nodes)
    bone_parents = hanim_parents(nodes["flags"])
    _check_hierarchy(result, bone_frames, bone_parents)
    bone_names = [
        f"bone {i} ({result.frames[f].name}, frame {f})" for i, f in enumerate(bone_frames)
    ]
    inv_bind = _file_inverse_binds(skin)
    bind = _inv(inv_bind, f"geometry {geometry}: Skin PLG inverse bind matrix", bone_names)
    _skeleton_space(result, world, skinned[0].frame, root, bone_frames, bind)
    frame = result.skin_frame
    space = np.eye(4) if frame < 0 else _inv(world[frame], f"frame {frame} (the skeleton's)")
    bworld = space @ world[bone_frames]
    pworld = np.where(
        (bone_parents >= 0)[:, None, None], bworld[np.maximum(bone_parents, 0)], np.eye(4)
    )
    t, q, s = decompose_trs(_inv(pworld, "the parent frame", bone_names) @ bworld)
    inv_bind = _inverse_binds(result, inv_bind, bind, bworld)
    result.frames[root].extras["rw_hanim_root"] = True
    extras = []
    for i, f in enumerate(bone_frames):
        frame = result.frames[f]
        frame.bone = i
        e = dict(frame.extras)
        e["rw_bone_index"] = int(nodes["index"][i])
        e["rw_bone_flags"] = int(nodes["flags"][i])
        extras.append(e)
    result.scene.skeleton = Skeleton(
        [result.frames[f].name for f in bone_frames], bone_parents, t, q, s, inv_bind, extras
    )
    result.scene.extras["rw_hanim"] = {
        "version": int(h.version),
        "flags": int(h.flags),
        "key_frame_size": int(h.key_frame_size),
        "root_frame": int(root),
    }


def _skeleton_space(
    result: ImportedClump,
    world: np.ndarray,
    atomic: int,
    root: int,
    bone_frames: list[int],
    bind: np.ndarray,
) -> None:
    """The frame the skeleton lives in, and the skinned atomics' place in it.

    librw skins by ``boneWorld @ inverseBind`` (the atomic's own frame cancels)
    and poses the root bones in the space of the frame above the HAnim hierarchy.
    When the skinned atomic hangs elsewhere (from a bone, turned or moved), the
    skeleton lives in that frame above, not in the atomic's. The inverse bind
    matrices are then either relative to that frame (the atomic's frame plays no
    part) or, when that is how they agree with the frames, relative to the
    atomic's frame: its transform is then composed into the bind pose
    (``skin_space``) and its vertices stay where they are. ``bind``: the file's
    bind matrices (the inverses of its inverse bind matrices)."""
    up = result.frames[root].parent
    above = world[up] if up >= 0 else np.eye(4)
    offset = _inv(above, f"frame {up} (above the HAnim hierarchy)") @ world[atomic]
    if np.allclose(offset, np.eye(4), atol=1e-9):
        result.skin_frame = atomic
        return
    result.skin_frame = up
    frames = np.linalg.inv(above) @ world[bone_frames]
    if np.abs(offset @ bind - frames).max() < np.abs(bind - frames).max():
        result.skin_space = offset


def _hanim_root(clump: Clump, skin: SkinPLG, geometry: int) -> int:
    """The frame carrying the HAnim hierarchy, which must have a node per skin bone."""
    fl = clump.frame_list
    root = next(
        (i for i in range(len(fl)) if (h := fl.hanim(i)) is not None and h.nodes is not None),
        None,
    )
    if root is None:
        raise FormatError(
            f"geometry {geometry} is skinned, but no frame carries an HAnim hierarchy"
        )
    nodes = fl.hanim(root).nodes
    if len(nodes) != skin.num_bones:
        raise FormatError(
            f"frame {root}: the HAnim hierarchy has {len(nodes)} nodes, the skin of "
            f"geometry {geometry} {skin.num_bones} bones"
        )
    return root


def _bone_frames(clump: Clump, root: int, nodes: np.ndarray) -> list[int]:
    """The frame of each HAnim node: the first frame carrying its ID."""
    fl = clump.frame_list
    by_id = {}
    for i in range(len(fl)):
        fh = fl.hanim(i)
        if fh is not None:
            by_id.setdefault(int(fh.node_id), i)
    bone_frames = []
    for k, node in enumerate(nodes.tolist()):
        if node[0] not in by_id:
            raise FormatError(
                f"frame {root}: HAnim hierarchy node {k} has ID {node[0]}, which no frame carries"
            )
        bone_frames.append(by_id[node[0]])
    return bone_frames


def _check_hierarchy(result: ImportedClump, bone_frames: list[int], bone_parents) -> None:
    """Warn where the HAnim push/pop flags and the frame parents disagree."""
    frame_parents = [result.frames[f].parent for f in bone_frames]
    mismatch = [
        result.frames[bone_frames[i]].name
        for i, p in enumerate(bone_parents.tolist())
        if p >= 0 and frame_parents[i] != bone_frames[p]
    ]
    if mismatch:
        result.warnings.append(
            f"the HAnim push/pop flags disagree with the frame hierarchy for "
            f"{counted(len(mismatch), 'bone')} ({', '.join(mismatch[:5])}); "
            "the HAnim hierarchy is used"
        )


def _file_inverse_binds(skin: SkinPLG) -> np.ndarray:
    """The Skin PLG's inverse bind matrices (column vectors), relative to the
    skinned atomic's frame or the frame above the hierarchy (see _skeleton_space)."""
    inv_bind = np.transpose(skin.matrices.astype(np.float64), (0, 2, 1)).copy()
    inv_bind[:, 3, :] = (0.0, 0.0, 0.0, 1.0)
    return inv_bind


def _inverse_binds(
    result: ImportedClump, inv_bind: np.ndarray, bind: np.ndarray, bworld: np.ndarray
) -> np.ndarray:
    """The inverse bind matrices in the skeleton's space; a warning where they
    disagree with the frames."""
    if result.skin_space is not None:
        inv_bind = inv_bind @ np.linalg.inv(result.skin_space)
        bind = result.skin_space @ bind
    off = np.abs(bind - bworld).max(axis=(1, 2))
    bad = np.nonzero(off > BIND_TOLERANCE * np.maximum(1.0, np.abs(bworld).max(axis=(1, 2))))[0]
    if len(bad):
        result.warnings.append(
            "the inverse bind matrices disagree with the frame hierarchy for "
            f"{counted(len(bad), 'bone')} "
            f"(largest difference {off.max():.4g}); the armature's rest pose follows the "
            "inverse bind matrices, the frames are kept for export"
        )
    return inv_bind


def _corner_faces(geo: Geometry, g: int) -> tuple[np.ndarray, np.ndarray, str]:
    """Triangles and their material slots; the Bin Mesh decides materials (FORMAT-NOTES)."""
    tris = geo.triangles.astype(np.int64)
    mats = geo.tri_materials.astype(np.int64)
    bm: BinMesh | None = geo.bin_mesh
    if bm is None or not bm.meshes:
        return tris, mats, "triangles"
    parts, pmats = [], []
    for j, (mat, ix) in enumerate(bm.meshes):
        if not bm.strips and len(ix) % 3:
            raise FormatError(
                f"geometry {g}: bin mesh split {j} is a triangle list of {len(ix)} indices "
                "(not triangles)"
            )
        t = strip_triangles(ix) if bm.strips else np.asarray(ix, np.int64).reshape(-1, 3)
        parts.append(t)
        pmats.append(np.full(len(t), mat, np.int64))
    btris = np.concatenate(parts) if parts else np.zeros((0, 3), np.int64)
    bmats = np.concatenate(pmats) if pmats else np.zeros(0, np.int64)
    if len(btris) and btris.max() >= geo.num_vertices:
        split = int(
            np.searchsorted(np.cumsum([len(p) for p in parts]), np.argmax(btris.max(1)), "right")
        )
        raise FormatError(
            f"geometry {g}: bin mesh split {split} has index {int(btris.max())} of "
            f"{geo.num_vertices} vertices"
        )
    if not len(tris):
        return btris, bmats, "bin mesh"
    key_b = _tri_keys(btris)
    order = np.argsort(key_b, kind="stable")
    key_t = _tri_keys(tris)
    pos = np.clip(np.searchsorted(key_b[order], key_t), 0, max(len(order) - 1, 0))
    found = (key_b[order][pos] == key_t) if len(order) else np.zeros(len(tris), bool)
    mats = np.where(found, bmats[order][pos] if len(order) else 0, mats)
    return tris, mats, "triangles"


def _tri_keys(t: np.ndarray) -> np.ndarray:
    s = np.sort(t, axis=1)
    return (s[:, 0] << 42) | (s[:, 1] << 21) | s[:, 2]


@dataclass
class _MeshPass:
    """What the passes of ``_mesh`` read and fill, in the order they run."""

    clump: Clump
    atomic: Atomic
    k: int  # the atomic's place in the clump
    result: ImportedClump
    geo: Geometry = field(init=False)
    name: str = ""
    positions: np.ndarray = field(init=False)
    tris: np.ndarray = field(init=False)
    mats: np.ndarray = field(init=False)
    source: str = ""  # what the faces were read from (see _corner_faces)
    slots: list[Material] = field(default_factory=list)
    corners: np.ndarray = field(init=False)
    mesh: Mesh = field(init=False)
    geo_items: list = field(default_factory=list)  # the geometry's plugins still to keep raw
    night_at: int | None = None  # the night colours' place among them
    night_chunk: RawChunk | None = None
    skin_extras: dict[str, Any] = field(default_factory=dict)


def _mesh(clump: Clump, atomic: Atomic, k: int, result: ImportedClump) -> None:
    """One mesh for the atomic; what Blender has no place for in its extras."""
    state = _MeshPass(clump, atomic, k, result)
    run_passes(
        state,
        _mesh_faces,
        _mesh_normals,
        _mesh_uvs_and_colors,
        _mesh_skin,
        _mesh_morphs,
        _mesh_extras,
        _mesh_extensions,
    )
    result.materials.append([_material(m, result.scene.name, j) for j, m in enumerate(state.slots)])
    state.mesh.materials = [m.name for m in result.materials[-1]]
    result.mesh_frames.append(atomic.frame)
    result.scene.meshes.append(state.mesh)


def _mesh_name(clump: Clump, atomic: Atomic, k: int, result: ImportedClump) -> str:
    """The atomic's name, as DragonFF names its objects: its frame's, or
    ``<frame>_<atomic>`` when the frame holds several. The frame holding the HAnim
    hierarchy names the armature, so an atomic alone on it takes the clump's name
    (the file's), else ``<frame>_mesh``, whichever no frame has."""
    frame = result.frames[atomic.frame]
    if sum(a.frame == atomic.frame for a in clump.atomics) > 1:
        return f"{frame.name}_{k}"
    if not frame.extras.get("rw_hanim_root"):
        return frame.name
    taken = {f.name for f in result.frames}
    return result.scene.name if result.scene.name not in taken else f"{frame.name}_mesh"


def _mesh_faces(p: _MeshPass) -> None:
    """Positions of morph target 0 and the triangles, their materials checked."""
    clump, atomic = p.clump, p.atomic
    geo = p.geo = clump.atomic_geometry(atomic)
    if geo.native:
        raise FormatError(
            f"geometry {atomic.geometry}: platform-native geometry (PS2/Xbox/GameCube) is "
            "not supported: convert the file to PC geometry first"
        )
    p.name = _mesh_name(clump, atomic, p.k, p.result)
    mt0 = geo.morph_targets[0] if geo.morph_targets else None
    p.positions = (
        mt0.positions
        if mt0 is not None and mt0.positions is not None
        else np.zeros((geo.num_vertices, 3))
    ).astype(np.float32)
    p.tris, mats, p.source = _corner_faces(geo, atomic.geometry)
    p.mats = mats
    p.slots = geo.material_list.slot_materials()
    n_slots = len(p.slots)
    if len(mats) and (mats.max() >= max(n_slots, 1) or mats.min() < 0):
        t = int(np.argmax((mats >= max(n_slots, 1)) | (mats < 0)))
        raise FormatError(
            f"geometry {atomic.geometry}, triangle {t}: material {int(mats[t])} of {n_slots}"
        )
    p.corners = p.tris.reshape(-1).astype(np.int32)
    p.mesh = Mesh(
        p.name,
        p.positions,
        p.corners,
        np.arange(0, len(p.corners), 3, dtype=np.int32),
        mats.astype(np.int32),
    )


def _mesh_normals(p: _MeshPass) -> None:
    """Unit normals per vertex (the geometry stores one per vertex), and the file's own
    as stored (Blender's custom normals are unit length and never zero)."""
    mt0 = p.geo.morph_targets[0] if p.geo.morph_targets else None
    if mt0 is None or mt0.normals is None:
        return
    n = mt0.normals.astype(np.float64)
    n /= np.maximum(np.linalg.norm(n, axis=1, keepdims=True), 1e-12)
    p.mesh.normals, p.mesh.normal_domain = n.astype(np.float32), "POINT"
    p.mesh.attributes.append(Attribute(NORMAL_ATTRIBUTE, "POINT", "FLOAT_VECTOR", mt0.normals))
    flat = int(zero_area(p.positions, p.tris).sum())
    if flat:
        p.result.warnings.append(
            f"{p.name}: {flat} zero-area triangles, where Blender cannot hold custom "
            "normals; the file's normals are kept and written back"
        )


def kept_uvs(
    mesh: Mesh, index: int, uv: np.ndarray, has_face: np.ndarray, fc: np.ndarray
) -> np.ndarray:
    """A UV set's values as written (``uv``, V flipped back from Blender's), with the
    file's own values where the import kept them and Blender's are still unedited.

    ``fc`` is each written vertex's corner, ``has_face`` whether it has one."""
    name = UV_ATTRIBUTE.format(index)
    kept = next((a for a in mesh.attributes if a.name == name and a.domain == "CORNER"), None)
    if kept is None:
        return uv
    file = np.asarray(kept.data, np.float32)[fc, :2]
    held = mesh.uv_sets[index].uv[fc].astype(np.float32)
    with np.errstate(invalid="ignore"):  # 1 - a signalling NaN: the file's value is kept
        flipped = np.float32(1.0) - file[:, 1]
    same = has_face & _same(file[:, 0], held[:, 0]) & _same(flipped, held[:, 1])
    return np.where(same[:, None], file, uv)


def _same(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Equal values, or the same bits (a NaN the file has is not equal to itself)."""
    return (a == b) | (a.view(np.uint32) == b.view(np.uint32))


def _mesh_uvs_and_colors(p: _MeshPass) -> None:
    """UV sets, prelit colours, and GTA's night colours as a second colour attribute."""
    geo, corners, mesh = p.geo, p.corners, p.mesh
    for i, uv in enumerate(geo.uvs):
        raw = uv.astype(np.float32)
        flipped = raw.copy()  # flip per vertex, then expand
        flipped[:, 1] = 1.0 - flipped[:, 1]
        mesh.uv_sets.append(UVSet("UVMap" if i == 0 else f"UVMap{i}", flipped[corners]))
        if np.any(np.float32(1.0) - flipped[:, 1] != raw[:, 1]):
            # 1 - (1 - v) rounds for some v in float32: keep the file's values, per
            # corner, since one Blender vertex may hold several of the file's vertices;
            # as vectors, because Blender takes every FLOAT2 corner attribute for a UV map.
            held = np.zeros((len(corners), 3), np.float32)
            held[:, :2] = raw[corners]
            kept = Attribute(UV_ATTRIBUTE.format(i), "CORNER", "FLOAT_VECTOR", held)
            mesh.attributes.append(kept)
    if geo.colors is not None:
        mesh.colors.append(ColorSet("prelit", geo.colors[corners].astype(np.float32) / 255.0))
    p.geo_items = list(geo.extension.items)
    night_at = next(
        (
            i
            for i, c in enumerate(p.geo_items)
            if isinstance(c, RawChunk) and c.type == NIGHT_COLORS
        ),
        None,
    )
    if night_at is None:
        return
    night = read_night_colors(p.geo_items[night_at].payload, geo.num_vertices)
    if night is not None:
        mesh.colors.append(ColorSet(NIGHT_ATTRIBUTE, night[corners].astype(np.float32) / 255.0))
        p.night_at = night_at
        p.night_chunk = p.geo_items[night_at]
        p.geo_items[night_at] = None  # written from the attribute; its place is kept


def _mesh_skin(p: _MeshPass) -> None:
    """Weights, the stored slot order, and the Skin PLG fields Blender has no place for."""
    skin = p.geo.skin
    if skin is None:
        return
    p.mesh.skin = Skin(skin.indices.astype(np.int32), skin.weights.astype(np.float32))
    packed = skin.indices.astype(np.uint32) << np.array([0, 8, 16, 24], np.uint32)
    packed = np.bitwise_or.reduce(packed, axis=1).view(np.int32)
    p.mesh.attributes.append(Attribute(SKIN_SLOTS_ATTRIBUTE, "POINT", "INT", packed))
    p.skin_extras = {
        "layout": "old" if skin.old_layout else "new",
        "padding": skin.padding,
        "max_weights": skin.max_weights,
        "used_bones": skin.used_bones.tolist(),
        "matrix_w": skin.matrices[:, :, 3].tolist(),
        "fillers": None if skin.fillers is None else skin.fillers.tolist(),
        "split": None if skin.split is None else skin.split.to_json(),
    }
    unheld = np.nonzero((np.signbit(skin.weights) | ~np.isfinite(skin.weights)).any(axis=1))[0]
    if len(unheld):
        # rows holding a weight no vertex group takes (NaN, infinite, negative or -0):
        # the file's own rows, written back while the weights are unedited
        p.skin_extras["unheld"] = {
            "vertices": unheld.tolist(),
            "indices": np.ascontiguousarray(skin.indices[unheld], np.uint8).tobytes().hex(),
            "weights": np.ascontiguousarray(skin.weights[unheld], "<f4").tobytes().hex(),
        }


def _mesh_morphs(p: _MeshPass) -> None:
    targets = p.geo.morph_targets[1:]
    for i, mt in enumerate(targets, 1):
        if mt.positions is not None:
            offsets = morph_offsets(p.positions, mt.positions)
            p.mesh.morphs.append(MorphTarget(f"morph{i}", offsets))
    if any(mt.normals is not None for mt in targets):
        p.result.warnings.append(
            f"{p.name}: normals of morph targets are not kept (Blender has none)"
        )


def _mesh_extras(p: _MeshPass) -> None:
    """The atomic's and geometry's fields, and the Bin Mesh where regenerating it differs."""
    geo, tris, mats, source = p.geo, p.tris, p.mats, p.source
    rw_geometry = {
        "flags": int(geo.flags),
        "surface": None if geo.surface is None else [float(v) for v in geo.surface],
        "spheres": [mt.sphere.tolist() for mt in geo.morph_targets],
        "positions": positions_fingerprint([mt.positions for mt in geo.morph_targets]),
        "fingerprint": geometry_fingerprint(geo.num_vertices, tris, mats),
        "bin_mesh_flags": None if geo.bin_mesh is None else geo.bin_mesh.flags,
        "faces_from": source,
        "version": version_of(geo.stamp),
    }
    p.mesh.extras = {
        "rw_atomic_flags": int(p.atomic.flags),
        "rw_atomic_tail": p.atomic.struct_tail.hex(),
        "rw_geometry": rw_geometry,
    }
    if source == "triangles" and len(tris) and not np.array_equal(geo.tri_materials, mats):
        # the file's own triangle material IDs (often all 0: the Bin Mesh decides)
        stored_ids = geo.tri_materials
        rw_geometry["tri_materials"] = (
            0 if not stored_ids.any() else np.asarray(stored_ids, "<u2").tobytes().hex()
        )
    night = None if p.night_chunk is None else p.night_chunk.payload[4:]
    unused = _unused_vertices(geo, tris, night)
    if unused:
        rw_geometry["unused"] = unused
    if p.night_chunk is not None:
        rw_geometry["night_colors"] = {
            "place": p.night_at,
            "stamp": p.night_chunk.stamp,
            "flag": int.from_bytes(p.night_chunk.payload[:4], "little"),
        }
    bm = geo.bin_mesh
    if bm is not None and source == "triangles":
        regen = bin_mesh_lists(tris, mats, max(len(p.slots), 1), bm.stamp)
        if regen.to_bytes() != bm.to_bytes():
            rw_geometry["bin_mesh"] = bm.to_bytes()[12:].hex()
    if p.skin_extras:
        p.mesh.extras["rw_skin"] = p.skin_extras


def _unused_vertices(geo: Geometry, tris: np.ndarray, night: bytes | None) -> dict | None:
    """The vertices no triangle uses, their positions, and their normal, UVs, prelit
    and night colours (float32 and byte values as hex): Blender keeps such a vertex
    but has no corner to hold them, so the export puts them back (by index while the
    triangles are the file's, else by position)."""
    used = np.zeros(geo.num_vertices, bool)
    used[np.asarray(tris, np.int64).reshape(-1)] = True
    idx = np.flatnonzero(~used)
    if not len(idx):
        return None
    mt0 = geo.morph_targets[0] if geo.morph_targets else None
    return {
        "vertices": idx.tolist(),
        "positions": None
        if mt0 is None or mt0.positions is None
        else np.ascontiguousarray(mt0.positions[idx], "<f4").tobytes().hex(),
        "normals": None
        if mt0 is None or mt0.normals is None
        else np.ascontiguousarray(mt0.normals[idx], "<f4").tobytes().hex(),
        "uvs": [np.ascontiguousarray(uv[idx], "<f4").tobytes().hex() for uv in geo.uvs],
        "colors": None if geo.colors is None else geo.colors[idx].tobytes().hex(),
        "night": None
        if night is None
        else np.frombuffer(night, np.uint8).reshape(-1, 4)[idx].tobytes().hex(),
    }


def _mesh_extensions(p: _MeshPass) -> None:
    """The geometry's and atomic's plugins Blender has no place for, as raw chunks."""
    for key, items in (
        ("rw_geometry_extension", p.geo_items),
        ("rw_atomic_extension", _atomic_ext_items(p.atomic)),
    ):
        raw = raw_list(items)
        if raw:
            p.mesh.extras[key] = raw


def _atomic_ext_items(atomic: Atomic) -> list:
    ext = atomic.extension
    return [] if ext is None else ext.items


def _material(m: Material, clump_name: str, slot: int) -> MaterialInfo:
    tex = m.texture
    extras: dict[str, Any] = {
        "rw_material": {
            "flags": m.flags,
            "unused": m.unused,
            "surface": None if m.surface is None else [float(v) for v in m.surface],
            "extension": raw_list(m.extension.items),
        }
    }
    if tex is not None:
        extras["rw_texture"] = {
            "flags": tex.flags,
            "mask": tex.mask.text,
            "extension": raw_list(tex.extension.items),
        }
        for key, text in (("name_raw", tex.name), ("mask_raw", tex.mask)):
            if text.raw != Text.make(text.stamp, text.text).raw:  # bytes after the NUL
                extras["rw_texture"][key] = text.raw.hex()
    name = tex.name.text if tex is not None and tex.name.text else f"{clump_name}_material{slot}"
    return MaterialInfo(name, tuple(m.color), None if tex is None else tex.name.text, extras)
