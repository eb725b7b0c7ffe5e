"""GTA IFP animations: File > Import/Export, a list of the package's animations.

Import lists every animation of the chosen .ifp with its frame and bone counts
(like the package browser) and builds the ticked ones as actions on the
active armature, or on the armature whose HAnim bone IDs and names match best
(a ped imported from a .dff). Bones are matched by HAnim ID first, by name
second; objects that match no bone are reported. Each action keeps its
source animation (hidden custom property), so an export writes the keys the
artist did not touch back with their original bytes.

Export writes chosen actions into an IFP: replacing the animations of the same
name in an existing file (and keeping the others), or as a new file in the
layout the actions came from (else the version chosen).
"""

from __future__ import annotations

import json
import os

import bpy
from bpy.props import BoolProperty, CollectionProperty, EnumProperty, IntProperty, StringProperty
from bpy_extras.io_utils import ExportHelper

from ...io_formats.codec import FormatError, read_file, write_atomic
from ...io_formats.renderware import anim_convert, ifp
from ..blender import compat
from ..blender.actions import keep_actions
from ..blender.build import build_action, rest_relative
from ..blender.extract import extract_animation
from ..common import (
    BatchFormat,
    FileBrowserList,
    ImportFiles,
    current_action,
    file_handler,
    iter_armatures,
    report_export,
)

#: Hidden action property: JSON {"source": one-animation IFP (base64),
#: "file": the .ifp's name, "index": its place there}.
PROP_SOURCE = "_rw_ifp"


def armature_bones(armature) -> list[anim_convert.Bone]:
    """(name, HAnim bone ID) of every bone, as the DFF import stored them."""
    out = []
    for b in armature.data.bones:
        bid = b.get("rw_bone_id")
        out.append((b.name, int(bid) if bid is not None else None))
    return out


def read_ifp(path: str, data: bytes | None = None) -> ifp.IfpFile:
    try:
        return ifp.read(read_file(path, "IFP file") if data is None else data)
    except FormatError as err:
        raise (err if err.path else err.with_path(path)) from None


def ifp_rows(path: str) -> list[dict]:
    """One row per animation for the browser."""
    f = read_ifp(path)
    return [
        {
            "name": a.name,
            "frames": a.frame_count,
            "objects": len(a.objects),
            "duration": a.duration,
        }
        for a in f.animations
    ]


def best_armature(context, f: ifp.IfpFile) -> tuple[bpy.types.Object | None, str]:
    """The active armature, else the one most objects of the package match."""
    active = context.view_layer.objects.active
    if active is not None and active.type == "ARMATURE":
        return active, "the active armature"
    objects = [(o.name, o.bone_id) for a in f.animations[:8] for o in a.objects]
    best, score = None, 0
    for arm in iter_armatures(context):
        hits, _ = anim_convert.match_bones(objects, armature_bones(arm))
        n = sum(h is not None for h in hits)
        if n > score:
            best, score = arm, n
    if best is None:
        return None, "no armature has bones the animations name (import the .dff first)"
    return best, f"the armature whose bones match ({score} of {len(objects)} objects)"


def import_ifp(
    context,
    path: str,
    names: list[str] | None = None,
    armature=None,
    data: bytes | None = None,
    fps: float | None = None,
    progress=None,
) -> tuple[list[str], list]:
    """Build the animations ``names`` (all when None) of one .ifp as actions
    (``progress(fraction)`` after each). Returns report lines and undo
    callables; FormatError leaves nothing behind."""
    f = read_ifp(path, data)
    chosen = f.animations
    if names is not None:
        chosen = []
        for n in names:
            a = f.find(n)
            if a is None:
                raise FormatError(f"the package has no animation {n!r}", None, path)
            chosen.append(a)
    how = "the given armature"
    if armature is None:
        armature, how = best_armature(context, f)
        if armature is None:
            raise FormatError(how, None, path)
    bones = armature_bones(armature)
    r = context.scene.render
    fps = fps or r.fps / r.fps_base
    made: list = []
    rest = rest_relative(armature.data)
    missing: dict[str, int] = {}
    try:
        for a in chosen:
            neutral, miss = anim_convert.ifp_to_animation(a, bones)
            for m in miss:
                missing[m] = missing.get(m, 0) + 1
            action = build_action(armature, neutral, fps, rest)
            made.append(action)
            action[PROP_SOURCE] = json.dumps(
                {
                    "source": anim_convert.pack_source(f, a),
                    "file": os.path.basename(path),
                    "index": f.animations.index(a),
                }
            )
            if progress is not None:
                progress(len(made) / len(chosen))
    except Exception:
        for action in made:
            bpy.data.actions.remove(action)
        raise
    # Every action is kept as an NLA track (the rule every importer follows); the
    # first is the one that plays.
    undo = keep_actions(armature, made, made[0] if made else None)
    lines = [f"{len(made)} animations applied to {armature.name} ({how})"]
    if missing:
        names_text = ", ".join(sorted(missing)[:12]) + (" ..." if len(missing) > 12 else "")
        lines.append(f"warning: {len(missing)} objects match no bone: {names_text}")
    return lines, [undo]


def _source(action) -> dict | None:
    text = action.get(PROP_SOURCE)
    if not isinstance(text, str):
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def armature_actions(armature, which: str = "ALL") -> list:
    """The actions to export: the armature's current one, or every action that
    keys its bones (those from an IFP first, in their file order)."""
    if which == "ACTIVE":
        action = current_action(armature)
        return [action] if action is not None else []
    names = {b.name for b in armature.data.bones}
    out = []
    for action in bpy.data.actions:
        paths = {fc.data_path for fc in compat.fcurves(action)}
        if any(p.startswith('pose.bones["') and p.split('"')[1] in names for p in paths):
            out.append(action)

    def order(action):
        src = _source(action)
        if src is None:
            return (1, "", 0, action.name)
        return (0, src.get("file", ""), int(src.get("index", 0)), action.name)

    return sorted(out, key=order)


def export_ifp(
    context,
    path: str,
    armature,
    actions: list,
    version: str = "AUTO",
    replace: bool = True,
) -> list[str]:
    """Write ``actions`` into the IFP at ``path`` (atomic); returns warnings."""
    if not actions:
        raise FormatError("the armature has no action to export", None, path)
    bones = armature_bones(armature)
    roots = {b.name for b in armature.data.bones if b.parent is None}
    sources = [_source(a) for a in actions]
    kept = [unpack_source(s["source"]) if s else None for s in sources]
    if replace and os.path.isfile(path):
        target = read_ifp(path)
        warnings = [f"replacing animations in {os.path.basename(path)}"]
    else:
        first = next((k for k in kept if k is not None), None)
        wanted = version if version != "AUTO" else (first.version if first else "ANP3")
        if first is not None and first.version == wanted:
            target = ifp.IfpFile(
                first.version,
                first.name_raw,
                [],
                first.size_delta,
                first.info_pad,
                first.tail,
                first.trailing,
            )
        else:
            name = os.path.splitext(os.path.basename(path))[0]
            target = ifp.new_file(wanted, name)
        warnings = []
    compressed = target.version == "ANP3" and _compressed(target, kept)
    fps_scene = context.scene.render.fps / context.scene.render.fps_base
    rest = rest_relative(armature.data)
    for action, source in zip(actions, kept, strict=True):
        neutral = extract_animation(armature, action, fps_scene, rest)
        src = source.animations[0] if source is not None and source.animations else None
        if src is not None and source.version != target.version:
            warnings.append(f"{action.name}: written as {target.version}, not {source.version}")
            src = None
        out = anim_convert.to_ifp_animation(neutral, bones, target.version, compressed, src, roots)
        old = target.find(out.name)
        if old is not None:
            target.animations[target.animations.index(old)] = out
        else:
            target.animations.append(out)
    write_atomic(path, lambda: ifp.write(target), "IFP file")
    return warnings


def unpack_source(text: str) -> ifp.IfpFile:
    return anim_convert.unpack_source(text)


def _compressed(target: ifp.IfpFile, kept: list) -> bool:
    """The file's own choice: its animations', else the imported ones', else SA's."""
    for f in [target, *[k for k in kept if k is not None]]:
        for a in f.animations:
            if a.objects:
                return a.objects[0].compressed
    return True


class RIGPORT_PG_ifp_animation(bpy.types.PropertyGroup):
    """One animation of the package shown in the import browser."""

    frames: IntProperty(name="Frames")
    objects: IntProperty(name="Bones")
    select: BoolProperty(name="Import", default=True)


class IMPORT_ANIM_OT_gta_ifp(bpy.types.Operator, FileBrowserList, ImportFiles):
    """Import GTA IFP animations (III, Vice City, San Andreas) as actions on a ped armature"""

    bl_idname = "import_anim.gta_ifp"
    bl_label = "Import GTA IFP"
    bl_options = {"REGISTER", "UNDO", "PRESET"}

    filename_ext = ".ifp"
    filter_glob: StringProperty(default="*.ifp", options={"HIDDEN"})
    animations: CollectionProperty(type=RIGPORT_PG_ifp_animation, options={"SKIP_SAVE"})
    listed: StringProperty(options={"HIDDEN", "SKIP_SAVE"})
    list_error: StringProperty(options={"HIDDEN", "SKIP_SAVE"})
    names: StringProperty(
        name="Animations",
        default="",
        description="Animations to import, ';'-separated (empty: all, or those ticked in the list)",
    )

    list_attr = "animations"

    def list_rows(self, path: str) -> list[dict]:
        return ifp_rows(path)

    def fill_item(self, item, row: dict) -> None:
        item.name, item.frames, item.objects = row["name"], row["frames"], row["objects"]

    def draw(self, context) -> None:
        layout = self.layout
        layout.prop(self, "names")
        box = layout.box()
        if not self.draw_list_state(box, "No IFP file selected", "No animations"):
            return
        box.label(text=f"{len(self.animations)} animations")
        for item in self.animations:
            box.prop(
                item, "select", text=f"{item.name}  ({item.frames} frames, {item.objects} bones)"
            )

    def execute(self, context):
        names = None
        if self.names:
            names = [n.strip() for n in self.names.split(";") if n.strip()]
        elif self.listed == self.filepath and len(self.animations):
            names = [i.name for i in self.animations if i.select]
            if not names:
                self.report({"ERROR"}, "tick at least one animation to import")
                return {"CANCELLED"}

        def one(context, path, progress):
            return import_ifp(context, path, names, progress=progress)

        return self.import_files(context, one)


class EXPORT_ANIM_OT_gta_ifp(bpy.types.Operator, ExportHelper):
    """Export actions of the active armature into a GTA IFP (new, or replacing animations)"""

    bl_idname = "export_anim.gta_ifp"
    bl_label = "Export GTA IFP"
    bl_options = {"REGISTER", "PRESET"}

    filename_ext = ".ifp"
    filter_glob: StringProperty(default="*.ifp", options={"HIDDEN"})
    actions: EnumProperty(
        name="Actions",
        items=(
            ("ALL", "All", "Every action that keys the armature's bones"),
            ("ACTIVE", "Active", "The armature's current action"),
        ),
        default="ALL",
    )
    version: EnumProperty(
        name="Version",
        items=(
            ("AUTO", "As imported", "The layout the actions came from, else San Andreas"),
            ("ANPK", "III / Vice City (ANPK)", "Float keys"),
            ("ANP3", "San Andreas (ANP3)", "Compressed keys"),
        ),
        default="AUTO",
    )
    replace: BoolProperty(
        name="Replace in Existing File",
        default=True,
        description="Write into the existing file: animations of the same name are "
        "replaced, the others kept",
    )

    def execute(self, context):
        arm = context.view_layer.objects.active
        if arm is None or arm.type != "ARMATURE":
            arms = list(iter_armatures(context))
            arm = arms[0] if len(arms) == 1 else None
        if arm is None:
            self.report({"ERROR"}, "select the armature whose actions to export")
            return {"CANCELLED"}
        actions = armature_actions(arm, self.actions)
        return report_export(
            self,
            lambda: export_ifp(context, self.filepath, arm, actions, self.version, self.replace),
        )


def _batch_import(context, path: str, state: dict, options: dict) -> str:
    arm = state.get("armature")
    lines, _undo = import_ifp(context, path, None, arm)
    if arm is None:
        arm = next((a for a in iter_armatures(context) if current_action(a) is not None), None)
    if arm is not None:
        state["armature"], state["action"] = arm, current_action(arm)
    return "; ".join(lines)


def _batch_export(context, path: str, state: dict, options: dict) -> str:
    arm = state.get("armature")
    if arm is None:
        raise FormatError("no armature to export animations from", None, path)
    warnings = export_ifp(context, path, arm, armature_actions(arm, "ALL"), "AUTO", False)
    return "".join(f"; warning: {w}" for w in warnings)


CLASSES = (
    RIGPORT_PG_ifp_animation,
    IMPORT_ANIM_OT_gta_ifp,
    EXPORT_ANIM_OT_gta_ifp,
    file_handler(
        "gta_ifp", "GTA IFP Animations", "import_anim.gta_ifp", "export_anim.gta_ifp", ".ifp"
    ),
)
MENU_IMPORT = (("import_anim.gta_ifp", "GTA Animations (.ifp)"),)
MENU_EXPORT = (("export_anim.gta_ifp", "GTA Animations (.ifp)"),)
BATCH = (BatchFormat("renderware.ifp", _batch_import, _batch_export),)
