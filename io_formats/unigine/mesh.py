"""Unigine MESH files (``ms11``): read and write every field, byte for byte.

Layout (unigine-mesh-anim.txt, FORMAT-NOTES): magic, bounds, bones (name,
int16 parent), animation names, surface headers (name, bounds, morph target
names), magic, bind pose per bone, animation data (float translations and
scales), surface data (per morph target: positions per coordinate vertex and
tangent quaternions per surface vertex; weights per coordinate vertex; two UV
sets and colours per surface vertex; coordinate and triangle index lists whose
widths follow the counts they index), magic. "int" counts are compact integers.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..codec import Reader, Writer
from .common import (
    Bone,
    Frames,
    expect_magic,
    read_anim_bones,
    read_bind,
    read_bones,
    read_bounds,
    read_frames,
    read_indices,
    read_int,
    read_names,
    read_string,
    write_anim_bones,
    write_bones,
    write_bounds,
    write_frames,
    write_indices,
    write_names,
    write_string,
)

MAGIC = b"ms11"
MAX_INFLUENCES = 4  # bones per vertex, the specification's maximum


@dataclass
class MorphTarget:
    name: str
    positions: np.ndarray  # (V, 3) float32, one per coordinate vertex
    tangents: np.ndarray  # (S, 4) int16 quaternions x y z w (/ 32767), one per surface vertex


@dataclass
class Weights:
    """Per coordinate vertex a count, then that many (bone, weight) pairs, flattened."""

    counts: np.ndarray  # (V,) uint8
    bones: np.ndarray  # (sum counts,) int16
    values: np.ndarray  # (sum counts,) uint16, / 65535

    def __len__(self) -> int:
        return len(self.counts)

    def padded(self, k: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(V, K) bone indices and weights, unused slots 0."""
        n = len(self.counts)
        k = int(self.counts.max(initial=0)) if k is None else k
        owner = np.repeat(np.arange(n), self.counts)
        first = np.cumsum(self.counts.astype(np.int64)) - self.counts
        slot = np.arange(len(owner)) - np.repeat(first, self.counts)
        bones = np.zeros((n, k), np.int32)
        values = np.zeros((n, k), np.int64)
        bones[owner, slot] = self.bones
        values[owner, slot] = self.values
        return bones, values


def empty_weights() -> Weights:
    return Weights(np.zeros(0, np.uint8), np.zeros(0, np.int16), np.zeros(0, np.uint16))


@dataclass
class Surface:
    name: str
    bounds: np.ndarray  # (10,) float32
    targets: list[MorphTarget]  # target 0 is the base shape
    weights: Weights = field(default_factory=empty_weights)
    uv0: np.ndarray = field(default_factory=lambda: np.zeros((0, 2), np.float32))
    uv1: np.ndarray = field(default_factory=lambda: np.zeros((0, 2), np.float32))
    colors: np.ndarray = field(default_factory=lambda: np.zeros((0, 4), np.uint8))
    coords: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))  # per corner
    tris: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))  # per corner

    @property
    def n_coords(self) -> int:
        """Coordinate vertices: the positions of morph target 0."""
        return len(self.targets[0].positions) if self.targets else 0

    @property
    def n_vertices(self) -> int:
        """Surface vertices: what tangents, UVs and colours are given per."""
        return surface_vertex_count(self)


def surface_vertex_count(s: Surface) -> int:
    tangents = len(s.targets[0].tangents) if s.targets else 0
    return max(tangents, len(s.uv0), len(s.uv1), len(s.colors))


@dataclass
class MeshAnimation:
    name: str
    bones: np.ndarray  # (B,) int16 indices into the mesh's bones
    flag: int  # which components the animation stores (bits as in the frame flags)
    frames: Frames  # float32 translations and scales


@dataclass
class Mesh:
    bounds: np.ndarray  # (10,) float32
    bones: list[Bone]
    bind: np.ndarray  # (N, 10) float32: position, rotation x y z w, scale
    animations: list[MeshAnimation]
    surfaces: list[Surface]


def _read_surface_header(r: Reader, i: int) -> Surface:
    name = read_string(r, f"surface {i} name")
    bounds = read_bounds(r, f"surface {i}")
    names = read_names(r, f"surface {i} morph target")
    empty = np.zeros((0, 3), np.float32)
    return Surface(name, bounds, [MorphTarget(n, empty, np.zeros((0, 4), np.int16)) for n in names])


def _read_weights(r: Reader, n_bones: int, what: str) -> Weights:
    n = read_int(r, f"{what} weight count")
    r.count(n, 1, f"{what} weight")
    data, pos, end = r.data, r.pos, r.end
    starts = [0] * n
    for i in range(n):
        if pos >= end:
            break
        starts[i] = pos
        pos += 1 + 4 * data[pos]
    else:
        i = n
    if pos > end or i < n:
        last = starts[i - 1] if i else pos
        raise r.error(f"{what}: weight {max(i - 1, 0)} of {n} runs past the end", last)
    r.pos = pos
    st = np.array(starts, np.int64)
    buf = np.frombuffer(data, np.uint8)
    counts = buf[st].copy() if n else np.zeros(0, np.uint8)
    over = np.nonzero(counts > MAX_INFLUENCES)[0]
    if len(over):
        i = int(over[0])
        raise r.error(
            f"{what}: weight {i} has {int(counts[i])} bones (at most {MAX_INFLUENCES})",
            int(st[i]),
        )
    c64 = counts.astype(np.int64)
    first = np.repeat(st + 1, c64)
    within = np.arange(len(first)) - np.repeat(np.cumsum(c64) - c64, c64)
    at = first + 4 * within
    bones = buf[at[:, None] + np.arange(2)].view("<i2").reshape(-1).astype(np.int16)
    values = buf[at[:, None] + np.arange(2, 4)].view("<u2").reshape(-1).astype(np.uint16)
    bad = np.nonzero((bones < 0) | (bones >= n_bones))[0]
    if len(bad):
        j = int(bad[0])
        raise r.error(
            f"{what}: weight bone index {int(bones[j])} out of range for {n_bones} bones",
            int(at[j]),
        )
    return Weights(counts, bones, values)


def _write_weights(w: Writer, weights: Weights) -> None:
    counts = np.asarray(weights.counts, np.uint8)
    w.compact_int(len(counts))
    c64 = counts.astype(np.int64)
    sizes = 1 + 4 * c64
    starts = np.cumsum(sizes) - sizes
    buf = np.zeros(int(sizes.sum()), np.uint8)
    buf[starts] = counts
    pairs = np.zeros(len(weights.bones), np.dtype([("b", "<i2"), ("w", "<u2")]))
    pairs["b"] = weights.bones
    pairs["w"] = weights.values
    within = np.arange(len(pairs)) - np.repeat(np.cumsum(c64) - c64, c64)
    at = np.repeat(starts + 1, c64) + 4 * within
    buf[at[:, None] + np.arange(4)] = pairs.view(np.uint8).reshape(-1, 4)
    w.bytes(buf.tobytes())


def _read_surface_data(r: Reader, s: Surface, i: int, n_bones: int) -> None:
    what = f"surface {i} ({s.name!r})"
    for j, t in enumerate(s.targets):
        start = r.pos
        n = read_int(r, f"{what} morph target {j} vertex count")
        r.count(n, 12, f"{what} morph target {j} vertex")
        t.positions = r.array("<f4", (n, 3), f"{what} morph target {j} vertices")
        if j and n != len(s.targets[0].positions):
            raise r.error(
                f"{what}: morph target {j} has {n} vertices, target 0 has "
                f"{len(s.targets[0].positions)}",
                start,
            )
        n = read_int(r, f"{what} morph target {j} tangent count")
        r.count(n, 8, f"{what} morph target {j} tangent")
        t.tangents = r.array("<i2", (n, 4), f"{what} morph target {j} tangents")
    start = r.pos
    s.weights = _read_weights(r, n_bones, what)
    if len(s.weights) not in (0, s.n_coords):
        raise r.error(
            f"{what}: {len(s.weights)} weights for {s.n_coords} coordinate vertices", start
        )
    for attr, width, dtype, label in (
        ("uv0", 2, "<f4", "texture coordinate (set 1)"),
        ("uv1", 2, "<f4", "texture coordinate (set 2)"),
        ("colors", 4, "<u1", "colour"),
    ):
        n = read_int(r, f"{what} {label} count")
        r.count(n, width * np.dtype(dtype).itemsize, f"{what} {label}")
        setattr(s, attr, r.array(dtype, (n, width), f"{what} {label}s"))
    n_sv = s.n_vertices
    for j, t in enumerate(s.targets):
        if len(t.tangents) not in (0, n_sv):
            raise r.error(f"{what}: morph target {j} has {len(t.tangents)} tangents, not {n_sv}")
    for attr, label in (("uv0", "UV set 1"), ("uv1", "UV set 2"), ("colors", "colours")):
        if len(getattr(s, attr)) not in (0, n_sv):
            raise r.error(f"{what}: {len(getattr(s, attr))} {label}, not {n_sv}")
    start = r.pos
    s.coords = read_indices(r, s.n_coords, f"{what} coordinate index")
    s.tris = read_indices(r, n_sv, f"{what} triangle index")
    if len(s.coords) != len(s.tris) or len(s.tris) % 3:
        raise r.error(
            f"{what}: {len(s.coords)} coordinate and {len(s.tris)} triangle indices "
            "(they must be equal and a multiple of 3)",
            start,
        )


def read(data: bytes) -> Mesh:
    """Parse a whole ms11 file; a FormatError names the offset of what is wrong."""
    r = Reader(data)
    expect_magic(r, MAGIC, "mesh")
    bounds = read_bounds(r, "mesh")
    bones = read_bones(r)
    anim_names = read_names(r, "animation")
    n = read_int(r, "surface count")
    r.count(n, 42, "surface")
    surfaces = [_read_surface_header(r, i) for i in range(n)]
    r.expect(MAGIC, "second ms11 magic")
    bind = read_bind(r, len(bones))
    animations = []
    for i, name in enumerate(anim_names):
        what = f"animation {i} ({name!r})"
        idx = read_anim_bones(r, len(bones), what)
        flag = r.u8()
        frames = read_frames(r, len(idx), "<f4", what)
        animations.append(MeshAnimation(name, idx, flag, frames))
    for i, s in enumerate(surfaces):
        _read_surface_data(r, s, i, len(bones))
    r.expect(MAGIC, "closing ms11 magic")
    if not r.at_end():
        raise r.error(f"{r.remaining} bytes after the closing ms11 magic")
    return Mesh(bounds, bones, bind, animations, surfaces)


def write(mesh: Mesh) -> bytes:
    w = Writer()
    w.bytes(MAGIC)
    write_bounds(w, mesh.bounds)
    write_bones(w, mesh.bones)
    write_names(w, [a.name for a in mesh.animations])
    w.compact_int(len(mesh.surfaces))
    for s in mesh.surfaces:
        write_string(w, s.name)
        write_bounds(w, s.bounds)
        write_names(w, [t.name for t in s.targets])
    w.bytes(MAGIC)
    w.array(np.asarray(mesh.bind).reshape(len(mesh.bones), 10), "<f4")
    for a in mesh.animations:
        write_anim_bones(w, a.bones)
        w.u8(a.flag)
        write_frames(w, a.frames, "<f4")
    for s in mesh.surfaces:
        for t in s.targets:
            w.compact_int(len(t.positions))
            w.array(t.positions, "<f4")
            w.compact_int(len(t.tangents))
            w.array(t.tangents, "<i2")
        _write_weights(w, s.weights)
        for arr, dtype in ((s.uv0, "<f4"), (s.uv1, "<f4"), (s.colors, "<u1")):
            w.compact_int(len(arr))
            w.array(arr, dtype)
        write_indices(w, s.coords, s.n_coords)
        write_indices(w, s.tris, s.n_vertices)
    w.bytes(MAGIC)
    return w.getvalue()
