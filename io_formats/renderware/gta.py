"""Rockstar's GTA plugins on a geometry: 2d effects, night vertex colours, breakable models.

What each one depends on decides what an edit of the mesh may do to it:

- **night vertex colours** (0x0253F2F9, San Andreas): a uint32 flag, then one RGBA
  byte colour per vertex when the flag is not 0. Per-vertex data Blender can
  hold: it becomes a second colour attribute (``night``) and is written back
  from it, so it follows any edit of the mesh.
- **2d effects** (0x0253F2F8, "2dfx"): lights, particles, ped attractors ...
  placed in the atomic's space (a count, then per entry a position, a type, a
  size and that many bytes). Nothing in it refers to the geometry's vertices
  or triangles, so it is kept through any edit.
- **breakable model** (0x0253F2FD): a uint32 flag, then (when not 0) a complete
  second model of its own (its positions, UVs, prelit colours, triangles,
  materials and texture names) that the game swaps in when the object breaks.
  Its indices refer to its own vertices, not the geometry's, so it is kept
  through any edit as well.
"""

from __future__ import annotations

import numpy as np

TWO_DFX = 0x0253F2F8
NIGHT_COLORS = 0x0253F2F9
BREAKABLE = 0x0253F2FD
#: Geometry plugins that do not depend on the geometry's vertices or triangles.
NOT_PER_VERTEX = frozenset({TWO_DFX, BREAKABLE})
#: The colour attribute the night vertex colours become in Blender.
NIGHT_ATTRIBUTE = "night"


def read_night_colors(payload: bytes, num_vertices: int) -> np.ndarray | None:
    """The night colours as (num_vertices, 4) uint8, or None when the chunk holds
    none (flag 0) or not exactly one colour per vertex."""
    if len(payload) != 4 + 4 * num_vertices or num_vertices == 0:
        return None
    if not int.from_bytes(payload[:4], "little"):
        return None
    return np.frombuffer(payload, np.uint8, offset=4).reshape(num_vertices, 4).copy()


def night_colors_payload(colors: np.ndarray, flag: int = 1) -> bytes:
    """The chunk's payload for (n, 4) uint8 colours."""
    return int(flag).to_bytes(4, "little") + np.ascontiguousarray(colors, np.uint8).tobytes()


def two_dfx_payload(entries: list[tuple[tuple[float, float, float], int, bytes]]) -> bytes:
    """A 2dfx chunk's payload from (position, effect type, effect data) entries."""
    out = [np.array([len(entries)], "<u4").tobytes()]
    for pos, kind, data in entries:
        out.append(np.array(pos, "<f4").tobytes() + np.array([kind, len(data)], "<u4").tobytes())
        out.append(data)
    return b"".join(out)


def breakable_payload(
    positions: np.ndarray,
    uvs: np.ndarray,
    prelit: np.ndarray,
    triangles: np.ndarray,
    tri_materials: np.ndarray,
    textures: list[tuple[str, str]],
    ambient: np.ndarray,
    position_rule: int = 1,
) -> bytes:
    """A breakable model's payload (a model of its own, see the module's text): the
    header with offsets the game fixes up at load, then the arrays."""
    nv, nt, nm = len(positions), len(triangles), len(textures)
    head = 4 + 4 + 16 + 12 + 20
    pos_off = head
    uv_off = pos_off + 12 * nv
    prelit_off = uv_off + 8 * nv
    tri_off = prelit_off + 4 * nv
    mat_off = tri_off + 6 * nt
    name_off = mat_off + 2 * nt
    mask_off = name_off + 32 * nm
    amb_off = mask_off + 32 * nm

    def u16(n: int) -> bytes:
        return np.array([n, 0], "<u2").tobytes()

    def u32(*v: int) -> bytes:
        return np.array(v, "<u4").tobytes()

    def name32(s: str) -> bytes:
        return s.encode("ascii")[:31].ljust(32, b"\0")

    parts = [
        u32(1, position_rule),
        u16(nv) + u32(pos_off, uv_off, prelit_off),
        u16(nt) + u32(tri_off, mat_off),
        u16(nm) + u32(name_off, name_off, mask_off, amb_off),
        np.ascontiguousarray(positions, "<f4").tobytes(),
        np.ascontiguousarray(uvs, "<f4").tobytes(),
        np.ascontiguousarray(prelit, np.uint8).tobytes(),
        np.ascontiguousarray(triangles, "<u2").tobytes(),
        np.ascontiguousarray(tri_materials, "<u2").tobytes(),
        b"".join(name32(n) for n, _ in textures),
        b"".join(name32(m) for _, m in textures),
        np.ascontiguousarray(ambient, "<f4").tobytes(),
    ]
    return b"".join(parts)
