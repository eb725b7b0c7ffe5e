"""RenderWare animation (.anm) export: an armature's actions, one file each.

Export writes every bone, holding its rest pose where the action has no keys.
An .anm holds one animation: All Actions and NLA Tracks write one file per
action next to the chosen path (``<stem>_<action>.anm``, or ``<action>.anm``
with Name Files by Action). Callable without an operator:
:func:`export_anm_files` (the choice of actions) and :func:`export_anm_file`
(one action) take the context, the path and one :class:`AnmExportOptions`,
and return a :class:`~operators.result.Result`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from ...io_formats.codec import FormatError, write_atomic
from ...io_formats.renderware import anim_convert, anm
from ...io_formats.renderware.chunks import TARGETS
from ..animation_files import chosen_files, written_message
from ..blender import kept_keys
from ..blender.build import LOCAL
from ..blender.extract import extract_animation
from ..common import current_action
from ..conventions import scene_fps
from ..result import Result, counted
from .anim_options import custom_fps, export_scale, scale_translations, target_armature
from .anm_importer import PROP_STAMP, hanim_bones


@dataclass(frozen=True)
class AnmExportOptions:
    """The .anm exporter's options (named and defaulted as its properties)."""

    export_animations: str = "ACTIVE"
    use_action_names: bool = False
    frame_rate: str = "SCENE"
    fps: float = 30.0
    use_transform_as_imported: bool = True
    global_scale: float = 1.0
    collection: str = ""


def export_anm_file(context, path: str, options: AnmExportOptions, armature, action=None) -> Result:
    """Write ``action`` (default: the armature's current one) to ``path``
    (atomic), translations at the options' scale. Key times convert at the
    custom frame rate, else at the rate the action was imported with, else the
    scene's."""
    action = action or current_action(armature)
    if action is None:
        raise FormatError(f"{armature.name} has no action to export", None, path)
    fps = custom_fps(options)
    result = Result()
    neutral = extract_animation(
        armature, action, fps or scene_fps(context), fps is None, result=result
    )
    scale_translations(neutral, export_scale(options, action))
    rest = {}
    for b in armature.data.bones:
        vals = np.array(kept_keys.get(b, LOCAL, (0, 0, 0, 1, 0, 0, 0, 1, 1, 1)), np.float64)
        rest[b.name] = (vals[:3], vals[3:7])
    stamp = int(action.get(PROP_STAMP, TARGETS["SA"][2]))
    out = anim_convert.animation_to_anm(neutral, hanim_bones(armature), rest, stamp)
    write_atomic(path, lambda: anm.write(out), "animation")
    return result


def export_anm_files(context, path: str, options: AnmExportOptions, armature=None) -> Result:
    """The ``export_animations`` choice of ``armature`` (None: the Collection
    Exporter's collection's, else the active one: :func:`target_armature`) as
    .anm files: the active action to ``path``, every action (or NLA strip) to
    one file each next to it (:func:`animation_files.chosen_files`)."""
    if armature is None:
        armature = target_armature(context, options.collection)
    chosen = chosen_files(armature, options.export_animations, path, options.use_action_names)
    written = [export_anm_file(context, out, options, armature, a) for out, _, a in chosen]
    folder = os.path.dirname(chosen[0][0]) or "."
    result = Result().info(f"{counted(len(chosen), 'animation file')} written to {folder}")
    result.info(written_message(armature, [(name, action) for _, name, action in chosen]))
    for done in written:
        result.merge(done)
    return result
