"""Texture dictionaries built in code (no TXD is in the corpus): every PC raster
layout the reader decodes, with mipmaps, in Direct3D 8 (III/VC) or 9 (SA).

Pixels are a deterministic pattern; DXT levels are pattern blocks encoded
crudely (endpoints and codes chosen per block): the point is a valid layout
whose decoded pixels real readers (DragonFF, librw) can be compared with.
"""

from __future__ import annotations

import struct

import numpy as np

from ..io_formats.renderware.chunks import EXTENSION, STRUCT, TARGETS
from ..io_formats.renderware.txd import (
    C565,
    C888,
    C1555,
    C4444,
    C8888,
    D3D8,
    D3D9,
    MIPMAP,
    PAL4,
    PAL8,
    TEXTURE_DICTIONARY,
    TEXTURE_NATIVE,
    _chunk,
)

#: name -> (raster format bits, depth, D3D9 format, DXT number)
LAYOUTS = {
    "c8888": (C8888 << 8, 32, 21, 0),
    "c888": (C888 << 8, 32, 22, 0),
    "c565": (C565 << 8, 16, 23, 0),
    "c1555": (C1555 << 8, 16, 25, 0),
    "c4444": (C4444 << 8, 16, 26, 0),
    "pal8": (PAL8 | (C8888 << 8), 8, 21, 0),
    "pal4": (PAL4 | (C8888 << 8), 8, 21, 0),
    "dxt1": (C565 << 8, 16, 0x31545844, 1),
    "dxt3": (C4444 << 8, 16, 0x33545844, 3),
    "dxt5": (C4444 << 8, 16, 0x35545844, 5),
}


def pattern(w: int, h: int, seed: int = 0) -> np.ndarray:
    y, x = np.mgrid[0:h, 0:w]
    r = (x * 255 // max(w - 1, 1)).astype(np.uint8)
    g = (y * 255 // max(h - 1, 1)).astype(np.uint8)
    b = ((x ^ y) * 7 + seed * 40).astype(np.uint8)
    a = ((x + y + seed) % 5 * 60).astype(np.uint8)
    return np.stack([r, g, b, a], -1)


def _level(layout: str, rgba: np.ndarray, rng: np.random.Generator) -> tuple[bytes, bytes]:
    """(pixel bytes, palette bytes) of one level."""
    rf, depth, _fmt, dxt = LAYOUTS[layout]
    h, w = rgba.shape[:2]
    r, g, b, a = (rgba[..., i].astype(np.uint32) for i in range(4))
    if layout in ("c8888", "c888"):
        return rgba[..., [2, 1, 0, 3]].tobytes(), b""
    if layout == "c565":
        return ((r >> 3) << 11 | (g >> 2) << 5 | b >> 3).astype("<u2").tobytes(), b""
    if layout == "c1555":
        v = (a >> 7) << 15 | (r >> 3) << 10 | (g >> 3) << 5 | b >> 3
        return v.astype("<u2").tobytes(), b""
    if layout == "c4444":
        return ((a >> 4) << 12 | (r >> 4) << 8 | (g >> 4) << 4 | b >> 4).astype(
            "<u2"
        ).tobytes(), b""
    if layout in ("pal8", "pal4"):
        n = 256 if layout == "pal8" else 32
        used = 256 if layout == "pal8" else 16
        pal = rng.integers(0, 256, (n, 4), dtype=np.uint8)
        idx = ((r + g + b) % used).astype(np.uint8)
        return idx.tobytes(), pal.tobytes()
    bw, bh = (w + 3) // 4, (h + 3) // 4
    nb = bw * bh
    size = 8 if dxt == 1 else 16
    blocks = rng.integers(0, 256, (nb, size), dtype=np.uint8)
    return blocks.tobytes(), b""


def native_texture(
    name: str,
    layout: str,
    width: int,
    height: int,
    platform: int = D3D9,
    levels: int = 3,
    seed: int = 0,
    stamp: int = TARGETS["SA"][2],
    mask: str = "",
) -> bytes:
    rf, depth, fmt, dxt = LAYOUTS[layout]
    rng = np.random.default_rng(seed)
    rf |= MIPMAP if levels > 1 else 0
    alpha = layout not in ("c888", "c565", "dxt1")
    if platform == D3D8:
        word, last = int(alpha), dxt
    else:
        word = fmt
        last = int(alpha) | (8 if dxt else 0)
    head = struct.pack(
        "<II32s32sIIHHBBBB",
        platform,
        0x1106,
        name.encode(),
        mask.encode(),
        rf,
        word,
        width,
        height,
        depth,
        levels,
        4,
        last,
    )
    palette = b""
    body = bytearray()
    for level in range(levels):
        w, h = max(width >> level, 1), max(height >> level, 1)
        data, palette_l = _level(layout, pattern(w, h, seed + level), rng)
        palette = palette or palette_l
        body += struct.pack("<I", len(data)) + data
    payload = head + palette + bytes(body)
    inner = _chunk(STRUCT, stamp, payload) + _chunk(EXTENSION, stamp, b"")
    return _chunk(TEXTURE_NATIVE, stamp, inner)


def dictionary(
    textures: list[tuple[str, str, int, int]], target: str = "SA", levels: int = 3
) -> bytes:
    """A .txd of ``(name, layout, width, height)`` textures: Direct3D 9 for SA,
    8 for III/VC (no D3D9 formats there: DXT by number, alpha as a flag)."""
    stamp = TARGETS[target][2]
    platform = D3D9 if target == "SA" else D3D8
    device = 2 if target == "SA" else 1
    body = _chunk(STRUCT, stamp, struct.pack("<HH", len(textures), device))
    for k, (name, layout, w, h) in enumerate(textures):
        body += native_texture(name, layout, w, h, platform, levels, k, stamp)
    body += _chunk(EXTENSION, stamp, b"")
    return _chunk(TEXTURE_DICTIONARY, stamp, body)


def every_layout(target: str = "SA", size: int = 32) -> bytes:
    return dictionary([(f"tex_{k}", k, size, size // 2) for k in LAYOUTS], target)


def large(megabytes: float = 50.0, side: int = 1024) -> bytes:
    """About ``megabytes`` of 32-bit textures with full mipmap chains."""
    per = side * side * 4 * 4 / 3
    n = max(round(megabytes * 1e6 / per), 1)
    levels = side.bit_length()
    return dictionary([(f"big{k:02d}", "c8888", side, side) for k in range(n)], "SA", levels)
