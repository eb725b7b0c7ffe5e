"""The RigPort panel (Object and Armature properties), "Forget Kept Data", and the
load handler that moves kept data saved by an earlier RigPort out of sight."""

from __future__ import annotations

from collections.abc import Iterator

import bpy
from bpy.app.handlers import persistent

from ..operators.blender import fingerprint, kept_keys
from .report import Report, describe, mesh_edited, n

#: Above this many vertices draw() does not hash the mesh (about 7 ms at 100,000
#: vertices for topology and positions, on every redraw): the panel says so.
FULL_COMPARE_LIMIT = 100_000


def _actions_of(obj) -> Iterator:
    ad = obj.animation_data
    if ad is None:
        return
    if ad.action is not None:
        yield ad.action
    for track in ad.nla_tracks:
        for strip in track.strips:
            if strip.action is not None:
                yield strip.action


def holders_of(obj) -> list:
    """Everything of ``obj`` that may hold RigPort's kept data: the object, its
    mesh or armature (and bones), its actions and materials."""
    out = [obj]
    data = obj.data
    if data is not None and hasattr(data, "keys"):
        out.append(data)
    if obj.type == "ARMATURE":
        out += list(obj.data.bones)
    out += list(dict.fromkeys(_actions_of(obj)))
    out += list(dict.fromkeys(s.material for s in obj.material_slots if s.material is not None))
    return out


def _editable(holder) -> bool:
    return getattr(holder.id_data, "library", None) is None


def blend_holders() -> Iterator:
    """Every local data-block (and bone) of the blend file that RigPort writes to."""
    for coll in (
        bpy.data.objects,
        bpy.data.meshes,
        bpy.data.armatures,
        bpy.data.actions,
        bpy.data.materials,
        bpy.data.collections,
        bpy.data.shape_keys,
    ):
        for item in coll:
            if not _editable(item):
                continue
            yield item
            if isinstance(item, bpy.types.Armature):
                yield from item.bones


@persistent
def migrate_on_load(*_args) -> None:
    """Blend files saved by an earlier RigPort keep their data under visible names:
    rename them to the hidden ones (as Blender's own versioning does on load)."""
    kept_keys.migrate(blend_holders())


class OBJECT_OT_rigport_forget_kept(bpy.types.Operator):
    """Remove what RigPort kept from the imported files on the selected objects,
    their meshes, armatures, actions and materials: the next export is a clean
    rebuild from Blender's data"""

    bl_idname = "object.rigport_forget_kept"
    bl_label = "Forget Kept Data"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context) -> bool:
        return bool(context.selected_objects) or context.object is not None

    def invoke(self, context, event):
        return context.window_manager.invoke_confirm(
            self,
            event,
            title="Forget Kept Data",
            message="Remove the file data RigPort kept on the selected objects? "
            "The next export rebuilds them from Blender's data.",
            confirm_text="Forget",
            icon="WARNING",
        )

    def execute(self, context):
        objects = list(context.selected_objects) or [context.object]
        holders = [h for obj in objects if obj is not None for h in holders_of(obj) if _editable(h)]
        removed = kept_keys.forget(list(dict.fromkeys(holders)))
        self.report(
            {"INFO"},
            f"Forgot {removed} kept propert{'y' if removed == 1 else 'ies'} "
            f"on {len(objects)} object{'' if len(objects) == 1 else 's'}: "
            "the next export rebuilds from Blender's data",
        )
        return {"FINISHED"}

    @classmethod
    def register(cls) -> None:
        if migrate_on_load not in bpy.app.handlers.load_post:
            bpy.app.handlers.load_post.append(migrate_on_load)

    @classmethod
    def unregister(cls) -> None:
        if migrate_on_load in bpy.app.handlers.load_post:
            bpy.app.handlers.load_post.remove(migrate_on_load)


def kept_mesh_rows(
    obj,
    r: Report,
    key: str | None,
    kept: str,
    rebuilt: str,
    moved: str | None = None,
    counts: bool = True,
) -> None:
    """The panel's rows on whether the data a format kept at import (``kept``, in
    words) still describes ``obj``'s mesh, and what the next export rebuilds
    (``rebuilt``) when it does not: by the fingerprint stored under ``key`` at
    import (the rule the exporters compare by), else by the import's counts
    (unless ``counts`` is False). ``moved``: the row for moved vertices, when the
    format says more than that the kept data stays and bounds are recomputed.

    Runs in draw(): it hashes topology and positions only, and nothing above
    :data:`FULL_COMPARE_LIMIT` vertices. No cache: Blender gives a mesh no edit
    counter, so a cached answer could miss an edit made from Python."""
    if obj is None or obj.type != "MESH":
        return
    old = fingerprint.stored(obj, key) if key else None
    if old is None:
        if not counts:
            return
        edited = mesh_edited(obj)
        if edited:
            r.changes.append(f"the mesh's faces changed: the next export rebuilds {rebuilt}")
        elif edited is not None:
            r.kept.append(f"{kept} still matches the mesh's vertex and face counts")
        return
    if len(obj.data.vertices) > FULL_COMPARE_LIMIT:
        r.kept.append(
            f"edits not checked while drawing (over {n(FULL_COMPARE_LIMIT)} vertices): "
            "export compares the mesh with the import"
        )
        return
    parts = tuple(p for p in (fingerprint.TOPOLOGY, fingerprint.POSITIONS) if p in old)
    now = fingerprint.compute(obj.data, parts, version=fingerprint.stored_version(old))
    changed = {p for p in parts if now[p] != old[p]}
    if fingerprint.TOPOLOGY in changed:
        r.changes.append(f"the mesh's faces changed: the next export rebuilds {rebuilt}")
    elif fingerprint.POSITIONS in changed:
        r.changes.append(
            moved or f"vertices moved: {kept} is kept, bounds recomputed from the mesh"
        )
    else:
        r.kept.append(f"{kept} still matches the mesh's faces and positions")


def draw_report(layout, obj) -> None:
    """The report of ``obj`` in ``layout``: source, kept data, what export changes."""
    report = describe(obj)
    if report.empty:
        layout.label(text="Nothing kept: export builds from Blender's data", icon="INFO")
        return
    for title, lines, icon in (
        ("Source", report.source, "FILE"),
        ("Kept for the round trip", report.kept, "LOCKED"),
        ("After your edits, export will", report.changes, "ERROR"),
    ):
        if not lines:
            continue
        box = layout.box()
        box.label(text=title, icon=icon)
        col = box.column(align=True)
        for line in lines:
            col.label(text=line)
    layout.operator(OBJECT_OT_rigport_forget_kept.bl_idname, icon="TRASH")


class _ReportPanel:
    """The RigPort panel of a Properties tab (``bl_context``), closed at first:
    the report of the active object (as Blender's own panels share their
    settings through a mixin)."""

    bl_label = "RigPort"
    bl_space_type = "PROPERTIES"
    bl_region_type = "WINDOW"
    bl_options = {"DEFAULT_CLOSED"}

    def draw(self, context) -> None:
        draw_report(self.layout, context.object)


class OBJECT_PT_rigport(_ReportPanel, bpy.types.Panel):
    """What RigPort knows about the active object"""

    bl_context = "object"

    @classmethod
    def poll(cls, context) -> bool:
        return context.object is not None


class DATA_PT_rigport_armature(_ReportPanel, bpy.types.Panel):
    """What RigPort knows about the active armature"""

    bl_context = "data"

    @classmethod
    def poll(cls, context) -> bool:
        return context.object is not None and context.object.type == "ARMATURE"


#: Registered by the add-on's ``register()`` after every format's classes.
CLASSES = (OBJECT_OT_rigport_forget_kept, OBJECT_PT_rigport, DATA_PT_rigport_armature)
