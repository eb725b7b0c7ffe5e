"""Shared operator plumbing: file lists, errors, progress, target lookup."""

from __future__ import annotations

import os
from collections.abc import Iterator

import bpy

from ..io_formats.codec import FormatError


def selected_paths(op) -> list[str]:
    """Every file the operator was given (multi-file import) or its filepath."""
    files = getattr(op, "files", None)
    directory = getattr(op, "directory", "")
    if files and directory and any(f.name for f in files):
        return [os.path.join(directory, f.name) for f in files if f.name]
    return [op.filepath]


def read_bytes(path: str) -> bytes:
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError as exc:
        raise FormatError(f"cannot read file: {exc.strerror or exc}", None, path) from exc


class Progress:
    """window_manager progress when there is a window, silent otherwise."""

    def __init__(self, context, total: int):
        self.wm = context.window_manager if context.window else None
        self.total = max(total, 1)
        if self.wm:
            self.wm.progress_begin(0, self.total)

    def update(self, value: float) -> None:
        if self.wm:
            self.wm.progress_update(value)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        if self.wm:
            self.wm.progress_end()


def iter_armatures(context) -> Iterator[bpy.types.Object]:
    for obj in context.scene.objects:
        if obj.type == "ARMATURE":
            yield obj


def find_target_armature(context, bone_names: list[str]) -> tuple[bpy.types.Object | None, str]:
    """The active armature if one is selected, else the one sharing most bone names."""
    active = context.view_layer.objects.active
    if active is not None and active.type == "ARMATURE":
        return active, "the active armature"
    wanted = set(bone_names)
    best, score = None, 0
    for obj in iter_armatures(context):
        hits = len(wanted & {b.name for b in obj.data.bones})
        if hits > score:
            best, score = obj, hits
    if best is None:
        return None, "no armature has any of the animation's bones"
    return best, f"the armature whose bone names match ({score} of {len(wanted)})"


def mesh_armature(obj: bpy.types.Object) -> bpy.types.Object | None:
    for mod in obj.modifiers:
        if mod.type == "ARMATURE" and mod.object is not None:
            return mod.object
    if obj.parent is not None and obj.parent.type == "ARMATURE":
        return obj.parent
    return None
