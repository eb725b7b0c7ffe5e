"""Blender operators, one module per format family, found by walking this package.

A format module (``operators/<format>.py``) provides:

* ``CLASSES``: its operator and FileHandler classes, in registration order;
* ``MENU_IMPORT`` / ``MENU_EXPORT``: ``(operator idname, menu label)`` pairs;
* ``BATCH``: :class:`operators.common.BatchFormat` entries for ``batch.py``.

Adding a format adds a module; no shared file lists them.
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import types

_NOT_FORMATS = {"common"}


def format_modules() -> list[types.ModuleType]:
    """The format modules, sorted by name (this imports bpy)."""
    here = os.path.dirname(__file__)
    modules = []
    for info in sorted(pkgutil.iter_modules([here]), key=lambda i: i.name):
        if info.ispkg or info.name in _NOT_FORMATS:
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        if hasattr(module, "CLASSES"):
            modules.append(module)
    return modules
