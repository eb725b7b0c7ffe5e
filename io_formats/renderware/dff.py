"""DFF files: top-level chunks (one or more clumps) with Atomic and Clump sections.

``write(read(data)) == data`` for every valid file: sections this package
does not interpret, extension plugins it does not know, other top-level chunks
(a UV animation dictionary before the clump) and trailing zero padding are
all kept in place.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..codec import FormatError, Reader
from .chunks import (
    ATOMIC,
    CLUMP,
    EXTENSION,
    FRAME_LIST,
    GEOMETRY,
    GEOMETRY_LIST,
    HEADER,
    STRUCT,
    RawChunk,
    chunk_bytes,
    expect_chunk,
    read_chunk,
    version_of,
)
from .extension import Extension, extension_from
from .frames import FrameList, read_frame_list
from .geometry import Geometry, GeometryList, read_geometry, read_geometry_list

#: Atomic render flags: collision test, render.
ATOMIC_COLLISION_TEST = 0x01
ATOMIC_RENDER = 0x04


@dataclass
class Atomic:
    stamp: int
    struct_stamp: int
    frame: int
    geometry: int
    flags: int
    struct_tail: bytes  # the unused fourth word (or whatever follows the three fields)
    items: list[Any]  # embedded Geometry, Extension and unknown chunks, in order

    @property
    def extension(self) -> Extension | None:
        return next((i for i in self.items if isinstance(i, Extension)), None)

    def to_bytes(self) -> bytes:
        s = np.array([self.frame, self.geometry, self.flags], "<i4").tobytes() + self.struct_tail
        body = chunk_bytes(STRUCT, self.struct_stamp, s)
        body += b"".join(i.to_bytes() for i in self.items)
        return chunk_bytes(ATOMIC, self.stamp, body)


def read_atomic(r: Reader, stamp: int) -> Atomic:
    sstamp, s = expect_chunk(r, STRUCT, "atomic struct")
    frame, geometry, flags = s.i32(), s.i32(), s.u32()
    tail = s.rest()
    items: list[Any] = []
    while not r.at_end():
        kind, cstamp, sub = read_chunk(r, "atomic")
        if kind == GEOMETRY:
            items.append(read_geometry(sub, cstamp))
        elif kind == EXTENSION:
            items.append(extension_from(sub, cstamp, "atomic"))
        else:
            items.append(RawChunk(kind, cstamp, sub.rest()))
    return Atomic(stamp, sstamp, frame, geometry, flags, tail, items)


@dataclass
class Clump:
    stamp: int
    struct_stamp: int
    counts: list[int]  # atomics, then lights and cameras (RW 3.3+)
    items: list[Any] = field(default_factory=list)

    @property
    def version(self) -> int:
        return version_of(self.stamp)

    @property
    def frame_list(self) -> FrameList:
        return next(i for i in self.items if isinstance(i, FrameList))

    @property
    def geometry_list(self) -> GeometryList | None:
        return next((i for i in self.items if isinstance(i, GeometryList)), None)

    @property
    def atomics(self) -> list[Atomic]:
        return [i for i in self.items if isinstance(i, Atomic)]

    def geometries(self) -> list[Geometry]:
        gl = self.geometry_list
        return [] if gl is None else gl.geometries

    def atomic_geometry(self, atomic: Atomic) -> Geometry:
        embedded = next((i for i in atomic.items if isinstance(i, Geometry)), None)
        return embedded if embedded is not None else self.geometries()[atomic.geometry]

    def to_bytes(self) -> bytes:
        body = chunk_bytes(STRUCT, self.struct_stamp, np.array(self.counts, "<u4").tobytes())
        body += b"".join(i.to_bytes() for i in self.items)
        return chunk_bytes(CLUMP, self.stamp, body)


def read_clump(r: Reader, stamp: int) -> Clump:
    sstamp, s = expect_chunk(r, STRUCT, "clump struct")
    if s.remaining not in (4, 12):
        raise s.error(f"clump struct: expected 4 or 12 bytes, found {s.remaining}")
    clump = Clump(stamp, sstamp, s.array("<u4", s.remaining // 4).tolist())
    while not r.at_end():
        start = r.pos
        kind, cstamp, sub = read_chunk(r, "clump")
        if kind == FRAME_LIST:
            clump.items.append(read_frame_list(sub, cstamp))
        elif kind == GEOMETRY_LIST:
            clump.items.append(read_geometry_list(sub, cstamp))
        elif kind == ATOMIC:
            atomic = read_atomic(sub, cstamp)
            clump.items.append(atomic)
            _check_atomic(clump, atomic, start)
        elif kind == EXTENSION:
            clump.items.append(extension_from(sub, cstamp, "clump"))
        else:
            clump.items.append(RawChunk(kind, cstamp, sub.rest()))
    if not any(isinstance(i, FrameList) for i in clump.items):
        raise FormatError("clump has no frame list", r.pos)
    if len(clump.atomics) != clump.counts[0]:
        raise FormatError(
            f"clump says {clump.counts[0]} atomics but holds {len(clump.atomics)}", r.pos
        )
    return clump


def _check_atomic(clump: Clump, atomic: Atomic, offset: int) -> None:
    frames = next((i for i in clump.items if isinstance(i, FrameList)), None)
    if frames is None:
        raise FormatError("atomic before the frame list", offset)
    if not 0 <= atomic.frame < len(frames):
        raise FormatError(f"atomic frame {atomic.frame} of {len(frames)}", offset + 24)
    embedded = any(isinstance(i, Geometry) for i in atomic.items)
    if not embedded and not 0 <= atomic.geometry < len(clump.geometries()):
        raise FormatError(
            f"atomic geometry {atomic.geometry} of {len(clump.geometries())}", offset + 28
        )


@dataclass
class DffFile:
    chunks: list[Any]  # Clump or RawChunk, in file order
    trailing: bytes = b""  # padding after the last chunk

    @property
    def clumps(self) -> list[Clump]:
        return [c for c in self.chunks if isinstance(c, Clump)]

    @property
    def clump(self) -> Clump:
        return self.clumps[0]


def read(data: bytes) -> DffFile:
    """Parse a .dff file; FormatError (with the offset) for anything invalid."""
    r = Reader(data)
    chunks: list[Any] = []
    while r.remaining >= HEADER.size and any(data[r.pos :]):
        kind, stamp, sub = read_chunk(r, "file")
        if kind == CLUMP:
            chunks.append(read_clump(sub, stamp))
        else:
            chunks.append(RawChunk(kind, stamp, sub.rest()))
    trailing = r.rest()
    if any(trailing):
        raise FormatError(f"{len(trailing)} bytes after the last chunk", len(data) - len(trailing))
    if not any(isinstance(c, Clump) for c in chunks):
        raise FormatError("no clump (chunk type 0x10) in the file", 0)
    return DffFile(chunks, trailing)


def write(dff: DffFile) -> bytes:
    return b"".join(c.to_bytes() for c in dff.chunks) + dff.trailing
