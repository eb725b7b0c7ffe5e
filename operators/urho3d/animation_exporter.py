"""Blender actions to Urho3D animations (.ani): one action per file."""

from __future__ import annotations

import os
from dataclasses import dataclass, replace

import numpy as np

from ...io_formats.codec import FormatError
from ...io_formats.global_transform import bake_animation, is_identity
from ...io_formats.urho3d import ani
from ...io_formats.urho3d.animation_convert import (
    AXES_EXTRA,
    ORDER_EXTRA,
    RBFX_EXTRA,
    STEPS_EXTRA,
    apply_rbfx_extras,
    export_animation,
    file_track_order,
    restore_steps,
)
from ..animation_files import chosen_files, written_message
from ..blender.build import scene_fps
from ..blender.extract import extract_animation, extract_skeleton, read_prop
from ..common import current_action
from ..conventions import SAME, ExportTransform, file_matrix, recorded_transform
from ..result import Result, counted
from .axes import export_axes, export_convert
from .output import PACKAGE_FOLDER, default_entry, package_path, write_output


@dataclass(frozen=True)
class AnimationExportOptions:
    """How animations are exported (the exporter's options, with its names).

    ``export_animations``: the active action, every action of the armature's
    bones or its NLA tracks' (one file each, named after the chosen file or,
    with ``use_action_names``, the action alone); ``file_format``: UANI, UAN2 or
    AUTO (UAN2 when imported so); key times convert at ``fps`` with
    ``frame_rate`` CUSTOM, else at the rate each action was imported with or the
    scene's; ``package_file``: an existing package to write into, as
    ``package_entry`` (a file name, or with several animations the folder they go
    into; default: ``Models``); ``transform``: the axes and scale options baked
    into the root bones' keys (none: the keys as Blender has them, the axes as
    imported)."""

    export_animations: str = "ACTIVE"
    use_action_names: bool = False
    file_format: str = "AUTO"
    frame_rate: str = "SCENE"
    fps: float = 30.0
    package_file: str = ""
    package_entry: str = ""
    transform: ExportTransform | None = None


def export_animations(context, path: str, armature, options: AnimationExportOptions) -> Result:
    """Write the animations ``options.export_animations`` chooses on ``armature``, one
    file each: the active action to ``path``, several beside it (or into the
    package). Each warning names its animation when there are several."""
    chosen = chosen_files(armature, options.export_animations, path, options.use_action_names)
    entries = _package_entries(path, [p for p, _, _ in chosen], options)
    warnings: list[str] = []
    infos: list[str] = []  # the actions' own lines name them
    for (file, name, action), entry in zip(chosen, entries, strict=True):
        done = export_ani(context, file, armature, action, replace(options, package_entry=entry))
        warnings += [f"{name}: {w}" for w in done.warnings] if len(chosen) > 1 else done.warnings
        infos += done.infos
    where = f" into {options.package_file}" if options.package_file else ""
    files = counted(len(chosen), "animation file")
    result = Result().info(f"wrote {files}{where} from {armature.name}")
    result.info(written_message(armature, [(name, action) for _, name, action in chosen]))
    for text in infos:
        result.info(text)
    return result.warn_all(warnings)


def _package_entries(path: str, files: list[str], options: AnimationExportOptions) -> list[str]:
    """The name of each file inside the package: the entry option (or
    ``Models/<file name>``) for the active action; with several, each file's name
    in the entry's folder (the entry itself when it has no extension)."""
    entry = options.package_entry
    if options.export_animations == "ACTIVE":
        return [entry or default_entry(path)]
    folder = os.path.dirname(entry) or PACKAGE_FOLDER
    if entry and not os.path.splitext(entry)[1]:
        folder = entry.rstrip("/")
    return [f"{folder}/{os.path.basename(p)}" for p in files]


def export_ani(context, path: str, armature, action, options: AnimationExportOptions) -> Result:
    """Write ``action`` (default: the one ``armature`` plays) as UANI, or as UAN2
    (``file_format``; AUTO: as imported), with the axes the action was imported
    with unless the options' transform says otherwise. The result's warnings name
    the instant steps an edit dropped."""
    action = action or current_action(armature)
    if action is None:
        raise FormatError(f"armature {armature.name!r} has no action to export")
    fps = options.fps if options.frame_rate == "CUSTOM" else None
    result = Result()
    neutral = extract_animation(
        armature, action, fps or scene_fps(context), fps is None, result=result
    )
    convert = export_convert(options.transform)
    if options.transform is not None:
        space = np.array(armature.matrix_world, np.float64)
        matrix = file_matrix(options.transform, armature, space)
        own = recorded_transform(action) if convert is None else None
        if own is not None:  # As Imported: what the animation's import baked, back out
            matrix = np.linalg.inv(own) @ matrix
            if np.allclose(matrix, np.eye(4), atol=SAME):
                matrix = np.eye(4)
        if not is_identity(matrix):
            bake_animation(neutral, extract_skeleton(armature), matrix)
    anim = export_animation(neutral, export_axes(convert, read_prop(action, AXES_EXTRA)))
    file_track_order(anim, read_prop(action, ORDER_EXTRA))
    warnings = restore_steps(anim, read_prop(action, STEPS_EXTRA))
    extras = read_prop(action, RBFX_EXTRA)
    if options.file_format == "UAN2" or (options.file_format == "AUTO" and extras is not None):
        apply_rbfx_extras(anim, extras if extras is not None else {"version": 3})
    into = package_path(options.package_file)
    write_output(path, lambda: ani.write(anim), into, options.package_entry or default_entry(path))
    return result.warn_all(warnings)
