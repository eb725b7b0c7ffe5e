"""Options the RenderWare animation operators (.ifp, .anm) share: which actions
an export writes (``export_animations``: the active one, every action of the
armature's bones, or the NLA tracks' strips), the files one-animation formats
write them to, and the scale of the keys' translations.

An animation keys bones relative to their rest pose, so axes do not apply (the
armature object carries them); a scale does: ``global_scale`` scales the
translations on import and is recorded on the action, so an export "As Imported"
writes the file's values back.
"""

from __future__ import annotations

import os

import bpy
import numpy as np
from bpy.props import BoolProperty, FloatProperty, StringProperty

from ...io_formats.codec import FormatError
from ...io_formats.scene import Animation
from ..blender import compat
from ..common import current_action, iter_armatures
from ..conventions import IMPORT_TRANSFORM, recorded_transform

EXPORT_ANIMATION_ITEMS = (
    ("ACTIVE", "Active Action", "The armature's current action"),
    (
        "ACTIONS",
        "All Actions",
        "Every action that animates the armature's bones (the imported ones, kept as "
        "NLA tracks, included)",
    ),
    (
        "NLA",
        "NLA Tracks",
        "The actions of the armature's NLA tracks' strips, named after the track",
    ),
)


class ArmatureScope:
    """Mixin for animation exporters: the armature whose actions are written, the
    active one (or the scene's only one), or a Collection Exporter's
    collection's."""

    collection: StringProperty(
        name="Source Collection",
        default="",
        description="Export the actions of this collection's armature "
        "(set by the Collection Exporters panel)",
        options={"HIDDEN"},
    )

    def target_armature(self, context):
        """The armature to export; FormatError naming why there is none."""
        if self.collection:
            coll = bpy.data.collections.get(self.collection)
            if coll is None:
                raise FormatError(
                    f"collection {self.collection!r} does not exist: nothing exported"
                )
            arms = [o for o in coll.all_objects if o.type == "ARMATURE"]
            if len(arms) != 1:
                names = ", ".join(sorted(a.name for a in arms)[:5])
                raise FormatError(
                    f"collection {self.collection!r} has {len(arms)} armatures"
                    f"{': ' + names if names else ''}; an animation export takes one"
                )
            return arms[0]
        arm = context.view_layer.objects.active
        if arm is not None and arm.type == "ARMATURE":
            return arm
        arms = list(iter_armatures(context))
        if len(arms) == 1:
            return arms[0]
        raise FormatError(f"select the armature whose actions to export ({len(arms)} in the scene)")


def bone_actions(armature) -> list:
    """Every action of the blend file that keys a bone of ``armature``."""
    names = {b.name for b in armature.data.bones}
    out = []
    for action in bpy.data.actions:
        paths = {fc.data_path for fc in compat.fcurves(action)}
        if any(p.startswith('pose.bones["') and p.split('"')[1] in names for p in paths):
            out.append(action)
    return out


def nla_actions(armature) -> list[tuple[str, bpy.types.Action]]:
    """(name, action) per strip of the armature's NLA tracks, bottom track first:
    the track's name (with ``.<n>`` for its second and further strips)."""
    ad = armature.animation_data
    out: list[tuple[str, bpy.types.Action]] = []
    for track in ad.nla_tracks if ad is not None else []:
        strips = [s for s in track.strips if s.action is not None]
        for k, strip in enumerate(strips):
            out.append((track.name if k == 0 else f"{track.name}.{k}", strip.action))
    return out


def chosen_actions(armature, which: str) -> list[tuple[str, bpy.types.Action]]:
    """(name to write, action) for ``export_animations`` ``which``."""
    if which == "ACTIVE":
        action = current_action(armature)
        return [(action.name, action)] if action is not None else []
    if which == "NLA":
        return nla_actions(armature)
    return [(a.name, a) for a in bone_actions(armature)]


def file_per_action(path: str, names: list[str], use_action_names: bool) -> list[str]:
    """One file path per animation name next to ``path``: ``<stem>_<name><ext>``,
    or ``<name><ext>`` with ``use_action_names``; names cleaned for a file name
    (``bpy.path.clean_name``). FormatError when two animations would share a file."""
    folder, base = os.path.split(path)
    stem, ext = os.path.splitext(base)
    out, seen = [], {}
    for name in names:
        clean = bpy.path.clean_name(name)
        out.append(
            os.path.join(folder, f"{clean}{ext}" if use_action_names else f"{stem}_{clean}{ext}")
        )
        key = out[-1].lower()  # the same file on a case-insensitive file system
        if key in seen:
            raise FormatError(
                f"animations {seen[key]!r} and {name!r} would both be written to "
                f"{os.path.basename(out[-1])}: rename one of them",
                None,
                path,
            )
        seen[key] = name
    return out


class ImportKeyScale:
    """Mixin for animation importers: the translations' scale."""

    global_scale: FloatProperty(
        name="Scale",
        min=0.001,
        max=1000.0,
        soft_min=0.01,
        soft_max=100.0,
        default=1.0,
        description="Blender units per file unit: the keys' translations are scaled by it",
    )


class ExportKeyScale:
    """Mixin for animation exporters: the translations' scale."""

    use_transform_as_imported: BoolProperty(
        name="As Imported",
        default=True,
        description="Write the translations at the scale each action was imported with "
        "(the scale below applies to actions RigPort did not import)",
    )
    global_scale: FloatProperty(
        name="Scale",
        min=0.001,
        max=1000.0,
        soft_min=0.01,
        soft_max=100.0,
        default=1.0,
        description="File units per Blender unit: the keys' translations are scaled by it",
    )

    def draw_scale(self, layout) -> None:
        layout.prop(self, "use_transform_as_imported")
        layout.prop(self, "global_scale")


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
    recorded import scale "As Imported", else the options' (1 without options)."""
    if options is None:
        return 1.0
    if options.use_transform_as_imported:
        m = recorded_transform(action)
        if m is not None:
            return 1.0 / float(np.linalg.norm(m[:3, 0]))
    return float(options.global_scale)
