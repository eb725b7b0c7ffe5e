"""File > Import/Export entries of every format module."""

from __future__ import annotations

from ..operators import format_modules


def menu_import(self, context) -> None:
    for module in format_modules():
        for idname, label in module.MENU_IMPORT:
            self.layout.operator(idname, text=label)


def menu_export(self, context) -> None:
    for module in format_modules():
        for idname, label in module.MENU_EXPORT:
            self.layout.operator(idname, text=label)
