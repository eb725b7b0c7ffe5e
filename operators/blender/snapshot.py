"""The one way an import is taken back: a snapshot of what was there before.

:class:`AnimationState` is what one owner (an object or a shape key block)
played and which NLA tracks it had; :class:`SceneState` is that for every
owner in the file, plus which data-blocks existed, the timeline markers, the
selection and the active object. A failed import restores the scene's state
(``ImportFiles``, the archive importer); ``actions.keep_actions`` takes back
one import's actions with its owner's state.
"""

from __future__ import annotations

import bpy

from . import compat

#: The ``bpy.data`` collections an import may add to (everything ``SceneState`` takes back).
_DATA = (
    "objects",
    "meshes",
    "armatures",
    "materials",
    "actions",
    "collections",
    "images",
    "node_groups",
    "curves",
    "cameras",
    "lights",
    "shape_keys",
    "textures",
)


def alive(owner) -> bool:
    """False once ``owner`` was removed from the file."""
    try:
        return owner.name is not None
    except ReferenceError:
        return False


class AnimationState:
    """What ``owner`` played (action and slot) and its NLA tracks, to put back."""

    def __init__(self, owner) -> None:
        self.owner = owner
        ad = owner.animation_data
        self.had_data = ad is not None
        self.action = ad.action if ad is not None else None
        self.slot = compat.slot_of(ad) if ad is not None else None
        self.tracks = {t.as_pointer() for t in ad.nla_tracks} if ad is not None else set()

    def _changed(self, ad) -> bool:
        return (
            not self.had_data
            or ad.action != self.action
            or {t.as_pointer() for t in ad.nla_tracks} != self.tracks
        )

    def restore(self) -> None:
        """Remove the tracks added since, play the action it played (or none), and
        drop the animation data it did not have. Nothing to do when the owner is
        gone or unchanged."""
        data = self.owner.animation_data if alive(self.owner) else None
        if data is None or not self._changed(data):
            return
        if data.action is not None:
            compat.settle_action_slots()
            data.action = None
        try:
            for track in [t for t in data.nla_tracks if t.as_pointer() not in self.tracks]:
                data.nla_tracks.remove(track)
            if self.action is not None:
                data.action = self.action
                compat.set_slot(data, self.action, self.slot)
            if not self.had_data:
                self.owner.animation_data_clear()
        except (ReferenceError, RuntimeError):  # what it played is gone too
            pass


class SceneState:
    """What the blend file and the scene held before an import, to put back after a
    failed one: which data-blocks existed, the timeline markers, every object's and
    shape key block's animation (action and NLA tracks), the selection and the
    active object."""

    def __init__(self, context) -> None:
        self.ids = {
            name: {i.as_pointer() for i in getattr(bpy.data, name)}
            for name in _DATA
            if hasattr(bpy.data, name)
        }
        self.scene = context.scene
        self.markers = {m.as_pointer() for m in context.scene.timeline_markers}
        self.animation = [AnimationState(o) for o in (*bpy.data.objects, *bpy.data.shape_keys)]
        self.selected = [o for o in context.view_layer.objects if o.select_get()]
        self.active = context.view_layer.objects.active
        self.view_layer = context.view_layer

    def added_objects(self) -> list:
        """The objects added since, in creation order of ``bpy.data``."""
        before = self.ids["objects"]
        return [o for o in bpy.data.objects if o.as_pointer() not in before]

    def restore(self) -> None:
        """Put the markers, the animation and the selection back, then remove what
        was added since (last: walking a view layer's objects after an object was
        removed and before the layer synced again crashes Blender 4.2)."""
        if bpy.context.mode != "OBJECT" and bpy.context.view_layer.objects.active is not None:
            bpy.ops.object.mode_set(mode="OBJECT")
        for m in list(self.scene.timeline_markers):
            if m.as_pointer() not in self.markers:
                self.scene.timeline_markers.remove(m)
        for state in self.animation:
            state.restore()
        layer = self.view_layer
        for o in layer.objects:
            o.select_set(False)
        for o in self.selected:
            try:
                o.select_set(True)
            except (ReferenceError, RuntimeError):
                pass
        try:
            layer.objects.active = self.active
        except ReferenceError:
            layer.objects.active = None
        added = [
            i
            for name, before in self.ids.items()
            for i in getattr(bpy.data, name)
            if i.as_pointer() not in before and name != "shape_keys"
        ]
        if added:
            bpy.data.batch_remove(added)
