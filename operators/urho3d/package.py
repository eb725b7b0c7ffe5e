"""File > Import > Urho3D Package: pick models and animations inside a .pak and import them.

Models are built first; each animation goes onto the imported armature whose
bone names match it best (or, with no model chosen, the active armature or the
best match in the scene). Every chosen file is parsed before anything is
built, so a damaged one leaves the blend file as it was.
"""

from __future__ import annotations

import bpy
import numpy as np
from bpy.props import BoolProperty, CollectionProperty, EnumProperty, IntProperty, StringProperty
from bpy_extras.io_utils import ImportHelper

from ...io_formats.containers import Importable, Member, container
from ...io_formats.urho3d import ani, mdl
from ...io_formats.urho3d.formats import member_kind, member_summary
from ..archive import ArchiveImporter, batch_import, import_members
from ..blender.actions import keep_all
from ..blender.armatures import by_bone_names, choose_armature
from ..common import BatchFormat, FileKind, Progress, file_handlers, file_type, menus
from ..conventions import (
    FrameRateOptions,
    ReuseMaterials,
    draw_transform,
    option_matrix,
    options_layout,
    place_roots,
    section,
    transform_options,
)
from ..result import Level, Message, Result, counted
from .animation_importer import AnimationImportOptions, build_animation
from .model_importer import ModelImportOptions, build_model
from .operators import ENGINE_AXES, LOD_DESCRIPTION, LOD_ITEMS

#: What the importer takes from a package, in the order it builds them.
ARCHIVE = Importable(
    "urho3d.pak",
    {"model": mdl.read, "animation": ani.read},
    member_kind,
    "package",
    "a model or an animation",
    {"model": "model", "animation": "animation"},
)


def _located(where: str, done: Result) -> Result:
    """``done`` with each of its messages naming the member ``where``."""
    done.messages = [Message(m.level, f"{where}: {m.text}") for m in done.messages]
    return done


def describe(name: str, data: bytes) -> str:
    """One line for the browser: what the file is, with the codec's own numbers."""
    kind = member_kind(name)
    info = member_summary(name, data)
    if info is None:
        return kind
    if "error" in info:
        return f"{kind}, unreadable: {info['error']}"
    if kind == "model":
        return (
            f"model {info['magic']}, {counted(len(info['bones']), 'bone')}, "
            f"{counted(len(info['morphs']), 'morph')}"
        )
    if kind == "animation":
        return f"animation, {counted(len(info['tracks']), 'track')}, {info['length']} s"
    return (
        f"{info['type']} shader SM{info['model']}, "
        f"{counted(len(info['parameters']), 'parameter')}, "
        f"texture units: {', '.join(t['name'] for t in info['texture_units']) or 'none'}"
    )


def package_rows(path: str) -> list[dict]:
    """The browser's list: per file its name, sizes, kind, description, and whether
    it is ticked for import (models and animations)."""
    rows = []
    for e in container(ARCHIVE.container).open(path).entries:
        kind = member_kind(e.name)
        rows.append(
            {
                "name": e.name,
                "size": len(e.data),
                "stored": len(e.stored) if e.stored is not None else len(e.data),
                "kind": kind,
                "detail": describe(e.name, e.data),
                "select": kind in ARCHIVE.readers,
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
) -> Result:
    """Import the chosen files of a package (default: every model and animation).
    ``matrix`` goes onto each model's root objects (the axes and scale options);
    animation keys convert at ``fps`` (default: the scene's)."""

    lods = "ALL" if all_lods else "FIRST"
    model_options = ModelImportOptions(lods=lods, reuse_materials=reuse_materials, convert=convert)
    rate = {"frame_rate": "CUSTOM", "fps": fps} if fps else {}
    anim_options = AnimationImportOptions(convert=convert, **rate)
    animated: list[tuple] = []  # (armature, actions): stashed once, after every member

    def build(context, archive, member: Member, so_far: Result) -> Result:
        where = member.where
        if member.kind == "model":
            built = build_model(context, member.parsed, where, model_options)
            if matrix is not None:
                place_roots(built.objects, matrix)
            return _located(where, built)
        target, how = choose_armature(
            context,
            active=False,
            pool=[o for o in so_far.objects if o.type == "ARMATURE"],
            rule=by_bone_names(
                [t.name for t in member.parsed.tracks],
                "the imported armature, {score} of {wanted} tracks match",
                refuse=False,
            ),
        )
        imported = build_animation(
            context, member.parsed, where, anim_options, target, how, keep=False
        )
        animated.append((imported.armature, imported.actions))
        imported.messages = [
            Message(m.level, imported.summary) if m.level is Level.INFO else m
            for m in imported.messages
        ]
        return _located(where, imported)

    done = import_members(context, ARCHIVE, path, members, build, progress)
    try:
        done.undo.extend(keep_all(animated))
    except Exception:
        done.take_back()
        raise
    return done


class RIGPORT_PG_package_file(bpy.types.PropertyGroup):
    """One file of the package shown in the import browser."""

    size: IntProperty(name="Size")
    stored: IntProperty(name="Stored Size")
    kind: StringProperty(name="Kind")
    detail: StringProperty(name="Detail")
    select: BoolProperty(name="Import", default=True)


def _size(n: int) -> str:
    return f"{n} B" if n < 1024 else f"{n / 1024:.1f} KiB"


class RIGPORT_UL_package_files(bpy.types.UIList):
    """The package's files: a tick box on each model and animation, then the name,
    size and what the file is."""

    def draw_item(self, context, layout, data, item, icon, active_data, active_prop, index=0):
        row = layout.row(align=True)
        if item.kind in ARCHIVE.readers:
            row.prop(item, "select", text="")
        else:
            row.label(text="", icon="FILE")
        row.label(text=f"{item.name}  ({_size(item.size)})")
        row.label(text=item.detail)


@transform_options(*ENGINE_AXES)
class IMPORT_SCENE_OT_urho3d_package(
    bpy.types.Operator,
    file_type(".pak"),
    ArchiveImporter,
    ImportHelper,
    ReuseMaterials,
    FrameRateOptions,
):
    """Import models and animations from an Urho3D or rbfx package (.pak)"""

    bl_idname = "import_scene.urho3d_package"
    bl_label = "Import Urho3D Package"

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

    archive = ARCHIVE
    list_attr = "package_files"
    nothing_ticked = "tick at least one model or animation to import"

    def list_rows(self, path: str) -> list[dict]:
        return package_rows(path)

    def check(self, context) -> bool:
        listed = ArchiveImporter.check(self, context)
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
            box.label(text=f"{counted(len(self.package_files), 'file')} in the package")
        box.template_list(
            "RIGPORT_UL_package_files",
            "",
            self,
            "package_files",
            self,
            "active_file",
            rows=min(max(len(self.package_files), 3), 12),
        )

    def import_archive(self, context, names, progress=None) -> Result:
        return import_package(
            context,
            self.filepath,
            names,
            self.lods == "ALL",
            True,
            progress,
            self.reuse_materials,
            option_matrix(self),
            self.frames_per_second(context),
        )


def _batch_import_pak(context, path: str, options: dict) -> Result:
    return import_package(context, path, None, bool(options.get("all_lods")))


FILES = (FileKind("Urho3D Package", ".pak", "import_scene.urho3d_package", handler="urho3d_pak"),)
CLASSES = (
    RIGPORT_PG_package_file,
    RIGPORT_UL_package_files,
    IMPORT_SCENE_OT_urho3d_package,
    *file_handlers(FILES),
)
MENU_IMPORT, MENU_EXPORT = menus(FILES)
BATCH = (BatchFormat("urho3d.pak", batch_import(_batch_import_pak)),)
