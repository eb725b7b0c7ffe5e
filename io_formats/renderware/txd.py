"""RenderWare texture dictionaries (.txd): PC Direct3D 8 and 9 native textures.

A dictionary (chunk 0x16) holds a struct (texture count, device ID), one
Texture Native chunk (0x15) per texture and an extension. A native texture's
struct starts with the platform ID (8: Direct3D 8, GTA III/VC; 9: Direct3D 9,
SA), the filter/addressing word, 32-byte name and mask, then the raster:
format flags (:data:`PAL8`, :data:`PAL4`, :data:`MIPMAP`, pixel format in bits
8-11), Direct3D 8's alpha flag or Direct3D 9's D3DFORMAT (a FourCC for DXT),
width, height, depth, level count, raster type and Direct3D 8's DXT number or
Direct3D 9's flags (1 alpha, 2 cube, 4 auto mipmaps, 8 compressed). A palette
follows (256 entries for PAL8, 32 for PAL4, RGBA), then every level as its
byte size and bytes.

The file is kept as its bytes (export is out of scope: an unchanged model
keeps referring to the original dictionary); the reader checks every size and
:func:`decode` turns a level into RGBA8 pixels with numpy. Console rasters
(PS2, Xbox, GameCube, PSP) are refused naming the platform.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

import numpy as np

from ..codec import FormatError, Reader
from .chunks import EXTENSION, STRUCT, RawChunk, expect_chunk, read_chunk

TEXTURE_NATIVE = 0x15
TEXTURE_DICTIONARY = 0x16

D3D8 = 8
D3D9 = 9
CONSOLES = {
    0x00325350: "PlayStation 2",
    4: "PlayStation 2",
    5: "Xbox",
    6: "GameCube",
    0x00505350: "PSP",
    10: "PSP",
}

C1555, C565, C4444, LUM8, C8888, C888, C555 = 1, 2, 3, 4, 5, 6, 10
AUTOMIPMAP, PAL8, PAL4, MIPMAP = 0x1000, 0x2000, 0x4000, 0x8000
FOURCC = {struct.unpack("<I", f"DXT{i}".encode())[0]: i for i in range(1, 6)}
D3DFMT = {21: C8888, 22: C888, 23: C565, 24: C555, 25: C1555, 26: C4444, 50: LUM8, 51: 51}

_HEAD = struct.Struct("<II32s32sIIHHBBBB")


@dataclass
class NativeTexture:
    platform: int
    filter_addressing: int
    name_raw: bytes
    mask_raw: bytes
    raster_format: int
    alpha_or_format: int  # D3D8: has alpha; D3D9: D3DFORMAT
    width: int
    height: int
    depth: int
    raster_type: int
    flags: int  # D3D8: DXT number; D3D9: alpha/cube/auto-mipmap/compressed bits
    palette: bytes
    levels: list[bytes] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.name_raw.split(b"\0", 1)[0].decode("latin-1")

    @property
    def mask(self) -> str:
        return self.mask_raw.split(b"\0", 1)[0].decode("latin-1")

    @property
    def dxt(self) -> int:
        """1..5 for a DXT-compressed raster, else 0."""
        if self.platform == D3D8:
            return self.flags
        return FOURCC.get(self.alpha_or_format, 0) if self.flags & 8 else 0

    @property
    def has_alpha(self) -> bool:
        if self.platform == D3D9:
            return bool(self.flags & 1)
        return bool(self.alpha_or_format)

    @property
    def pixel_format(self) -> int:
        if self.platform == D3D9 and not self.raster_format & (PAL4 | PAL8) and not self.dxt:
            return D3DFMT.get(self.alpha_or_format, (self.raster_format >> 8) & 0xF)
        return (self.raster_format >> 8) & 0xF

    def level_size(self, level: int) -> tuple[int, int]:
        return max(self.width >> level, 1), max(self.height >> level, 1)


@dataclass
class NativeChunk:
    stamp: int
    struct_stamp: int
    payload: bytes  # the struct's bytes, as read
    texture: NativeTexture
    extension: RawChunk


@dataclass
class TxdFile:
    stamp: int
    struct_stamp: int
    count: int
    device: int
    natives: list[NativeChunk]
    items: list[RawChunk]  # other chunks inside the dictionary (its extension)
    trailing: bytes = b""

    def textures(self) -> list[NativeTexture]:
        return [n.texture for n in self.natives]

    def find(self, name: str) -> NativeTexture | None:
        low = name.lower()
        return next((t for t in self.textures() if t.name.lower() == low), None)


def read(data: bytes) -> TxdFile:
    r = Reader(data)
    stamp, body = expect_chunk(r, TEXTURE_DICTIONARY, "texture dictionary")
    sstamp, sr = expect_chunk(body, STRUCT, "texture dictionary struct")
    if sr.remaining != 4:
        raise sr.error(f"texture dictionary struct of {sr.remaining} bytes (expected 4)")
    count, device = sr.u16(), sr.u16()
    body.count(count, 12, "texture")
    natives = []
    for i in range(count):
        at = body.pos
        kind, nstamp, nr = read_chunk(body, f"texture {i}")
        if kind != TEXTURE_NATIVE:
            raise FormatError(f"texture {i}: expected a Texture Native chunk, found 0x{kind:X}", at)
        natives.append(_read_native(nr, nstamp, i))
    items = []
    while not body.at_end():
        kind, istamp, ir = read_chunk(body, "texture dictionary")
        items.append(RawChunk(kind, istamp, ir.rest()))
    return TxdFile(stamp, sstamp, count, device, natives, items, r.rest())


def _read_native(r: Reader, stamp: int, i: int) -> NativeChunk:
    sstamp, sr = expect_chunk(r, STRUCT, f"texture {i} struct")
    start = sr.pos
    payload = sr.data[sr.pos : sr.end]
    if sr.remaining >= 4:
        platform = struct.unpack_from("<I", sr.data, sr.pos)[0]
        if platform in CONSOLES or platform >> 24 == 6:
            name = CONSOLES.get(platform, "GameCube")
            raise FormatError(
                f"texture {i} is a {name} native raster: only PC (Direct3D 8/9) "
                "dictionaries are read",
                start,
            )
        if platform not in (D3D8, D3D9):
            raise FormatError(f"texture {i}: unknown platform {platform}", start)
    sr.need(_HEAD.size, f"texture {i} header")
    head = _HEAD.unpack(sr.bytes(_HEAD.size))
    tex = NativeTexture(*head[:9], *head[10:], b"")  # type: ignore[call-arg]
    levels_n = head[9]
    if tex.raster_format & PAL8:
        tex.palette = sr.bytes(1024)
    elif tex.raster_format & PAL4:
        tex.palette = sr.bytes(128)
    sr.count(levels_n, 4, "mipmap level")
    for level in range(levels_n):
        size = sr.u32()
        if size > sr.remaining:
            raise sr.error(
                f"texture {tex.name!r} level {level}: {size} bytes, {sr.remaining} remain"
            )
        need = max(_level_bytes(tex, level) or 0, _decoded_bytes(tex, level, size) or 0)
        if size < need:
            raise sr.error(
                f"texture {tex.name!r} level {level} of {tex.level_size(level)} needs "
                f"{need} bytes, it has {size}"
            )
        tex.levels.append(sr.bytes(size))
    if not sr.at_end():
        raise sr.error(f"texture {tex.name!r}: {sr.remaining} unexpected bytes after the levels")
    kind, estamp, er = read_chunk(r, f"texture {tex.name!r} extension")
    if kind != EXTENSION:
        raise FormatError(f"texture {tex.name!r}: expected an extension, found 0x{kind:X}")
    ext = RawChunk(kind, estamp, er.rest())
    if not r.at_end():
        raise r.error(f"texture {tex.name!r}: {r.remaining} unexpected bytes")
    return NativeChunk(stamp, sstamp, payload, tex, ext)


def _level_bytes(tex: NativeTexture, level: int) -> int | None:
    """The bytes a level of the raster's depth holds (None: a depth without a size)."""
    w, h = tex.level_size(level)
    if tex.dxt:
        return ((w + 3) // 4) * ((h + 3) // 4) * (8 if tex.dxt == 1 else 16)
    if tex.raster_format & (PAL4 | PAL8):
        return (w * h + 1) // 2 if tex.depth == 4 and tex.raster_format & PAL4 else w * h
    if tex.depth in (8, 16, 24, 32):
        return w * h * tex.depth // 8
    return None


def write(f: TxdFile) -> bytes:
    body = bytearray(_chunk(STRUCT, f.struct_stamp, struct.pack("<HH", f.count, f.device)))
    for n in f.natives:
        inner = _chunk(STRUCT, n.struct_stamp, n.payload) + n.extension.to_bytes()
        body += _chunk(TEXTURE_NATIVE, n.stamp, inner)
    for item in f.items:
        body += item.to_bytes()
    return _chunk(TEXTURE_DICTIONARY, f.stamp, bytes(body)) + f.trailing


def _chunk(kind: int, stamp: int, payload: bytes) -> bytes:
    return struct.pack("<III", kind, len(payload), stamp) + payload


# -- decoding --------------------------------------------------------------------


def _expand(v: np.ndarray, bits: int) -> np.ndarray:
    top = (1 << bits) - 1
    return (v.astype(np.uint32) * 255 // top).astype(np.uint8)


def _rgb565(c: np.ndarray) -> np.ndarray:
    c = c.astype(np.uint32)
    return np.stack([_expand(c >> 11 & 31, 5), _expand(c >> 5 & 63, 6), _expand(c & 31, 5)], -1)


def _pixel_bytes(tex: NativeTexture) -> int | None:
    """Bytes a pixel of an unpalettised, uncompressed raster takes in :func:`decode`
    (None: a format and depth it does not decode)."""
    fmt = tex.pixel_format
    if fmt in (C8888, C888) and tex.depth == 32:
        return 4
    if fmt == C888 and tex.depth == 24:
        return 3
    if fmt == LUM8:
        return 1
    if fmt in (51, C565, C555, C1555, C4444):  # 51: D3DFMT_A8L8
        return 2
    return None


def _decoded_bytes(tex: NativeTexture, level: int, have: int) -> int | None:
    """The bytes :func:`decode` reads from a level of ``have`` bytes (the reader checks
    them, whatever the depth says); None: a raster :func:`decode` refuses."""
    w, h = tex.level_size(level)
    if tex.dxt:
        return ((w + 3) // 4) * ((h + 3) // 4) * (8 if tex.dxt == 1 else 16)
    if tex.raster_format & (PAL4 | PAL8):
        return (w * h + 1) // 2 if tex.raster_format & PAL4 and have < w * h else w * h
    pixel = _pixel_bytes(tex)
    return None if pixel is None else w * h * pixel


def decode(tex: NativeTexture, level: int = 0) -> np.ndarray:
    """Level ``level`` as (height, width, 4) uint8 RGBA, top row first."""
    w, h = tex.level_size(level)
    data = tex.levels[level]
    need = _decoded_bytes(tex, level, len(data))
    if need is None:
        raise FormatError(
            f"texture {tex.name!r}: raster format {tex.pixel_format} of depth {tex.depth} "
            "is not supported"
        )
    if len(data) < need:
        raise FormatError(
            f"texture {tex.name!r} level {level} of {(w, h)} needs {need} bytes, it has {len(data)}"
        )
    if tex.dxt:
        return _decode_dxt(data, w, h, tex.dxt)
    if tex.raster_format & (PAL4 | PAL8):
        pal = np.frombuffer(tex.palette, np.uint8).reshape(-1, 4).copy()
        if not tex.has_alpha:
            pal[:, 3] = 255
        if tex.raster_format & PAL4 and len(data) < w * h:  # two indices a byte
            packed = np.frombuffer(data, np.uint8, (w * h + 1) // 2)
            idx = np.stack([packed >> 4, packed & 15], -1).reshape(-1)[: w * h]
        else:  # one index a byte, as the PC games store PAL4 too
            idx = np.frombuffer(data, np.uint8, w * h)
            if tex.raster_format & PAL4:
                idx = idx & 31
        return pal[idx].reshape(h, w, 4)
    fmt = tex.pixel_format
    n = w * h
    if fmt in (C8888, C888) and tex.depth == 32:
        px = np.frombuffer(data, np.uint8, n * 4).reshape(h, w, 4)
        out = px[..., [2, 1, 0, 3]].copy()
        if fmt == C888:
            out[..., 3] = 255
        return out
    if fmt == C888 and tex.depth == 24:
        px = np.frombuffer(data, np.uint8, n * 3).reshape(h, w, 3)
        return np.concatenate([px[..., ::-1], np.full((h, w, 1), 255, np.uint8)], -1)
    if fmt == LUM8:
        v = np.frombuffer(data, np.uint8, n).reshape(h, w, 1)
        return np.concatenate([v, v, v, np.full_like(v, 255)], -1)
    if fmt == 51:  # D3DFMT_A8L8
        v = np.frombuffer(data, np.uint8, n * 2).reshape(h, w, 2)
        return np.stack([v[..., 0], v[..., 0], v[..., 0], v[..., 1]], -1)
    c = np.frombuffer(data, "<u2", n).astype(np.uint32).reshape(h, w)
    if fmt == C565:
        return np.concatenate([_rgb565(c), np.full((h, w, 1), 255, np.uint8)], -1)
    if fmt in (C555, C1555):
        a = _expand(c >> 15 & 1, 1) if fmt == C1555 else np.full((h, w), 255, np.uint8)
        return np.stack(
            [_expand(c >> 10 & 31, 5), _expand(c >> 5 & 31, 5), _expand(c & 31, 5), a], -1
        )
    return np.stack(  # C4444
        [
            _expand(c >> 8 & 15, 4),
            _expand(c >> 4 & 15, 4),
            _expand(c & 15, 4),
            _expand(c >> 12, 4),
        ],
        -1,
    )


def _decode_dxt(data: bytes, w: int, h: int, dxt: int) -> np.ndarray:
    bw, bh = (w + 3) // 4, (h + 3) // 4
    nb = bw * bh
    size = 8 if dxt == 1 else 16
    blocks = np.frombuffer(data, np.uint8, nb * size).reshape(nb, size)
    color = blocks[:, -8:]
    c0 = color[:, 0:2].copy().view("<u2")[:, 0].astype(np.int32)
    c1 = color[:, 2:4].copy().view("<u2")[:, 0].astype(np.int32)
    bits = color[:, 4:8].copy().view("<u4")[:, 0]
    p0 = _rgb565(c0).astype(np.int32)
    p1 = _rgb565(c1).astype(np.int32)
    four = (c0 > c1) | (dxt != 1)  # DXT2-5 colour blocks are always 4-colour (Direct3D)
    pal = np.empty((nb, 4, 4), np.int32)
    pal[:, 0, :3], pal[:, 1, :3] = p0, p1
    pal[:, 2, :3] = np.where(four[:, None], (2 * p0 + p1) // 3, (p0 + p1) // 2)
    pal[:, 3, :3] = np.where(four[:, None], (p0 + 2 * p1) // 3, 0)
    pal[:, :, 3] = 255
    pal[:, 3, 3] = np.where(four, 255, 0)
    codes = (bits[:, None] >> (2 * np.arange(16, dtype=np.uint32))) & 3
    px = np.take_along_axis(pal, codes[:, :, None].astype(np.int64), 1)  # (nb, 16, 4)
    if dxt in (2, 3):
        nib = blocks[:, :8]
        a = np.stack([nib & 15, nib >> 4], -1).reshape(nb, 16)
        px[:, :, 3] = a.astype(np.int32) * 17
    elif dxt in (4, 5):
        a0 = blocks[:, 0].astype(np.int32)
        a1 = blocks[:, 1].astype(np.int32)
        ab = blocks[:, 2:8].astype(np.uint64)
        word = np.zeros(nb, np.uint64)
        for k in range(6):
            word |= ab[:, k] << np.uint64(8 * k)
        ai = ((word[:, None] >> (3 * np.arange(16, dtype=np.uint64))) & np.uint64(7)).astype(
            np.int32
        )
        j = np.arange(8)
        # Rounded (never a tie: sevenths and fifths have no halves).
        eight = np.rint(((7 - j[1:7]) * a0[:, None] + j[1:7] * a1[:, None]) / 7.0).astype(np.int32)
        six = np.rint(((5 - j[1:5]) * a0[:, None] + j[1:5] * a1[:, None]) / 5.0).astype(np.int32)
        apal = np.empty((nb, 8), np.int32)
        apal[:, 0], apal[:, 1] = a0, a1
        big = (a0 > a1)[:, None]
        apal[:, 2:8] = np.where(
            big, eight, np.concatenate([six, np.zeros((nb, 1)), np.full((nb, 1), 255)], 1)
        )
        px[:, :, 3] = np.take_along_axis(apal, ai, 1)
    img = px.reshape(bh, bw, 4, 4, 4).transpose(0, 2, 1, 3, 4).reshape(bh * 4, bw * 4, 4)
    return img[:h, :w].astype(np.uint8)
