"""RigPort: skinned meshes, skeletons, shape keys and animations of game formats."""

from __future__ import annotations

import bpy

from .operators import format_modules
from .ui import menus, panel


def _classes() -> list[type]:
    formats = [cls for module in format_modules() for cls in module.CLASSES]
    return [*formats, *panel.CLASSES]


def register() -> None:
    for cls in _classes():
        bpy.utils.register_class(cls)
    bpy.types.TOPBAR_MT_file_import.append(menus.menu_import)
    bpy.types.TOPBAR_MT_file_export.append(menus.menu_export)


def unregister() -> None:
    bpy.types.TOPBAR_MT_file_export.remove(menus.menu_export)
    bpy.types.TOPBAR_MT_file_import.remove(menus.menu_import)
    for cls in reversed(_classes()):
        bpy.utils.unregister_class(cls)
