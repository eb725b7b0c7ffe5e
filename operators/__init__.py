"""Blender operators, one package per format family, found by walking this package.

``operators/<format>/`` mirrors ``io_formats/<format>/``: its operator modules,
and that format's own build/extract code. ``operators/blender/`` holds only
what every format shares. A format's operator module (any module of the
package that defines ``CLASSES``) provides:

* ``FILES``: its :class:`operators.common.FileKind` entries, whence
* ``CLASSES``: its operator and FileHandler classes (``file_handlers(FILES)``), in
  registration order;
* ``MENU_IMPORT`` / ``MENU_EXPORT``: ``(operator idname, menu label)`` pairs (``menus(FILES)``);
* ``BATCH``: :class:`operators.common.BatchFormat` entries for ``batch.py``.

Beside them a format has ``kept.py`` (the custom property names it keeps data
under, read without bpy by ``operators.blender.kept_keys``) and ``panel.py``
(``describe(obj, report)``: its lines of the RigPort panel, ``ui/report.py``).
Adding a format adds a package; no shared file lists them.
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import types

_SHARED = {"blender"}


def _format_packages() -> list[str]:
    here = os.path.dirname(__file__)
    return [
        info.name
        for info in sorted(pkgutil.iter_modules([here]), key=lambda i: i.name)
        if info.ispkg and info.name not in _SHARED
    ]


def format_parts(name: str) -> list[types.ModuleType]:
    """Every format's module ``name`` (``kept``, ``panel``), sorted by package;
    formats without one are skipped. Imports only those modules (``kept`` has no bpy)."""
    here = os.path.dirname(__file__)
    return [
        importlib.import_module(f"{__name__}.{pkg}.{name}")
        for pkg in _format_packages()
        if os.path.isfile(os.path.join(here, pkg, f"{name}.py"))
    ]


def format_modules() -> list[types.ModuleType]:
    """The format operator modules, sorted by package and module (this imports bpy)."""
    here = os.path.dirname(__file__)
    modules = []
    for pkg in _format_packages():
        folder = os.path.join(here, pkg)
        for info in sorted(pkgutil.iter_modules([folder]), key=lambda i: i.name):
            module = importlib.import_module(f"{__name__}.{pkg}.{info.name}")
            if hasattr(module, "CLASSES"):
                modules.append(module)
    return modules
