"""Vertex group weights of a whole mesh in bulk, through a temporary Geometry Nodes
modifier.

Blender has no bulk getter for vertex groups: reading ``MeshVertex.groups``
vertex by vertex took 3.6 s on 500k vertices x 4 weights. A Geometry Nodes
modifier that stores every bone's group as a named float attribute is
evaluated in C++; the attributes are then read with ``foreach_get``. The
modifier, its node group and the evaluated mesh are removed again, and the
object's other modifiers are switched off only while it is evaluated.
"""

from __future__ import annotations

import bpy
import numpy as np

from ...io_formats.scene import Skin

PREFIX = "rigport_w"


def _node_group(names: list[str]):
    ng = bpy.data.node_groups.new("rigport_read_weights", "GeometryNodeTree")
    ng.interface.new_socket("Geometry", in_out="INPUT", socket_type="NodeSocketGeometry")
    ng.interface.new_socket("Geometry", in_out="OUTPUT", socket_type="NodeSocketGeometry")
    src = ng.nodes.new("NodeGroupInput").outputs[0]
    for i, name in enumerate(names):
        store = ng.nodes.new("GeometryNodeStoreNamedAttribute")
        store.data_type = "FLOAT"
        store.domain = "POINT"
        store.inputs["Name"].default_value = f"{PREFIX}{i}"
        read = ng.nodes.new("GeometryNodeInputNamedAttribute")
        read.data_type = "FLOAT"
        read.inputs["Name"].default_value = name
        ng.links.new(src, store.inputs["Geometry"])
        ng.links.new(read.outputs["Attribute"], store.inputs["Value"])
        src = store.outputs["Geometry"]
    ng.links.new(src, ng.nodes.new("NodeGroupOutput").inputs[0])
    return ng


def dense_weights(context, obj, bone_names: list[str]) -> np.ndarray:
    """(V, B) weights of the vertex groups named after the bones (0 where none)."""
    nv = len(obj.data.vertices)
    groups = {g.name for g in obj.vertex_groups}
    present = [i for i, n in enumerate(bone_names) if n in groups]
    out = np.zeros((nv, len(bone_names)), np.float32)
    if not present or not nv:
        return out
    ng = _node_group([bone_names[i] for i in present])
    mod = None
    switched = []
    try:
        for m in obj.modifiers:
            if m.show_viewport:
                m.show_viewport = False
                switched.append(m)
        mod = obj.modifiers.new("rigport_read_weights", "NODES")
        mod.node_group = ng
        evaluated = obj.evaluated_get(context.evaluated_depsgraph_get())
        me = evaluated.to_mesh()
        try:
            if len(me.vertices) != nv:
                raise RuntimeError("the weights could not be read in bulk")
            col = np.empty(nv, np.float32)
            for k, i in enumerate(present):
                me.attributes[f"{PREFIX}{k}"].data.foreach_get("value", col)
                out[:, i] = col
        finally:
            evaluated.to_mesh_clear()
    finally:
        if mod is not None:
            obj.modifiers.remove(mod)
        bpy.data.node_groups.remove(ng)
        for m in switched:
            m.show_viewport = True
    return out


def read_skin(context, obj, bone_names: list[str], max_weights: int = 4) -> Skin:
    """The strongest ``max_weights`` influences per vertex, strongest first (ties by
    bone order), not normalised: the same as the shared extractor, in bulk."""
    w = dense_weights(context, obj, bone_names)
    nv, nb = w.shape
    k = min(max_weights, nb)
    if k < nb:
        top = np.argpartition(-w, k - 1, axis=1)[:, :k]
    else:
        top = np.tile(np.arange(nb), (nv, 1))
    tw = np.take_along_axis(w, top, 1)
    order = np.lexsort((top, -tw), axis=1)
    joints = np.take_along_axis(top, order, 1).astype(np.int32)
    weights = np.take_along_axis(tw, order, 1)
    joints[weights <= 0] = 0
    weights[weights <= 0] = 0.0
    out_j = np.zeros((nv, max_weights), np.int32)
    out_w = np.zeros((nv, max_weights), np.float32)
    out_j[:, :k], out_w[:, :k] = joints, weights
    return Skin(out_j, out_w)


def _store_group(names: list[str], sources: list[str]):
    """A node group storing each ``sources[i]`` float attribute as ``names[i]``."""
    ng = bpy.data.node_groups.new("rigport_write_weights", "GeometryNodeTree")
    ng.interface.new_socket("Geometry", in_out="INPUT", socket_type="NodeSocketGeometry")
    ng.interface.new_socket("Geometry", in_out="OUTPUT", socket_type="NodeSocketGeometry")
    src = ng.nodes.new("NodeGroupInput").outputs[0]
    for name, source in zip(names, sources, strict=True):
        store = ng.nodes.new("GeometryNodeStoreNamedAttribute")
        store.data_type = "FLOAT"
        store.domain = "POINT"
        store.inputs["Name"].default_value = name
        read = ng.nodes.new("GeometryNodeInputNamedAttribute")
        read.data_type = "FLOAT"
        read.inputs["Name"].default_value = source
        ng.links.new(src, store.inputs["Geometry"])
        ng.links.new(read.outputs["Attribute"], store.inputs["Value"])
        src = store.outputs["Geometry"]
    ng.links.new(src, ng.nodes.new("NodeGroupOutput").inputs[0])
    return ng


def write_weights(context, obj, joints: np.ndarray, weights: np.ndarray, names: list[str]) -> bool:
    """Fill the object's vertex groups (named ``names``, already created) in bulk:
    the weights go in as float attributes, a Geometry Nodes modifier stores them
    into the groups and is applied (zero weights make no group entry). 500k
    vertices x 4 weights: 1.0 s, against 2.2 s through bmesh and 4.5 s through
    ``VertexGroup.add``. The mesh must have no shape keys (Blender cannot apply a
    modifier then). Returns False, changing nothing, when the modifier cannot be
    applied."""
    me = obj.data
    nv = len(me.vertices)
    used = np.unique(joints[weights > 0])
    dense = np.zeros((nv, len(names)), np.float32)
    valid = (weights > 0) & (joints >= 0) & (joints < len(names))
    rows = np.nonzero(valid)
    dense[rows[0], joints[rows]] = weights[rows]
    sources = [f"{PREFIX}{int(i)}" for i in used]
    for i, source in zip(used.tolist(), sources, strict=True):
        me.attributes.new(source, "FLOAT", "POINT").data.foreach_set(
            "value", np.ascontiguousarray(dense[:, i])
        )
    ng = _store_group([names[i] for i in used.tolist()], sources)
    mod = obj.modifiers.new("rigport_write_weights", "NODES")
    mod.node_group = ng
    others = [m for m in obj.modifiers if m != mod and m.show_viewport]
    ok = False
    try:
        for m in others:
            m.show_viewport = False
        while obj.modifiers[0] != mod:  # applied first, on the mesh itself
            obj.modifiers.move(obj.modifiers.find(mod.name), 0)
        with context.temp_override(object=obj, active_object=obj):
            ok = bpy.ops.object.modifier_apply(modifier=mod.name) == {"FINISHED"}
    except RuntimeError:
        ok = False
    finally:
        if obj.modifiers.get("rigport_write_weights") is not None:
            obj.modifiers.remove(obj.modifiers["rigport_write_weights"])
        bpy.data.node_groups.remove(ng)
        for m in others:
            m.show_viewport = True
        for source in sources:
            attr = me.attributes.get(source)
            if attr is not None:
                me.attributes.remove(attr)
    return ok
