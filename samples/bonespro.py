"""Generated BonesPro files for tests and benchmarks (there are none in the corpus).

A small rig (names with spaces, a parent written after its child, scaled and
rotated bind pose, node transforms offset from the bone transforms, vertices
with one to four weights) and its animation in every export mode and header
setting, plus :func:`decorate` which rewrites a file with comments and odd
whitespace and :func:`other_writer` which formats its numbers as other writers do.
"""

from __future__ import annotations

import numpy as np

from ..io_formats.bonespro import animation as anim_file
from ..io_formats.bonespro.convert import (
    matrix_to_rows,
    rows_to_matrix,
    to_relative,
    to_world,
    world_positions_to_blocks,
    worlds_to_bones_animation,
)
from ..io_formats.bonespro.euler import euler_to_matrix
from ..io_formats.bonespro.structure import Structure
from ..io_formats.bonespro.text import split_text

#: Number formats of other writers: C's fixed six decimals (3ds Max's own exporters;
#: "-0.000000" for a small negative), exponents, and seven significant digits.
OTHER_FORMATS = {"fixed": "%.6f", "exponent": "%.6e", "short": "%.7g"}

NAMES = ["Bip01", "Bip01 Pelvis", "Bip01 Spine", "Bip01 L Thigh", "Bip01 R Thigh", "Tail Tip"]
PARENTS = [-1, 0, 1, 5, 1, 1]  # bone 3 hangs under bone 5, written after it


def _rig_local(rng: np.random.Generator, n: int, scale: float) -> np.ndarray:
    local = np.zeros((n, 4, 4))
    local[:, :3, :3] = euler_to_matrix(rng.uniform(-1.2, 1.2, (n, 3)), "XYZ") * scale
    local[:, :3, 3] = rng.uniform(-0.6, 0.6, (n, 3)) + [0, 0, 0.8]
    local[:, 3, 3] = 1.0
    return local


def structure(
    n_vertices: int = 40,
    seed: int = 0,
    names: list[str] | None = None,
    parents: list[int] | None = None,
    scaled: bool = True,
    max_weights: int = 4,
) -> Structure:
    """A rig with ``n_vertices`` skinned vertices around its bones."""
    rng = np.random.default_rng(seed)
    names = list(NAMES if names is None else names)
    parents_a = np.array(PARENTS if parents is None else parents, np.int32)
    nb = len(names)
    local = _rig_local(rng, nb, 1.0)
    if scaled:
        local[0, :3, :3] *= 1.5
    bind = to_world(local, parents_a)
    # Node transforms sit at a fixed offset from the bone transforms (rigid unless scaled).
    offset = np.eye(4)
    offset[:3, :3] = euler_to_matrix(rng.uniform(-0.4, 0.4, 3), "XYZ") * (0.5 if scaled else 1.0)
    offset[:3, 3] = (0.1, -0.2, 0.05)
    node = bind @ offset
    counts = rng.integers(1, min(max_weights, nb) + 1, n_vertices).astype(np.int32)
    total = int(counts.sum())
    # Distinct bones per vertex: the first ``count`` of a random permutation.
    keys = rng.random((n_vertices, nb))
    picks = np.argsort(keys, axis=1)
    bones = picks[np.arange(nb)[None, :] < counts[:, None]]
    raw = rng.uniform(0.05, 1.0, total)
    owner = np.repeat(np.arange(n_vertices), counts)
    sums = np.bincount(owner, raw, minlength=n_vertices)
    weights = np.round(raw / sums[owner], 6)
    positions = np.round(rng.uniform(-2, 2, (n_vertices, 3)), 6)
    return Structure(
        names,
        parents_a,
        np.round(rng.uniform(0.05, 0.5, (nb, 3)), 6),
        matrix_to_rows(bind),
        matrix_to_rows(node),
        positions,
        counts,
        bones.astype(np.int32),
        weights,
    )


def bone_world_frames(s: Structure, n_frames: int, seed: int = 1) -> np.ndarray:
    """(Nf, Nb, 4, 4) world bone matrices: the bind pose with each bone turning and
    moving a little more every frame (scale kept)."""
    rng = np.random.default_rng(seed)
    nb = len(s.names)
    bind = rows_to_matrix(s.bone_transforms)
    rest_local = to_relative(bind, s.parents)
    speed = rng.uniform(-0.3, 0.3, (nb, 3))
    frames = np.arange(n_frames)[:, None, None]
    turn = np.zeros((n_frames, nb, 4, 4))
    turn[..., :3, :3] = euler_to_matrix(speed[None] * frames, "ZXY")
    turn[..., :3, 3] = 0.05 * np.sin(frames + np.arange(nb)[None, :, None])
    turn[..., 3, 3] = 1.0
    return to_world(rest_local[None] @ turn, s.parents)


def node_world_frames(s: Structure, bone_world: np.ndarray) -> np.ndarray:
    """Node matrices that keep their bind-pose offset from the bone matrices."""
    bind = rows_to_matrix(s.bone_transforms)
    node = rows_to_matrix(s.node_transforms)
    return bone_world @ (np.linalg.inv(bind) @ node)[None]


def skinned_positions(s: Structure, bone_world: np.ndarray) -> np.ndarray:
    """(Nf, Nv, 3) linear-blend skinned world positions."""
    bind_inv = np.linalg.inv(rows_to_matrix(s.bone_transforms))
    skin = bone_world @ bind_inv[None]  # (Nf, Nb, 4, 4)
    owner = np.repeat(np.arange(len(s.positions)), s.weight_counts)
    m = skin[:, s.weight_bones]  # (Nf, W, 4, 4)
    p = s.positions[owner]
    moved = np.einsum("fkij,kj->fki", m[..., :3, :3], p) + m[..., :3, 3]
    out = np.zeros((len(bone_world), len(s.positions), 3))
    np.add.at(out, (slice(None), owner), moved * s.weights[None, :, None])
    total = np.bincount(owner, s.weights, minlength=len(s.positions))
    return out / np.where(total == 0, 1.0, total)[None, :, None]


def animation(
    s: Structure,
    mode: str = anim_file.BONES,
    system: str = anim_file.ABSOLUTE,
    representation: str = anim_file.MATRIX,
    order: str = "XYZ",
    units: str = anim_file.DEGREES,
    n_frames: int = 5,
    first: float = 0.0,
    step: float = 1.0,
    quoted: bool = False,
    seed: int = 1,
) -> anim_file.Animation:
    """The rig's animation in one export mode and header setting."""
    world = bone_world_frames(s, n_frames, seed)
    nb, nv = len(s.names), len(s.positions)
    template = anim_file.Animation(
        nb,
        nv,
        n_frames,
        mode,
        system,
        representation,
        order,
        units,
        first,
        first + (n_frames - 1) * step,
        step,
        quoted,
    )
    if mode == anim_file.BONES:
        boxes = np.broadcast_to(s.boxes, (n_frames, nb, 3)).copy()
        out = worlds_to_bones_animation(
            world, node_world_frames(s, world), boxes, s.parents, template
        )
        out.vertex_count = nv
        return out
    positions = skinned_positions(s, world)
    if mode == anim_file.MESH_ABSOLUTE:
        template.positions = positions
        return template
    owner = np.repeat(np.arange(nv), s.weight_counts)
    members = [np.unique(owner[s.weight_bones == b]) for b in range(nb)]
    (
        template.block_bones,
        template.block_counts,
        template.block_vertices,
        template.block_positions,
    ) = world_positions_to_blocks(positions, world, members)
    return template


def decorate(data: bytes, seed: int = 0) -> bytes:
    """The same file with comments (whole lines, straight after tokens, between
    tokens), tabs, runs of spaces, CRLF and LF line ends and blank lines."""
    rng = np.random.default_rng(seed)
    out = ["// BonesPro export, decorated by RigPort's tests\r\n", "  \t\n"]
    for i, line in enumerate(data.decode("utf-8").split("\n")):
        if not line:
            continue
        pick = int(rng.integers(0, 6))
        if line.startswith("<"):
            words = [line]
        else:
            words = line.split(" ")
        if pick == 0:
            out.append("\t" + "   ".join(words) + "   // trailing note\n")
        elif pick == 1:
            out.append(" ".join(words) + "//glued comment\r\n")
        elif pick == 2:
            out.append("// a whole-line comment <not a name>\n" + "\n".join(words) + "\n\n")
        elif pick == 3:
            out.append("\t\t".join(words) + (" " if i % 2 else "\t") + "\n")
        elif pick == 4:
            out.append("  ".join(words) + "\r\n")
        else:
            out.append(" \t ".join(words) + "\n")
    return "".join(out).encode("utf-8")


def other_writer(data: bytes, style: str = "fixed") -> bytes:
    """The same file with every number that is not a whole one (counts and indices stay)
    written in :data:`OTHER_FORMATS` ``style`` instead of RigPort's ``%.9g``: values
    within 5e-7 of the file's, in another text."""
    fmt = OTHER_FORMATS[style]
    tokens, gaps = split_text(data.decode("utf-8"))
    out = []
    for gap, tok in zip(gaps, tokens, strict=False):
        try:
            value = float(tok)
        except ValueError:
            value = None
        whole = tok.lstrip("-").isdigit()
        out.append(gap + (tok if value is None or whole else fmt % value))
    return ("".join(out) + gaps[-1]).encode("utf-8")
