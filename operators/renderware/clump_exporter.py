"""RenderWare clump (.dff) export: meshes, with their armature and frames, as one clump.

Callable without an operator: :func:`export_clump_file` takes the context, the
path, one :class:`ClumpExportOptions` (the DFF exporter's properties) and the
objects to write, and returns a :class:`~operators.result.Result` with the
export's warnings.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ...io_formats.codec.files import write_atomic
from ...io_formats.renderware import clump_transform, dff
from ...io_formats.renderware.clump_export import export_clump
from ..conventions import SAME, evaluated_meshes, file_matrix, recorded_transform
from ..result import Result
from .clump_importer import ENGINE_AXES
from .extract import clump_root, extract_clump


@dataclass(frozen=True)
class ClumpExportOptions:
    """The DFF exporter's options (named and defaulted as its properties).

    ``use_transform`` False is batch.py's export: the objects' own space, with
    neither the recorded import transform nor the axes and scale options baked."""

    engine_axes: ClassVar[tuple[str, str]] = ENGINE_AXES
    transform_export: ClassVar[bool] = True

    target: str = "AUTO"
    morph_targets: str = "AUTO"
    apply_modifiers: bool = True
    use_transform_as_imported: bool = True
    global_scale: float = 1.0
    axis_forward: str = ENGINE_AXES[0]
    axis_up: str = ENGINE_AXES[1]
    use_transform: bool = True


def to_file_space(data, root, options: ClumpExportOptions) -> None:
    """The clump extracted from Blender (root frames in world space) in the file's
    space: the root's recorded import transform taken off its root frames (exact:
    "As Imported" then changes nothing else), then what the options ask for on
    top, baked in (:func:`clump_transform.bake_clump`) where it is not the identity."""
    wanted = file_matrix(options, root)  # world -> file
    imported = recorded_transform(root)
    if imported is None or np.allclose(imported, np.eye(4), atol=SAME):
        imported = np.eye(4)
    else:
        clump_transform.move_roots(data, np.linalg.inv(imported))
    extra = wanted @ imported  # the transform left once the import's is taken off
    if not np.allclose(extra, np.eye(4), atol=SAME):
        clump_transform.bake_clump(data, extra)


def export_clump_file(context, path: str, options: ClumpExportOptions, objects: list) -> Result:
    """Write ``objects`` (meshes, with their armature and frames) as one clump at
    ``path`` (atomically): meshes as their modifiers make them with
    ``apply_modifiers`` (``evaluated_meshes``), in the file's space
    (:func:`to_file_space`). The result's warnings say what the clump left out."""
    context.view_layer.update()  # world matrices of objects parented by a script just now
    with evaluated_meshes(context, objects, options.apply_modifiers) as (meshes, warnings):
        data, more, imported = extract_clump(context, meshes)
        if options.use_transform:
            to_file_space(data, clump_root(meshes), options)
    target = imported if options.target == "AUTO" else options.target
    out, last = export_clump(data, target, options.morph_targets)
    write_atomic(path, lambda: dff.write(out))
    return Result().warn_all([*warnings, *more, *last])
