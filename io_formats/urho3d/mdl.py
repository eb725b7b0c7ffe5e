"""Urho3D model files (``UMDL``, ``UMD2`` and rbfx's ``UMD3``): lossless read and write.

``UMD3`` is ``UMD2`` with a uint32 version after the magic; from version 2 on
each morph carries a float default weight after its name.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

import numpy as np

from ..codec import FormatError, Reader, Writer
from .vertex_layout import (
    LEGACY_KNOWN_MASK,
    TYPE_DTYPES,
    VertexElement,
    elements_from_mask,
    mask_from_elements,
    morph_dtype,
    vertex_dtype,
)

MAGICS = (b"UMDL", b"UMD2", b"UMD3")
UMD3_VERSIONS = (1, 2)
MORPH_WEIGHT_VERSION = 2
PRIMITIVE_TRIANGLES = 0
PRIMITIVE_LINES = 1


@dataclass
class VertexBuffer:
    elements: list[VertexElement]
    data: np.ndarray  # structured, one record per vertex, fields in element order
    morph_start: int = 0
    morph_count: int = 0
    legacy_mask: int | None = None  # the UMDL mask; None for UMD2 buffers

    @property
    def count(self) -> int:
        return len(self.data)


@dataclass
class IndexBuffer:
    indices: np.ndarray  # uint16 or uint32

    @property
    def index_size(self) -> int:
        return self.indices.dtype.itemsize


@dataclass
class GeometryLod:
    distance: float
    primitive_type: int
    vertex_buffer: int
    index_buffer: int
    index_start: int
    index_count: int


@dataclass
class Geometry:
    bone_mapping: np.ndarray  # uint32 global bone indices; empty = identity
    lods: list[GeometryLod]


@dataclass
class MorphBuffer:
    vertex_buffer: int
    mask: int
    data: np.ndarray  # structured: index, then position/normal/tangent by mask


@dataclass
class Morph:
    name: str
    buffers: list[MorphBuffer]
    weight: float = 0.0  # the default weight (UMD3 version 2+)


@dataclass
class Bone:
    name: str
    parent: int  # own index for a root
    position: np.ndarray  # float32 (3,)
    rotation: np.ndarray  # float32 (4,), w x y z
    scale: np.ndarray  # float32 (3,)
    offset_matrix: np.ndarray  # float32 (3, 4), row-major inverse bind
    collision_mask: int = 0
    radius: float = 0.0
    bbox_min: np.ndarray = field(default_factory=lambda: np.zeros(3, np.float32))
    bbox_max: np.ndarray = field(default_factory=lambda: np.zeros(3, np.float32))


@dataclass
class Model:
    magic: bytes
    vertex_buffers: list[VertexBuffer]
    index_buffers: list[IndexBuffer]
    geometries: list[Geometry]
    morphs: list[Morph]
    bones: list[Bone]
    bbox_min: np.ndarray
    bbox_max: np.ndarray
    geometry_centers: np.ndarray | None  # (G, 3) float32, or None when the file has none
    version: int | None = None  # UMD3 only

    @property
    def has_morph_weights(self) -> bool:
        return self.magic == b"UMD3" and (self.version or 0) >= MORPH_WEIGHT_VERSION


def _view(r: Reader, dtype: np.dtype | str, count: int, what: str) -> np.ndarray:
    """``count`` items at the reader's place as a read-only view of the file's
    bytes, where the host is little-endian (vertex and index data are most of a
    model file: no copy, no second copy's memory), else a native copy.

    The view's dtype is the native one ("="), never an explicit "<": numpy
    describes a field of explicit byte order to the buffer protocol as "<f",
    and Blender's ``foreach_set`` takes only plain formats ("f") in bulk; it
    reads any other buffer item by item (a 300k-vertex shape key: 41 ms against
    0.4 ms on bpy 5.0), and every array made from a field keeps its dtype."""
    if sys.byteorder != "little":
        return r.array(dtype, count, what)
    dt = np.dtype(dtype).newbyteorder("=")  # the host's order is the file's
    r.need(count * dt.itemsize, what)
    arr = np.frombuffer(r.data, dt, count, r.pos)
    r.pos += count * dt.itemsize
    return arr


def _read_vertex_buffer(r: Reader, legacy: bool) -> VertexBuffer:
    count = r.u32()
    if legacy:
        mask = r.u32()
        if mask & ~LEGACY_KNOWN_MASK:
            raise r.error(
                f"unknown legacy vertex element bits 0x{mask & ~LEGACY_KNOWN_MASK:X}", r.pos - 4
            )
        elements = elements_from_mask(mask)
    else:
        mask = None
        n = r.count(r.u32(), 4, "vertex element")
        elements = []
        for _ in range(n):
            start = r.pos
            descriptor = r.u32()
            if descriptor >> 24:
                raise r.error(f"vertex element 0x{descriptor:08X} has unknown bits 24-31", start)
            e = VertexElement.from_descriptor(descriptor)
            if e.type not in TYPE_DTYPES or e.semantic > 8:
                raise r.error(
                    f"unknown vertex element type {e.type} / semantic {e.semantic}", start
                )
            elements.append(e)
    morph_start = r.u32()
    morph_count = r.u32()
    dtype = vertex_dtype(elements, legacy)
    if dtype.itemsize == 0 and count:
        raise r.error("vertex buffer with vertices but no elements")
    r.count(count, dtype.itemsize, "vertex")
    data = _view(r, dtype, count, "vertex data")
    if morph_count and morph_start + morph_count > count:
        raise r.error(f"morph range {morph_start}+{morph_count} beyond {count} vertices")
    return VertexBuffer(elements, data, morph_start, morph_count, mask)


def _read_index_buffer(r: Reader) -> IndexBuffer:
    count = r.u32()
    size = r.u32()
    if size not in (2, 4):
        raise r.error(f"index size {size}, expected 2 or 4", r.pos - 4)
    r.count(count, size, "index")
    return IndexBuffer(_view(r, "<u2" if size == 2 else "<u4", count, "index data"))


def read(data: bytes) -> Model:
    """Parse a whole ``.mdl`` file; raises :class:`FormatError` on any mismatch.
    The vertex and index data are read-only views of ``data`` (copy a model
    before changing it in place, as ``copy.deepcopy`` does)."""
    r = Reader(data)
    magic, version = _read_header(r)
    legacy = magic == b"UMDL"
    vbs = [_read_vertex_buffer(r, legacy) for _ in range(r.count(r.u32(), 16, "vertex buffer"))]
    ibs = [_read_index_buffer(r) for _ in range(r.count(r.u32(), 8, "index buffer"))]
    geometries, mapping_offsets = _read_geometries(r, vbs, ibs)
    morphs = _read_morphs(r, vbs, (version or 0) >= MORPH_WEIGHT_VERSION)
    bones = _read_bones(r)
    if bones:  # without a skeleton the engine never reads the mappings
        _check_mappings(r, geometries, mapping_offsets, len(bones))
    box = r.array("<f4", 6, "bounding box")
    centers = _read_centers(r, len(geometries))
    return Model(magic, vbs, ibs, geometries, morphs, bones, box[:3], box[3:], centers, version)


def _read_header(r: Reader) -> tuple[bytes, int | None]:
    """The magic, and the version of a UMD3 file."""
    magic = r.bytes(4) if r.remaining >= 4 else r.rest()
    if magic not in MAGICS:
        raise FormatError(f"not an Urho3D model: magic {magic!r}, expected UMDL, UMD2 or UMD3", 0)
    version = None
    if magic == b"UMD3":
        version = r.u32()
        if version not in UMD3_VERSIONS:
            raise r.error(f"unsupported UMD3 version {version}, expected 1 or 2", 4)
    return magic, version


def _read_geometries(r: Reader, vbs: list, ibs: list) -> tuple[list[Geometry], list[int]]:
    """The geometries, and where each one's bone mapping starts (for later errors)."""
    geometries = []
    mapping_offsets = []
    for _ in range(r.count(r.u32(), 8, "geometry")):
        n_mapping = r.count(r.u32(), 4, "bone mapping")
        mapping_offsets.append(r.pos)
        mapping = r.array("<u4", n_mapping, "bone mapping")
        lods = []
        for _ in range(r.count(r.u32(), 24, "LOD level")):
            start = r.pos
            lod = GeometryLod(r.f32_exact(), r.u32(), r.u32(), r.u32(), r.u32(), r.u32())
            _check_lod(r, lod, vbs, ibs, start)
            lods.append(lod)
        geometries.append(Geometry(mapping, lods))
    return geometries, mapping_offsets


def _read_morphs(r: Reader, vbs: list[VertexBuffer], weights: bool) -> list[Morph]:
    morphs = []
    for _ in range(r.count(r.u32(), 9 if weights else 5, "vertex morph")):
        name = r.cstring()
        weight = r.f32_exact() if weights else 0.0
        buffers = [_read_morph_buffer(r, vbs) for _ in range(r.count(r.u32(), 12, "morph buffer"))]
        morphs.append(Morph(name, buffers, weight))
    return morphs


def _read_morph_buffer(r: Reader, vbs: list[VertexBuffer]) -> MorphBuffer:
    start = r.pos
    vb, mask = r.u32(), r.u32()
    if vb >= len(vbs):
        raise r.error(f"morph refers to vertex buffer {vb} of {len(vbs)}", start)
    dtype = morph_dtype(mask)
    n = r.count(r.u32(), dtype.itemsize, "morph vertex")
    mdata = r.array(dtype, n, "morph vertices")
    if n and int(mdata["index"].max()) >= vbs[vb].count:
        raise r.error(f"morph vertex index beyond vertex buffer {vb}", start)
    return MorphBuffer(vb, mask, mdata)


def _read_bones(r: Reader) -> list[Bone]:
    bones = []
    n_bones = r.count(r.u32(), 94, "bone")
    for _ in range(n_bones):
        name = r.cstring()
        parent_at = r.pos
        parent = r.u32()
        if parent >= n_bones:
            raise r.error(f"bone parent {parent} of {n_bones} bones", parent_at)
        f = r.array("<f4", 22, "bone transform")
        bone = Bone(name, parent, f[0:3], f[3:7], f[7:10], f[10:22].reshape(3, 4))
        bone.collision_mask = r.u8()
        if bone.collision_mask & 1:
            bone.radius = r.f32_exact()
        if bone.collision_mask & 2:
            box = r.array("<f4", 6, "bone bounding box")
            bone.bbox_min, bone.bbox_max = box[:3], box[3:]
        bones.append(bone)
    return bones


def _check_mappings(
    r: Reader, geometries: list[Geometry], mapping_offsets: list[int], n_bones: int
) -> None:
    for g, at in zip(geometries, mapping_offsets, strict=True):
        if len(g.bone_mapping) and int(g.bone_mapping.max()) >= n_bones:
            bad = int(np.argmax(g.bone_mapping >= n_bones))
            raise r.error(
                f"bone mapping entry {int(g.bone_mapping[bad])} of {n_bones} bones",
                at + 4 * bad,
            )


def _read_centers(r: Reader, n_geometries: int) -> np.ndarray | None:
    """The optional geometry centres after the bounding box."""
    if not r.remaining:
        return None
    if r.remaining != 12 * n_geometries:
        raise r.error(
            f"{r.remaining} bytes after the bounding box; expected none or "
            f"{n_geometries} geometry centres ({12 * n_geometries} bytes)"
        )
    return r.array("<f4", (n_geometries, 3), "geometry centres")


def _check_lod(r: Reader, lod: GeometryLod, vbs: list, ibs: list, start: int) -> None:
    if lod.primitive_type not in (PRIMITIVE_TRIANGLES, PRIMITIVE_LINES):
        raise r.error(f"primitive type {lod.primitive_type}, expected 0 or 1", start + 4)
    if lod.vertex_buffer >= len(vbs):
        raise r.error(f"LOD refers to vertex buffer {lod.vertex_buffer} of {len(vbs)}", start + 8)
    if lod.index_buffer >= len(ibs):
        raise r.error(f"LOD refers to index buffer {lod.index_buffer} of {len(ibs)}", start + 12)
    ib = ibs[lod.index_buffer].indices
    if lod.index_start + lod.index_count > len(ib):
        raise r.error(
            f"draw range {lod.index_start}+{lod.index_count} beyond {len(ib)} indices", start + 16
        )
    if lod.index_count:
        top = int(ib[lod.index_start : lod.index_start + lod.index_count].max())
        if top >= vbs[lod.vertex_buffer].count:
            raise r.error(
                f"index {top} beyond {vbs[lod.vertex_buffer].count} vertices of "
                f"vertex buffer {lod.vertex_buffer}",
                start,
            )


def write(model: Model) -> bytes:
    """Encode ``model``; ``write(read(b)) == b`` for every valid file."""
    w = Writer()
    if model.magic not in MAGICS:
        raise ValueError(f"cannot write magic {model.magic!r}")
    legacy = model.magic == b"UMDL"
    w.bytes(model.magic)
    if model.magic == b"UMD3":
        if model.version not in UMD3_VERSIONS:
            raise ValueError(f"cannot write UMD3 version {model.version}")
        w.u32(model.version)
    w.u32(len(model.vertex_buffers))
    for vb in model.vertex_buffers:
        _write_vertex_buffer(w, vb, legacy)
    w.u32(len(model.index_buffers))
    for ib in model.index_buffers:
        w.u32(len(ib.indices))
        w.u32(ib.index_size)
        w.array(ib.indices, ib.indices.dtype)
    _write_geometries(w, model.geometries)
    _write_morphs(w, model.morphs, model.has_morph_weights)
    _write_bones(w, model.bones)
    w.array(np.concatenate([model.bbox_min, model.bbox_max]), "<f4")
    if model.geometry_centers is not None:
        w.array(model.geometry_centers, "<f4")
    return w.getvalue()


def _write_vertex_buffer(w: Writer, vb: VertexBuffer, legacy: bool) -> None:
    w.u32(vb.count)
    if legacy:
        mask = vb.legacy_mask if vb.legacy_mask is not None else mask_from_elements(vb.elements)
        if mask is None:
            raise ValueError("vertex elements cannot be described by a legacy UMDL mask")
        w.u32(mask)
    else:
        w.u32(len(vb.elements))
        for e in vb.elements:
            w.u32(e.descriptor)
    w.u32(vb.morph_start)
    w.u32(vb.morph_count)
    w.bytes(np.ascontiguousarray(vb.data, vertex_dtype(vb.elements, legacy)).tobytes())


def _write_geometries(w: Writer, geometries: list[Geometry]) -> None:
    w.u32(len(geometries))
    for g in geometries:
        w.u32(len(g.bone_mapping))
        w.array(g.bone_mapping, "<u4")
        w.u32(len(g.lods))
        for lod in g.lods:
            w.f32(lod.distance)
            for v in (
                lod.primitive_type,
                lod.vertex_buffer,
                lod.index_buffer,
                lod.index_start,
                lod.index_count,
            ):
                w.u32(v)


def _write_morphs(w: Writer, morphs: list[Morph], weights: bool) -> None:
    w.u32(len(morphs))
    for m in morphs:
        w.cstring(m.name)
        if weights:
            w.f32(m.weight)
        w.u32(len(m.buffers))
        for mb in m.buffers:
            w.u32(mb.vertex_buffer)
            w.u32(mb.mask)
            w.u32(len(mb.data))
            w.bytes(np.ascontiguousarray(mb.data, morph_dtype(mb.mask)).tobytes())


def _write_bones(w: Writer, bones: list[Bone]) -> None:
    w.u32(len(bones))
    for b in bones:
        w.cstring(b.name)
        w.u32(b.parent)
        w.array(np.concatenate([b.position, b.rotation, b.scale, np.ravel(b.offset_matrix)]), "<f4")
        w.u8(b.collision_mask)
        if b.collision_mask & 1:
            w.f32(b.radius)
        if b.collision_mask & 2:
            w.array(np.concatenate([b.bbox_min, b.bbox_max]), "<f4")
