"""RenderWare clump (.dff) import: every clump of one file into the active collection.

Callable without an operator: :func:`import_clump_file` takes the context, the
path and one :class:`ClumpImportOptions` (the DFF importer's properties), and
returns a :class:`~operators.result.Result` whose ``undo`` takes the import
back. A file that fails to read leaves nothing behind.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import ClassVar

from ...io_formats.codec import FormatError
from ...io_formats.renderware import dff
from ...io_formats.renderware.clump_import import import_dff
from ..blender.build import Built
from ..common import read_bytes
from ..conventions import option_matrix, place_roots
from ..result import Result, counted
from .build import build_clump

#: RenderWare's axes are Blender's (Z up, right-handed): no conversion by default.
ENGINE_AXES = ("Y", "Z")


@dataclass(frozen=True)
class ClumpImportOptions:
    """The DFF importer's options (named and defaulted as its properties).

    ``use_transform`` False is batch.py's import: the file's own space, with no
    axes or scale put on the root objects and nothing recorded there for an
    "As Imported" export."""

    engine_axes: ClassVar[tuple[str, str]] = ENGINE_AXES
    transform_export: ClassVar[bool] = False

    reuse_materials: bool = False
    global_scale: float = 1.0
    axis_forward: str = ENGINE_AXES[0]
    axis_up: str = ENGINE_AXES[1]
    use_transform: bool = True


def import_clump_file(context, path: str, options: ClumpImportOptions) -> Result:
    """Import every clump of one .dff. The result holds the objects made, the first
    armature, the clumps' warnings, then a line counting the objects; FormatError
    (naming ``path``) leaves nothing behind. The axes and scale options go on the
    root objects (``place_roots``)."""
    data = read_bytes(path)
    name = os.path.splitext(os.path.basename(path))[0]
    matrix = option_matrix(options) if options.use_transform else None
    built_all: list[Built] = []
    result = Result()
    try:
        for imp in import_dff(dff.read(data), name):
            built = build_clump(context, imp, os.path.dirname(path), None, options.reuse_materials)
            built_all.append(built)
            result.warn_all(imp.warnings)
            if matrix is not None:
                place_roots(built.objects, matrix)
    except FormatError as err:
        _discard(built_all)
        raise err.with_path(path) from None
    except Exception:
        _discard(built_all)
        raise
    for built in built_all:
        result.objects.extend(built.objects)
        result.armature = result.armature or built.armature
        result.undo.append(built.discard)
    result.summary = counted(len(result.objects), "object")
    return result.info(result.summary)


def _discard(built_all: list[Built]) -> None:
    for built in reversed(built_all):
        built.discard()
