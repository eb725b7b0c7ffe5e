"""File > Import > GTA IMG Archive: pick models, animations and textures inside an
.img (version 1 with its .dir, or version 2) and import them.

The browser lists every member with its size and kind. The shared archive
importer (``operators/archive.py``) parses every chosen member before anything
is built, so a damaged one leaves the blend file as it was: models first (each
with the texture dictionary of the same name from the archive), then texture
dictionaries, then IFP animations onto the ped just imported (or the active
armature). All or nothing.
"""

from __future__ import annotations

import os

import bpy
from bpy.props import BoolProperty, CollectionProperty, IntProperty, StringProperty
from bpy_extras.io_utils import ImportHelper

from ...io_formats.codec import FormatError
from ...io_formats.containers import Importable, Member, container
from ...io_formats.renderware import dff, ifp, img, txd
from ...io_formats.renderware.clump_import import import_dff
from ..archive import ArchiveImporter, batch_import, import_members
from ..common import BatchFormat, FileKind, file_handlers, file_type, menus
from ..conventions import (
    ReuseMaterials,
    draw_transform,
    option_matrix,
    options_layout,
    place_roots,
    section,
    transform_options,
)
from ..result import Result, counted
from .build import build_clump
from .ifp_importer import IfpImportOptions, import_ifp_file
from .operators import ENGINE_AXES
from .txd_importer import TxdImportOptions, import_txd_file

#: What the importer takes from an archive, in the order it builds them.
ARCHIVE = Importable(
    "renderware.img",
    {"model": dff.read, "textures": txd.read, "animations": ifp.read},
    img.kind_of,
    "archive",
    "a model, an animation or a texture dictionary",
    {"model": "model", "textures": "texture dictionary", "animations": "animation package"},
)


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
) -> Result:
    """Import ``members`` (all importable ones when None). Raises FormatError
    (naming ``archive:member``) and leaves nothing behind. ``reuse_materials``
    and ``matrix`` (the axes and scale options, put on each model's root
    objects) are the DFF importer's."""

    before = {im.as_pointer() for im in bpy.data.images}

    def build(context, archive, member: Member, so_far: Result) -> Result:
        if member.kind == "model":
            return _import_model(context, archive, member, reuse_materials, matrix)
        if member.kind == "textures":
            # a model of this import took its textures from this dictionary already
            have = {
                str(im.get("rw_texture", "")).lower(): im
                for im in bpy.data.images
                if im.as_pointer() not in before and im.get("rw_txd") == member.name
            }
            return import_txd_file(context, member.where, TxdImportOptions(), member.data, have)
        return import_ifp_file(
            context, member.where, IfpImportOptions(), so_far.armature, member.data
        )

    return import_members(context, ARCHIVE, path, members, build, progress)


def _dictionary_of(archive, model: str) -> str | None:
    """The archive's texture dictionary named as the model (the last of them)."""
    stem = os.path.splitext(model)[0].lower()
    names = container(ARCHIVE.container).names(archive)
    found = [n for n in names if img.kind_of(n) == "textures"]
    return next((n for n in reversed(found) if os.path.splitext(n)[0].lower() == stem), None)


def _import_model(context, archive, member: Member, reuse_materials=False, matrix=None) -> Result:
    txd_name = _dictionary_of(archive, member.name)
    dicts = []
    if txd_name is not None:
        try:
            dicts = [(txd_name, txd.read(archive.read(txd_name)))]
        except FormatError as err:
            raise err.with_path(f"archive member {txd_name}") from None
    done = Result()
    for imp in import_dff(member.parsed, os.path.splitext(member.name)[0]):
        built = build_clump(context, imp, "", dicts, reuse_materials)
        done.undo.append(built.discard)
        if matrix is not None:
            place_roots(built.objects, matrix)
        done.objects.extend(built.objects)
        done.warn(*imp.warnings)
        done.info(f"{member.name}: {counted(len(built.objects), 'object')}")
        done.armature = done.armature or built.armature
    return done


class RIGPORT_PG_img_member(bpy.types.PropertyGroup):
    """One member of the archive shown in the import browser."""

    size: IntProperty(name="Size", description="The member's size in bytes")
    kind: StringProperty(name="Kind", description="What the member holds, by its extension")
    select: BoolProperty(name="Import", default=True, description="Import this member")


def _size(n: int) -> str:
    return f"{n / 1024:.0f} KiB" if n < 1 << 20 else f"{n / (1 << 20):.1f} MiB"


@transform_options(*ENGINE_AXES)
class IMPORT_SCENE_OT_gta_img(
    bpy.types.Operator, file_type(".img"), ArchiveImporter, ImportHelper, ReuseMaterials
):
    """Import models, animations and textures from a GTA IMG archive"""

    bl_idname = "import_scene.gta_img"
    bl_label = "Import GTA IMG Archive"

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

    archive = ARCHIVE
    list_attr = "members_list"

    def list_rows(self, path: str) -> list[dict]:
        return archive_rows(path)

    def draw(self, context) -> None:
        layout = options_layout(self)
        layout.prop(self, "members")
        draw_transform(layout, self)
        section(layout, self, "materials", "Materials", props=("reuse_materials",))
        box = layout.box()
        if not self.draw_list_state(box, "No archive selected", "No members"):
            return
        box.label(text=counted(len(self.members_list), "member"))
        for item in self.members_list:
            text = f"{item.name}  ({_size(item.size)}, {item.kind})"
            if item.kind in ARCHIVE.readers:
                box.prop(item, "select", text=text)
            else:
                box.label(text=text, icon="FILE")

    def import_archive(self, context, names, progress=None) -> Result:
        return import_archive(
            context, self.filepath, names, progress, self.reuse_materials, option_matrix(self)
        )


FILES = (FileKind("GTA IMG Archive", ".img", "import_scene.gta_img", handler="gta_img"),)
CLASSES = (RIGPORT_PG_img_member, IMPORT_SCENE_OT_gta_img, *file_handlers(FILES))
MENU_IMPORT, MENU_EXPORT = menus(FILES)
BATCH = (
    BatchFormat(
        "renderware.img", batch_import(lambda context, path, options: import_archive(context, path))
    ),
)
