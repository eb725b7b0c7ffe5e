"""RenderWare animation (.anm) import: one animation as an action on an HAnim armature.

An .anm names no bones: its nodes are the HAnim hierarchy's, in node order
(depth first, as the hierarchy is written; not the order of the frames).
Import needs the armature to have as many bones as the animation has nodes.
Callable without an operator: :func:`import_anm_file`
takes the context, the path and one :class:`AnmImportOptions`, and returns a
:class:`~operators.result.Result`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from ...io_formats.codec import read_file
from ...io_formats.renderware import anim_convert, anm
from ...io_formats.transforms import parent_first_order
from ..blender.actions import keep_actions
from ..blender.armatures import Count, choose_armature
from ..blender.build import build_action
from ..common import in_file
from ..conventions import scene_fps
from ..result import Result
from .anim_options import custom_fps, record_scale, scale_translations

#: Hidden action property: the .anm's version stamp, written back on export.
PROP_STAMP = "_rw_anm_stamp"


@dataclass(frozen=True)
class AnmImportOptions:
    """The .anm importer's options (named and defaulted as its properties, the
    Set Scene Rate and Range the operator applies left out)."""

    frame_rate: str = "SCENE"
    fps: float = 30.0
    global_scale: float = 1.0


def hanim_bones(armature) -> list[str]:
    """The armature's bones in HAnim node order (the order the .dff export writes
    the hierarchy in, depth first), which is the order of an .anm's nodes: librw
    applies the animation's node ``i`` to the hierarchy's node ``i``, whatever the
    order of the frames."""
    bones = list(armature.data.bones)
    index = {b.name: i for i, b in enumerate(bones)}
    parents = np.array([index[b.parent.name] if b.parent else -1 for b in bones], np.int32)
    return [bones[i].name for i in parent_first_order(parents)]


#: The sentence when no single armature has the animation's node count.
_SELECT = "select the armature ({count} armatures have {bones})"


def import_anm_file(
    context, path: str, options: AnmImportOptions, armature=None, data: bytes | None = None
) -> Result:
    """Build one .anm (``data``, else read from ``path``) as an action on
    ``armature`` (None: the active one, else the only one with as many bones as
    the animation has nodes): key times at the options' frame rate, translations
    times their scale (recorded on the action for "As Imported"). The result
    holds the action and its armature; its ``undo`` removes the action."""
    with in_file(path):
        f = anm.read(read_file(path, "animation") if data is None else data)
    how = "the given armature"
    if armature is None:
        rule = Count(f.node_count(), how="the armature with {bones}", several=_SELECT, none=_SELECT)
        choice = choose_armature(context, rule=rule)
        armature, how = choice.required(path), choice.how
    name = os.path.splitext(os.path.basename(path))[0]
    with in_file(path):
        neutral = anim_convert.anm_to_animation(f, hanim_bones(armature), name)
    scale_translations(neutral, options.global_scale)
    fps = custom_fps(options) or scene_fps(context)
    action = build_action(armature, neutral, fps, file_stem=name)
    action[PROP_STAMP] = int(f.stamp)
    record_scale(action, options.global_scale)
    undo = keep_actions(armature, [action])
    summary = f"{action.name} applied to {armature.name} ({how})"
    return Result(summary=summary, armature=armature, actions=[action], undo=[undo]).info(summary)
