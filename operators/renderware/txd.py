"""TXD texture dictionaries: File > Import (PC), the operator and batch's handler.

The import itself is :mod:`.txd_importer`."""

from __future__ import annotations

import bpy
from bpy.props import BoolProperty

from ..common import BatchFormat, FileKind, ImportFiles, file_handlers, file_type, menus
from ..conventions import options_layout
from ..options import from_mapping, from_operator
from ..result import Result
from .txd_importer import TxdImportOptions, import_txd_file


class IMPORT_SCENE_OT_rw_txd(bpy.types.Operator, file_type(".txd"), ImportFiles):
    """Import RenderWare texture dictionaries (.txd, PC) as packed images on the materials"""

    bl_idname = "import_scene.rw_txd"
    bl_label = "Import RenderWare TXD"

    mipmaps: BoolProperty(
        name="Mipmap Levels",
        default=False,
        description="Also make an image of every further mipmap level (name/level)",
    )

    def draw(self, context) -> None:
        options_layout(self).prop(self, "mipmaps")

    def execute(self, context):
        options = from_operator(TxdImportOptions, self)
        return self.import_files(
            context, lambda c, path, progress: import_txd_file(c, path, options)
        )


def _batch_import(context, path: str, state: dict, options: dict) -> Result:
    return import_txd_file(context, path, from_mapping(TxdImportOptions, options))


FILES = (FileKind("RenderWare Textures", ".txd", "import_scene.rw_txd", handler="rw_txd"),)
CLASSES = (IMPORT_SCENE_OT_rw_txd, *file_handlers(FILES))
MENU_IMPORT, MENU_EXPORT = menus(FILES)
BATCH = (BatchFormat("renderware.txd", _batch_import, None),)
