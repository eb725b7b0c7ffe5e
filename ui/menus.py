"""File > Import/Export entries and FileHandlers (drag and drop, Blender 4.2+)."""

from __future__ import annotations

import bpy

IMPORTS = (
    ("import_scene.urho3d_mdl", "Urho3D Model (.mdl)"),
    ("import_anim.urho3d_ani", "Urho3D Animation (.ani)"),
)
EXPORTS = (
    ("export_scene.urho3d_mdl", "Urho3D Model (.mdl)"),
    ("export_anim.urho3d_ani", "Urho3D Animation (.ani)"),
)


def menu_import(self, context) -> None:
    for idname, label in IMPORTS:
        self.layout.operator(idname, text=label)


def menu_export(self, context) -> None:
    for idname, label in EXPORTS:
        self.layout.operator(idname, text=label)


def _poll_drop(context) -> bool:
    return context.area is not None and context.area.type == "VIEW_3D"


class RIGPORT_FH_urho3d_mdl(bpy.types.FileHandler):
    bl_idname = "RIGPORT_FH_urho3d_mdl"
    bl_label = "Urho3D Model"
    bl_import_operator = "import_scene.urho3d_mdl"
    bl_export_operator = "export_scene.urho3d_mdl"
    bl_file_extensions = ".mdl"

    @classmethod
    def poll_drop(cls, context):
        return _poll_drop(context)


class RIGPORT_FH_urho3d_ani(bpy.types.FileHandler):
    bl_idname = "RIGPORT_FH_urho3d_ani"
    bl_label = "Urho3D Animation"
    bl_import_operator = "import_anim.urho3d_ani"
    bl_export_operator = "export_anim.urho3d_ani"
    bl_file_extensions = ".ani"

    @classmethod
    def poll_drop(cls, context):
        return _poll_drop(context)


CLASSES = (RIGPORT_FH_urho3d_mdl, RIGPORT_FH_urho3d_ani)
