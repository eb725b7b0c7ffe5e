"""Keep one section per benchmark in BENCHMARKS.md.

Each benchmark owns the text between ``<!-- begin KEY -->`` and
``<!-- end KEY -->``; writing it leaves every other section as it is (a
missing section is added at the end)::

    .venv/bpy50/bin/python bench/mrtk_bench.py | python bench/sections.py BENCHMARKS.md mrtk "MRTK"
"""

from __future__ import annotations

import atexit
import importlib.util
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path


def replace_section(path: Path, key: str, text: str, title: str | None = None) -> None:
    """Put ``text`` (under a ``## title`` heading when given) into section ``key``."""
    begin, end = f"<!-- begin {key} -->", f"<!-- end {key} -->"
    body = (f"## {title}\n\n" if title else "") + text.strip() + "\n"
    block = f"{begin}\n{body}{end}"
    old = path.read_text() if path.exists() else "# RigPort benchmarks\n"
    pattern = re.compile(re.escape(begin) + r".*?" + re.escape(end), re.S)
    if pattern.search(old):
        new = pattern.sub(lambda _m: block, old, count=1)
    else:
        new = old.rstrip("\n") + "\n\n" + block + "\n"
    path.write_text(new)


@contextmanager
def quiet_stdout() -> Iterator[None]:
    """Blender and the glTF add-on print progress to file descriptor 1: while timing,
    send it to /dev/null so that a benchmark's stdout is its Markdown report alone."""
    sys.stdout.flush()
    saved = os.dup(1)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    try:
        yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)
        os.close(devnull)


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4):
        raise SystemExit("usage: sections.py BENCHMARKS.md KEY [TITLE] < markdown")
    replace_section(Path(sys.argv[1]), sys.argv[2], sys.stdin.read(), *sys.argv[3:])
    print(f"wrote section {sys.argv[2]} of {sys.argv[1]}", file=sys.stderr)


_SCRATCH: list[Path] = []


def scratch_dir(prefix: str) -> Path:
    """A new temporary folder for a benchmark's files, removed by
    :func:`remove_scratch` or at a normal exit. The benchmarks end with
    ``os._exit`` (bpy 4.2 can crash at interpreter exit), which skips ``atexit``:
    they call :func:`remove_scratch` first. One MRTK run writes 1.2 GB."""
    path = Path(tempfile.mkdtemp(prefix=prefix))
    _SCRATCH.append(path)
    return path


def remove_scratch() -> None:
    """Remove every folder :func:`scratch_dir` made, and the session folder the bpy
    module made in the temporary directory (``cli/leave.py``: ``os._exit`` skips
    Blender's exit, which removes it)."""
    while _SCRATCH:
        shutil.rmtree(_SCRATCH.pop(), ignore_errors=True)
    _LEAVE.remove_blender_session()


def _load_leave():
    """``cli/leave.py`` by its path: the benches load the add-on as a package of
    their own, or not at all."""
    spec = importlib.util.spec_from_file_location(
        "_rigport_leave", Path(__file__).resolve().parent.parent / "cli" / "leave.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_LEAVE = _load_leave()


atexit.register(remove_scratch)


def floor_operator(idname: str, label: str, run) -> Callable[[], None]:
    """Register ``bpy.ops.<idname>``, an operator with the bl_options of RigPort's
    importers (``ImportFiles``) whose execute calls ``run(context)``: a floor
    called through bpy.ops as an import is (the operator call and its view-layer
    updates; the bpy module pushes no undo step). An operator of that name
    registered before is replaced. Returns the unregister call (the operator
    holds whatever ``run`` holds)."""
    import bpy

    from rigport.operators.common import ImportFiles

    class Floor(bpy.types.Operator):
        bl_idname = idname
        bl_label = label
        bl_options = set(ImportFiles.bl_options)

        def execute(self, context):
            run(context)
            return {"FINISHED"}

    Floor.__name__ = "RIGPORT_BENCH_OT_" + idname.split(".")[-1]
    old = getattr(bpy.types, Floor.__name__, None)
    if old is not None:
        bpy.utils.unregister_class(old)
    bpy.utils.register_class(Floor)
    return lambda: bpy.utils.unregister_class(Floor)
