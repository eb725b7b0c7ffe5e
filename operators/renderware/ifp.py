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
layout the actions came from (else the version chosen). An IFP holds many
animations, so every choice of ``export_animations`` goes into the one file;
the default is All Actions, which writes back every animation an import made
(kept as NLA tracks), in the package's order: the round trip.

Import takes the frame rate options (an IFP stores times in seconds and no
rate of its own) and sets the scene's rate and frame range by default; the
scale multiplies the keys' translations and is recorded on each action, so an
export "As Imported" writes the file's values back.
"""

from __future__ import annotations

import json
import os

import bpy
from bpy.props import BoolProperty, CollectionProperty, EnumProperty, IntProperty, StringProperty

from ...io_formats.codec import FormatError, read_file, write_atomic
from ...io_formats.renderware import anim_convert, ifp
from ..animation_files import chosen_actions, export_animations_property
from ..blender.actions import keep_actions
from ..blender.build import build_action, rest_relative
from ..blender.extract import extract_animation
from ..common import (
    BatchFormat,
    ExportFile,
    FileBrowserList,
    ImportFiles,
    current_action,
    file_handler,
    iter_armatures,
    report_export,
)
from ..conventions import (
    AnimationFrameRate,
    ExportFrameRate,
    draw_props,
    options_layout,
    scene_fps,
)
from .anim_options import (
    ArmatureScope,
    ExportKeyScale,
    ImportKeyScale,
    export_scale,
    record_scale,
    scale_translations,
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
    scale: float = 1.0,
    made_out: list | None = None,
) -> tuple[list[str], list]:
    """Build the animations ``names`` (all when None) of one .ifp as actions
    (``progress(fraction)`` after each), at ``fps`` (default: the scene's) with
    translations times ``scale`` (recorded on each action for "As Imported").
    The actions made are appended to ``made_out``. Returns report lines and undo
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
    fps = fps or scene_fps(context)
    made: list = []
    rest = rest_relative(armature.data)
    missing: dict[str, int] = {}
    try:
        for a in chosen:
            neutral, miss = anim_convert.ifp_to_animation(a, bones)
            for m in miss:
                missing[m] = missing.get(m, 0) + 1
            scale_translations(neutral, scale)
            action = build_action(armature, neutral, fps, rest)
            made.append(action)
            record_scale(action, scale)
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
    if made_out is not None:
        made_out.extend(made)
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


def export_ifp(
    context,
    path: str,
    armature,
    actions: list,
    version: str = "AUTO",
    replace: bool = True,
    options=None,
    fps: float | None = None,
) -> list[str]:
    """Write ``actions`` (actions, or (name, action) pairs: the name the animation
    gets) into the IFP at ``path`` (atomic); returns warnings. ``options``: the
    scale options (:class:`ExportKeyScale`), None for the actions' own units.
    Key times convert at ``fps`` when given, else at the rate each action was
    imported with, else the scene's."""
    if not actions:
        raise FormatError("the armature has no action to export", None, path)
    pairs = [a if isinstance(a, tuple) else (a.name, a) for a in actions]
    actions = [a for _, a in pairs]
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
    rate = fps or scene_fps(context)
    rest = rest_relative(armature.data)
    for (name, action), source in zip(pairs, kept, strict=True):
        neutral = extract_animation(armature, action, rate, fps is None, rest=rest)
        neutral.name = name if name != action.name else neutral.name
        scale_translations(neutral, export_scale(options, action))
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

    frames: IntProperty(name="Frames", description="The animation's key frames")
    objects: IntProperty(name="Bones", description="The bones the animation keys")
    select: BoolProperty(name="Import", default=True, description="Import this animation")


class IMPORT_ANIM_OT_gta_ifp(
    bpy.types.Operator, FileBrowserList, ImportFiles, AnimationFrameRate, ImportKeyScale
):
    """Import GTA IFP animations (III, Vice City, San Andreas) as actions on a ped armature"""

    bl_idname = "import_anim.gta_ifp"
    bl_label = "Import GTA IFP"

    filename_ext = ".ifp"
    filter_glob: StringProperty(default="*.ifp", options={"HIDDEN"})
    animations: CollectionProperty(
        type=RIGPORT_PG_ifp_animation,
        options={"HIDDEN", "SKIP_SAVE"},
        description="The package's animations (drawn as the list of ticks)",
    )
    names: StringProperty(
        name="Animations",
        default="",
        description="Animations to import, ';'-separated (empty: all, or those ticked in the list)",
    )
    list_attr = "animations"

    def invoke(self, context, event):
        """A dropped file's popup lists its animations too."""
        if self.filepath:
            self._list()
        return self.invoke_popup(context)

    def list_rows(self, path: str) -> list[dict]:
        return ifp_rows(path)

    def fill_item(self, item, row: dict) -> None:
        item.name, item.frames, item.objects = row["name"], row["frames"], row["objects"]

    def draw(self, context) -> None:
        layout = options_layout(self)
        layout.prop(self, "names")
        box = layout.box()
        if self.draw_list_state(box, "No IFP file selected", "No animations"):
            box.label(text=f"{len(self.animations)} animations")
            for item in self.animations:
                box.prop(
                    item,
                    "select",
                    text=f"{item.name}  ({item.frames} frames, {item.objects} bones)",
                )
        self.draw_animation(layout)

    def execute(self, context):
        try:
            names = self.chosen_names(self.names, "tick at least one animation to import")
        except FormatError as err:
            self.report({"ERROR"}, str(err))
            return {"CANCELLED"}
        fps = self.frames_per_second(context)
        made: list = []

        def one(context, path, progress):
            return import_ifp(
                context, path, names, None, None, fps, progress, self.global_scale, made
            )

        return self.import_files(context, one, made=made)


class EXPORT_ANIM_OT_gta_ifp(
    bpy.types.Operator, ExportFile, ExportKeyScale, ArmatureScope, ExportFrameRate
):
    """Export actions of the active armature into a GTA IFP (new, or replacing animations)"""

    bl_idname = "export_anim.gta_ifp"
    bl_label = "Export GTA IFP"

    filename_ext = ".ifp"
    filter_glob: StringProperty(default="*.ifp", options={"HIDDEN"})
    export_animations: export_animations_property(
        default="ACTIONS",
        description="Which actions become the package's animations (an IFP holds many: "
        "All Actions writes back every animation an IFP import made)",
    )
    version: EnumProperty(
        name="Version",
        items=(
            ("AUTO", "As Imported", "The layout the actions came from, else San Andreas"),
            ("ANPK", "III / Vice City (ANPK)", "Float keys"),
            ("ANP3", "San Andreas (ANP3)", "Compressed keys"),
        ),
        default="AUTO",
        description="The package layout (game) written for a new file",
    )
    replace: BoolProperty(
        name="Replace in Existing File",
        default=True,
        description="Write into the existing file: animations of the same name are "
        "replaced, the others kept",
    )

    def draw(self, context) -> None:
        layout = options_layout(self)
        draw_props(layout, self, ("export_animations", "version", "replace"))
        self.draw_frame_rate(layout, importing=False)
        self.draw_scale(layout)

    def execute(self, context):
        fps = self.fps if self.frame_rate == "CUSTOM" else None

        def export() -> list[str]:
            arm = self.target_armature(context)
            actions = armature_actions(arm, self.export_animations)
            warnings = export_ifp(
                context, self.filepath, arm, actions, self.version, self.replace, self, fps
            )
            self.report(
                {"INFO"}, f"{len(actions)} animations written to {os.path.basename(self.filepath)}"
            )
            return warnings

        return report_export(self, export)


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
    warnings = export_ifp(context, path, arm, armature_actions(arm, "ACTIONS"), "AUTO", False)
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
