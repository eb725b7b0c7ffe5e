"""``operators/conventions.py`` on the export side, in real Blender: which objects an
export takes (``ExportScope.scope_objects``) and Apply Modifiers
(``evaluated_meshes``)."""

from __future__ import annotations

import numpy as np
import pytest

from rigport.io_formats.codec import FormatError

#: What the probe operator below found, for the test to read.
FOUND: dict = {}


@pytest.fixture(scope="module")
def scope_probe(rigport_registered):
    """A registered exporter made of ``ExportScope``: its ``execute`` records the
    names ``scope_objects`` returns, or reports the FormatError."""
    import bpy

    from rigport.operators.conventions import ExportScope

    class EXPORT_SCENE_OT_rigport_scope_probe(bpy.types.Operator, ExportScope):
        bl_idname = "export_scene.rigport_scope_probe"
        bl_label = "Scope Probe"

        def execute(self, context):
            try:
                objs = self.scope_objects(context, ("MESH", "ARMATURE"))
            except FormatError as err:
                self.report({"ERROR"}, str(err))
                return {"CANCELLED"}
            FOUND["names"] = sorted(o.name for o in objs)
            return {"FINISHED"}

    bpy.utils.register_class(EXPORT_SCENE_OT_rigport_scope_probe)
    yield bpy.ops.export_scene.rigport_scope_probe
    bpy.utils.unregister_class(EXPORT_SCENE_OT_rigport_scope_probe)


def _cube(bpy, name: str, collection=None):
    me = bpy.data.meshes.new(name)
    co = [(x, y, z) for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)]
    faces = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]
    me.from_pydata(co, [], faces)
    me.update()
    obj = bpy.data.objects.new(name, me)
    (collection or bpy.context.scene.collection).objects.link(obj)
    return obj


def _scene(bpy):
    """Collections A (with child A1) and B; a mesh in each, an empty in A, one mesh
    in the scene's own collection."""
    scene = bpy.context.scene
    a = bpy.data.collections.new("A")
    a1 = bpy.data.collections.new("A1")
    b = bpy.data.collections.new("B")
    scene.collection.children.link(a)
    a.children.link(a1)
    scene.collection.children.link(b)
    _cube(bpy, "InA", a)
    _cube(bpy, "InA1", a1)
    _cube(bpy, "InB", b)
    _cube(bpy, "Loose")
    empty = bpy.data.objects.new("EmptyInA", None)
    a.objects.link(empty)
    bpy.context.view_layer.update()
    return a, a1, b


def test_scope_objects(blank_blend, scope_probe):
    bpy = blank_blend
    _scene(bpy)
    layer = bpy.context.view_layer
    bpy.data.objects["InB"].hide_set(True)
    for o in layer.objects:
        o.select_set(o.name == "InA")

    def names(**kw):
        FOUND.clear()
        assert scope_probe(**kw) == {"FINISHED"}
        return FOUND["names"]

    assert names() == ["InA", "InA1", "InB", "Loose"]
    assert names(use_selection=True) == ["InA"]
    assert names(use_visible=True) == ["InA", "InA1", "Loose"]
    # a Collection Exporter: the collection and its children, whatever the limits say
    # (its panel does not show them)
    assert names(collection="A") == ["InA", "InA1"]
    assert names(collection="A", use_selection=True, use_visible=True) == ["InA", "InA1"]
    assert names(collection="B", use_visible=True) == ["InB"]
    layer.active_layer_collection = layer.layer_collection.children["A"]
    assert names(use_active_collection=True) == ["InA", "InA1"]
    assert names(use_active_collection=True, use_selection=True) == ["InA"]


def test_scope_of_a_missing_collection_is_a_sentence(blank_blend, scope_probe):
    bpy = blank_blend
    _scene(bpy)
    with pytest.raises(RuntimeError, match="collection 'Nowhere' does not exist: nothing exported"):
        scope_probe(collection="Nowhere")


# -- Apply Modifiers ------------------------------------------------------------------


def _positions(obj) -> np.ndarray:
    co = np.empty(3 * len(obj.data.vertices), np.float32)
    obj.data.vertices.foreach_get("co", co)
    return co.reshape(-1, 3)


def _key(kb) -> np.ndarray:
    co = np.empty(3 * len(kb.data), np.float32)
    kb.data.foreach_get("co", co)
    return co.reshape(-1, 3)


def _weights(obj, group: str) -> np.ndarray:
    g = obj.vertex_groups[group]
    out = np.zeros(len(obj.data.vertices))
    for v in obj.data.vertices:
        for e in v.groups:
            if e.group == g.index:
                out[v.index] = e.weight
    return out


def _skinned_cube(bpy):
    """A cube deformed by a one-bone armature that is posed away from its rest,
    with a vertex group, a material, custom properties and two shape keys (one
    relative to the other, with a value, so the mix is not the basis)."""
    arm_data = bpy.data.armatures.new("Rig")
    rig = bpy.data.objects.new("Rig", arm_data)
    bpy.context.scene.collection.objects.link(rig)
    bpy.context.view_layer.objects.active = rig
    bpy.ops.object.mode_set(mode="EDIT")
    bone = arm_data.edit_bones.new("Bone")
    bone.head, bone.tail = (0, 0, 0), (0, 0, 1)
    bpy.ops.object.mode_set(mode="OBJECT")
    rig.pose.bones["Bone"].location = (0, 0, 3)  # posed: the skin moves up by 3

    cube = _cube(bpy, "Body")
    cube.data.materials.append(bpy.data.materials.new("Skin"))
    cube["urho_lod"] = 0
    group = cube.vertex_groups.new(name="Bone")
    group.add([0, 1, 2, 3], 1.0, "REPLACE")
    group.add([4, 5, 6, 7], 0.25, "REPLACE")
    cube.parent = rig
    arm_mod = cube.modifiers.new("Armature", "ARMATURE")
    arm_mod.object = rig
    basis = cube.shape_key_add(name="Basis", from_mix=False)
    smile = cube.shape_key_add(name="Smile", from_mix=False)
    co = _key(basis)
    co[:, 2] += 0.5
    smile.data.foreach_set("co", co.ravel())
    smile.slider_max = 2.0
    smile.value = 1.5  # beyond the default range
    grin = cube.shape_key_add(name="Grin", from_mix=False)
    co = _key(basis)
    co[:, 0] += 0.25
    grin.data.foreach_set("co", co.ravel())
    grin.relative_key = smile
    grin.mute = True
    bpy.context.view_layer.update()
    return rig, cube


def test_bevel_is_applied_on_a_temporary_copy(blank_blend):
    bpy = blank_blend
    from rigport.operators.conventions import evaluated_meshes

    rig, cube = _skinned_cube(bpy)
    cube.modifiers.new("Bevel", "BEVEL").width = 0.1
    cube.active_shape_key_index = 1
    objects_before = {o.name for o in bpy.data.objects}
    meshes_before = {m.name for m in bpy.data.meshes}
    with evaluated_meshes(bpy.context, [cube], True) as (out, warnings):
        (temp,) = out
        assert temp != cube
        assert temp.name == "Body" and cube.name != "Body"
        assert len(temp.data.vertices) > len(cube.data.vertices) == 8
        assert [g.name for g in temp.vertex_groups] == ["Bone"]
        assert temp.parent == rig
        assert [s.material.name for s in temp.material_slots] == ["Skin"]
        assert temp["urho_lod"] == 0
        mods = [(m.type, m.object) for m in temp.modifiers]
        assert mods == [("ARMATURE", rig)]
        assert np.allclose(np.array(temp.matrix_world), np.array(cube.matrix_world))
        # the bind pose: the pose lifts the skin by 3, the copy is not lifted
        z = _positions(temp)[:, 2]
        assert z.min() == pytest.approx(-1, abs=1e-5) and z.max() == pytest.approx(1, abs=1e-5)
        # the shape keys cannot follow the bevel: said, naming the object and its keys
        assert temp.data.shape_keys is None
        assert len(warnings) == 1
        assert "Body" in warnings[0] and "Smile" in warnings[0] and "Grin" in warnings[0]
        assert "8 to " in warnings[0]
        # the Armature modifier is back on while the export reads
        assert cube.modifiers["Armature"].show_viewport
    assert cube.name == "Body"
    assert {o.name for o in bpy.data.objects} == objects_before
    assert {m.name for m in bpy.data.meshes} == meshes_before
    assert cube.active_shape_key_index == 1 and not cube.show_only_shape_key
    assert cube.modifiers["Armature"].show_viewport


def test_shape_keys_follow_a_modifier_that_keeps_the_vertex_count(blank_blend):
    bpy = blank_blend
    from rigport.operators.conventions import evaluated_meshes

    rig, cube = _skinned_cube(bpy)
    displace = cube.modifiers.new("Displace", "DISPLACE")
    displace.strength, displace.mid_level, displace.direction = 1.0, 0.0, "Z"
    blocks = cube.data.shape_keys.key_blocks
    offsets = {kb.name: _key(kb) - _key(blocks[0]) for kb in blocks}
    meshes = len(bpy.data.meshes)
    with evaluated_meshes(bpy.context, [cube], True) as (out, warnings):
        (temp,) = out
        assert not warnings
        assert temp.name == "Body"
        pos = _positions(temp)
        # the basis through Displace (+1 along Z), neither the pose nor the keys' mix
        assert np.allclose(pos, _key(blocks[0]) + [0, 0, 1], atol=1e-5)
        keys = temp.data.shape_keys.key_blocks
        assert [k.name for k in keys] == ["Basis", "Smile", "Grin"]
        for kb in keys:
            assert np.allclose(_key(kb) - pos, offsets[kb.name], atol=1e-6), kb.name
        assert keys["Smile"].value == pytest.approx(1.5)
        assert keys["Smile"].slider_max == pytest.approx(2.0)
        assert keys["Grin"].mute and keys["Grin"].relative_key.name == "Smile"
        assert np.allclose(_weights(temp, "Bone"), _weights(cube, "Bone"))
    assert cube.name == "Body" and len(bpy.data.meshes) == meshes


def test_only_an_armature_modifier_reads_the_object_itself(blank_blend):
    bpy = blank_blend
    from rigport.operators.conventions import evaluated_meshes

    rig, cube = _skinned_cube(bpy)
    count = len(bpy.data.objects)
    with evaluated_meshes(bpy.context, [cube, rig], True) as (out, warnings):
        assert out == [cube, rig] and warnings == []
        assert len(bpy.data.objects) == count
    cube.modifiers.new("Bevel", "BEVEL")
    with evaluated_meshes(bpy.context, [cube, rig], False) as (out, warnings):
        assert out == [cube, rig] and warnings == []


def test_a_failed_export_leaves_nothing_behind(blank_blend):
    bpy = blank_blend
    from rigport.operators.conventions import evaluated_meshes

    rig, cube = _skinned_cube(bpy)
    cube.modifiers.new("Subdivision", "SUBSURF")
    other = _cube(bpy, "Prop")
    other.modifiers.new("Bevel", "BEVEL")
    objects = {o.name for o in bpy.data.objects}
    meshes = {m.name for m in bpy.data.meshes}
    with pytest.raises(ValueError, match="the exporter failed"):
        with evaluated_meshes(bpy.context, [cube, other], True) as (out, _):
            assert [o.name for o in out] == ["Body", "Prop"]
            raise ValueError("the exporter failed")
    assert {o.name for o in bpy.data.objects} == objects
    assert {m.name for m in bpy.data.meshes} == meshes
    assert (cube.name, other.name) == ("Body", "Prop")
    assert cube.modifiers["Armature"].show_viewport
    assert not cube.show_only_shape_key
