"""The BonesPro structure file: bones (box sizes, bone and node transforms) and
vertices (world positions with weighted bone lists).

Transforms are kept as written: rows R0, R1, R2 and T of 3ds Max's row-vector
form (``p' = p R + T``), shape (N, 4, 3).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from ..transforms import parent_first_order
from .text import KeptText, Tokens, format_numbers, write_kept_text

BONE_VALUES = 3 + 12 + 12  # box, bone transform, node transform
_FLOATS = ("boxes", "bone_transforms", "node_transforms", "positions", "weights")


@dataclass
class Structure:
    names: list[str]
    parents: np.ndarray  # (Nb,) int32, -1 for "*"
    boxes: np.ndarray  # (Nb, 3) float64: Ax Ay Az
    bone_transforms: np.ndarray  # (Nb, 4, 3) float64: R rows then T
    node_transforms: np.ndarray  # (Nb, 4, 3) float64
    positions: np.ndarray  # (Nv, 3) float64 world coordinates
    weight_counts: np.ndarray  # (Nv,) int32: Nbv per vertex
    weight_bones: np.ndarray  # (sum Nbv,) int32, vertex by vertex in file order
    weights: np.ndarray  # (sum Nbv,) float64
    # The file read (another writer's text): :func:`write` keeps its text (see
    # ``text.keep_text``).
    source: bytes | None = field(default=None, repr=False, compare=False)

    @property
    def weight_starts(self) -> np.ndarray:
        """Index into ``weight_bones``/``weights`` of each vertex's first entry."""
        return np.concatenate([[0], np.cumsum(self.weight_counts)[:-1]]).astype(np.int64)


def read(data: bytes) -> Structure:
    """Parse a structure file; FormatError names the line of the first problem."""
    tok = Tokens(data)
    nb = tok.integer("number of bones Nb")
    nv = tok.integer("number of vertices Nv")
    tok.need(nb * (2 + BONE_VALUES) + nv * 4, f"{nb} bones and {nv} vertices")
    names: list[str] = []
    parents = np.empty(nb, np.int32)
    values = np.empty((nb, BONE_VALUES))
    first_bone = tok.pos
    for b in range(nb):
        names.append(tok.name(f"bone {b} name"))
        if tok.peek() == "*":
            tok.word(f"bone {b} parent")
            parents[b] = -1
        else:
            parents[b] = tok.integer(f"bone {b} parent", 0, nb)
            if parents[b] == b:
                raise tok.error(f"bone {b} is its own parent")
        values[b] = tok.floats(BONE_VALUES, f"bone {b} box and transforms")
    try:
        parent_first_order(parents)
    except ValueError as exc:
        raise tok.value_error(first_bone, 0, str(exc)) from None
    counts, bones, weights, positions = _read_vertices(tok, nb, nv)
    return Structure(
        names,
        parents,
        values[:, :3].copy(),
        values[:, 3:15].reshape(nb, 4, 3).copy(),
        values[:, 15:].reshape(nb, 4, 3).copy(),
        positions,
        counts,
        bones,
        weights,
        data,
    )


def _read_vertices(
    tok: Tokens, nb: int, nv: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    flat, first = tok.rest("vertices")
    size = len(flat)
    if nv * 4 > size:
        raise tok.end_error(f"{nv} vertices: the file ends after {size} numbers")
    # Where each vertex starts depends on every count before it: one pass over the
    # counts (ints, not tokens), everything else is gathered with numpy.
    values = flat.tolist()
    starts = [0] * nv
    j = 0
    for i in range(nv):
        if j + 4 > size:
            raise tok.end_error(f"vertex {i}: the file ends before its position and count")
        n = values[j + 3]
        if not (0 <= n <= size) or n != int(n):
            raise tok.value_error(
                first, j + 3, f"vertex {i}: bone count {n!r} is not a whole number >= 0"
            )
        starts[i] = j
        j += 4 + 2 * int(n)
    if j > size:
        raise tok.end_error(f"vertex {nv - 1}: the file ends inside its bone list")
    if j < size:
        raise tok.value_error(first, j, f"unexpected {values[j]!r} after vertex {nv - 1}")
    start = np.asarray(starts, np.int64)
    positions = flat[start[:, None] + np.arange(3)] if nv else np.zeros((0, 3))
    counts = flat[start + 3].astype(np.int32)
    total = int(counts.sum())
    owner_start = np.repeat(start + 4, counts)
    rank = np.arange(total) - np.repeat(np.cumsum(counts) - counts, counts)
    where = owner_start + 2 * rank
    bones = flat[where]
    bad = ~np.isfinite(bones) | (bones != np.round(bones)) | (bones < 0) | (bones >= nb)
    if bad.any():
        k = int(np.argmax(bad))
        raise tok.value_error(
            first,
            int(where[k]),
            f"vertex weight for bone {float(bones[k])!r}, which does not exist (bones 0..{nb - 1})",
        )
    return counts, bones.astype(np.int32), flat[where + 1], positions


def write(s: Structure) -> bytes:
    """The structure file as text: the text of the file it was read from, as far as
    its values are unchanged (:func:`write_kept`), else RigPort's."""
    return write_kept(s).data


def write_kept(s: Structure) -> KeptText:
    """:func:`write`, with how many values it wrote RigPort's way and why the file's own
    text is not kept, if it is not (``text.keep_text``)."""
    return write_kept_text(_write(s), s.source, lambda: _write(read(s.source)))


def foreign_text(s: Structure) -> bytes | None:
    """The text ``s`` was read from (what an import keeps for the export), else None:
    None when RigPort writes Blender's float32 copy of the values as that very text
    (nothing to keep). RigPort's own text of float64 values ("-1.808647") is kept too:
    its float32 copy would be written with nine digits ("-1.80864704")."""
    if s.source is None:
        return None
    f32 = {k: np.asarray(getattr(s, k), np.float32).astype(np.float64) for k in _FLOATS}
    return None if _write(replace(s, **f32)) == s.source else s.source


def _write(s: Structure) -> bytes:
    """RigPort's text of the structure, one value group per line as the specification
    lays it out (UTF-8; plain ASCII unless a bone name is not)."""
    nb, nv = len(s.names), len(s.positions)
    for name in s.names:
        if ">" in name or "\n" in name or "\r" in name:
            raise ValueError(f"bone name {name!r}: a <name> cannot hold '>' or a line break")
    parts = [f"{nb}\n{nv}\n"]
    for b in range(nb):
        parent = "*" if s.parents[b] < 0 else str(int(s.parents[b]))
        block = np.concatenate(
            [s.boxes[b], s.bone_transforms[b].ravel(), s.node_transforms[b].ravel()]
        )
        parts.append(f"<{s.names[b]}>\n{parent}\n{format_numbers(block, 3)}")
    counts = np.asarray(s.weight_counts, np.int64)
    total = int(counts.sum())
    start = np.arange(nv, dtype=np.int64) * 4 + 2 * (np.cumsum(counts) - counts)
    flat = np.empty(4 * nv + 2 * total)
    flat[start[:, None] + np.arange(3)] = s.positions
    flat[start + 3] = counts
    rank = np.arange(total) - np.repeat(np.cumsum(counts) - counts, counts)
    where = np.repeat(start + 4, counts) + 2 * rank
    flat[where] = s.weight_bones
    flat[where + 1] = s.weights
    table = np.array(
        ["%.9g %.9g %.9g\n%d\n" + "%d %.9g\n" * n for n in range(int(counts.max(initial=0)) + 1)],
        dtype=object,
    )
    pieces = table[counts].tolist()
    parts.append("".join(pieces) % tuple(flat.tolist()))
    return "".join(parts).encode("utf-8")
