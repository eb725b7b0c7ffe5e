"""Differences between the Blender versions RigPort supports (4.2 LTS to 5.x)."""

from __future__ import annotations

import bpy

HAS_SLOTS = hasattr(bpy.types, "ActionSlot")

# Blender 4.5, 5.0 and 5.2 (not 4.2): recalculating an F-curve (``FCurve.update()``,
# any edit in the Graph Editor) moves a FREE or ALIGNED Bezier handle that lies
# less than 0.001 frame from its key (in x) out to about 0.001 frame, or one
# float32 step at large frame numbers (0.0039 at frame 36,000); y is kept.
# Measured on 4.2.23 (no change), 4.5.15, 5.0.1 and 5.2.3. MRTK's recorder keys
# have zero-length handles: "unedited" checks must accept the moved handles.
HANDLE_MIN_X = 0.001 if bpy.app.version >= (4, 5, 0) else 0.0


def _channelbag(action: bpy.types.Action, ensure: bool, id_name: str = "Object"):
    if not action.slots:
        if not ensure:
            return None, None
        slot = action.slots.new(id_type="OBJECT", name=id_name)
    else:
        slot = action.slots[0]
    if not action.layers:
        if not ensure:
            return None, slot
        action.layers.new("Layer")
    layer = action.layers[0]
    if not layer.strips:
        if not ensure:
            return None, slot
        layer.strips.new(type="KEYFRAME")
    strip = layer.strips[0]
    return strip.channelbag(slot, ensure=ensure), slot


def new_fcurve(action: bpy.types.Action, data_path: str, index: int, group: str):
    """An F-curve in ``action`` (its first slot on slotted-action versions)."""
    if not HAS_SLOTS:
        return action.fcurves.new(data_path, index=index, action_group=group)
    bag, _ = _channelbag(action, ensure=True)
    try:
        return bag.fcurves.new(data_path, index=index, group_name=group)
    except TypeError:
        fc = bag.fcurves.new(data_path, index=index)
        grp = bag.groups.get(group) or bag.groups.new(group)
        fc.group = grp
        return fc


def fcurves(action: bpy.types.Action) -> list:
    """Every F-curve of ``action`` (first slot on slotted-action versions)."""
    if not HAS_SLOTS:
        return list(action.fcurves)
    bag, _ = _channelbag(action, ensure=False)
    return list(bag.fcurves) if bag is not None else []


def assign_action(obj: bpy.types.Object, action: bpy.types.Action) -> None:
    ad = obj.animation_data or obj.animation_data_create()
    if ad.action is not None and ad.action != action:
        settle_action_slots()  # switching unassigns the old action: see there
    ad.action = action
    if HAS_SLOTS and action.slots and getattr(ad, "action_slot", None) is None:
        ad.action_slot = action.slots[0]


def slot_of(holder) -> object | None:
    """The action slot ``holder`` (AnimData or NlaStrip) plays (4.4+; None on 4.2)."""
    return getattr(holder, "action_slot", None) if HAS_SLOTS else None


def set_slot(holder, action: bpy.types.Action, slot=None) -> None:
    """Make ``holder`` (AnimData or NlaStrip) play ``slot`` of ``action``, else the
    action's first slot when Blender picked none. 4.4+ slotted actions only:
    4.2's actions have no slots."""
    if not HAS_SLOTS or not action.slots:
        return
    if slot is not None and slot in action.slots.values():
        holder.action_slot = slot
    elif holder.action_slot is None:
        holder.action_slot = action.slots[0]


def settle_action_slots() -> None:
    """Bring Blender's slot-to-user map up to date before actions are unassigned.

    4.4+ (checked on 4.5.15, 5.0.1, 5.2.3): in a session whose dependency graph
    has not been evaluated since actions were assigned (the bpy module, ``blender
    -b``), unassigning an action whose slot was assigned crashes Blender. A
    dependency graph update rebuilds the map; the UI does it on every redraw."""
    if not HAS_SLOTS:
        return
    layer = bpy.context.view_layer
    if layer is None and bpy.data.scenes and bpy.data.scenes[0].view_layers:
        layer = bpy.data.scenes[0].view_layers[0]
    if layer is not None:
        layer.depsgraph.update()


def set_shape_key_coords(key_block, flat) -> None:
    target = key_block.points if hasattr(key_block, "points") else key_block.data
    target.foreach_set("co", flat)


def get_shape_key_coords(key_block, out) -> None:
    target = key_block.points if hasattr(key_block, "points") else key_block.data
    target.foreach_get("co", out)


def enum_value(struct, prop: str, name: str) -> int:
    return struct.bl_rna.properties[prop].enum_items[name].value
