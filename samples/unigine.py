"""Unigine MESH and ANIM files built in code, strictly from the specification.

There are no Unigine files in the corpus, so these builders make native
:class:`mesh.Mesh` / :class:`anim.AnimFile` objects covering every case the
tests need: static and skinned meshes, several surfaces, several morph targets
(a different set per surface), a second UV set, colours, 8-, 16- and 32-bit
index widths, bones listed before their parents, non-unit bind scales (0.216
and 0.25, as on real characters), embedded animations whose frames store only
what changed, and ANIM files with flag bytes 15 and 127. All vectorised numpy.

Geometry: each surface is a tube along +Z (``rings`` x ``segments``
coordinate vertices). The UV seam doubles one column of surface vertices, so a
surface has more surface vertices than coordinate vertices, as real files do.
Tangent quaternions turn +Z into the outward normal with +X along increasing
u; the sign of w is the binormal's handedness (FORMAT-NOTES).
"""

from __future__ import annotations

import numpy as np

from ..io_formats.codec.quantize import dequantize_box, normalize_weights_to_sum, quantize_box
from ..io_formats.posing import quat_multiply
from ..io_formats.transforms import matrix_to_quat
from ..io_formats.unigine import anim, mesh
from ..io_formats.unigine.anim_convert import quat_to_short
from ..io_formats.unigine.common import Bone, Frames, change_flags, compute_bounds

SCALES = (0.25, 0.216)


def _axis_angle(axis, angle) -> np.ndarray:
    axis = np.asarray(axis, np.float64)
    axis = axis / np.linalg.norm(axis, axis=-1, keepdims=True)
    angle = np.asarray(angle, np.float64)[..., None]
    return np.concatenate([np.cos(angle / 2), axis * np.sin(angle / 2)], axis=-1)


def tube_surface(
    name: str,
    rings: int,
    segments: int,
    z0: float = 0.0,
    height: float = 2.0,
    radius: float = 0.3,
    morphs: tuple[str, ...] = (),
    uv1: bool = False,
    colors: bool = False,
    mirrored: bool = False,
) -> mesh.Surface:
    """One tube surface (weights added by the caller)."""
    theta = np.linspace(0, 2 * np.pi, segments, endpoint=False)
    z = z0 + np.linspace(0, height, rings)
    ring_r = radius * (1 - 0.3 * np.linspace(0, 1, rings))
    c, s = np.cos(theta), np.sin(theta)
    pos = np.stack(
        [
            ring_r[:, None] * c[None],
            ring_r[:, None] * s[None],
            np.broadcast_to(z[:, None], (rings, segments)),
        ],
        axis=-1,
    ).reshape(-1, 3)
    # surface vertices: segments + 1 columns (the seam column repeats column 0)
    col = np.arange(segments + 1)
    sv_coord = (np.arange(rings)[:, None] * segments + col[None] % segments).reshape(-1)
    u = np.broadcast_to(col[None] / segments, (rings, segments + 1)).reshape(-1)
    v = np.broadcast_to(np.linspace(0, 1, rings)[:, None], (rings, segments + 1)).reshape(-1)
    sv_theta = theta[col % segments]
    normal = np.stack([np.cos(sv_theta), np.sin(sv_theta), np.zeros_like(sv_theta)], -1)
    normal = np.repeat(normal[None], rings, 0).reshape(-1, 3)
    tangent = np.stack([-normal[:, 1], normal[:, 0], np.zeros(len(normal))], -1)
    basis = np.stack([tangent, np.cross(normal, tangent), normal], axis=-1)
    q = matrix_to_quat(basis)
    if mirrored:
        q = -q
    tangents = quat_to_short(q)
    # two triangles per quad, counter-clockwise seen from outside
    r0 = np.arange(rings - 1)[:, None] * (segments + 1)
    a = (r0 + np.arange(segments)[None]).reshape(-1)
    b, cc, d = a + 1, a + segments + 2, a + segments + 1
    tris = np.stack([a, b, cc, a, cc, d], -1).reshape(-1)
    targets = [mesh.MorphTarget("base", pos.astype(np.float32), tangents)]
    # the first morph target tilts its normals about the tangent; the others keep the
    # base tangents (both happen in real files)
    tilt = quat_to_short(quat_multiply(q, _axis_angle([1.0, 0, 0], 0.2)))
    for k, morph in enumerate(morphs):
        bulge = 1 + 0.2 * (k + 1) * np.sin(np.linspace(0, np.pi, rings))[:, None]
        moved = pos.reshape(rings, segments, 3).copy()
        moved[..., :2] *= bulge[..., None]
        targets.append(
            mesh.MorphTarget(
                morph, moved.reshape(-1, 3).astype(np.float32), tilt if k == 0 else tangents
            )
        )
    surf = mesh.Surface(
        name,
        compute_bounds(pos),
        targets,
        uv0=np.stack([u, v], -1).astype(np.float32),
        coords=sv_coord[tris].astype(np.int64),
        tris=tris.astype(np.int64),
    )
    if uv1:
        surf.uv1 = np.stack([v * 0.5, u * 0.25 + 0.5], -1).astype(np.float32)
    if colors:
        n = len(u)
        surf.colors = np.stack(
            [
                (u * 255).astype(np.uint8),
                (v * 255).astype(np.uint8),
                np.full(n, 128, np.uint8),
                (np.arange(n) % 256).astype(np.uint8),
            ],
            -1,
        )
    return surf


def chain_skeleton(n_bones: int, length: float, parents_last: bool = True):
    """Bones along +Z; with ``parents_last`` the file lists them leaf first, root last,
    so every bone comes before its parent. Returns bones, bind (N, 10), and the
    bone index of each chain position."""
    chain_pos = np.arange(n_bones)
    file_index = (n_bones - 1 - chain_pos) if parents_last else chain_pos
    bones: list[Bone] = [Bone("", -1)] * n_bones
    bind = np.zeros((n_bones, 10), np.float32)
    step = length / max(n_bones - 1, 1)
    for k in range(n_bones):
        i = int(file_index[k])
        parent = int(file_index[k - 1]) if k else -1
        name = "root" if k == 0 else f"bone_{k:02d}"
        bones[i] = Bone(name, parent)
        q = _axis_angle([1.0, 0.5, 0.0], 0.1 * k) if k else _axis_angle([0, 0, 1.0], 0.0)
        scale = SCALES[0] if k == 0 else (SCALES[1] if k == n_bones // 2 else 1.0)
        parent_scale = 1.0 if k == 0 else (SCALES[0] if k == 1 else 1.0)
        bind[i, 0:3] = (0.0, 0.0, 0.0 if k == 0 else step / parent_scale)
        bind[i, 3:7] = (*q[1:], q[0])
        bind[i, 7:10] = scale
    return bones, bind, file_index


def _chain_weights(positions: np.ndarray, file_index: np.ndarray, length: float) -> mesh.Weights:
    """1 to 4 influences per vertex (varying counts), summing to 65535."""
    n_bones = len(file_index)
    z = positions[:, 2] / max(length, 1e-9) * (n_bones - 1)
    k = 4
    near = np.clip(
        np.floor(z).astype(np.int64)[:, None] + np.arange(-1, k - 1)[None], 0, n_bones - 1
    )
    dist = np.abs(z[:, None] - near)
    w = np.maximum(2.5 - dist, 0.0)
    count = 1 + (np.arange(len(z)) % k)  # 1, 2, 3, 4 influences in turn
    w[np.arange(k)[None] >= count[:, None]] = 0.0
    dup = np.zeros_like(w, bool)
    for a in range(1, k):
        dup[:, a] = (near[:, :a] == near[:, a : a + 1]).any(axis=1)
    w[dup] = 0.0
    w[w.sum(axis=1) == 0, 0] = 1.0
    q = normalize_weights_to_sum(w, 65535)
    keep = q > 0
    counts = keep.sum(axis=1).astype(np.uint8)
    return mesh.Weights(counts, file_index[near[keep]].astype(np.int16), q[keep].astype(np.uint16))


def _animated_values(bind: np.ndarray, bone_idx: np.ndarray, n_frames: int, seed: int):
    """Dense local translation, rotation (w x y z) and scale per frame and bone.

    Rotations change every frame, translations of the first bone on even frames only,
    scales only from the middle frame on: so frames store only some components.
    """
    rng = np.random.default_rng(seed)
    b = bind[bone_idx].astype(np.float64)
    t = np.repeat(b[None, :, 0:3], n_frames, 0)
    rest_q = np.concatenate([b[:, 6:7], b[:, 3:6]], -1)
    f = np.arange(n_frames)[:, None]
    axes = rng.normal(size=(len(bone_idx), 3))
    spin = _axis_angle(
        np.broadcast_to(axes, (n_frames, len(bone_idx), 3)),
        np.broadcast_to(0.3 * np.sin(f / 3.0), (n_frames, len(bone_idx))),
    )
    q = quat_multiply(rest_q[None], spin)
    t[:, 0, 2] += 0.05 * (f[:, 0] // 2)
    s = np.repeat(b[None, :, 7:10], n_frames, 0)
    half = n_frames // 2
    s[half:, -1, :] *= 1.0 + 0.1 * (f[half:] - half + 1)
    return t, q, s


def embedded_animation(
    m: mesh.Mesh, name: str, n_frames: int, anim_flag: int = 0x7F, seed: int = 1
) -> mesh.MeshAnimation:
    """An animation of every bone with float translations and scales."""
    idx = np.arange(len(m.bones), dtype=np.int16)[::-1].copy()
    t, q, s = _animated_values(m.bind, idx, n_frames, seed)
    t32, s32 = t.astype(np.float32), s.astype(np.float32)
    q16 = quat_to_short(q)
    flags = change_flags(t32, q16, s32, anim_flag)
    return mesh.MeshAnimation(name, idx, anim_flag, Frames(flags, t32, q16, s32))


def skinned_mesh(
    n_bones: int = 6,
    rings: int = 8,
    segments: int = 10,
    surfaces: int = 2,
    morphs: tuple[str, ...] = ("bulge", "pinch"),
    animations: int = 2,
    n_frames: int = 12,
) -> mesh.Mesh:
    """A skinned character: several surfaces (the last one mirrored and with a subset
    of the morph targets), second UV set and colours on the first surface, bones
    listed before their parents, non-unit bind scales, embedded animations."""
    height = 2.0 * surfaces
    bones, bind, file_index = chain_skeleton(n_bones, height)
    surfs = []
    for i in range(surfaces):
        last = i == surfaces - 1 and surfaces > 1
        surf = tube_surface(
            f"surface_{i}",
            rings,
            segments,
            z0=2.0 * i,
            morphs=morphs[:1] if last else morphs,
            uv1=i == 0,
            colors=i == 0,
            mirrored=last,
        )
        surf.weights = _chain_weights(surf.targets[0].positions, file_index, height)
        surfs.append(surf)
    m = mesh.Mesh(
        compute_bounds(np.concatenate([s.targets[0].positions for s in surfs])),
        bones,
        bind,
        [],
        surfs,
    )
    m.animations = [
        embedded_animation(m, f"clip_{k}", n_frames, 0x7F if k == 0 else 0x0F, seed=k)
        for k in range(animations)
    ]
    return m


def static_mesh(surfaces: int = 2, rings: int = 4, segments: int = 6) -> mesh.Mesh:
    """No bones, no weights, no animations; one morph target (the base) per surface."""
    surfs = [
        tube_surface(f"static_{i}", rings, segments, z0=2.0 * i, uv1=i == 1)
        for i in range(surfaces)
    ]
    return mesh.Mesh(
        compute_bounds(np.concatenate([s.targets[0].positions for s in surfs])),
        [],
        np.zeros((0, 10), np.float32),
        [],
        surfs,
    )


def large_mesh(rings: int = 256, segments: int = 255, n_bones: int = 4) -> mesh.Mesh:
    """One big skinned surface: by default 65280 coordinate vertices (uint16 indices) and
    65536 surface vertices (int32 triangle indices); more rings make both int32."""
    bones, bind, file_index = chain_skeleton(n_bones, 2.0)
    surf = tube_surface("big", rings, segments)
    surf.weights = _chain_weights(surf.targets[0].positions, file_index, 2.0)
    return mesh.Mesh(surf.bounds.copy(), bones, bind, [], [surf])


def anim_file(
    m: mesh.Mesh, anim_flag: int = 0x7F, n_frames: int = 20, clips: int = 2
) -> anim.AnimFile:
    """An ANIM file for ``m``'s skeleton with ``clips`` animations, boxes fitted to the
    data, translations and scales quantised into them."""
    out = []
    for k in range(clips):
        idx = np.arange(len(m.bones), dtype=np.int16)
        if k:
            idx = idx[: max(1, len(idx) - 1)].copy()  # a clip that leaves one bone out
        t, q, s = _animated_values(m.bind, idx, n_frames, seed=10 + k)
        boxes = []
        quantised = []
        for values in (t, s):
            lo = values.reshape(-1, 3).min(axis=0).astype(np.float32)
            size = (values.reshape(-1, 3).max(axis=0) - lo).astype(np.float32)
            boxes += [lo, size]
            quantised.append(quantize_box(values, lo, size).astype(np.uint16))
        q16 = quat_to_short(q)
        flags = change_flags(quantised[0], q16, quantised[1], anim_flag)
        frames = Frames(flags, quantised[0], q16, quantised[1])
        out.append(anim.AnimClip(f"take_{k}", idx, *boxes, anim_flag, frames))
    bones = [mesh.Bone(b.name, b.parent) for b in m.bones]
    return anim.AnimFile(m.bounds.copy(), bones, m.bind.copy(), out)


def inexact_mesh(seed: int = 3) -> mesh.Mesh:
    """A skinned mesh holding what a Blender round trip cannot remake from Blender's
    data alone, as real files do: bounds looser than the tight ones (box grown, a
    sphere around another centre), weights whose ushorts do not survive float
    weights and re-normalising (they sum to less than 65535, and are uneven),
    zero-weight influences, and in surface 0 one coordinate vertex no triangle uses."""
    m = skinned_mesh(animations=0)
    rng = np.random.default_rng(seed)
    for s in m.surfaces:
        w = s.weights
        counts = np.maximum(w.counts, 2).astype(np.uint8)  # room for a zero influence
        n = int(counts.sum())
        first = np.cumsum(counts.astype(np.int64)) - counts
        values = rng.integers(1, 40000, n).astype(np.uint16)
        values[first + counts - 1] = 0  # each vertex's last influence weighs nothing
        bones = rng.permutation(len(m.bones))[np.arange(n) % len(m.bones)]
        s.weights = mesh.Weights(counts, bones.astype(np.int16), values)
        lo, hi = s.bounds[0:3] - 0.125, s.bounds[3:6] + 0.25
        s.bounds = np.concatenate([lo, hi, (lo + hi) / 2 + 0.0625, [np.linalg.norm(hi - lo)]])
        s.bounds = s.bounds.astype(np.float32)
    s = m.surfaces[0]
    lone = np.array([[0.0, 0.0, 0.5]], np.float32)  # inside the tube: no triangle uses it
    for t in s.targets:
        t.positions = np.concatenate([t.positions, lone + (0.01 if t is not s.targets[0] else 0)])
    w = s.weights
    s.weights = mesh.Weights(
        np.append(w.counts, np.uint8(1)),
        np.append(w.bones, np.int16(0)),
        np.append(w.values, np.uint16(65535)),
    )
    m.bounds = compute_bounds(np.concatenate([x.targets[0].positions for x in m.surfaces]))
    m.bounds[9] *= 1.5
    return m


def nub_anim_file(m: mesh.Mesh, n_frames: int = 10, anim_flag: int = 0x7F) -> anim.AnimFile:
    """An ANIM file for ``m``'s character whose skeleton header is not the mesh's, as
    real exports are: it leaves out the mesh's last chain bone and lists two "Nub"
    end bones the mesh lacks (one under a chain bone, one under the root); its
    clip animates every header bone, the Nubs included."""
    names = [b.name for b in m.bones]
    leaf = max(n for n in names if n.startswith("bone_"))
    keep = [i for i, n in enumerate(names) if n != leaf]
    place = {names[i]: k for k, i in enumerate(keep)}
    bones = [
        Bone(names[i], place[names[m.bones[i].parent]] if m.bones[i].parent >= 0 else -1)
        for i in keep
    ]
    bind = m.bind[keep]
    nubs = [("Bip01 Nub", names[m.bones[names.index(leaf)].parent]), ("Root Nub", "root")]
    nub_bind = np.tile(np.array([[0, 0, 0.1, 0, 0, 0, 1, 1, 1, 1]], np.float32), (len(nubs), 1))
    bones += [Bone(n, place[p]) for n, p in nubs]
    bind = np.concatenate([bind, nub_bind]).astype(np.float32)
    header = mesh.Mesh(m.bounds.copy(), bones, bind, [], [])
    a = anim_file(header, anim_flag=anim_flag, n_frames=n_frames, clips=1)
    return anim.AnimFile(m.bounds.copy(), bones, bind, a.animations)


def loose_box_anim_file(m: mesh.Mesh, n_frames: int = 12) -> anim.AnimFile:
    """An ANIM file whose boxes are not the tight ones a writer would fit, as real
    files' are: clip 0 stores everything in translation and scale boxes grown on
    every side; clip 1 stores no scale (flag 15) and leaves an empty scale box."""
    f = anim_file(m, n_frames=n_frames, clips=2)
    for c, flag in zip(f.animations, (0x7F, 0x0F), strict=True):
        fr = c.frames
        t = dequantize_box(fr.translation, c.translation_min, c.translation_size)
        s = dequantize_box(fr.scale, c.scale_min, c.scale_size)
        c.translation_min = (c.translation_min - 0.375).astype(np.float32)
        c.translation_size = (c.translation_size + 1.25).astype(np.float32)
        c.scale_min = (c.scale_min - 0.125).astype(np.float32)
        c.scale_size = (c.scale_size + 0.5).astype(np.float32)
        tq = quantize_box(t, c.translation_min, c.translation_size).astype(np.uint16)
        sq = quantize_box(s, c.scale_min, c.scale_size).astype(np.uint16)
        if flag == 0x0F:
            c.scale_min = np.zeros(3, np.float32)
            c.scale_size = np.zeros(3, np.float32)
            sq = np.zeros_like(sq)
        c.flag = flag
        c.frames = Frames(change_flags(tq, fr.rotation, sq, flag), tq, fr.rotation, sq)
    return f
