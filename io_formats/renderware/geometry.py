"""Geometry and GeometryList sections, and the Bin Mesh PLG."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import numpy as np

from ..codec import FormatError, Reader
from .chunks import (
    BIN_MESH_PLG,
    GEOMETRY,
    GEOMETRY_LIST,
    MATERIAL_LIST,
    SKIN_PLG,
    STRUCT,
    chunk_bytes,
    expect_chunk,
    finish,
    version_of,
)
from .extension import Extension, read_extension
from .materials import MaterialList, read_material_list
from .skin import Skin, read_skin

TRISTRIP = 0x01
POSITIONS = 0x02
TEXTURED = 0x04
PRELIT = 0x08
NORMALS = 0x10
LIGHT = 0x20
MODULATE = 0x40
TEXTURED2 = 0x80
NATIVE = 0x01000000


def uv_set_count(flags: int) -> int:
    n = (flags >> 16) & 0xFF
    if n == 0:
        n = 2 if flags & TEXTURED2 else (1 if flags & TEXTURED else 0)
    return n


@dataclass
class BinMesh:
    """Bin Mesh PLG: the triangles per material as lists (flags 0) or strips (1).

    ``meshes`` holds (material index, vertex indices) pairs, in file order.
    """

    stamp: int
    flags: int
    meshes: list[tuple[int, np.ndarray]]

    @property
    def strips(self) -> bool:
        return bool(self.flags & 1)

    def to_bytes(self) -> bytes:
        total = sum(len(ix) for _, ix in self.meshes)
        out = [np.array([self.flags, len(self.meshes), total], "<u4").tobytes()]
        for mat, ix in self.meshes:
            out.append(np.array([len(ix), mat], "<u4").tobytes())
            out.append(np.ascontiguousarray(ix, "<u4").tobytes())
        return chunk_bytes(BIN_MESH_PLG, self.stamp, b"".join(out))


def read_bin_mesh(r: Reader, stamp: int) -> BinMesh:
    """A Bin Mesh PLG of a geometry that is not platform-native (indices stored)."""
    flags, n, total = r.u32(), r.u32(), r.u32()
    r.count(n, 8, "bin mesh")
    r.count(total, 4, "bin mesh index")
    meshes, seen = [], 0
    for i in range(n):
        count, mat = r.u32(), r.u32()
        seen += count
        r.count(count, 4, f"bin mesh {i} index")
        meshes.append((mat, r.array("<u4", count, f"bin mesh {i} indices")))
    if seen != total:
        raise r.error(f"bin mesh: the meshes hold {seen} indices, the header says {total}")
    finish(r, "bin mesh PLG")
    return BinMesh(stamp, flags, meshes)


def bin_mesh_lists(tris: np.ndarray, mats: np.ndarray, n_slots: int, stamp: int) -> BinMesh:
    """A Bin Mesh PLG of triangle lists, one per used material, in triangle order."""
    mats = np.asarray(mats, np.int64)
    order = np.argsort(mats, kind="stable")
    counts = np.bincount(mats, minlength=n_slots)
    meshes, start = [], 0
    for m, c in enumerate(counts.tolist()):
        if c:
            meshes.append((m, tris[order[start : start + c]].reshape(-1).astype(np.uint32)))
        start += c
    return BinMesh(stamp, 0, meshes)


def bin_mesh_strips(tris: np.ndarray, mats: np.ndarray, n_slots: int, stamp: int) -> BinMesh:
    """A Bin Mesh PLG of triangle strips, one per used material (as the games' strip
    files have), each decoding (:func:`strip_triangles`) to exactly that material's
    triangles, winding and duplicates included. Triangles with a repeated corner
    draw nothing and a strip cannot hold them: they stay in the geometry's own
    triangle list only, as in a strip file."""
    tris = np.asarray(tris, np.int64).reshape(-1, 3)
    mats = np.asarray(mats, np.int64)
    drawn = (tris[:, 0] != tris[:, 1]) & (tris[:, 1] != tris[:, 2]) & (tris[:, 0] != tris[:, 2])
    meshes = []
    for m in range(n_slots):
        mine = tris[(mats == m) & drawn]
        if len(mine):
            meshes.append((m, stripify(mine).astype(np.uint32)))
    return BinMesh(stamp, 1, meshes)


def stripify(tris: np.ndarray) -> np.ndarray:
    """One triangle strip holding exactly ``tris`` (T, 3) (no repeated corners), each
    with its winding: greedy strips along shared edges, joined by degenerate
    triangles (the last index and the next strip's first repeated; once more when
    the next strip would start on an odd triangle and so be turned round, unless it
    is a lone triangle: that one is written turned round instead).

    The walk is sequential by nature (each step depends on the one before), so it is
    a Python loop over triangles; the edge lookup is built with numpy."""
    tris = np.asarray(tris, np.int64).reshape(-1, 3)
    n = len(tris)
    if not n:
        return np.zeros(0, np.int64)
    nv = int(tris.max()) + 1
    # every directed edge u -> v of a triangle, and the corner after v
    u = tris.reshape(-1)
    v = tris[:, [1, 2, 0]].reshape(-1)
    after = tris[:, [2, 0, 1]].reshape(-1)
    owner = np.repeat(np.arange(n), 3)
    key = u * nv + v
    order = np.argsort(key, kind="stable")
    keys, starts, counts = np.unique(key[order], return_index=True, return_counts=True)
    runs = dict(zip(keys.tolist(), zip(starts.tolist(), counts.tolist(), strict=True), strict=True))
    by_edge = owner[order].tolist()
    third = after[order].tolist()
    used = [False] * n
    rows = tris.tolist()

    def take(a: int, b: int, peek: bool = False) -> int | None:
        """An unused triangle with the directed edge a -> b (marked used unless
        ``peek``); its third corner."""
        run = runs.get(a * nv + b)
        if run is None:
            return None
        for i in range(run[0], run[0] + run[1]):
            if not used[by_edge[i]]:
                if not peek:
                    used[by_edge[i]] = True
                return third[i]
        return None

    out: list[int] = []
    for t in range(n):
        if used[t]:
            continue
        used[t] = True
        a, b, c = rows[t]
        # start on the corner whose opposite edge leads on to another triangle
        strip = next(
            (r for r in ([a, b, c], [b, c, a], [c, a, b]) if take(r[2], r[1], True) is not None),
            [a, b, c],
        )
        while True:
            p, q = strip[-2], strip[-1]
            # the next triangle is (p, q, x) at an even place, (q, p, x) at an odd one
            x = take(p, q) if len(strip) % 2 == 0 else take(q, p)
            if x is None:
                break
            strip.append(x)
        if out and len(out) % 2 and len(strip) == 3:  # a lone triangle at an odd place
            strip = [strip[1], strip[0], strip[2]]  # is turned round there: so turn it first
            out += [out[-1], strip[0]]
        elif out:
            out += [out[-1], strip[0]] if len(out) % 2 == 0 else [out[-1], strip[0], strip[0]]
        out += strip
    return np.array(out, np.int64)


def strip_triangles(strip: np.ndarray) -> np.ndarray:
    """Triangles (T, 3) of a triangle strip, alternate ones turned round, degenerate
    ones (two equal corners) dropped."""
    s = np.asarray(strip, np.int64)
    if len(s) < 3:
        return np.zeros((0, 3), np.int64)
    tri = np.stack([s[:-2], s[1:-1], s[2:]], axis=1)
    odd = np.arange(len(tri)) % 2 == 1
    tri[odd] = tri[odd][:, [1, 0, 2]]
    keep = (tri[:, 0] != tri[:, 1]) & (tri[:, 1] != tri[:, 2]) & (tri[:, 0] != tri[:, 2])
    return tri[keep]


def positions_fingerprint(targets: list[np.ndarray | None]) -> str:
    """A hash of every morph target's positions: while it holds, the file's bounding
    spheres still describe the mesh and are written back exactly."""
    h = hashlib.sha1()
    for p in targets:
        h.update(b"-" if p is None else np.ascontiguousarray(p, "<f4").tobytes())
    return h.hexdigest()


@dataclass
class MorphTarget:
    sphere: np.ndarray  # (4,) float32: centre x y z, radius
    positions: np.ndarray | None  # (V, 3) float32
    normals: np.ndarray | None  # (V, 3) float32
    present: tuple[int, int] = (1, 1)  # the stored has-positions / has-normals words

    def present_words(self) -> list[int]:
        """The stored words where they agree with the arrays, else 0/1."""
        out = []
        for word, arr in zip(self.present, (self.positions, self.normals), strict=True):
            out.append(word if bool(word) == (arr is not None) else int(arr is not None))
        return out


@dataclass
class Geometry:
    stamp: int
    struct_stamp: int
    flags: int  # format word: flags, UV set count in bits 16-23, native bit 24
    num_vertices: int
    triangles: np.ndarray  # (T, 3) uint16 corners v0 v1 v2
    tri_materials: np.ndarray  # (T,) uint16
    material_list: MaterialList
    extension: Extension
    surface: tuple[float, float, float] | None = None  # before RW 3.4
    colors: np.ndarray | None = None  # (V, 4) uint8 prelit RGBA
    uvs: list[np.ndarray] = field(default_factory=list)  # (V, 2) float32 each
    morph_targets: list[MorphTarget] = field(default_factory=list)
    native_struct: bytes | None = None  # a platform-native geometry's whole struct, as stored

    @property
    def native(self) -> bool:
        return bool(self.flags & NATIVE)

    @property
    def bin_mesh(self) -> BinMesh | None:
        return self.extension.find(BinMesh)

    @property
    def skin(self) -> Skin | None:
        return self.extension.find(Skin)

    def to_bytes(self) -> bytes:
        if self.native_struct is not None:
            body = chunk_bytes(STRUCT, self.struct_stamp, self.native_struct)
            body += self.material_list.to_bytes() + self.extension.to_bytes()
            return chunk_bytes(GEOMETRY, self.stamp, body)
        head = [
            np.array(
                [self.flags, len(self.triangles), self.num_vertices, len(self.morph_targets)], "<u4"
            ).tobytes()
        ]
        if self.surface is not None:
            head.append(np.array(self.surface, "<f4").tobytes())
        if self.flags & PRELIT:
            head.append(np.ascontiguousarray(self.colors, np.uint8).tobytes())
        head += [np.ascontiguousarray(uv, "<f4").tobytes() for uv in self.uvs]
        tri = np.empty((len(self.triangles), 4), "<u2")
        tri[:, 0] = self.triangles[:, 1]
        tri[:, 1] = self.triangles[:, 0]
        tri[:, 2] = self.tri_materials
        tri[:, 3] = self.triangles[:, 2]
        head.append(tri.tobytes())
        for mt in self.morph_targets:
            head.append(np.ascontiguousarray(mt.sphere, "<f4").tobytes())
            head.append(np.array(mt.present_words(), "<i4").tobytes())
            for arr in (mt.positions, mt.normals):
                if arr is not None:
                    head.append(np.ascontiguousarray(arr, "<f4").tobytes())
        body = chunk_bytes(STRUCT, self.struct_stamp, b"".join(head))
        body += self.material_list.to_bytes() + self.extension.to_bytes()
        return chunk_bytes(GEOMETRY, self.stamp, body)


def read_geometry(r: Reader, stamp: int) -> Geometry:
    sstamp, s = expect_chunk(r, STRUCT, "geometry struct")
    start = s.pos
    flags, nt, nv, nm = s.u32(), s.i32(), s.i32(), s.i32()
    for value, what in ((nt, "triangle"), (nv, "vertex"), (nm, "morph target")):
        if value < 0:
            raise FormatError(f"geometry: negative {what} count {value}", start)
    surface = tuple(s.f32_exact() for _ in range(3)) if version_of(sstamp) < 0x34000 else None
    geo_fields: dict = {}
    if flags & NATIVE:
        s.pos = start
        geo_fields["native_struct"] = s.rest()
        tris = np.zeros((0, 3), np.uint16)
        mats = np.zeros(0, np.uint16)
    else:
        if flags & PRELIT:
            s.count(nv, 4, "prelit colour")
            geo_fields["colors"] = s.array(np.uint8, (nv, 4), "prelit colours")
        n_uv = uv_set_count(flags)
        if n_uv > 8:
            raise FormatError(f"geometry: {n_uv} UV sets (at most 8)", start)
        s.count(nv * n_uv, 8, "texture coordinate")
        geo_fields["uvs"] = [s.array("<f4", (nv, 2), f"UV set {i}") for i in range(n_uv)]
        s.count(nt, 8, "triangle")
        raw = s.array("<u2", (nt, 4), "triangles")
        tris = raw[:, [1, 0, 3]].copy()
        mats = raw[:, 2].copy()
        bad = np.nonzero((tris >= nv).any(axis=1))[0]
        if len(bad):
            t = int(bad[0])
            raise FormatError(
                f"triangle {t} uses vertex {int(tris[t].max())} of {nv}", s.pos - 8 * (nt - t)
            )
        s.count(nm, 24, "morph target")
        targets = []
        for i in range(nm):
            sphere = s.array("<f4", 4, f"morph target {i} bounding sphere")
            has_pos, has_nrm = s.i32(), s.i32()
            pos = s.array("<f4", (nv, 3), f"morph target {i} positions") if has_pos else None
            nrm = s.array("<f4", (nv, 3), f"morph target {i} normals") if has_nrm else None
            targets.append(MorphTarget(sphere, pos, nrm, (has_pos, has_nrm)))
        geo_fields["morph_targets"] = targets
        finish(s, "geometry struct")
    lstamp, ml = expect_chunk(r, MATERIAL_LIST, "geometry material list")
    material_list = read_material_list(ml, lstamp)
    native = bool(flags & NATIVE)
    parsers = (
        {}
        if native
        else {
            BIN_MESH_PLG: read_bin_mesh,
            SKIN_PLG: lambda p, st: read_skin(p, st, nv),
        }
    )
    ext = read_extension(r, "geometry", parsers)
    finish(r, "geometry")
    return Geometry(stamp, sstamp, flags, nv, tris, mats, material_list, ext, surface, **geo_fields)


@dataclass
class GeometryList:
    stamp: int
    struct_stamp: int
    geometries: list[Geometry]

    def to_bytes(self) -> bytes:
        body = chunk_bytes(
            STRUCT, self.struct_stamp, np.array([len(self.geometries)], "<u4").tobytes()
        )
        body += b"".join(g.to_bytes() for g in self.geometries)
        return chunk_bytes(GEOMETRY_LIST, self.stamp, body)


def read_geometry_list(r: Reader, stamp: int) -> GeometryList:
    sstamp, s = expect_chunk(r, STRUCT, "geometry list struct")
    n = s.u32()
    finish(s, "geometry list struct")
    r.count(n, 12, "geometry")
    geometries = []
    for i in range(n):
        gstamp, g = expect_chunk(r, GEOMETRY, f"geometry {i}")
        geometries.append(read_geometry(g, gstamp))
    finish(r, "geometry list")
    return GeometryList(stamp, sstamp, geometries)
