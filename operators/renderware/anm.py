"""RenderWare animations (.anm): import onto the HAnim armature, export its action.

An .anm names no bones: its nodes are the HAnim hierarchy's, in hierarchy
order, which is the order of the frames the DFF import recorded on the bones
(``rw_frame_index``). Import needs the armature to have as many bones as the
animation has nodes; export writes every bone, holding its rest pose where the
action has no keys. An .anm holds one animation: All Actions and NLA Tracks
write one file per action next to the chosen path (``<stem>_<action>.anm``, or
``<action>.anm`` with Name Files by Action). The frame rate and scale options
are the IFP import's (:mod:`.ifp`).
"""

from __future__ import annotations

import os

import bpy
import numpy as np
from bpy.props import StringProperty

from ...io_formats.codec import FormatError, read_file, write_atomic
from ...io_formats.renderware import anim_convert, anm
from ...io_formats.renderware.chunks import TARGETS
from ..animation_files import (
    chosen_files,
    draw_animation_choice,
    export_animations_property,
    use_action_names_property,
)
from ..blender import kept_keys
from ..blender.actions import keep_actions
from ..blender.build import LOCAL, build_action
from ..blender.extract import extract_animation
from ..common import (
    BatchFormat,
    ExportFile,
    ImportFiles,
    current_action,
    file_handler,
    iter_armatures,
    report_export,
)
from ..conventions import AnimationFrameRate, ExportFrameRate, options_layout, scene_fps
from .anim_options import (
    ArmatureScope,
    ExportKeyScale,
    ImportKeyScale,
    export_scale,
    record_scale,
    scale_translations,
)

PROP_STAMP = "_rw_anm_stamp"


def hanim_bones(armature) -> list[str]:
    """The armature's bones in HAnim hierarchy order."""
    bones = list(armature.data.bones)
    big = 1 << 30
    return [
        b.name
        for _, b in sorted(
            enumerate(bones),
            key=lambda ib: (int(kept_keys.get(ib[1], "rw_frame_index", big)), ib[0]),
        )
    ]


def _target(context, nodes: int):
    active = context.view_layer.objects.active
    if active is not None and active.type == "ARMATURE":
        return active, "the active armature"
    fits = [a for a in iter_armatures(context) if len(a.data.bones) == nodes]
    if len(fits) == 1:
        return fits[0], f"the armature with {nodes} bones"
    return None, f"select the armature ({len(fits)} armatures have {nodes} bones)"


def import_anm(
    context,
    path: str,
    armature=None,
    data: bytes | None = None,
    fps: float | None = None,
    scale: float = 1.0,
    made_out: list | None = None,
):
    """Build one .anm as an action at ``fps`` (default: the scene's), translations
    times ``scale`` (recorded on the action for "As Imported"); the action is
    appended to ``made_out``. Returns report lines and undo callables."""
    try:
        f = anm.read(read_file(path, "animation") if data is None else data)
    except FormatError as err:
        raise (err if err.path else err.with_path(path)) from None
    how = "the given armature"
    if armature is None:
        armature, how = _target(context, f.node_count())
        if armature is None:
            raise FormatError(how, None, path)
    name = os.path.splitext(os.path.basename(path))[0]
    try:
        neutral = anim_convert.anm_to_animation(f, hanim_bones(armature), name)
    except FormatError as err:
        raise err.with_path(path) from None
    scale_translations(neutral, scale)
    action = build_action(armature, neutral, fps or scene_fps(context))
    action[PROP_STAMP] = int(f.stamp)
    record_scale(action, scale)
    undo = keep_actions(armature, [action])
    if made_out is not None:
        made_out.append(action)
    return [f"{action.name} applied to {armature.name} ({how})"], [undo]


def export_anm(
    context, path: str, armature, action=None, options=None, fps: float | None = None
) -> list[str]:
    """Write ``action`` (default: the armature's current one) to ``path``; with
    ``options`` (:class:`ExportKeyScale`) at their scale. Key times convert at
    ``fps`` when given, else at the rate the action was imported with, else the
    scene's."""
    action = action or current_action(armature)
    if action is None:
        raise FormatError(f"{armature.name} has no action to export", None, path)
    neutral = extract_animation(armature, action, fps or scene_fps(context), fps is None)
    scale_translations(neutral, export_scale(options, action))
    rest = {}
    for b in armature.data.bones:
        vals = np.array(kept_keys.get(b, LOCAL, (0, 0, 0, 1, 0, 0, 0, 1, 1, 1)), np.float64)
        rest[b.name] = (vals[:3], vals[3:7])
    stamp = int(action.get(PROP_STAMP, TARGETS["SA"][2]))
    out = anim_convert.animation_to_anm(neutral, hanim_bones(armature), rest, stamp)
    write_atomic(path, lambda: anm.write(out), "animation")
    return []


def export_anm_files(
    context,
    path: str,
    armature,
    which: str,
    use_action_names: bool,
    options=None,
    fps: float | None = None,
) -> tuple[list[str], list[str]]:
    """The ``export_animations`` choice ``which`` as .anm files: the active action
    to ``path``, every action (or NLA strip) to one file each next to it
    (:func:`animation_files.chosen_files`). Returns the paths written and warnings."""
    chosen = chosen_files(armature, which, path, use_action_names)
    warnings: list[str] = []
    for out, _, action in chosen:
        warnings += export_anm(context, out, armature, action, options, fps)
    return [out for out, _, _ in chosen], warnings


class IMPORT_ANIM_OT_rw_anm(bpy.types.Operator, ImportFiles, AnimationFrameRate, ImportKeyScale):
    """Import RenderWare animations (.anm) onto an HAnim armature imported from a .dff"""

    bl_idname = "import_anim.rw_anm"
    bl_label = "Import RenderWare Animation"

    filename_ext = ".anm"
    filter_glob: StringProperty(default="*.anm", options={"HIDDEN"})

    def draw(self, context) -> None:
        self.draw_animation(options_layout(self))

    def execute(self, context):
        fps = self.frames_per_second(context)
        made: list = []

        def one(c, path, progress):
            return import_anm(c, path, None, None, fps, self.global_scale, made)

        return self.import_files(context, one, made=made)


class EXPORT_ANIM_OT_rw_anm(
    bpy.types.Operator, ExportFile, ExportKeyScale, ArmatureScope, ExportFrameRate
):
    """Export the active armature's actions to RenderWare animations (.anm), one per file"""

    bl_idname = "export_anim.rw_anm"
    bl_label = "Export RenderWare Animation"

    filename_ext = ".anm"
    filter_glob: StringProperty(default="*.anm", options={"HIDDEN"})
    export_animations: export_animations_property(
        description="Which actions to write: an .anm holds one, so All Actions and NLA "
        "Tracks write one file per action next to the chosen path"
    )
    use_action_names: use_action_names_property()

    def draw(self, context) -> None:
        layout = options_layout(self)
        draw_animation_choice(layout, self)
        self.draw_frame_rate(layout, importing=False)
        self.draw_scale(layout)

    def execute(self, context):
        fps = self.fps if self.frame_rate == "CUSTOM" else None

        def export() -> list[str]:
            arm = self.target_armature(context)
            paths, warnings = export_anm_files(
                context,
                self.filepath,
                arm,
                self.export_animations,
                self.use_action_names,
                self,
                fps,
            )
            folder = os.path.dirname(paths[0]) or "."
            self.report({"INFO"}, f"{len(paths)} animation file(s) written to {folder}")
            return warnings

        return report_export(self, export)


def _batch_import(context, path: str, state: dict, options: dict) -> str:
    lines, _undo = import_anm(context, path, state.get("armature"))
    arm = state.get("armature") or context.view_layer.objects.active
    if arm is not None:
        state["armature"], state["action"] = arm, current_action(arm)
    return "; ".join(lines)


def _batch_export(context, path: str, state: dict, options: dict) -> str:
    arm = state.get("armature")
    if arm is None:
        raise FormatError("no armature to export the animation from", None, path)
    export_anm(context, path, arm, state.get("action"))
    return ""


CLASSES = (
    IMPORT_ANIM_OT_rw_anm,
    EXPORT_ANIM_OT_rw_anm,
    file_handler(
        "rw_anm", "RenderWare Animation", "import_anim.rw_anm", "export_anim.rw_anm", ".anm"
    ),
)
MENU_IMPORT = (("import_anim.rw_anm", "RenderWare Animation (.anm)"),)
MENU_EXPORT = (("export_anim.rw_anm", "RenderWare Animation (.anm)"),)
BATCH = (BatchFormat("renderware.anm", _batch_import, _batch_export),)
