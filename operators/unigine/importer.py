"""Unigine import: a .mesh (ms11) into Blender objects, an .anim (an10) onto an armature.

Callable without an operator: each import takes a ``context``, a path and one
options dataclass (fields named as the operator's properties, defaults as the
operator's) and returns a :class:`Result`. Unigine files store frames, not
times: a file frame is 1/30 s (``FRAME_RATE``), and the frame rate options say
at which rate those seconds become Blender frames.
"""

from __future__ import annotations

import json
import os

import bpy

from ...io_formats.codec.errors import counted
from ...io_formats.unigine import anim, anim_file_convert, mesh
from ...io_formats.unigine.common import FRAME_RATE
from ...io_formats.unigine.mesh_import import ANIMATIONS_KEY, import_mesh
from ..blender.actions import keep_actions
from ..blender.armatures import fit_armature
from ..blender.build import build_action, build_scene, rest_relative
from ..common import in_file, parse_file
from ..conventions import option_matrix, place_roots
from ..result import Result
from . import mesh_keep
from .settings import AnimImportOptions, MeshImportOptions


def import_mesh_file(context, path: str, options: MeshImportOptions) -> Result:
    """Import one .mesh: its objects (and armature), and its embedded animations as
    actions. The result's ``undo`` takes it all back; a FormatError leaves nothing
    behind."""
    native = parse_file(path, mesh.read)
    name = os.path.splitext(os.path.basename(path))[0]
    with in_file(path):
        scene = import_mesh(native, name, FRAME_RATE)
    filled: dict = {}
    built = build_scene(
        context,
        scene,
        fps=options.frames_per_second(context),
        reuse_materials=options.reuse_materials,
        filled=filled,
    )
    names = scene.skeleton.names if scene.skeleton is not None else None
    objects = [obj for obj in built.objects if obj.type == "MESH"]
    given = scene.meshes if len(scene.meshes) == len(objects) else [None] * len(objects)
    for obj, source in zip(objects, given, strict=True):  # what the kept data describes
        held = filled.pop(obj.data.as_pointer(), None)  # hashed, not read back
        mesh_keep.store(obj, names, source and source.skin, built.bone_names, filled=held)
    if built.armature is not None and built.actions:  # Blender may have renamed them
        built.armature[ANIMATIONS_KEY] = json.dumps([a.name for a in built.actions])
    if options.record_transform:
        place_roots(built.objects, option_matrix(options))
    extra = f", {counted(len(built.actions), 'action')}" if built.actions else ""
    result = Result(
        objects=list(built.objects),
        armature=built.armature,
        actions=list(built.actions),
        undo=[built.discard],
    )
    return result.info(f"{counted(len(built.objects), 'object')}{extra}")


def import_anim_file(
    context, path: str, options: AnimImportOptions, armature: bpy.types.Object | None = None
) -> Result:
    """Every animation of one .anim as an action on ``armature`` (or the armature that
    fits), kept through a save (:func:`keep_actions`, the last one active); refused
    when none of its animated bones is in the armature. The summary is batch's line,
    the messages the operator's."""
    native = parse_file(path, anim.read)
    with in_file(path):
        anims = anim_file_convert.import_anim_file(native, os.path.basename(path), FRAME_RATE)
    bones = [t.bone for a in anims for t in a.tracks] or [b.name for b in native.bones]
    armature, how, warnings = fit_armature(context, path, bones, armature)
    fps = options.frames_per_second(context)
    actions = []
    rest = rest_relative(armature.data)
    stem = os.path.splitext(os.path.basename(path))[0]
    try:
        for a in anims:
            actions.append(build_action(armature, a, fps, rest, file_stem=stem, clips=len(anims)))
    except Exception:
        for action in actions:
            bpy.data.actions.remove(action)
        raise
    undo = keep_actions(armature, actions)
    result = Result(
        summary=f"{counted(len(actions), 'action')} on {armature.name} ({how})",
        armature=armature,
        actions=actions,
        undo=[undo],
    )
    result.info(f"{counted(len(actions), 'action')} applied to {armature.name} ({how})")
    return result.warn_all(warnings)
