"""The add-on's folder as the package ``rigport``: the one loader of ``batch.py``,
the tests, the benchmarks, the demo and the tools.

A script that runs RigPort from its folder (a clone under any name, or the
installed extension, whose ``batch.py`` sits beside this file) gets the
package with::

    rigport = runpy.run_path(str(ROOT / "loader.py"))["package"]()

This file is run by its path because it cannot be imported through the
package it makes. :func:`package` returns:

* the package when it is already imported, as it is: ``rigport``, or with
  ``extension=True`` (``batch.py``, which imports through the package's own
  name) also the extension Blender enabled, ``bl_ext.<repo>.rigport``;
* otherwise this folder, registered as ``rigport`` without running its
  ``__init__.py`` (which imports bpy): ``rigport.io_formats`` and the other
  subpackages load without Blender. ``__init__.py`` runs once, on
  ``package(init=True)`` or on the first use of a name it defines
  (``rigport.register``).
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import sys
import types
from pathlib import Path

NAME = "rigport"
ROOT = Path(__file__).resolve().parent
_INIT = "__rigport_init__"  # on the package: whether __init__.py has run (or is running)


def loaded(extension: bool = False) -> types.ModuleType | None:
    """``rigport`` (or with ``extension`` an enabled ``bl_ext.<repo>.rigport``),
    when imported."""
    module = sys.modules.get(NAME)
    if module is not None or not extension:
        return module
    for name, module in list(sys.modules.items()):
        if name.startswith("bl_ext.") and name.endswith("." + NAME) and name.count(".") == 2:
            return module
    return None


def package(init: bool = False, extension: bool = False) -> types.ModuleType:
    """The add-on package, registered as ``rigport`` from this folder when nothing
    has imported it yet; with ``init``, its ``__init__.py`` has run."""
    module = loaded(extension)
    if module is None:
        module = _install()
    if init:
        run_init(module)
    return module


def run_init(module: types.ModuleType) -> types.ModuleType:
    """Run the package's ``__init__.py`` unless it has run (an import, Blender
    enabling the extension, or an earlier call)."""
    if module.__dict__.get(_INIT) or "register" in module.__dict__:
        return module
    spec = module.__spec__
    if spec is None or spec.loader is None:  # made by hand: a module with a __path__
        spec = _spec(Path(module.__path__[0]))
    module.__dict__[_INIT] = True  # before it runs: its own imports must not re-enter
    try:
        spec.loader.exec_module(module)
    except BaseException:
        module.__dict__[_INIT] = False
        raise
    return module


def _spec(root: Path) -> importlib.machinery.ModuleSpec:
    return importlib.util.spec_from_file_location(
        NAME, root / "__init__.py", submodule_search_locations=[str(root)]
    )


def _install() -> types.ModuleType:
    module = importlib.util.module_from_spec(_spec(ROOT))
    module.__dict__[_INIT] = False

    def __getattr__(name: str):
        """``rigport.register`` and the other names of ``__init__.py`` run it first;
        a submodule's name is left to the import system."""
        if (
            name.startswith("__")
            or module.__dict__.get(_INIT)
            or (ROOT / f"{name}.py").is_file()
            or (ROOT / name).is_dir()
        ):
            raise AttributeError(f"module {NAME!r} has no attribute {name!r}")
        run_init(module)
        try:
            return module.__dict__[name]
        except KeyError:
            raise AttributeError(f"module {NAME!r} has no attribute {name!r}") from None

    module.__getattr__ = __getattr__  # type: ignore[attr-defined]
    sys.modules[NAME] = module
    return module
