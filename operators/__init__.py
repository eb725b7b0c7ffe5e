"""Blender operators, one package per format family, found by walking this package.

``operators/<format>/`` mirrors ``io_formats/<format>/``: its operator modules,
and that format's own build/extract code. ``operators/blender/`` holds only
what every format shares. A format's operator module (any module of the
package that defines ``CLASSES``) provides:

* ``CLASSES``: its operator and FileHandler classes, in registration order;
* ``MENU_IMPORT`` / ``MENU_EXPORT``: ``(operator idname, menu label)`` pairs;
* ``BATCH``: :class:`operators.common.BatchFormat` entries for ``batch.py``.

Adding a format adds a package; no shared file lists them.
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import types

_SHARED = {"blender"}


def format_modules() -> list[types.ModuleType]:
    """The format operator modules, sorted by package and module (this imports bpy)."""
    here = os.path.dirname(__file__)
    modules = []
    for pkg in sorted(pkgutil.iter_modules([here]), key=lambda i: i.name):
        if not pkg.ispkg or pkg.name in _SHARED:
            continue
        folder = os.path.join(here, pkg.name)
        for info in sorted(pkgutil.iter_modules([folder]), key=lambda i: i.name):
            module = importlib.import_module(f"{__name__}.{pkg.name}.{info.name}")
            if hasattr(module, "CLASSES"):
                modules.append(module)
    return modules
