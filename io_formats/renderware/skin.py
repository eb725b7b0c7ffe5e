"""Skin PLG (0x116): bone indices and weights per vertex, inverse bind matrices,
split data.

Two layouts exist, told apart by the chunk size (FORMAT-NOTES):

* old (before RW 3.4): used-bone count and max weights 0, no used-bone list,
  a 4-byte filler (0xDEADDEAD) before each matrix, no split data;
* new: the used-bone list, no filler, then the split data (bone limit, mesh
  count, RLE count and, when there are meshes, the remap, mesh and RLE arrays).

Matrices are kept as stored: 4 rows of 4 float32 in RenderWare's row-vector
convention, whose fourth column is usually all zeros.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

import numpy as np

from ..codec import FormatError, Reader
from .chunks import SKIN_PLG, chunk_bytes

DEADDEAD = 0xDEADDEAD


@dataclass
class SplitData:
    """Bone groups for platforms with a bone limit; all zero in most GTA files."""

    bone_limit: int = 0
    num_meshes: int = 0
    num_rle: int = 0
    remap: np.ndarray = field(default_factory=lambda: np.zeros(0, np.uint8))  # (numBones,)
    meshes: np.ndarray = field(default_factory=lambda: np.zeros((0, 2), np.uint8))
    rle: np.ndarray = field(default_factory=lambda: np.zeros((0, 2), np.uint8))

    def is_zero(self) -> bool:
        return not (self.bone_limit or self.num_meshes or self.num_rle)

    def to_json(self) -> dict:
        return {
            "bone_limit": self.bone_limit,
            "num_meshes": self.num_meshes,
            "num_rle": self.num_rle,
            "remap": self.remap.tolist(),
            "meshes": self.meshes.tolist(),
            "rle": self.rle.tolist(),
        }

    @classmethod
    def from_json(cls, d: dict) -> SplitData:
        return cls(
            int(d["bone_limit"]),
            int(d["num_meshes"]),
            int(d["num_rle"]),
            np.array(d["remap"], np.uint8).reshape(-1),
            np.array(d["meshes"], np.uint8).reshape(-1, 2),
            np.array(d["rle"], np.uint8).reshape(-1, 2),
        )


@dataclass
class Skin:
    stamp: int
    num_bones: int
    used_bones: np.ndarray  # (U,) uint8
    max_weights: int
    indices: np.ndarray  # (V, 4) uint8
    weights: np.ndarray  # (V, 4) float32
    matrices: np.ndarray  # (numBones, 4, 4) float32, rows as stored
    padding: int = 0  # the header's fourth byte
    fillers: np.ndarray | None = None  # (numBones,) uint32: old layout
    split: SplitData | None = None  # new layout

    @property
    def old_layout(self) -> bool:
        return self.fillers is not None

    def to_bytes(self) -> bytes:
        parts = [
            bytes([self.num_bones, len(self.used_bones), self.max_weights, self.padding]),
            np.ascontiguousarray(self.used_bones, np.uint8).tobytes(),
            np.ascontiguousarray(self.indices, np.uint8).tobytes(),
            np.ascontiguousarray(self.weights, "<f4").tobytes(),
        ]
        mats = np.ascontiguousarray(self.matrices, "<f4").reshape(-1, 16)
        if self.fillers is not None:
            rec = np.zeros(len(mats), [("filler", "<u4"), ("m", "<f4", (16,))])
            rec["filler"] = self.fillers
            rec["m"] = mats
            parts.append(rec.tobytes())
        else:
            parts.append(mats.tobytes())
            s = self.split or SplitData()
            parts.append(np.array([s.bone_limit, s.num_meshes, s.num_rle], "<u4").tobytes())
            if s.num_meshes:
                parts += [
                    np.ascontiguousarray(s.remap, np.uint8).tobytes(),
                    np.ascontiguousarray(s.meshes, np.uint8).tobytes(),
                    np.ascontiguousarray(s.rle, np.uint8).tobytes(),
                ]
        return chunk_bytes(SKIN_PLG, self.stamp, b"".join(parts))


def read_skin(r: Reader, stamp: int, num_vertices: int) -> Skin:
    """Parse a Skin PLG payload; ``num_vertices`` comes from the geometry."""
    start = r.pos
    num_bones, num_used, max_weights, padding = r.u8(), r.u8(), r.u8(), r.u8()
    if max_weights > 4:
        raise FormatError(f"Skin PLG: {max_weights} weights per vertex (at most 4)", start + 2)
    used = r.array(np.uint8, num_used, "used-bone list")
    r.count(num_vertices, 20, "skinned vertex")
    indices = r.array(np.uint8, (num_vertices, 4), "bone indices")
    weights = r.array("<f4", (num_vertices, 4), "bone weights")
    if _old_layout(r, num_bones, max_weights):
        rec = r.array([("filler", "<u4"), ("m", "<f4", (16,))], num_bones, "bone matrices")
        skin = Skin(
            stamp,
            num_bones,
            used,
            max_weights,
            indices,
            weights,
            rec["m"].reshape(-1, 4, 4).copy(),
            padding,
            rec["filler"].copy(),
        )
    else:
        rest = r.remaining
        if rest < num_bones * 64 + 12:
            raise r.error(
                f"Skin PLG: {rest} bytes left for {num_bones} bone matrices and split data "
                f"(needs {num_bones * 64 + 12}, or {num_bones * 68} in the old layout)"
            )
        mats = r.array("<f4", (num_bones, 4, 4), "bone matrices")
        split = _read_split(r, num_bones)
        skin = Skin(
            stamp, num_bones, used, max_weights, indices, weights, mats, padding, None, split
        )
    if not r.at_end():
        raise r.error(f"Skin PLG: {r.remaining} bytes after the split data")
    bad = np.nonzero(((indices >= num_bones) & (weights != 0)).any(axis=1))[0]
    if len(bad):
        v = int(bad[0])
        raise FormatError(
            f"Skin PLG: vertex {v} uses bone {int(indices[v].max())} of {num_bones}",
            start + 4 + num_used + 4 * v,
        )
    bad_used = np.nonzero(used >= num_bones)[0]
    if len(bad_used):
        i = int(bad_used[0])
        raise FormatError(f"Skin PLG: used bone {int(used[i])} of {num_bones}", start + 4 + i)
    return skin


def _old_layout(r: Reader, num_bones: int, max_weights: int) -> bool:
    """Which layout the bytes left fit: fillers and no split data (old), or no fillers
    and split data whose counts account for the rest exactly (new). When both fit
    (3 bones, empty split data), a max-weights count of 0 means old."""
    rest = r.remaining
    fits_old = rest == num_bones * 68
    at = r.pos + num_bones * 64
    fits_new = False
    if rest >= num_bones * 64 + 12:
        _, meshes, rle = struct.unpack_from("<III", r.data, at)
        split = num_bones + 2 * meshes + 2 * rle if meshes else 0
        fits_new = rest == num_bones * 64 + 12 + split
    if fits_old and fits_new:
        return max_weights == 0
    return fits_old


def _read_split(r: Reader, num_bones: int) -> SplitData:
    bone_limit, num_meshes, num_rle = r.u32(), r.u32(), r.u32()
    s = SplitData(bone_limit, num_meshes, num_rle)
    if num_meshes:
        r.count(num_meshes, 2, "split mesh")
        r.count(num_rle, 2, "split RLE")
        s.remap = r.array(np.uint8, num_bones, "bone remap indices")
        s.meshes = r.array(np.uint8, (num_meshes, 2), "split meshes")
        s.rle = r.array(np.uint8, (num_rle, 2), "split RLE")
    return s
