"""File > Import > GTA IMG Archive: pick models, animations and textures inside an
.img (version 1 with its .dir, or version 2) and import them.

The browser lists every member with its size and kind. Chosen members are all
parsed before anything is built, so a damaged one leaves the blend file as it
was: models first (each with the texture dictionary of the same name from the
archive), then texture dictionaries, then IFP animations onto the ped just
imported (or the active armature). All or nothing.
"""

from __future__ import annotations

import os

import bpy
from bpy.props import BoolProperty, CollectionProperty, IntProperty, StringProperty
from bpy_extras.io_utils import ImportHelper

from ...io_formats.codec import FormatError
from ...io_formats.renderware import dff, ifp, img, txd
from ...io_formats.renderware.clump_import import import_dff
from ..common import BatchFormat, FileBrowserList, Progress, file_handler, report_lines
from ..conventions import (
    ReuseMaterials,
    draw_transform,
    option_matrix,
    options_layout,
    place_roots,
    section,
    select_imported,
    transform_options,
)
from .build import build_clump
from .ifp_importer import IfpImportOptions, import_ifp_file
from .operators import ENGINE_AXES
from .txd_importer import TxdImportOptions, import_txd_file

IMPORTABLE = ("model", "animations", "textures")
READERS = {"model": dff.read, "animations": ifp.read, "textures": txd.read}


def describe(kind: str, parsed) -> str:
    if kind == "model":
        return f"RenderWare clump, {len(parsed.clumps)} clump(s)"
    if kind == "animations":
        return f"IFP {parsed.version}, {len(parsed.animations)} animations"
    if kind == "textures":
        return f"texture dictionary, {len(parsed.natives)} textures"
    return ""


def archive_rows(path: str) -> list[dict]:
    a = img.open_archive(path)
    return [
        {"name": e.name, "size": e.size * img.SECTOR, "kind": img.kind_of(e.name)}
        for e in a.entries
    ]


def import_archive(
    context,
    path: str,
    members: list[str] | None = None,
    progress=None,
    reuse_materials: bool = False,
    matrix=None,
):
    """Import ``members`` (all importable ones when None); returns report lines.
    Raises FormatError (naming ``archive:member``) and leaves nothing behind.
    ``reuse_materials`` and ``matrix`` (the axes and scale options, put on each
    model's root objects) are the DFF importer's."""
    a = img.open_archive(path)
    names = members
    if names is None:
        names = [n for n in a.names() if img.kind_of(n) in IMPORTABLE]
    parsed = []
    for name in names:
        data = a.read(name)
        if data is None:
            raise FormatError(f"the archive has no member {name!r}", None, path)
        kind = img.kind_of(name)
        if kind not in READERS:
            raise FormatError(f"{name}: RigPort does not import {kind} members", None, path)
        try:
            parsed.append((name, kind, data, READERS[kind](data)))
        except FormatError as err:
            raise err.with_path(f"{path}:{name}") from None
    dictionaries = {}
    for e in a.entries:  # every TXD of the archive, for the models' textures
        if img.kind_of(e.name) == "textures":
            dictionaries[os.path.splitext(e.name)[0].lower()] = e.name
    undo: list = []
    lines: list[str] = []
    order = {"model": 0, "textures": 1, "animations": 2}
    armature = None
    try:
        for i, (name, kind, data, obj) in enumerate(sorted(parsed, key=lambda p: order[p[1]])):
            where = f"{path}:{name}"
            try:
                if kind == "model":
                    armature = _import_model(
                        context, a, name, obj, dictionaries, undo, lines, reuse_materials, matrix
                    )
                elif kind == "textures":
                    done = import_txd_file(context, where, TxdImportOptions(), data)
                    lines += [done.summary, *(f"warning: {w}" for w in done.warnings)]
                    undo += done.undo
                else:
                    done = import_ifp_file(context, where, IfpImportOptions(), armature, data)
                    lines += [done.summary, *(f"warning: {w}" for w in done.warnings)]
                    undo += done.undo
            except FormatError as err:
                raise (err if err.path else err.with_path(where)) from None
            if progress is not None:
                progress.update(i + 1)
    except Exception:
        for u in reversed(undo):
            u()
        raise
    return lines


def _import_model(
    context, a, name, parsed, dictionaries, undo, lines, reuse_materials=False, matrix=None
):
    stem = os.path.splitext(name)[0]
    txd_name = dictionaries.get(stem.lower())
    dicts = []
    if txd_name is not None:
        try:
            dicts = [(txd_name, txd.read(a.read(txd_name)))]
        except FormatError as err:
            raise err.with_path(f"archive member {txd_name}") from None
    armature = None
    for imp in import_dff(parsed, stem):
        built = build_clump(context, imp, "", dicts, reuse_materials)
        undo.append(built.discard)
        if matrix is not None:
            place_roots(built.objects, matrix)
        lines += [f"warning: {w}" for w in imp.warnings]
        lines.append(f"{name}: {len(built.objects)} objects")
        armature = armature or built.armature
    return armature


class RIGPORT_PG_img_member(bpy.types.PropertyGroup):
    """One member of the archive shown in the import browser."""

    size: IntProperty(name="Size", description="The member's size in bytes")
    kind: StringProperty(name="Kind", description="What the member holds, by its extension")
    select: BoolProperty(name="Import", default=True, description="Import this member")


def _importable(item) -> bool:
    return item.kind in IMPORTABLE


def _size(n: int) -> str:
    return f"{n / 1024:.0f} KiB" if n < 1 << 20 else f"{n / (1 << 20):.1f} MiB"


@transform_options(*ENGINE_AXES)
class IMPORT_SCENE_OT_gta_img(bpy.types.Operator, FileBrowserList, ImportHelper, ReuseMaterials):
    """Import models, animations and textures from a GTA IMG archive"""

    bl_idname = "import_scene.gta_img"
    bl_label = "Import GTA IMG Archive"

    filename_ext = ".img"
    filter_glob: StringProperty(default="*.img", options={"HIDDEN"})
    members_list: CollectionProperty(
        type=RIGPORT_PG_img_member,
        options={"HIDDEN", "SKIP_SAVE"},
        description="The archive's members (drawn as the list of ticks)",
    )
    members: StringProperty(
        name="Members",
        default="",
        description="Members to import, ';'-separated (empty: every model, animation "
        "and texture file, or those ticked in the list)",
    )

    list_attr = "members_list"

    def list_rows(self, path: str) -> list[dict]:
        return archive_rows(path)

    def fill_item(self, item, row: dict) -> None:
        item.name, item.size, item.kind = row["name"], row["size"], row["kind"]
        item.select = row["kind"] != "other"

    def draw(self, context) -> None:
        layout = options_layout(self)
        layout.prop(self, "members")
        draw_transform(layout, self)
        section(layout, self, "materials", "Materials", props=("reuse_materials",))
        box = layout.box()
        if not self.draw_list_state(box, "No archive selected", "No members"):
            return
        box.label(text=f"{len(self.members_list)} members")
        for item in self.members_list:
            text = f"{item.name}  ({_size(item.size)}, {item.kind})"
            if item.kind in IMPORTABLE:
                box.prop(item, "select", text=text)
            else:
                box.label(text=text, icon="FILE")

    def execute(self, context):
        before = {o.as_pointer() for o in bpy.data.objects}
        try:
            members = self.chosen_names(
                self.members, "tick at least one member to import", _importable
            )
            with Progress(context, len(members or self.members_list) or 1) as progress:
                lines = import_archive(
                    context,
                    self.filepath,
                    members,
                    progress,
                    self.reuse_materials,
                    option_matrix(self),
                )
        except FormatError as err:
            self.report({"ERROR"}, str(err))
            return {"CANCELLED"}
        select_imported(context, [o for o in bpy.data.objects if o.as_pointer() not in before])
        report_lines(self, lines)
        return {"FINISHED"}


def _batch_import(context, path: str, state: dict, options: dict) -> str:
    before = {o.name for o in bpy.data.objects}
    lines = import_archive(context, path)
    new = [o for o in bpy.data.objects if o.name not in before]
    state.setdefault("objects", []).extend(new)
    arms = [o for o in new if o.type == "ARMATURE"]
    if arms:
        state["armature"] = arms[-1]
    return "; ".join(lines)


CLASSES = (
    RIGPORT_PG_img_member,
    IMPORT_SCENE_OT_gta_img,
    file_handler("gta_img", "GTA IMG Archive", "import_scene.gta_img", "", ".img"),
)
MENU_IMPORT = (("import_scene.gta_img", "GTA IMG Archive (.img)"),)
MENU_EXPORT = ()
BATCH = (BatchFormat("renderware.img", _batch_import, None),)
