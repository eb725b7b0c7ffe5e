"""Differences between the Blender versions RigPort supports (4.2 LTS, 4.5 LTS, 5.0, 5.2 LTS)."""

from __future__ import annotations

from collections.abc import Callable

import bpy
import numpy as np
import numpy.ma  # noqa: F401  (see below)

# numpy 2 (bpy 5.2) imports numpy.ma only when first needed, and np.unique needs
# it: about 12 ms inside the first import of a session. Imported here, with the
# add-on, as numpy 1.26 (bpy 4.2 to 5.0) does with numpy itself.

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


def fcurve_maker(action: bpy.types.Action) -> Callable[[str, int, str], bpy.types.FCurve]:
    """A function making F-curves in ``action`` (its first slot on slotted-action
    versions): the channel bag is looked up once, not once per curve (an import
    makes thousands)."""
    if not HAS_SLOTS:

        def make_legacy(data_path: str, index: int, group: str):
            return action.fcurves.new(data_path, index=index, action_group=group)

        return make_legacy
    bag, _ = _channelbag(action, ensure=True)

    def make(data_path: str, index: int, group: str):
        try:
            return bag.fcurves.new(data_path, index=index, group_name=group)
        except TypeError:
            fc = bag.fcurves.new(data_path, index=index)
            fc.group = bag.groups.get(group) or bag.groups.new(group)
            return fc

    return make


def new_fcurve(action: bpy.types.Action, data_path: str, index: int, group: str):
    """An F-curve in ``action`` (its first slot on slotted-action versions)."""
    return fcurve_maker(action)(data_path, index, group)


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


def slot_object_names(action: bpy.types.Action) -> set[str]:
    """The names of the objects ``action``'s slots are for (4.4+: an object slot's
    identifier is "OB" and the name of the object it was made for, which Blender
    gives a new slot); none on 4.2, whose actions have no slots."""
    if not HAS_SLOTS:
        return set()
    return {
        s.identifier[2:]
        for s in action.slots
        if s.target_id_type == "OBJECT" and s.identifier.startswith("OB")
    }


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


# Custom normals. 4.5 and later (checked on 4.5.15, 5.0.1, 5.2.3) store them as a
# FLOAT_VECTOR attribute "custom_normal" on the CORNER domain: written with
# foreach_set they are kept bit for bit, 30-90 times faster than
# normals_split_custom_set, and sharp_face/sharp_edge do not change them;
# mesh.corner_normals returns them as they are (not normalised). 4.2 has no such
# attribute: normals_split_custom_set(_from_vertices) encodes them (off by up
# to 1.4e-2), and a zero vector there means "Blender's own normal". (The old
# setters on 4.5+ store an encoded INT16_2D "custom_normal" instead.) 4.2's
# setters read their argument item by item: nested lists of Python floats, made
# in one tolist, go in faster than numpy rows (a million vertices' normals: 1.1 s
# against 1.4 to 1.6 s, the list included). The list holds about 150 bytes a row:
# affordable per vertex, not per corner (six times as many on a triangle mesh).
NORMAL_ATTRIBUTE = "custom_normal"
HAS_NORMAL_ATTRIBUTE = bpy.app.version >= (4, 5, 0)


def _own_normals(me, normals: np.ndarray, own_prop: str) -> np.ndarray:
    """``normals`` with zero rows replaced by Blender's own (``own_prop``:
    ``corner_normals`` or ``vertex_normals``, as ``normals`` are per corner or vertex)."""
    # three column compares: ndarray.any(axis=1) over millions of short rows is slow
    zero = (normals[:, 0] == 0) & (normals[:, 1] == 0) & (normals[:, 2] == 0)
    if not zero.any():
        return normals
    own = np.empty(len(normals) * 3, np.float32)
    getattr(me, own_prop).foreach_get("vector", own)
    out = normals.copy()
    out[zero] = own.reshape(-1, 3)[zero]
    return out


def _set_normal_attribute(me, normals: np.ndarray, domain: str) -> None:
    """4.5+: ``normals`` as the ``custom_normal`` attribute on ``domain`` (CORNER or
    POINT), exact; a zero row gets Blender's own normal there."""
    old = me.attributes.get(NORMAL_ATTRIBUTE)
    if old is not None:
        me.attributes.remove(old)
        me.update()  # Blender's own normals below, not the removed ones (5.2 caches them)
    own = "corner_normals" if domain == "CORNER" else "vertex_normals"
    normals = _own_normals(me, normals, own)
    attr = me.attributes.new(NORMAL_ATTRIBUTE, "FLOAT_VECTOR", domain)
    attr.data.foreach_set("vector", normals.ravel())
    # 5.2 keeps the normals it computed before (read above for zero rows) until the
    # mesh is updated; 4.5 and 5.0 see the new attribute at once
    me.update()


def set_corner_normals(me, normals: np.ndarray) -> None:
    """Custom normals per corner, (C, 3) float32; a zero row keeps Blender's own."""
    normals = np.ascontiguousarray(normals, np.float32)
    if HAS_NORMAL_ATTRIBUTE:
        _set_normal_attribute(me, normals, "CORNER")
    else:
        me.normals_split_custom_set(normals)


def set_vertex_normals(me, normals: np.ndarray) -> None:
    """Custom normals per vertex, (V, 3) float32; a zero row keeps Blender's own.
    4.5+ hold them as a point-domain ``custom_normal`` attribute, exact, and give
    every corner its vertex's normal."""
    normals = np.ascontiguousarray(normals, np.float32)
    if HAS_NORMAL_ATTRIBUTE:
        _set_normal_attribute(me, normals, "POINT")
    else:
        me.normals_split_custom_set_from_vertices(normals.tolist())


def get_corner_normals(me, out: np.ndarray) -> None:
    """The corner normals into ``out`` (flat float32): the stored custom normals as
    they are on 4.5+, else Blender's (custom or computed) corner normals."""
    attr = me.attributes.get(NORMAL_ATTRIBUTE) if HAS_NORMAL_ATTRIBUTE else None
    if attr is not None and attr.domain == "CORNER" and attr.data_type == "FLOAT_VECTOR":
        attr.data.foreach_get("vector", out)
    else:
        me.corner_normals.foreach_get("vector", out)


# Material node trees: 4.2 and 4.5 have ``Material.use_nodes`` (off for a new
# material, whose node_tree then exists but is not used); 5.0 and later always
# use the node tree and deprecate the flag.
NODES_ALWAYS_ON = bpy.app.version >= (5, 0, 0)


def use_material_nodes(mat: bpy.types.Material) -> None:
    """Make ``mat`` render with its node tree (4.2/4.5 need the flag set)."""
    if not NODES_ALWAYS_ON:
        mat.use_nodes = True


def material_uses_nodes(mat: bpy.types.Material) -> bool:
    return NODES_ALWAYS_ON or bool(mat.use_nodes)
