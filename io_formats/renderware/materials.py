"""MaterialList, Material and Texture sections."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..codec import FormatError, Reader
from .chunks import (
    MATERIAL,
    MATERIAL_LIST,
    STRING,
    STRUCT,
    TEXTURE,
    chunk_bytes,
    expect_chunk,
    finish,
    read_chunk,
)
from .extension import Extension, read_extension

UNICODE_STRING = 0x13


@dataclass
class Text:
    """A string chunk: NUL-terminated text padded to 4 bytes, kept as stored."""

    stamp: int
    raw: bytes
    kind: int = STRING

    @property
    def text(self) -> str:
        return self.raw.split(b"\0", 1)[0].decode("utf-8", "surrogateescape")

    @classmethod
    def make(cls, stamp: int, text: str) -> Text:
        raw = text.encode("utf-8", "surrogateescape") + b"\0"
        return cls(stamp, raw + b"\0" * (-len(raw) % 4))

    def to_bytes(self) -> bytes:
        return chunk_bytes(self.kind, self.stamp, self.raw)


@dataclass
class Texture:
    stamp: int
    struct_stamp: int
    flags: int  # filter mode (bits 0-7), U/V addressing (8-11, 12-15), mipmaps (16)
    name: Text
    mask: Text
    extension: Extension

    def to_bytes(self) -> bytes:
        body = chunk_bytes(STRUCT, self.struct_stamp, np.array([self.flags], "<u4").tobytes())
        body += self.name.to_bytes() + self.mask.to_bytes() + self.extension.to_bytes()
        return chunk_bytes(TEXTURE, self.stamp, body)


@dataclass
class Material:
    stamp: int
    struct_stamp: int
    flags: int
    color: tuple[int, int, int, int]  # RGBA bytes
    unused: int
    textured: int
    surface: tuple[float, float, float] | None  # ambient, specular, diffuse (RW > 3.4.0.0)
    texture: Texture | None
    extension: Extension

    def to_bytes(self) -> bytes:
        s = np.array([self.flags], "<i4").tobytes() + bytes(self.color)
        s += np.array([self.unused, self.textured], "<i4").tobytes()
        if self.surface is not None:
            s += np.array(self.surface, "<f4").tobytes()
        body = chunk_bytes(STRUCT, self.struct_stamp, s)
        if self.texture is not None:
            body += self.texture.to_bytes()
        body += self.extension.to_bytes()
        return chunk_bytes(MATERIAL, self.stamp, body)


@dataclass
class MaterialList:
    """``slots[i]`` is -1 for a material stored here, else the index of an earlier slot
    whose material it shares; ``materials`` are the stored ones in order."""

    stamp: int
    struct_stamp: int
    slots: np.ndarray  # (N,) int32
    materials: list[Material]

    def slot_materials(self) -> list[Material]:
        """The material of every slot."""
        out: list[Material] = []
        it = iter(self.materials)
        for s in self.slots.tolist():
            out.append(next(it) if s < 0 else out[s])
        return out

    def to_bytes(self) -> bytes:
        s = np.array([len(self.slots)], "<i4").tobytes()
        s += np.ascontiguousarray(self.slots, "<i4").tobytes()
        body = chunk_bytes(STRUCT, self.struct_stamp, s)
        body += b"".join(m.to_bytes() for m in self.materials)
        return chunk_bytes(MATERIAL_LIST, self.stamp, body)


def _read_text(r: Reader, what: str) -> Text:
    start = r.pos
    kind, stamp, sub = read_chunk(r, what)
    if kind not in (STRING, UNICODE_STRING):
        raise FormatError(f"{what}: expected a string chunk, found 0x{kind:X}", start)
    return Text(stamp, sub.rest(), kind)


def read_texture(r: Reader, stamp: int) -> Texture:
    sstamp, s = expect_chunk(r, STRUCT, "texture struct")
    flags = s.u32()
    finish(s, "texture struct")
    name = _read_text(r, "texture name")
    mask = _read_text(r, "texture mask name")
    ext = read_extension(r, "texture")
    finish(r, "texture")
    return Texture(stamp, sstamp, flags, name, mask, ext)


def read_material(r: Reader, stamp: int) -> Material:
    sstamp, s = expect_chunk(r, STRUCT, "material struct")
    flags = s.i32()
    color = tuple(s.bytes(4))
    unused, textured = s.i32(), s.i32()
    surface = None
    if s.remaining == 12:
        surface = tuple(s.f32_exact() for _ in range(3))  # exact bits
    finish(s, "material struct")
    texture = None
    if textured:
        tstamp, t = expect_chunk(r, TEXTURE, "material texture")
        texture = read_texture(t, tstamp)
    ext = read_extension(r, "material")
    finish(r, "material")
    return Material(stamp, sstamp, flags, color, unused, textured, surface, texture, ext)


def read_material_list(r: Reader, stamp: int) -> MaterialList:
    sstamp, s = expect_chunk(r, STRUCT, "material list struct")
    n = s.i32()
    s.count(n, 4, "material slot")
    slots = s.array("<i4", n, "material slots")
    finish(s, "material list struct")
    for i, v in enumerate(slots.tolist()):
        if v >= i or v < -1:
            raise FormatError(f"material slot {i} refers to slot {v}", s.pos - 4 * (n - i))
    stored = int((slots < 0).sum())
    r.count(stored, 12, "material")
    materials = []
    for i in range(stored):
        mstamp, m = expect_chunk(r, MATERIAL, f"material {i}")
        materials.append(read_material(m, mstamp))
    finish(r, "material list")
    return MaterialList(stamp, sstamp, slots, materials)
