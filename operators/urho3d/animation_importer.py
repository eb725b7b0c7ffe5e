"""Urho3D animations (.ani) into Blender: one action per file on the armature it fits."""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import partial

import bpy
import numpy as np

from ...io_formats.global_transform import bake_animation, is_identity
from ...io_formats.scene import Animation
from ...io_formats.urho3d import ani
from ...io_formats.urho3d.animation_convert import STEPS_EXTRA, import_animation, steps_warning
from ..blender.actions import keep_actions
from ..blender.armatures import fit_armature
from ..blender.build import build_action, scene_fps
from ..blender.extract import extract_skeleton, read_prop
from ..common import in_file, parse_file
from ..conventions import IMPORT_TRANSFORM, option_matrix
from ..result import Result
from .axes import TransformOptions


@dataclass(frozen=True)
class AnimationImportOptions:
    """How an animation is imported (the importer's options, with its names).

    Key times convert at ``fps`` with ``frame_rate`` CUSTOM, else at the scene's
    rate; ``convert``: Urho3D's axes into Blender's (False keeps the file's);
    ``transform``: the axes and scale options, baked into the keys and recorded
    on the action (none: the keys are the file's)."""

    frame_rate: str = "SCENE"
    fps: float = 30.0
    convert: bool = True
    transform: TransformOptions | None = None


def import_ani(
    context, path: str, options: AnimationImportOptions, armature=None, keep: bool = True
) -> Result:
    """Import one .ani file onto ``armature`` (else the armature that fits);
    ``keep``: as :func:`build_animation`."""
    return build_animation(context, parse_file(path, ani.read), path, options, armature, keep=keep)


def build_animation(
    context,
    anim: ani.Animation,
    path: str,
    options: AnimationImportOptions,
    armature=None,
    how: str = "",
    keep: bool = True,
) -> Result:
    """One animation as an action on ``armature`` (else the armature that fits),
    kept through a save (:func:`keep_actions`); refused when it fits no bone.
    ``how`` says why ``armature`` was chosen (default: "the given armature").

    The result's summary is "<action> on <armature> (<how>)"; its warnings name
    the animated bones the armature lacks and the instant steps kept on the
    action. The options' transform (in the armature's space) is baked into the
    keys and recorded on the action, so an export "As Imported" takes it back
    out; the identity leaves the keys the file's.

    ``keep=False`` leaves the stash to the caller, which imports many animations
    and stashes them once (``keep_all`` with the result's armature and
    actions); the undo then only removes the action."""
    with in_file(path):
        neutral = import_animation(anim, options.convert)
    armature, fit_how, warnings = fit_armature(
        context, path, [t.bone for t in neutral.tracks], armature
    )
    action = _action(context, armature, neutral, options, path)
    undo = keep_actions(armature, [action]) if keep else partial(bpy.data.actions.remove, action)
    summary = f"{action.name} on {armature.name} ({how or fit_how})"
    result = Result(summary=summary, armature=armature, actions=[action], undo=[undo])
    result.info(f"{action.name} applied to {armature.name} ({how or fit_how})")
    return result.warn(*warnings, steps_warning(read_prop(action, STEPS_EXTRA)))


def _action(context, armature, neutral: Animation, options: AnimationImportOptions, path: str):
    """The action of ``neutral`` on ``armature``, the options' transform baked in."""
    matrix = option_matrix(options.transform) if options.transform is not None else None
    if matrix is not None and not is_identity(matrix):
        bake_animation(neutral, extract_skeleton(armature), matrix)
    fps = options.fps if options.frame_rate == "CUSTOM" else scene_fps(context)
    action = build_action(
        armature, neutral, fps, file_stem=os.path.splitext(os.path.basename(path))[0]
    )
    if matrix is not None and not is_identity(matrix):
        action[IMPORT_TRANSFORM] = [float(v) for v in np.asarray(matrix, np.float64).ravel()]
    return action
