"""The BonesPro animation file: a header and, per frame, bone transforms (Bones
mode), world vertex positions (Mesh (absolute)) or vertices in the frames of the
bones that affect them (Mesh (bones c.s)).

Values are kept exactly as written (matrix rows or Euler angles in the file's
units); :mod:`.convert` turns them into matrices.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from .euler import ORDERS
from .text import COUNT_LIMIT, KeptText, Tokens, format_numbers, write_kept_text

BONES = "Bones"
MESH_ABSOLUTE = "Mesh (absolute)"
MESH_BONES = "Mesh (bones c.s)"
MODES = (BONES, MESH_ABSOLUTE, MESH_BONES)
ABSOLUTE = "Absolute"
RELATIVE = "Relative to parent"
SYSTEMS = (ABSOLUTE, RELATIVE)
MATRIX = "Matrix"
EULER = "Euler Angles"
REPRESENTATIONS = (MATRIX, EULER)
DEGREES = "Degrees"
RADIANS = "Radians"
UNITS = (DEGREES, RADIANS)
# Spellings read as the canonical one (the specification's prose says "c.s." too).
_MODE_ALIASES = {"Mesh (bones c.s.)": MESH_BONES}
# Frames without values (no bones, or no vertices) take no bytes, so the file cannot
# back their count; an importer still makes one key per frame.
EMPTY_FRAME_LIMIT = 1 << 20


@dataclass
class Animation:
    bone_count: int
    vertex_count: int
    frame_count: int
    mode: str = BONES
    system: str = ABSOLUTE
    representation: str = MATRIX
    euler_order: str = "XYZ"
    angle_units: str = DEGREES
    first_frame: float = 0.0
    last_frame: float = 0.0
    step: float = 1.0
    quoted: bool = False  # the five header words were written in double quotes
    # Bones mode: (Nf, Nb, 3) box sizes; (Nf, Nb, 12) matrix rows + T or (Nf, Nb, 6) E + T.
    boxes: np.ndarray | None = None
    bone_values: np.ndarray | None = None
    node_values: np.ndarray | None = None
    # Mesh (absolute): (Nf, Nv, 3).
    positions: np.ndarray | None = None
    # Mesh (bones c.s): per frame and bone block, the bone index written and the
    # vertex count; then every (vertex, x y z) row of every block in file order.
    block_bones: np.ndarray | None = None  # (Nf, Nb) int32
    block_counts: np.ndarray | None = None  # (Nf, Nb) int32
    block_vertices: np.ndarray | None = None  # (total,) int32
    block_positions: np.ndarray | None = None  # (total, 3) float64
    # The file read (another writer's text): :func:`write` keeps its text (see
    # ``text.keep_text``).
    source: bytes | None = field(default=None, repr=False, compare=False)

    @property
    def transform_width(self) -> int:
        """Numbers per bone or node transform: 12 (matrix) or 6 (Euler angles)."""
        return 12 if self.representation == MATRIX else 6

    def frames(self) -> np.ndarray:
        """The frame number of each exported frame: FirstFrame + f * Step."""
        return self.first_frame + np.arange(self.frame_count) * self.step


def read(data: bytes) -> Animation:
    """Parse an animation file; FormatError names the line of the first problem."""
    tok = Tokens(data)
    nb = tok.integer("number of bones Nb", 0, COUNT_LIMIT)
    nv = tok.integer("number of vertices Nv", 0, COUNT_LIMIT)
    nf = tok.integer("number of frames Nf", 0, COUNT_LIMIT)
    nf_at = tok.last
    mode, quoted = tok.phrase((*MODES, *_MODE_ALIASES), "ExportMode")
    mode = _MODE_ALIASES.get(mode, mode)
    system, _ = tok.phrase(SYSTEMS, "TransformSystem")
    representation, _ = tok.phrase(REPRESENTATIONS, "TransformRepresentation")
    order, _ = tok.phrase(ORDERS, "EulerOrder")
    units, _ = tok.phrase(UNITS, "AngleUnits")
    first = tok.number("FirstFrame")
    last = tok.number("LastFrame")
    step = tok.number("Step")
    anim = Animation(nb, nv, nf, mode, system, representation, order, units, first, last, step)
    anim.quoted = quoted
    anim.source = data
    if nf > EMPTY_FRAME_LIMIT and _values_per_frame(anim) == 0:
        raise tok.error(
            f"{nf} frames that hold no values: nothing in the file backs a count above "
            f"{EMPTY_FRAME_LIMIT}",
            nf_at,
        )
    if mode == BONES:
        width = anim.transform_width
        per_bone = 3 + 2 * width
        values = _exactly(tok, nf * nb * per_bone, f"{nf} frames of {nb} bones")
        values = values.reshape(nf, nb, per_bone)
        anim.boxes = values[..., :3].copy()
        anim.bone_values = values[..., 3 : 3 + width].copy()
        anim.node_values = values[..., 3 + width :].copy()
    elif mode == MESH_ABSOLUTE:
        values = _exactly(tok, nf * nv * 3, f"{nf} frames of {nv} vertices")
        anim.positions = values.reshape(nf, nv, 3)
    else:
        _read_bone_blocks(tok, anim)
    return anim


def _values_per_frame(a: Animation) -> int:
    if a.mode == BONES:
        return a.bone_count * (3 + 2 * a.transform_width)
    if a.mode == MESH_ABSOLUTE:
        return a.vertex_count * 3
    return a.bone_count * 2


def _exactly(tok: Tokens, n: int, what: str) -> np.ndarray:
    tok.need(n, what)
    values, first = tok.rest(what)
    if len(values) < n:
        raise tok.end_error(f"{what}: expected {n} numbers, the file ends after {len(values)}")
    if len(values) > n:
        raise tok.value_error(first, n, f"unexpected {float(values[n])!r} after {what}")
    return values


def _read_bone_blocks(tok: Tokens, anim: Animation) -> None:
    nb, nv, nf = anim.bone_count, anim.vertex_count, anim.frame_count
    tok.need(nf * nb * 2, f"{nf} frames of {nb} bone blocks")
    flat, first = tok.rest("bone blocks")
    size = len(flat)
    if nf * nb * 2 > size:
        raise tok.end_error(f"{nf} frames of {nb} bone blocks: the file ends after {size} numbers")
    values = flat.tolist()
    heads = [0] * (nf * nb)
    j = 0
    # Each block's place depends on the counts before it: one pass over the
    # Nf x Nb block headers; the vertex rows are gathered with numpy.
    for k in range(nf * nb):
        if j + 2 > size:
            raise tok.end_error(f"frame {k // nb}, bone block {k % nb}: the file ends")
        n = values[j + 1]
        if not (0 <= n <= nv) or n != int(n):
            raise tok.value_error(
                first,
                j + 1,
                f"frame {k // nb}, bone block {k % nb}: "
                f"vertex count {float(n)!r} is not in 0..{nv}",
            )
        heads[k] = j
        j += 2 + 4 * int(n)
    if j > size:
        raise tok.end_error(f"frame {nf - 1}: the file ends inside the last bone block")
    if j < size:
        raise tok.value_error(
            first, j, f"unexpected {float(values[j])!r} after the last of {nf} frames"
        )
    head = np.asarray(heads, np.int64)
    bones = flat[head]
    bad = ~np.isfinite(bones) | (bones != np.round(bones)) | (bones < 0) | (bones >= nb)
    if bad.any():
        k = int(np.argmax(bad))
        raise tok.value_error(
            first,
            int(head[k]),
            f"frame {k // nb}: block for bone {float(bones[k])!r}, which does not exist "
            f"(bones 0..{nb - 1})",
        )
    counts = flat[head + 1].astype(np.int64)
    total = int(counts.sum())
    row = np.repeat(head + 2, counts) + 4 * (
        np.arange(total) - np.repeat(np.cumsum(counts) - counts, counts)
    )
    verts = flat[row] if total else np.zeros(0)
    bad = ~np.isfinite(verts) | (verts != np.round(verts)) | (verts < 0) | (verts >= nv)
    if bad.any():
        k = int(np.argmax(bad))
        raise tok.value_error(
            first,
            int(row[k]),
            f"vertex index {float(verts[k])!r} does not exist (vertices 0..{nv - 1})",
        )
    anim.block_bones = bones.astype(np.int32).reshape(nf, nb)
    anim.block_counts = counts.astype(np.int32).reshape(nf, nb)
    anim.block_vertices = verts.astype(np.int32)
    anim.block_positions = flat[row[:, None] + np.arange(1, 4)] if total else np.zeros((0, 3))


def _word(text: str, quoted: bool) -> str:
    return f'"{text}"' if quoted else text


def write(a: Animation) -> bytes:
    """The animation file as text: the text of the file it was read from, as far as
    its values are unchanged (:func:`write_kept`), else RigPort's."""
    return write_kept(a).data


def write_kept(a: Animation) -> KeptText:
    """:func:`write`, with how many values it wrote RigPort's way and why the file's own
    text is not kept, if it is not (``text.keep_text``)."""
    return write_kept_text(_write(a), a.source, lambda: _write(read(a.source)))


def foreign_text(a: Animation) -> bytes | None:
    """The text ``a`` was read from (what an import keeps for the export), else None.
    Bones and Mesh (bones c.s) values come back from Blender's float32 pose, composed
    and inverted, a few float32 ulps off even when the file's are float32: their text
    is always kept. Mesh (absolute) positions are stored as float32: None when RigPort
    writes that copy of them as that very text (nothing to keep)."""
    if a.source is None:
        return None
    if a.mode != MESH_ABSOLUTE or a.positions is None:
        return a.source
    f32 = np.asarray(a.positions, np.float32).astype(np.float64)
    return None if _write(replace(a, positions=f32)) == a.source else a.source


def _write(a: Animation) -> bytes:
    """RigPort's text of the animation, laid out as in the specification."""
    q = a.quoted
    parts = [
        f"{a.bone_count}\n{a.vertex_count}\n{a.frame_count}\n",
        "".join(
            _word(w, q) + "\n"
            for w in (a.mode, a.system, a.representation, a.euler_order, a.angle_units)
        ),
        format_numbers(np.array([a.first_frame, a.last_frame, a.step]), 1),
    ]
    if a.mode == BONES:
        width = a.transform_width
        values = np.concatenate([a.boxes, a.bone_values, a.node_values], axis=-1)
        parts.append(format_numbers(values.reshape(-1, 3 + 2 * width), 3))
    elif a.mode == MESH_ABSOLUTE:
        parts.append(format_numbers(a.positions, 3))
    else:
        parts.append(_write_bone_blocks(a))
    return "".join(parts).encode("utf-8")


def _write_bone_blocks(a: Animation) -> str:
    counts = np.asarray(a.block_counts, np.int64).ravel()
    total = int(counts.sum())
    head = np.arange(len(counts), dtype=np.int64) * 2 + 4 * (np.cumsum(counts) - counts)
    flat = np.empty(2 * len(counts) + 4 * total)
    flat[head] = np.asarray(a.block_bones).ravel()
    flat[head + 1] = counts
    row = np.repeat(head + 2, counts) + 4 * (
        np.arange(total) - np.repeat(np.cumsum(counts) - counts, counts)
    )
    flat[row] = a.block_vertices
    flat[row[:, None] + np.arange(1, 4)] = a.block_positions
    table = np.array(
        ["%d %d\n" + "%d %.9g %.9g %.9g\n" * n for n in range(int(counts.max(initial=0)) + 1)],
        dtype=object,
    )
    return "".join(table[counts].tolist()) % tuple(flat.tolist())
