"""Ending a process that loaded the bpy module.

The bpy module can crash (4.2) or hang (4.5) in the interpreter's shutdown, so
``batch.py``, the benchmarks and the test session end with ``os._exit``. 4.5's
hang: a static destructor waits on a condition its file-closing thread still
waits on; seen after DragonFF ran, and after a script registered any class (a
bare Operator or Panel will do) and returned. Blender's own exit is also what
removes the session folder it made in the temporary directory (``bpy.app.tempdir``,
``blender_XXXXXX``): without it every run would leave one behind, and a
library run with ``--jobs`` one per worker. Nothing here imports bpy.
"""

from __future__ import annotations

import os
import shutil
import sys
from typing import NoReturn


def remove_blender_session() -> None:
    """Remove the session folder of the bpy module this process loaded, if any."""
    bpy = sys.modules.get("bpy")
    app = getattr(bpy, "app", None)
    if app is None or getattr(app, "binary_path", ""):  # Blender itself removes its own
        return
    folder = os.path.normpath(getattr(app, "tempdir", "") or "")
    if os.path.basename(folder).startswith("blender_") and os.path.isdir(folder):
        shutil.rmtree(folder, ignore_errors=True)


def leave(code: int) -> NoReturn:
    """End the process now with exit status ``code``, Blender's session folder removed
    first (output streams are the caller's to flush)."""
    remove_blender_session()
    os._exit(code)
