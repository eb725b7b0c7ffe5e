"""RenderWare clumps built in code, for what the real-file corpus lacks.

The corpus has two static PC clumps and no skinned ped. These builders make
:class:`dff.DffFile` objects with this package's writer (all numpy, no
per-vertex loops):

- :func:`skinned_ped`: a cylinder "ped" skinned to a branching bone tree
  (HAnim push/pop flags), 4 weights per vertex sorted and normalised, in the
  skin layout of the chosen version (old for GTA III, new for VC/SA), with
  optional non-zero split data, several UV sets, prelit colours, morph
  targets, triangle strips in the Bin Mesh PLG, unknown plugin chunks in
  every extension, a turned frame for the atomic (as stock GTA SA peds have)
  and bone frames listed otherwise than the HAnim nodes.
- :func:`static_clump`: several atomics on a frame hierarchy, no skin.
- :func:`gta_ped` and :func:`gta_map_prop`: what real GTA files have and the
  generic builders do not: a skinned atomic on a bone frame (not the clump's
  root), triangle material IDs all 0 while the Bin Mesh splits the materials,
  zero-area triangles at a seam, equal weights and zero-weight slots with
  non-zero bone indices, texture names with bytes after the NUL; a map prop
  with 2d effects, night vertex colours and a breakable model.
"""

from __future__ import annotations

import numpy as np

from ..io_formats.renderware.chunks import RawChunk
from ..io_formats.renderware.clump_export import ExportClump, ExportMesh, export_clump
from ..io_formats.renderware.clump_import import FrameNode, MaterialInfo
from ..io_formats.renderware.dff import DffFile
from ..io_formats.renderware.geometry import TRISTRIP, BinMesh, strip_triangles
from ..io_formats.renderware.gta import (
    BREAKABLE,
    NIGHT_COLORS,
    TWO_DFX,
    breakable_payload,
    night_colors_payload,
    two_dfx_payload,
)
from ..io_formats.renderware.materials import Text
from ..io_formats.renderware.skin import SplitData
from ..io_formats.scene import ColorSet, Mesh, MorphTarget, Skeleton, Skin, UVSet
from ..io_formats.transforms import compose_trs, world_from_local

UNKNOWN_PLUGIN = 0x0253F2F0  # a vendor ID no reader here knows


#: The rest transform of a turned atomic frame: (x, y, z) -> (y, z, x), 0.5 m up.
TURNED_FRAME = np.array(
    [[0.0, 0.0, 1.0, 0.0], [1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.5], [0.0, 0.0, 0.0, 1.0]]
)


def _axis_quat(axis: np.ndarray, angle: np.ndarray) -> np.ndarray:
    axis = axis / np.linalg.norm(axis, axis=-1, keepdims=True)
    half = 0.5 * angle[..., None]
    return np.concatenate([np.cos(half), np.sin(half) * axis], axis=-1)


def ped_skeleton(n_bones: int, identity_root: bool = False) -> Skeleton:
    """A branching tree in depth-first order: a chain, and every 5th bone a new
    branch off bone 1 (so HAnim needs push and pop flags)."""
    idx = np.arange(n_bones)
    parents = np.where(idx % 5 == 0, 1, idx - 1)
    parents[0] = -1
    if n_bones > 1:
        parents[1] = 0
    branch_start = (idx % 5 == 0) & (idx > 1)
    angle = 2.0 * np.pi * (idx // 5) / 7.0
    t = np.zeros((n_bones, 3))
    t[:, 2] = 0.12
    t[branch_start, 0] = 0.05 * np.cos(angle[branch_start])
    t[branch_start, 1] = 0.05 * np.sin(angle[branch_start])
    t[0] = (0.0, 0.0, 0.1)
    axis = np.stack([np.sin(idx * 0.7), np.cos(idx * 1.3), np.ones(n_bones)], axis=1)
    q = _axis_quat(axis, 0.05 * ((idx % 3) - 1.0))
    if identity_root:
        t[0], q[0] = 0.0, (1.0, 0.0, 0.0, 0.0)
    s = np.ones((n_bones, 3))
    names = ["Root"] + [f"Bone{i:02d}" for i in range(1, n_bones)]
    world = world_from_local(compose_trs(t, q, s), parents)
    extras = [{"rw_bone_id": int(i * 3 + (i % 2))} for i in idx]
    return Skeleton(names, parents.astype(np.int32), t, q, s, np.linalg.inv(world), extras)


def ped_mesh(
    skeleton: Skeleton,
    rings: int,
    segments: int,
    uv_sets: int,
    prelit: bool,
    morphs: int,
    span: tuple[float, float] = (0.0, 1.0),
) -> Mesh:
    """The part ``span`` (fractions of the height) of the ped's cylinder."""
    world = skeleton.world_rest()
    top = float(world[:, 2, 3].max()) + 0.05
    z = np.linspace(span[0] * top, span[1] * top, rings)
    a = np.linspace(0.0, 2.0 * np.pi, segments + 1)
    zz, aa = np.meshgrid(z, a, indexing="ij")
    radius = 0.15 + 0.03 * np.sin(zz * 5.0)
    pos = np.stack([radius * np.cos(aa), radius * np.sin(aa), zz], axis=-1).reshape(-1, 3)
    nrm = np.stack([np.cos(aa), np.sin(aa), np.zeros_like(aa)], axis=-1).reshape(-1, 3)
    nv = len(pos)
    r0 = np.arange(rings - 1)[:, None] * (segments + 1)
    c0 = np.arange(segments)[None, :]
    v00 = (r0 + c0).reshape(-1)
    v01, v10 = v00 + 1, v00 + segments + 1
    v11 = v10 + 1
    tris = np.stack([np.stack([v00, v01, v11], 1), np.stack([v00, v11, v10], 1)], 1).reshape(-1, 3)
    corners = tris.reshape(-1).astype(np.int32)
    mats = (pos[tris[:, 0], 2] > top * 0.5).astype(np.int32)
    mesh = Mesh(
        "ped", pos.astype(np.float32), corners, np.arange(0, len(corners), 3, dtype=np.int32), mats
    )
    mesh.materials = ["skin", "cloth"]
    mesh.normals = nrm[corners].astype(np.float32)
    u = (aa / (2.0 * np.pi)).reshape(-1)
    v = (zz / top).reshape(-1)
    for k in range(uv_sets):
        uv = np.stack([u * (k + 1), v + 0.25 * k], axis=1)[corners]
        mesh.uv_sets.append(UVSet("UVMap" if k == 0 else f"UVMap{k}", uv.astype(np.float32)))
    if prelit:
        col = np.stack([u, v, 1.0 - v, np.full(nv, 200.0 / 255.0)], axis=1)
        col = np.rint(col * 255.0) / 255.0
        mesh.colors.append(ColorSet("prelit", col[corners].astype(np.float32)))
    heads = world[:, :3, 3]
    d = np.linalg.norm(pos[:, None, :] - heads[None, :, :], axis=2)
    near = np.argsort(d, axis=1, kind="stable")[:, :4]
    w = 1.0 / (np.take_along_axis(d, near, 1) + 0.02) ** 2
    w /= w.sum(axis=1, keepdims=True)
    mesh.skin = Skin(near.astype(np.int32), w.astype(np.float32))
    for m in range(morphs):
        off = np.zeros((nv, 3), np.float32)
        off[:, 0] = 0.02 * (m + 1) * np.sin(pos[:, 2] * (3 + m))
        mesh.morphs.append(MorphTarget(f"morph{m + 1}", off))
    return mesh


def skinned_ped(
    target: str = "SA",
    n_bones: int = 32,
    rings: int = 24,
    segments: int = 16,
    uv_sets: int = 1,
    prelit: bool = False,
    morphs: int = 0,
    split: bool = False,
    strips: bool = False,
    unknown: bool = False,
    parts: int = 1,
    root_frame: bool = True,
    turned_frame: bool = False,
    breadth_first: bool = False,
) -> DffFile:
    """A skinned clump: frame 0 (the ped) holds the atomics, frames 1.. are the bones.

    ``parts`` > 1 cuts the body into that many atomics (of ``rings`` rings each)
    sharing the skeleton: a geometry holds at most 65535 vertices. Without
    ``root_frame`` the frames are the bones only and the atomics hang from the
    root bone (whose transform is then the identity). ``turned_frame`` turns and
    lifts the atomics' frame by :data:`TURNED_FRAME` (frame 0, or without
    ``root_frame`` the root bone, as stock GTA SA peds have): the ped stands
    turned by it, skinned as librw skins (``boneWorld @ inverseBind``), so
    without ``root_frame`` the vertices and inverse bind matrices are turned with
    the bones (they are relative to the clump, not to the atomic's frame).
    ``breadth_first`` lists the bone frames level by level (as the frames of GTA's
    peds are not in HAnim node order): the HAnim hierarchy keeps its depth-first
    node order, so a .anm's keys (node order) no longer follow the frames.
    """
    skeleton = ped_skeleton(n_bones, identity_root=not root_frame)
    meshes = [
        ped_mesh(skeleton, rings, segments, uv_sets, prelit, morphs, (k / parts, (k + 1) / parts))
        for k in range(parts)
    ]
    if turned_frame and not root_frame:
        turn = TURNED_FRAME
        skeleton.inverse_bind = np.linalg.inv(turn @ skeleton.world_rest())
        for m in meshes:
            m.positions = (m.positions @ turn[:3, :3].T + turn[:3, 3]).astype(np.float32)
            m.normals = (m.normals @ turn[:3, :3].T).astype(np.float32)
            for morph in m.morphs:
                morph.position_offsets = (morph.position_offsets @ turn[:3, :3].T).astype(
                    np.float32
                )
    first = 1 if root_frame else 0
    frames = [FrameNode("ped", -1, np.eye(4))] if root_frame else []
    local = compose_trs(skeleton.local_translation, skeleton.local_rotation, skeleton.local_scale)
    if turned_frame and root_frame:
        frames[0].matrix = TURNED_FRAME.copy()
    order = list(range(len(skeleton)))
    if breadth_first:
        depth = np.zeros(len(skeleton), np.int64)
        for i, p in enumerate(skeleton.parents.tolist()):  # parents come first
            depth[i] = depth[p] + 1 if p >= 0 else 0
        order = np.lexsort((np.arange(len(skeleton)), depth)).tolist()
    place = {b: k + first for k, b in enumerate(order)}
    for i in order:
        p = int(skeleton.parents[i])
        parent = (0 if root_frame else -1) if p < 0 else place[p]
        frames.append(FrameNode(skeleton.names[i], parent, local[i], bone=i))
    materials = [
        MaterialInfo("skin", (255, 220, 200, 255), "ped_skin"),
        MaterialInfo("cloth", (40, 60, 200, 255), None),
    ]
    data = ExportClump(frames, [ExportMesh(m, 0, materials) for m in meshes], skeleton)
    if turned_frame and not root_frame:
        data.skeleton_offset = TURNED_FRAME.copy()
    dff, _ = export_clump(data, target, "ALL")
    geo = dff.clump.geometries()[0]
    if split:
        _add_split(geo.skin, n_bones)
    if strips:
        _to_strips(geo, rings, segments)
    if unknown:
        _add_unknown(dff)
    return dff


def _add_split(skin, n_bones: int) -> None:
    if skin.split is None:
        raise ValueError("split data needs the new skin layout (VC or SA)")
    half = n_bones // 2
    skin.split = SplitData(
        bone_limit=max(half, 1),
        num_meshes=2,
        num_rle=3,
        remap=np.arange(n_bones, dtype=np.uint8)[::-1].copy(),
        meshes=np.array([[0, 2], [2, 1]], np.uint8),
        rle=np.array([[0, half], [half, n_bones - half], [0, 1]], np.uint8),
    )


def _to_strips(geo, rings: int, segments: int) -> None:
    """One strip per material made of ring rows joined by degenerate triangles."""
    row = segments + 1
    meshes = []
    tri_parts, mat_parts = [], []
    for mat in (0, 1):
        rows = [j for j in range(rings - 1) if (j >= (rings - 1) // 2) == bool(mat)]
        parts = []
        for j in rows:
            lower = np.arange(j * row, (j + 1) * row)
            s = np.stack([lower + row, lower], axis=1).reshape(-1)
            if parts:
                parts.append(np.array([parts[-1][-1], s[0]]))
            parts.append(s)
        if not parts:
            continue
        strip = np.concatenate(parts).astype(np.uint32)
        meshes.append((mat, strip))
        t = strip_triangles(strip)
        tri_parts.append(t)
        mat_parts.append(np.full(len(t), mat))
    geo.extension.items = [
        BinMesh(geo.stamp, 1, meshes) if isinstance(i, BinMesh) else i for i in geo.extension.items
    ]
    geo.triangles = np.concatenate(tri_parts).astype(np.uint16)
    geo.tri_materials = np.concatenate(mat_parts).astype(np.uint16)
    geo.flags |= TRISTRIP


def _add_unknown(dff: DffFile) -> None:
    clump = dff.clump
    stamp = clump.stamp
    blob = bytes(range(7))
    fl = clump.frame_list
    fl.extensions[0].items.append(RawChunk(UNKNOWN_PLUGIN, stamp, blob))  # last on frame 0
    fl.extensions[-1].items.insert(0, RawChunk(UNKNOWN_PLUGIN + 1, stamp, b"frame"))
    geo = clump.geometries()[0]
    geo.extension.items.insert(1, RawChunk(UNKNOWN_PLUGIN + 2, stamp, blob * 3))
    mat = geo.material_list.materials[0]
    mat.extension.items.append(RawChunk(0x120, stamp, np.array([0], "<u4").tobytes()))
    if mat.texture is not None:
        mat.texture.extension.items.append(RawChunk(UNKNOWN_PLUGIN + 3, stamp, b"tex"))
    clump.atomics[0].extension.items.append(RawChunk(UNKNOWN_PLUGIN + 4, stamp, b""))
    clump.items[-1].items.append(RawChunk(UNKNOWN_PLUGIN + 5, stamp, blob))
    dff.chunks.insert(0, RawChunk(0x2B, stamp, np.array([0], "<u4").tobytes()))
    dff.trailing = bytes(20)


def static_clump(target: str = "SA", atomics: int = 3, uv_sets: int = 2) -> DffFile:
    """Several unskinned atomics, each on its own frame under a root frame, with
    prelit colours, ``uv_sets`` UV sets and one morph target on the first."""
    frames = [FrameNode("root", -1, np.eye(4))]
    meshes = []
    for k in range(atomics):
        skel = ped_skeleton(2)
        mesh = ped_mesh(skel, 4 + k, 6 + k, uv_sets, True, 1 if k == 0 else 0)
        mesh.skin = None
        mesh.name = f"part{k}"
        m = np.eye(4)
        m[:3, 3] = (0.5 * k, 0.0, 0.1 * k)
        frames.append(FrameNode(f"part{k}", 0, m))
        mats = [
            MaterialInfo("a", (255, 255, 255, 255), f"tex{k}"),
            MaterialInfo("b", (10, 20, 30, 255), None),
        ]
        meshes.append(ExportMesh(mesh, k + 1, mats))
    dff, _ = export_clump(ExportClump(frames, meshes), target, "ALL")
    return dff


def _rotation_z(angle: float, translation: tuple[float, float, float]) -> np.ndarray:
    m = np.eye(4)
    c, s = np.cos(angle), np.sin(angle)
    m[:2, :2] = [[c, -s], [s, c]]
    m[:3, 3] = translation
    return m


def gta_ped(target: str = "SA", n_bones: int = 16) -> DffFile:
    """A ped as GTA's files have them (see the module's text): frame 0 is the clump's
    root, frame 1 the root bone (turned and lifted), and the atomic hangs on frame 1."""
    skeleton = ped_skeleton(n_bones, identity_root=True)
    rings, segments = 12, 10
    mesh = ped_mesh(skeleton, rings, segments, 1, False, 0)
    row = segments + 1
    seam = np.arange(rings) * row
    mesh.positions[seam + segments] = mesh.positions[seam]  # the seam's two columns meet
    # zero-area triangles along the seam (two of their corners at one position)
    degenerate = np.stack([seam[:-1], seam[1:], seam[:-1] + segments], axis=1).reshape(-1)
    per_vertex = [np.zeros((len(mesh.positions), 3), np.float32)]
    per_vertex += [np.zeros((len(mesh.positions), 2), np.float32) for _ in mesh.uv_sets]
    for a, corner in zip(per_vertex, [mesh.normals, *(u.uv for u in mesh.uv_sets)], strict=True):
        a[mesh.corner_verts] = corner
    mesh.corner_verts = np.concatenate([mesh.corner_verts, degenerate]).astype(np.int32)
    mesh.face_starts = np.arange(0, len(mesh.corner_verts), 3, dtype=np.int32)
    mesh.face_materials = np.concatenate(
        [mesh.face_materials, np.zeros(len(degenerate) // 3, np.int32)]
    )
    mesh.normals = per_vertex[0][mesh.corner_verts]
    for u, a in zip(mesh.uv_sets, per_vertex[1:], strict=True):
        u.uv = a[mesh.corner_verts]
    frames = [FrameNode("gta_ped", -1, np.eye(4))]
    local = compose_trs(skeleton.local_translation, skeleton.local_rotation, skeleton.local_scale)
    for i, name in enumerate(skeleton.names):
        p = int(skeleton.parents[i])
        frames.append(FrameNode(name, 0 if p < 0 else p + 1, local[i], bone=i))
    materials = [
        MaterialInfo("ped_skin", (255, 255, 255, 255), "ped_skin"),
        MaterialInfo("ped_cloth", (128, 128, 128, 255), "ped_cloth"),
    ]
    data = ExportClump(
        frames,
        [ExportMesh(mesh, 1, materials)],
        skeleton,
        skeleton_offset=_rotation_z(np.pi / 2, (0.0, 0.0, 0.1)),
    )
    dff, _ = export_clump(data, target)
    geo = dff.clump.geometries()[0]
    geo.tri_materials[:] = 0  # the Bin Mesh alone says which material a triangle has
    skin = geo.skin
    hi, lo = skin.indices[:, :2].max(axis=1), skin.indices[:, :2].min(axis=1)
    few = slice(0, 12)  # equal weights, the higher bone first; bone indices in empty slots
    skin.indices[few] = np.stack([hi[few], lo[few], np.full(12, 5), np.full(12, 9)], 1)
    skin.weights[few] = (0.5, 0.5, 0.0, 0.0)
    skin.used_bones = np.unique(skin.indices[skin.weights > 0]).astype(np.uint8)
    tex = geo.material_list.materials[0].texture
    tex.name = Text(tex.stamp, b"ped_skin\0\xcd\xcd\xcd")
    tex.mask = Text(tex.stamp, b"m\0\x12\x34")
    return dff


def gta_map_prop(target: str = "SA") -> DffFile:
    """A static map prop with GTA's geometry plugins: night vertex colours, 2d effects
    (two particle emitters) and a breakable model."""
    mesh = ped_mesh(ped_skeleton(2), 6, 8, 1, True, 0)
    mesh.skin = None
    mesh.name = "lamppost"
    mats = [
        MaterialInfo("pole", (200, 200, 200, 255), "pole_tex"),
        MaterialInfo("lamp", (255, 255, 200, 255), "lamp_tex"),
    ]
    dff, _ = export_clump(
        ExportClump([FrameNode("lamppost", -1, np.eye(4))], [ExportMesh(mesh, 0, mats)]), target
    )
    clump = dff.clump
    geo = clump.geometries()[0]
    stamp, nv = geo.stamp, geo.num_vertices
    k = np.arange(nv)
    night = np.stack([k * 7 % 256, k * 13 % 256, 255 - k % 256, np.full(nv, 255)], 1)
    fx = two_dfx_payload(
        [
            ((0.0, 0.0, 1.2), 1, b"lamp_glow".ljust(24, b"\0")),
            ((0.1, 0.0, 1.25), 1, b"smoke30m".ljust(24, b"\0")),
        ]
    )
    bpos = np.array([[0, 0, 0], [0.2, 0, 0], [0, 0.2, 0], [0, 0, 0.2]], np.float32)
    breakable = breakable_payload(
        bpos,
        bpos[:, :2] * 5.0,
        np.full((4, 4), 200, np.uint8),
        np.array([[0, 1, 2], [0, 2, 3]], np.uint16),
        np.array([0, 0], np.uint16),
        [("glass", "")],
        np.ones((1, 3), np.float32),
    )
    geo.extension.items += [
        RawChunk(NIGHT_COLORS, stamp, night_colors_payload(night.astype(np.uint8))),
        RawChunk(TWO_DFX, stamp, fx),
        RawChunk(BREAKABLE, stamp, breakable),
    ]
    return dff


def with_unused_vertex(f: DffFile, at: int | None = None) -> DffFile:
    """``f`` with one vertex more in its first geometry that no triangle uses (as some
    exporters leave one), inserted before vertex ``at`` (the middle by default): a
    copy of that vertex's values moved 0.25 along X, weighted like it; the triangles
    and the Bin Mesh renumbered to match."""
    geo = f.clump.geometries()[0]
    nv = geo.num_vertices
    at = nv // 2 if at is None else at

    def grown(a: np.ndarray | None, shift: tuple = ()) -> np.ndarray | None:
        if a is None:
            return None
        extra = a[at : at + 1].copy()
        if shift:
            extra = extra + np.array(shift, a.dtype)
        return np.concatenate([a[:at], extra, a[at:]]).astype(a.dtype)

    def renumbered(ix: np.ndarray) -> np.ndarray:
        return np.where(ix >= at, ix + 1, ix).astype(ix.dtype)

    geo.num_vertices = nv + 1
    geo.triangles = renumbered(geo.triangles)
    geo.colors = grown(geo.colors)
    geo.uvs = [grown(uv) for uv in geo.uvs]
    for mt in geo.morph_targets:
        mt.positions = grown(mt.positions, (0.25, 0.0, 0.0))
        mt.normals = grown(mt.normals)
        p = mt.positions
        c = (p.min(axis=0) + p.max(axis=0)) * 0.5
        mt.sphere = np.array([*c, np.sqrt(((p - c) ** 2).sum(axis=1).max())], np.float32)
    bm = geo.bin_mesh
    if bm is not None:
        bm.meshes = [(m, renumbered(ix)) for m, ix in bm.meshes]
    skin = geo.skin
    if skin is not None:
        skin.indices = grown(skin.indices)
        skin.weights = grown(skin.weights)
    for k, item in enumerate(geo.extension.items):
        if isinstance(item, RawChunk) and item.type == NIGHT_COLORS:
            night = np.frombuffer(item.payload, np.uint8, offset=4).reshape(nv, 4)
            extra = np.array([[1, 2, 3, 4]], np.uint8)  # unlike any neighbour
            night = np.concatenate([night[:at], extra, night[at:]])
            geo.extension.items[k] = RawChunk(
                item.type, item.stamp, item.payload[:4] + night.tobytes()
            )
    return f
