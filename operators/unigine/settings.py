"""The options of every Unigine import and export, one frozen dataclass each.

Fields are named as the operators' properties and default as they do, so an
operator builds its options with ``options.from_operator`` and ``batch.py``
with ``options.from_mapping``. Unigine is Z-up and right-handed, as Blender
is: the engine's axes are Blender's (forward Y, up Z), and only other axes or
a scale change anything. Its files store frames, not times: a file frame is
1/30 s (``FRAME_RATE``), and the frame rate options say at which rate those
seconds become Blender frames.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ...io_formats.unigine.common import FRAME_RATE
from ..conventions import FrameRateOptions

#: Unigine's axes, as ``orientation_helper`` names them: Blender's own.
ENGINE_FORWARD, ENGINE_UP = "Y", "Z"


@dataclass(frozen=True)
class FrameRate:
    """``frame_rate`` and ``fps``: the scene's rate by default, as in every format
    (Custom at 30 fps keys file frame n at Blender frame n, and writes Blender
    frame n as file frame n)."""

    frame_rate: str = "SCENE"
    fps: float = FRAME_RATE

    def frames_per_second(self, context) -> float:
        """The Blender frames per second key times convert at: the operators' own
        rule (:meth:`FrameRateOptions.frames_per_second` reads only these fields)."""
        return FrameRateOptions.frames_per_second(self, context)


@dataclass(frozen=True)
class Axes(FrameRate):
    """The axes and scale options (``conventions.option_matrix`` reads them):
    the engine's axes at scale 1 by default, which changes nothing."""

    engine_axes: ClassVar[tuple[str, str]] = (ENGINE_FORWARD, ENGINE_UP)

    axis_forward: str = ENGINE_FORWARD
    axis_up: str = ENGINE_UP
    global_scale: float = 1.0


@dataclass(frozen=True)
class MeshImportOptions(Axes):
    """A .mesh import. ``record_transform``: put the axes and scale on the root
    objects and record them there for "As Imported" exports, as File > Import
    does; batch imports leave the objects as built."""

    reuse_materials: bool = False
    record_transform: bool = True


@dataclass(frozen=True)
class AnimImportOptions(FrameRate):
    """An .anim import: no axes or scale, the actions play in their armature's
    space, which carries the transform its mesh import put on it."""


@dataclass(frozen=True)
class ExportAxes(Axes):
    """An export's axes and scale (``conventions.file_matrix`` reads them):
    ``use_transform_as_imported`` writes the axes and scale the objects were
    imported with, the other options apply to objects RigPort did not import."""

    use_transform_as_imported: bool = True


@dataclass(frozen=True)
class MeshExportOptions(ExportAxes):
    """A .mesh export. ``export_animations``: the armature's actions it embeds,
    IMPORTED (those the mesh file had), ACTIVE, ACTIONS, NLA or NONE."""

    export_animations: str = "IMPORTED"


@dataclass(frozen=True)
class AnimExportOptions(ExportAxes):
    """An .anim export. ``export_animations``: IMPORTED (the active action and the
    other clips of its file) or ACTIVE into the chosen file, ACTIONS or NLA a file
    each, named after the action alone with ``use_action_names``."""

    export_animations: str = "IMPORTED"
    use_action_names: bool = False
