"""File > Import > Urho3D Package: pick models and animations inside a .pak and import them.

Models are built first; each animation goes onto the imported armature whose
bone names match it best (or, with no model chosen, the active armature or the
best match in the scene). Every chosen file is parsed before anything is
built, so a damaged one leaves the blend file as it was.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import bpy
import numpy as np
from bpy.props import BoolProperty, CollectionProperty, EnumProperty, IntProperty, StringProperty
from bpy_extras.io_utils import ImportHelper

from ...io_formats.codec import FormatError
from ...io_formats.urho3d import ani, mdl, package
from ...io_formats.urho3d.formats import member_kind, member_summary
from ..blender import guard
from ..common import (
    WARNING,
    BatchFormat,
    FileBrowserList,
    Progress,
    SceneState,
    batch_notes,
    failure_message,
    file_handler,
    read_bytes,
    report_lines,
)
from ..conventions import (
    FrameRateOptions,
    ReuseMaterials,
    draw_transform,
    option_matrix,
    options_layout,
    place_roots,
    section,
    select_imported,
    transform_options,
)
from .animation_importer import AnimationImportOptions, build_animation
from .axes import ENGINE_AXES
from .model_importer import ModelImportOptions, build_model
from .operators import LOD_DESCRIPTION, LOD_ITEMS

IMPORTABLE = ("model", "animation")


@dataclass
class PackageImport:
    """What one package import made (for the report, and to undo it on failure)."""

    built: list = field(default_factory=list)  # a Result per model
    actions: list = field(default_factory=list)  # a Result per animation
    lines: list[str] = field(default_factory=list)

    def discard(self) -> None:
        for imported in reversed(self.actions):
            imported.take_back()
        for built in reversed(self.built):
            built.take_back()
        self.actions.clear()
        self.built.clear()


def read_package_file(path: str) -> package.Package:
    try:
        return package.read(read_bytes(path))
    except FormatError as err:
        raise err.with_path(path) from None


def describe(name: str, data: bytes) -> str:
    """One line for the browser: what the file is, with the codec's own numbers."""
    kind = member_kind(name)
    info = member_summary(name, data)
    if info is None:
        return kind
    if "error" in info:
        return f"{kind}, unreadable: {info['error']}"
    if kind == "model":
        return f"model {info['magic']}, {len(info['bones'])} bones, {len(info['morphs'])} morphs"
    if kind == "animation":
        return f"animation, {len(info['tracks'])} tracks, {info['length']} s"
    return (
        f"{info['type']} shader SM{info['model']}, {len(info['parameters'])} parameters, "
        f"texture units: {', '.join(t['name'] for t in info['texture_units']) or 'none'}"
    )


def package_rows(path: str) -> list[dict]:
    """The browser's list: per file its name, sizes, kind, description, and whether
    it is ticked for import (models and animations)."""
    rows = []
    for e in read_package_file(path).entries:
        kind = member_kind(e.name)
        rows.append(
            {
                "name": e.name,
                "size": len(e.data),
                "stored": len(e.stored) if e.stored is not None else len(e.data),
                "kind": kind,
                "detail": describe(e.name, e.data),
                "select": kind in IMPORTABLE,
            }
        )
    return rows


def import_package(
    context,
    path: str,
    members: list[str] | None = None,
    all_lods: bool = False,
    convert: bool = True,
    progress: Progress | None = None,
    reuse_materials: bool = False,
    matrix: np.ndarray | None = None,
    fps: float | None = None,
) -> PackageImport:
    """Import the chosen files of a package (default: every model and animation).
    ``matrix`` goes onto each model's root objects (the axes and scale options);
    animation keys convert at ``fps`` (default: the scene's rate)."""
    pkg = read_package_file(path)
    if members is None:
        chosen = [e for e in pkg.entries if member_kind(e.name) in IMPORTABLE]
    else:
        chosen = []
        for name in members:
            e = pkg.find(name)
            if e is None:
                raise FormatError(f"the package has no file {name!r}", None, path)
            if member_kind(e.name) not in IMPORTABLE:
                raise FormatError(f"{e.name} is not a model or an animation", None, path)
            chosen.append(e)
    if not chosen:
        raise FormatError("the package holds no model or animation to import", None, path)
    models, anims = [], []
    for e in chosen:  # parse everything first: a bad file stops the import before building
        where = f"{path}:{e.name}"
        try:
            if member_kind(e.name) == "model":
                models.append((where, mdl.read(e.data)))
            else:
                anims.append((where, ani.read(e.data)))
        except FormatError as err:
            raise err.with_path(where) from None

    lods = "ALL" if all_lods else "FIRST"
    model_options = ModelImportOptions(lods=lods, reuse_materials=reuse_materials, convert=convert)
    rate = {"frame_rate": "CUSTOM", "fps": fps} if fps else {}
    anim_options = AnimationImportOptions(convert=convert, **rate)
    result = PackageImport()
    try:
        for i, (where, model) in enumerate(models):
            built = build_model(context, model, where, model_options)
            result.built.append(built)
            if matrix is not None:
                place_roots(built.objects, matrix)
            result.lines.append(f"{where}: {len(built.objects)} objects")
            result.lines += [f"{WARNING}{where}: {w}" for w in built.warnings]
            if progress:
                progress.update(i + 1)
        armatures = [b.armature for b in result.built if b.armature is not None]
        for i, (where, anim) in enumerate(anims):
            target, how = _best_armature(armatures, anim)
            imported = build_animation(context, anim, where, anim_options, target, how)
            result.actions.append(imported)
            result.lines.append(f"{where}: {imported.summary}")
            result.lines += [f"{WARNING}{where}: {w}" for w in imported.warnings]
            if progress:
                progress.update(len(models) + i + 1)
    except Exception:
        result.discard()
        raise
    return result


def _best_armature(armatures: list, anim: ani.Animation):
    """The armature imported with the package whose bones match most track names."""
    names = {t.name for t in anim.tracks}
    best, score = None, 0
    for arm in armatures:
        hits = len(names & {b.name for b in arm.data.bones})
        if hits > score:
            best, score = arm, hits
    if best is None:
        return None, ""
    return best, f"the imported armature, {score} of {len(names)} tracks match"


class RIGPORT_PG_package_file(bpy.types.PropertyGroup):
    """One file of the package shown in the import browser."""

    size: IntProperty(name="Size")
    stored: IntProperty(name="Stored Size")
    kind: StringProperty(name="Kind")
    detail: StringProperty(name="Detail")
    select: BoolProperty(name="Import", default=True)


def _importable(item) -> bool:
    return item.kind in IMPORTABLE


def _size(n: int) -> str:
    return f"{n} B" if n < 1024 else f"{n / 1024:.1f} KiB"


class RIGPORT_UL_package_files(bpy.types.UIList):
    """The package's files: a tick box on each model and animation, then the name,
    size and what the file is."""

    def draw_item(self, context, layout, data, item, icon, active_data, active_prop, index=0):
        row = layout.row(align=True)
        if item.kind in IMPORTABLE:
            row.prop(item, "select", text="")
        else:
            row.label(text="", icon="FILE")
        row.label(text=f"{item.name}  ({_size(item.size)})")
        row.label(text=item.detail)


@transform_options(*ENGINE_AXES)
class IMPORT_SCENE_OT_urho3d_package(
    bpy.types.Operator, FileBrowserList, ImportHelper, ReuseMaterials, FrameRateOptions
):
    """Import models and animations from an Urho3D or rbfx package (.pak)"""

    bl_idname = "import_scene.urho3d_package"
    bl_label = "Import Urho3D Package"

    filename_ext = ".pak"
    filter_glob: StringProperty(default="*.pak", options={"HIDDEN"})
    package_files: CollectionProperty(
        type=RIGPORT_PG_package_file,
        options={"SKIP_SAVE"},
        name="Package Files",
        description="The package's files: tick the models and animations to import",
    )
    active_file: IntProperty(
        name="Active File",
        options={"SKIP_SAVE"},
        description="The file highlighted in the list",
    )
    members: StringProperty(
        name="Files",
        default="",
        description="Files to import, ';'-separated (empty: every model and animation, "
        "or those ticked in the list)",
    )
    lods: EnumProperty(name="LODs", items=LOD_ITEMS, default="ALL", description=LOD_DESCRIPTION)

    list_attr = "package_files"

    def list_rows(self, path: str) -> list[dict]:
        return package_rows(path)

    def invoke(self, context, event):
        """A dropped package gets the options popup with its file list (filled
        here: the popup has no file browser to fill it); File > Import opens the
        file browser."""
        if self.properties.is_property_set("filepath"):
            self._list()
            return context.window_manager.invoke_props_dialog(
                self, confirm_text=self.bl_label, title=self.filepath, translate=False
            )
        context.window_manager.fileselect_add(self)
        return {"RUNNING_MODAL"}

    def check(self, context) -> bool:
        listed = FileBrowserList.check(self, context)
        return ImportHelper.check(self, context) or listed

    def draw(self, context) -> None:
        layout = options_layout(self)
        body = section(layout, self, "include", "Include", props=("members",))
        if body is not None:
            self.draw_files(body.box())
        draw_transform(layout, self)
        section(layout, self, "geometry", "Geometry", props=("lods", "reuse_materials"))
        body = section(layout, self, "animation", "Animation")
        if body is not None:
            self.draw_frame_rate(body)

    def draw_files(self, box) -> None:
        """The package's files, models and animations with a tick box."""
        if self.draw_list_state(box, "No package file selected", "No files"):
            box.label(text=f"{len(self.package_files)} files in the package")
        box.template_list(
            "RIGPORT_UL_package_files",
            "",
            self,
            "package_files",
            self,
            "active_file",
            rows=min(max(len(self.package_files), 3), 12),
        )

    def execute(self, context):
        try:
            members = self.chosen_names(
                self.members, "tick at least one model or animation to import", _importable
            )
        except FormatError as err:
            self.report({"ERROR"}, str(err))
            return {"CANCELLED"}
        total = len(members) if members is not None else len(self.package_files) or 1
        state = SceneState(context)
        guard.take_notes()
        try:
            with Progress(context, total) as progress:
                result = import_package(
                    context,
                    self.filepath,
                    members,
                    self.lods == "ALL",
                    True,
                    progress,
                    self.reuse_materials,
                    option_matrix(self),
                    self.frames_per_second(context),
                )
        except Exception as err:  # whatever it was, the scene goes back as it was
            self.report({"ERROR"}, guard.blender_name(failure_message(err, self.filepath)))
            state.restore()
            guard.take_notes()
            return {"CANCELLED"}
        report_lines(self, result.lines)
        notes = guard.take_notes()
        if notes:
            text = f"{os.path.basename(self.filepath)}: {guard.summary(notes)}"
            self.report({"WARNING"}, guard.blender_name(text))
        self.apply_scene_timing(context, [a.actions[0] for a in result.actions])
        select_imported(context, state.added_objects())
        return {"FINISHED"}


def _batch_import_pak(context, path: str, state: dict, options: dict) -> str:
    result = import_package(context, path, None, bool(options.get("all_lods")))
    for built in result.built:
        if built.armature is not None:
            state["armature"] = built.armature
        state.setdefault("objects", []).extend(built.objects)
    if result.actions:
        last = result.actions[-1]
        state["armature"], state["action"] = last.armature, last.actions[0]
    models = len(result.built)
    notes = [line[len("warning: ") :] for line in result.lines if line.startswith("warning: ")]
    return f"{models} models, {len(result.actions)} animations{batch_notes(notes)}"


CLASSES = (
    RIGPORT_PG_package_file,
    RIGPORT_UL_package_files,
    IMPORT_SCENE_OT_urho3d_package,
    file_handler("urho3d_pak", "Urho3D Package", "import_scene.urho3d_package", "", ".pak"),
)
MENU_IMPORT = (("import_scene.urho3d_package", "Urho3D Package (.pak)"),)
MENU_EXPORT = ()
BATCH = (BatchFormat("urho3d.pak", _batch_import_pak, None),)
