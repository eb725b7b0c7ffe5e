"""RenderWare animations (.anm): import onto the HAnim armature, export its action.

An .anm names no bones: its nodes are the HAnim hierarchy's, in hierarchy
order, which is the order of the frames the DFF import recorded on the bones
(``rw_frame_index``). Import needs the armature to have as many bones as the
animation has nodes; export writes every bone, holding its rest pose where the
action has no keys.
"""

from __future__ import annotations

import os

import bpy
import numpy as np
from bpy.props import StringProperty
from bpy_extras.io_utils import ExportHelper

from ...io_formats.codec import FormatError, read_file, write_atomic
from ...io_formats.renderware import anim_convert, anm
from ...io_formats.renderware.chunks import TARGETS
from ..blender import kept_keys
from ..blender.actions import keep_actions
from ..blender.build import LOCAL, build_action
from ..blender.extract import extract_animation
from ..common import (
    BatchFormat,
    ImportFiles,
    current_action,
    file_handler,
    iter_armatures,
    report_export,
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


def import_anm(context, path: str, armature=None, data: bytes | None = None):
    """Build one .anm as an action; returns report lines and undo callables."""
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
    r = context.scene.render
    action = build_action(armature, neutral, r.fps / r.fps_base)
    action[PROP_STAMP] = int(f.stamp)
    undo = keep_actions(armature, [action])
    return [f"{action.name} applied to {armature.name} ({how})"], [undo]


def export_anm(context, path: str, armature, action=None) -> list[str]:
    action = action or current_action(armature)
    if action is None:
        raise FormatError(f"{armature.name} has no action to export", None, path)
    r = context.scene.render
    neutral = extract_animation(armature, action, r.fps / r.fps_base)
    rest = {}
    for b in armature.data.bones:
        vals = np.array(kept_keys.get(b, LOCAL, (0, 0, 0, 1, 0, 0, 0, 1, 1, 1)), np.float64)
        rest[b.name] = (vals[:3], vals[3:7])
    stamp = int(action.get(PROP_STAMP, TARGETS["SA"][2]))
    out = anim_convert.animation_to_anm(neutral, hanim_bones(armature), rest, stamp)
    write_atomic(path, lambda: anm.write(out), "animation")
    return []


class IMPORT_ANIM_OT_rw_anm(bpy.types.Operator, ImportFiles):
    """Import RenderWare animations (.anm) onto an HAnim armature imported from a .dff"""

    bl_idname = "import_anim.rw_anm"
    bl_label = "Import RenderWare Animation"
    bl_options = {"REGISTER", "UNDO", "PRESET"}

    filename_ext = ".anm"
    filter_glob: StringProperty(default="*.anm", options={"HIDDEN"})

    def execute(self, context):
        return self.import_files(context, lambda c, path, progress: import_anm(c, path))


class EXPORT_ANIM_OT_rw_anm(bpy.types.Operator, ExportHelper):
    """Export the active armature's action to a RenderWare animation (.anm)"""

    bl_idname = "export_anim.rw_anm"
    bl_label = "Export RenderWare Animation"
    bl_options = {"REGISTER", "PRESET"}

    filename_ext = ".anm"
    filter_glob: StringProperty(default="*.anm", options={"HIDDEN"})

    def execute(self, context):
        arm = context.view_layer.objects.active
        if arm is None or arm.type != "ARMATURE":
            self.report({"ERROR"}, "select the armature whose action to export")
            return {"CANCELLED"}
        return report_export(self, lambda: export_anm(context, self.filepath, arm))


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
