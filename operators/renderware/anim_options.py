"""Options the RenderWare animation operators (.ifp, .anm) share, and what their
importers and exporters make of them: the armature an export takes its actions
from, the frame rate, and the scale of the keys' translations (which actions,
and the files they go to, are every format's: ``animation_files``).

An animation keys bones relative to their rest pose, so axes do not apply (the
armature object carries them); a scale does: ``global_scale`` scales the
translations on import and is recorded on the action, so an export "As Imported"
writes the file's values back.
"""

from __future__ import annotations

import numpy as np
from bpy.props import BoolProperty, StringProperty

from ...io_formats.scene import Animation
from ..blender.armatures import choose_armature
from ..conventions import (
    IMPORT_TRANSFORM,
    collection_objects,
    recorded_transform,
    scale_property,
    section,
)


class ArmatureScope:
    """Mixin for animation exporters: the collection whose armature's actions are
    written (a Collection Exporter's; see :func:`target_armature`)."""

    collection: StringProperty(
        name="Source Collection",
        default="",
        description="Export the actions of this collection's armature "
        "(set by the Collection Exporters panel)",
        options={"HIDDEN"},
    )


def target_armature(context, collection: str = ""):
    """The armature to export: ``collection``'s only one (a Collection Exporter's),
    else the active armature, else the scene's only one; several or none is
    refused in a sentence naming where."""
    if collection:
        pool = collection_objects(collection, ("ARMATURE",))
        where = f"collection {collection!r}"
    else:
        pool, where = None, "the scene"
    return choose_armature(
        context, pool=pool, active=not collection, active_mesh=True, where=where
    ).required()


class ImportKeyScale:
    """Mixin for animation importers (with ``FrameRateOptions``): the
    translations' scale."""

    global_scale: scale_property(
        "Blender units per file unit: the keys' translations are scaled by it"
    )

    def draw_animation(self, layout) -> None:
        """The Animation panel: the frame rate options, then the scale."""
        body = section(layout, self, "animation", "Animation")
        if body is not None:
            self.draw_frame_rate(body)
            body.prop(self, "global_scale")


class ExportKeyScale:
    """Mixin for animation exporters: the translations' scale."""

    use_transform_as_imported: BoolProperty(
        name="As Imported",
        default=True,
        description="Write the translations at the scale each action was imported with "
        "(the scale below applies to actions RigPort did not import)",
    )
    global_scale: scale_property(
        "File units per Blender unit: the keys' translations are scaled by it"
    )

    def draw_scale(self, layout) -> None:
        """The Transform panel: As Imported, then the scale."""
        props = ("use_transform_as_imported", "global_scale")
        section(layout, self, "transform", "Transform", props=props)


def custom_fps(options) -> float | None:
    """The rate key times convert at when the options' ``frame_rate`` is the custom
    one, else None: the scene's rate (on export: the rate each action was imported
    with, else the scene's)."""
    return float(options.fps) if options.frame_rate == "CUSTOM" else None


def scale_translations(anim: Animation, scale: float) -> None:
    """Every translation key of ``anim`` times ``scale``, in place (nothing at 1)."""
    if scale == 1.0:
        return
    for track in anim.tracks:
        if track.translation is not None:
            track.translation = (np.asarray(track.translation, np.float64) * scale).astype(
                np.asarray(track.translation).dtype
            )


def record_scale(action, scale: float) -> None:
    """Record the import's scale on ``action`` (as the conventions' transform)."""
    action[IMPORT_TRANSFORM] = [float(v) for v in np.diag([scale, scale, scale, 1.0]).ravel()]


def export_scale(options, action) -> float:
    """File units per Blender unit for ``action``'s translations: the inverse of its
    recorded import scale with ``use_transform_as_imported``, else the options'
    ``global_scale``."""
    if options.use_transform_as_imported:
        m = recorded_transform(action)
        if m is not None:
            return 1.0 / float(np.linalg.norm(m[:3, 0]))
    return float(options.global_scale)
