"""The BonesPro text exports for the registry. Both are ``.txt``: ``sniff`` tells
them apart by their first tokens."""

from __future__ import annotations

from ..registry import SNIFF_BYTES, FileFormat
from . import animation, structure
from .text import Tokens


def _head_tokens(head: bytes, n: int) -> list[str] | None:
    if len(head) >= SNIFF_BYTES and b"\n" in head:
        head = head[: head.rindex(b"\n")]  # the last line may be cut short
    try:
        return Tokens(head).first_words(n)
    except ValueError:
        return None


def _is_count(token: str) -> bool:
    return token.isdigit()


def is_structure(head: bytes) -> bool:
    """Nb, Nv and then the first bone's ``<name>`` (or a first vertex when Nb is 0)."""
    tokens = _head_tokens(head, 3)
    if not tokens or len(tokens) < 3 or not all(_is_count(t) for t in tokens[:2]):
        return False
    if tokens[0] == "0":
        try:
            float(tokens[2])
        except ValueError:
            return False
        return True
    return tokens[2].startswith("<")


def is_animation(head: bytes) -> bool:
    """Nb, Nv, Nf and then a word (the export mode; a misspelt one is still this file,
    so that reading it names the line)."""
    tokens = _head_tokens(head, 4)
    if not tokens or len(tokens) < 4 or not all(_is_count(t) for t in tokens[:3]):
        return False
    word = tokens[3].strip('"')
    return bool(word) and word[0].isalpha()


def summarize_structure(s: structure.Structure) -> dict:
    return {
        "bones": [
            {"name": n, "parent": None if p < 0 else s.names[p]}
            for n, p in zip(s.names, s.parents.tolist(), strict=True)
        ],
        "vertices": len(s.positions),
        "weights": int(s.weight_counts.sum()),
        "max_bones_per_vertex": int(s.weight_counts.max(initial=0)),
    }


def summarize_animation(a: animation.Animation) -> dict:
    return {
        "bones": a.bone_count,
        "vertices": a.vertex_count,
        "frames": a.frame_count,
        "mode": a.mode,
        "system": a.system,
        "representation": a.representation,
        "euler_order": a.euler_order,
        "angle_units": a.angle_units,
        "interval": [a.first_frame, a.last_frame, a.step],
    }


FORMATS = (
    FileFormat(
        "bonespro.structure",
        "BonesPro Structure",
        "model",
        (".txt",),
        structure.read,
        structure.write,
        summarize_structure,
        sniff=is_structure,
    ),
    FileFormat(
        "bonespro.animation",
        "BonesPro Animation",
        "animation",
        (".txt",),
        animation.read,
        animation.write,
        summarize_animation,
        sniff=is_animation,
    ),
)
