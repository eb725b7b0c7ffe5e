"""GTA IFP animation export: actions of one armature into an IFP package.

The actions go into the existing file (replacing the animations of the same
name, keeping the others), or into a new file in the layout the actions came
from (else the version chosen). An IFP holds many animations, so every choice
of ``export_animations`` goes into the one file; the default, All Actions,
writes back every animation an import made, in the package's order: the round
trip. Callable without an operator: :func:`export_ifp_file` takes the context,
the path and one :class:`IfpExportOptions`, and returns a
:class:`~operators.result.Result`.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass

import bpy

from ...io_formats.codec import FormatError, write_atomic
from ...io_formats.renderware import anim_convert, ifp
from ..animation_files import chosen_actions, written_message
from ..blender.build import rest_relative
from ..blender.extract import extract_animation
from ..conventions import scene_fps
from ..result import Result, counted
from .anim_options import custom_fps, export_scale, scale_translations, target_armature
from .ifp_importer import PROP_ENDS, PROP_SOURCE, armature_bones, read_ifp


@dataclass(frozen=True)
class IfpExportOptions:
    """The IFP exporter's options (named and defaulted as its properties)."""

    export_animations: str = "ACTIONS"
    version: str = "AUTO"
    replace: bool = True
    frame_rate: str = "SCENE"
    fps: float = 30.0
    use_transform_as_imported: bool = True
    global_scale: float = 1.0
    collection: str = ""


def _source(action) -> dict | None:
    text = action.get(PROP_SOURCE)
    if not isinstance(text, str):
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def armature_actions(armature, which: str = "ACTIONS") -> list[tuple[str, bpy.types.Action]]:
    """(name, action) to export for ``export_animations`` ``which`` (see
    :func:`animation_files.chosen_actions`); every action of the bones ("ACTIONS")
    with those from an IFP first, in their file order."""
    chosen = chosen_actions(armature, which)
    if which != "ACTIONS":
        return chosen

    def order(pair):
        src = _source(pair[1])
        if src is None:
            return (1, "", 0, pair[0])
        return (0, src.get("file", ""), int(src.get("index", 0)), pair[0])

    return sorted(chosen, key=order)


def export_ifp_file(context, path: str, options: IfpExportOptions, armature=None) -> Result:
    """Write the actions ``export_animations`` chooses of ``armature`` (None: the
    Collection Exporter's collection's, else the active one: :func:`target_armature`)
    into the IFP at ``path`` (atomic). Translations at the options' scale; key
    times at the custom frame rate, else at the rate each action was imported
    with, else the scene's."""
    if armature is None:
        armature = target_armature(context, options.collection)
    pairs = armature_actions(armature, options.export_animations)
    if not pairs:
        raise FormatError("the armature has no action to export", None, path)
    written = f"{counted(len(pairs), 'animation')} written to {os.path.basename(path)}"
    result = Result().info(written)
    result.info(written_message(armature, pairs))
    sources = [_imported_source(action, armature) for _, action in pairs]
    target = _target_package(path, options, sources, result)
    compressed = target.version == "ANP3" and _compressed(target, sources)
    fps = custom_fps(options)
    rate = fps or scene_fps(context)
    bones = armature_bones(armature)
    roots = {b.name for b in armature.data.bones if b.parent is None}
    rest = rest_relative(armature.data)
    # The package's own animations by name, each replaced once at its place: two
    # animations may share a name (looked up by place, never compared).
    places: dict[str, list[int]] = {}
    for i, a in enumerate(target.animations):
        places.setdefault(a.name.lower(), []).append(i)
    for (name, action), source in zip(pairs, sources, strict=True):
        neutral = extract_animation(armature, action, rate, fps is None, rest=rest, result=result)
        neutral.name = name if name != action.name else neutral.name
        scale_translations(neutral, export_scale(options, action))
        src = source.animations[0] if source is not None and source.animations else None
        if src is not None and source.version != target.version:
            result.warn(
                f"{action.name}: came from a {source.version} file and is written as "
                f"{target.version}: every key is encoded anew, none copied as imported"
            )
            src = None
        out = anim_convert.to_ifp_animation(neutral, bones, target.version, compressed, src, roots)
        free = places.get(out.name.lower())
        if free:
            target.animations[free.pop(0)] = out
        else:
            target.animations.append(out)
    write_atomic(path, lambda: ifp.write(target), "IFP file")
    return result


def _imported_source(action, armature) -> ifp.IfpFile | None:
    """The one-animation package an IFP import stored on ``action``, if any, with
    the file's bytes after its animations that the import kept once on
    ``armature`` (gone with the armature's property: none)."""
    source = _source(action)
    if not source:
        return None
    out = anim_convert.unpack_source(source["source"])
    ends = armature.get(PROP_ENDS)
    package = source.get("package")
    if package is not None and hasattr(ends, "keys") and package in ends:
        anim_convert.unpack_ends(ends[package], out)
    return out


def _target_package(
    path: str, options: IfpExportOptions, sources: list, result: Result
) -> ifp.IfpFile:
    """The package the animations go into: the file at ``path`` with ``replace``
    (a warning says so), else a new one in the layout of the first imported
    action (the version chosen, else that layout, else San Andreas')."""
    if options.replace and os.path.isfile(path):
        result.warn(
            f"replacing animations in {os.path.basename(path)} (those of the same name; "
            "the file's other animations stay as they are)"
        )
        return read_ifp(path)
    first = next((k for k in sources if k is not None), None)
    version = options.version
    wanted = version if version != "AUTO" else (first.version if first else "ANP3")
    if first is not None and first.version == wanted:
        return ifp.IfpFile(
            first.version,
            first.name_raw,
            [],
            first.size_delta,
            first.info_pad,
            first.tail,
            first.trailing,
        )
    return ifp.new_file(wanted, os.path.splitext(os.path.basename(path))[0])


def _compressed(target: ifp.IfpFile, sources: list) -> bool:
    """The file's own choice: its animations', else the imported ones', else SA's."""
    for f in [target, *[k for k in sources if k is not None]]:
        for a in f.animations:
            if a.objects:
                return a.objects[0].compressed
    return True
