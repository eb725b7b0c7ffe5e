"""RenderWare binary stream chunks: header, library ID stamp, raw chunks.

Every RenderWare section is a chunk: uint32 type, uint32 payload size, uint32
library ID stamp (which encodes the RenderWare version and build), then the
payload. Containers hold further chunks. Sections this package does not parse
are kept as :class:`RawChunk` and written back unchanged, in place.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from ..codec import FormatError, Reader

STRUCT = 0x01
STRING = 0x02
EXTENSION = 0x03
TEXTURE = 0x06
MATERIAL = 0x07
MATERIAL_LIST = 0x08
FRAME_LIST = 0x0E
GEOMETRY = 0x0F
CLUMP = 0x10
ATOMIC = 0x14
GEOMETRY_LIST = 0x1A
SKIN_PLG = 0x116
HANIM_PLG = 0x11E
BIN_MESH_PLG = 0x50E
FRAME_NAME = 0x0253F2FE

HEADER = struct.Struct("<III")

#: Versions the exporter targets: (label, version, stamp).
TARGETS = {
    "III": ("GTA III (3.3.0.2)", 0x33002, 0x0C02FFFF),
    "VC": ("Vice City (3.4.0.3)", 0x34003, 0x1003FFFF),
    "SA": ("San Andreas (3.6.0.3)", 0x36003, 0x1803FFFF),
}


def version_of(stamp: int) -> int:
    """RenderWare version (0x36003 for 3.6.0.3) from a library ID stamp."""
    if stamp >> 16 == 0:
        return stamp << 8
    return 0x30000 + ((stamp >> 14) & 0x3FF00) + ((stamp >> 16) & 0x3F)


def stamp_of(version: int, build: int = 0xFFFF) -> int:
    """The library ID stamp that :func:`version_of` decodes to ``version``."""
    return (((version - 0x30000) & 0x3FF00) << 14) | ((version & 0x3F) << 16) | (build & 0xFFFF)


def version_text(version: int) -> str:
    """3.6.0.3 style text of a version number."""
    return f"{version >> 16}.{(version >> 12) & 0xF}.{(version >> 8) & 0xF}.{version & 0xFF}"


@dataclass
class RawChunk:
    """A chunk kept as its bytes (a section this package does not interpret)."""

    type: int
    stamp: int
    payload: bytes

    def to_bytes(self) -> bytes:
        return chunk_bytes(self.type, self.stamp, self.payload)


def chunk_bytes(kind: int, stamp: int, payload: bytes) -> bytes:
    return HEADER.pack(kind, len(payload), stamp) + payload


def read_chunk(r: Reader, what: str) -> tuple[int, int, Reader]:
    """The next chunk's type and stamp, and a reader over its payload."""
    start = r.pos
    if r.remaining < HEADER.size:
        raise r.error(f"{what}: expected a 12-byte chunk header, only {r.remaining} bytes remain")
    kind, size, stamp = r.u32(), r.u32(), r.u32()
    if size > r.remaining:
        raise FormatError(
            f"{what}: chunk 0x{kind:X} says {size} bytes, only {r.remaining} remain", start
        )
    return kind, stamp, r.sub(size, what)


def expect_chunk(r: Reader, kind: int, what: str) -> tuple[int, Reader]:
    """The next chunk, which must be of type ``kind``: its stamp and payload reader."""
    start = r.pos
    got, stamp, sub = read_chunk(r, what)
    if got != kind:
        raise FormatError(f"{what}: expected chunk type 0x{kind:X}, found 0x{got:X}", start)
    return stamp, sub


def finish(r: Reader, what: str) -> None:
    """Fail when a section's payload has bytes its layout does not account for."""
    if not r.at_end():
        raise r.error(f"{what}: {r.remaining} unexpected bytes at the end of the section")
