"""The name an imported action takes: the file's, unless that says nothing.

Exporters name their clips "Take 001" (FBX-born tools), "Animation", "" or the
same name in every file; a library of 18 such clips then reads "Take 001" …
"Take 001.017" in Blender, and the clip files exported from it are named after
that. :func:`action_name` names the action after its file instead whenever the
name inside the file is generic, empty, or already used by another action; the
importer keeps the inner name aside (``_rigport_name``) so that the exporter
writes it back. Pure: no bpy.
"""

from __future__ import annotations

import re
from collections.abc import Container

GENERIC = re.compile(
    r"(take|anim|animation|action|clip|default|motion|unnamed|untitled|mixamo\.com)?"
    r"[\s_.\-|]*\d*",
    re.IGNORECASE,
)


def is_generic(name: str) -> bool:
    """True for a name that tells clips apart by nothing but a number, or is empty:
    "", "Take 001", "take_0", "Animation", "Clip 2", "mixamo.com", "001"."""
    return GENERIC.fullmatch(name.strip()) is not None


def action_name(inner: str, file_stem: str | None, taken: Container[str], clips: int = 1) -> str:
    """The name of the action built from a clip named ``inner`` in a file named
    ``file_stem`` (without extension; None: not known) that holds ``clips`` clips,
    ``taken`` the names other actions already have. In order: ``inner`` when it is
    free and specific (or, in a file of several clips, not empty: "take_0" and
    "take_1" tell that file's clips apart); the file's stem (a file of one clip);
    ``STEM INNER``; ``STEM 2``, ``STEM 3``... Without a stem, ``inner`` (or
    "Animation" when empty): Blender adds its numeric suffix then, as before."""
    telling = inner.strip() != "" if clips > 1 else not is_generic(inner)
    if telling and inner not in taken:
        return inner
    if not file_stem:
        return inner or "Animation"
    candidates = [file_stem] if clips <= 1 or not inner.strip() else []
    if inner.strip():
        candidates.append(f"{file_stem} {inner.strip()}")
    for name in candidates:
        if name not in taken:
            return name
    k = 2
    while f"{file_stem} {k}" in taken:
        k += 1
    return f"{file_stem} {k}"
