"""Exports refuse what a format cannot hold with a sentence, never a Python error:
every exporter operator on scenes an artist can make (empty scene, a mesh without
faces, an armature without bones, two characters, an action on the wrong object ...)."""

from __future__ import annotations

import pytest

EXPORTERS = {
    "urho3d_mdl": ("export_scene.urho3d_mdl", ".mdl"),
    "urho3d_ani": ("export_anim.urho3d_ani", ".ani"),
    "unigine_mesh": ("export_scene.unigine_mesh", ".mesh"),
    "unigine_anim": ("export_anim.unigine_anim", ".anim"),
    "rw_dff": ("export_scene.rw_dff", ".dff"),
    "mrtk_input": ("export_anim.mrtk_input", ".bin"),
    "bonespro_structure": ("export_scene.bonespro_structure", ".txt"),
    "bonespro_anim": ("export_anim.bonespro_anim", ".txt"),
}


def _link(bpy, obj):
    bpy.context.scene.collection.objects.link(obj)
    bpy.context.view_layer.objects.active = obj
    return obj


def _mesh(bpy, name="Mesh", verts=((0, 0, 0), (1, 0, 0), (0, 1, 0)), faces=((0, 1, 2),), edges=()):
    me = bpy.data.meshes.new(name)
    me.from_pydata([list(v) for v in verts], [list(e) for e in edges], [list(f) for f in faces])
    return _link(bpy, bpy.data.objects.new(name, me))


def _armature(bpy, name="Rig", bones=("root", "child")):
    arm = _link(bpy, bpy.data.objects.new(name, bpy.data.armatures.new(name)))
    if bones:
        bpy.ops.object.mode_set(mode="EDIT")
        parent = None
        for i, b in enumerate(bones):
            eb = arm.data.edit_bones.new(b)
            eb.head, eb.tail = (0, 0, i), (0, 0, i + 1)
            eb.parent = parent
            parent = eb
        bpy.ops.object.mode_set(mode="OBJECT")
    return arm


def _skinned(bpy, name: str, x: float):
    arm = _armature(bpy, f"{name}Rig", (f"{name}_root", f"{name}_child"))
    obj = _mesh(
        bpy,
        name,
        verts=((x, 0, 0), (x + 1, 0, 0), (x, 1, 0), (x, 0, 1)),
        faces=((0, 1, 2), (0, 2, 3)),
    )
    for b in arm.data.bones:
        obj.vertex_groups.new(name=b.name).add([0, 1, 2, 3], 0.5, "REPLACE")
    obj.modifiers.new("Armature", "ARMATURE").object = arm
    obj.parent = arm
    return arm, obj


def _keyed(bpy, owner, path="location"):
    from rigport.operators.blender import compat

    action = bpy.data.actions.new(f"{owner.name}Action")
    fc = compat.new_fcurve(action, path, 0, "g")
    fc.keyframe_points.insert(1, 0.0)
    fc.keyframe_points.insert(10, 1.0)
    compat.assign_action(owner, action)
    return action


def scene_empty(bpy):
    pass


def scene_empty_object(bpy):
    _link(bpy, bpy.data.objects.new("Empty", None))


def scene_mesh_without_faces(bpy):
    _mesh(bpy, faces=())


def scene_mesh_edges_only(bpy):
    _mesh(bpy, edges=((0, 1), (1, 2)), faces=())


def scene_mesh_without_vertices(bpy):
    _mesh(bpy, verts=(), faces=())


def scene_static_mesh(bpy):
    _mesh(bpy)


def scene_armature_without_bones(bpy):
    _armature(bpy, bones=())


def scene_armature_without_action(bpy):
    _armature(bpy)


def scene_action_on_wrong_object(bpy):
    """The armature's action keys object channels and a bone it does not have."""
    arm = _armature(bpy)
    _keyed(bpy, arm, 'pose.bones["nobody"].location')


def scene_object_action_on_mesh(bpy):
    _keyed(bpy, _mesh(bpy))


def scene_two_characters(bpy):
    _skinned(bpy, "Ann", 0.0)
    _skinned(bpy, "Bob", 3.0)


def scene_mesh_of_boneless_armature(bpy):
    arm = _armature(bpy, bones=())
    obj = _mesh(bpy)
    obj.modifiers.new("Armature", "ARMATURE").object = arm
    obj.parent = arm


def scene_groups_without_armature(bpy):
    obj = _mesh(bpy)
    obj.vertex_groups.new(name="lonely").add([0, 1], 1.0, "REPLACE")


def scene_character_posed_by_an_object_action(bpy):
    """A skinned character whose armature's action keys only object channels."""
    arm, _ = _skinned(bpy, "Cal", 0.0)
    _keyed(bpy, arm)
    bpy.context.view_layer.objects.active = arm


def _imported(bpy, name: str, data: bytes, idname: str):
    import tempfile
    from pathlib import Path

    path = Path(tempfile.mkdtemp(prefix="rigport-refusals-")) / name
    path.write_bytes(data)
    group, op = idname.split(".")
    assert getattr(getattr(bpy.ops, group), op)(filepath=str(path)) == {"FINISHED"}


def _urho_character(bpy):
    from rigport.io_formats.urho3d import ani, mdl
    from rigport.samples import urho3d as samples

    model = samples.skinned_model(n_bones=4, grid=(8, 6))
    _imported(bpy, "c.mdl", mdl.write(model), "import_scene.urho3d_mdl")
    _imported(bpy, "c.ani", ani.write(samples.walk_animation(model, 5)), "import_anim.urho3d_ani")
    return next(o for o in bpy.data.objects if o.type == "ARMATURE")


def scene_recording_without_its_camera(bpy):
    from rigport.io_formats.mrtk import recording
    from rigport.samples import mrtk as samples

    data = recording.write(samples.sample_recording(keys=4))
    _imported(bpy, "r.bin", data, "import_anim.mrtk_input")
    cams = [o for o in bpy.data.objects if "camera" in o.name.lower()]
    for obj in cams or list(bpy.data.objects)[:1]:
        bpy.data.objects.remove(obj)


def scene_character_without_its_armature(bpy):
    bpy.data.objects.remove(_urho_character(bpy))


def scene_character_with_a_renamed_bone(bpy):
    arm = _urho_character(bpy)
    arm.data.bones[1].name = "renamed"
    bpy.context.view_layer.objects.active = arm


def scene_character_without_faces(bpy):
    _urho_character(bpy)
    for obj in [o for o in bpy.data.objects if o.type == "MESH"]:
        bpy.context.view_layer.objects.active = obj
        bpy.ops.object.mode_set(mode="EDIT")
        bpy.ops.mesh.select_all(action="SELECT")
        bpy.ops.mesh.delete(type="ONLY_FACE")
        bpy.ops.object.mode_set(mode="OBJECT")


def scene_curve(bpy):
    curve = bpy.data.curves.new("Curve", "CURVE")
    curve.splines.new("POLY").points.add(2)
    _link(bpy, bpy.data.objects.new("Curve", curve))


SCENES = {
    f.__name__[len("scene_") :]: f
    for f in list(globals().values())
    if callable(f) and getattr(f, "__name__", "").startswith("scene_")
}


@pytest.mark.parametrize("scene", sorted(SCENES))
@pytest.mark.parametrize("exporter", sorted(EXPORTERS))
def test_export_is_a_file_or_a_sentence(blank_blend, tmp_path, scene, exporter):
    bpy = blank_blend
    SCENES[scene](bpy)
    idname, ext = EXPORTERS[exporter]
    group, name = idname.split(".")
    out = tmp_path / f"out{ext}"
    try:
        result = getattr(getattr(bpy.ops, group), name)(filepath=str(out))
    except RuntimeError as err:
        text = str(err)
        assert "Traceback" not in text and "Error: Python" not in text, text
        assert text.startswith("Error: ") and len(text.strip().splitlines()) == 1, text
        assert not out.exists()
    else:
        assert result == {"FINISHED"}
        assert out.exists() and out.stat().st_size > 0


@pytest.mark.parametrize("exporter", ["urho3d_mdl", "unigine_mesh", "rw_dff"])
def test_two_characters_are_refused(blank_blend, tmp_path, exporter):
    """Two skinned characters into one file holding one skeleton: refused, naming both."""
    bpy = blank_blend
    scene_two_characters(bpy)
    idname, ext = EXPORTERS[exporter]
    group, name = idname.split(".")
    with pytest.raises(RuntimeError) as err:
        getattr(getattr(bpy.ops, group), name)(filepath=str(tmp_path / f"x{ext}"))
    assert "AnnRig" in str(err.value) and "BobRig" in str(err.value)


def test_bonespro_structure_without_armature(blank_blend, tmp_path):
    bpy = blank_blend
    scene_static_mesh(bpy)
    with pytest.raises(RuntimeError, match="armature") as err:
        bpy.ops.export_scene.bonespro_structure(filepath=str(tmp_path / "x.txt"))
    assert "KeyError" not in str(err.value)


def _batch_exports():
    from rigport.operators import format_modules

    return {
        entry.key: entry.export_file
        for module in format_modules()
        for entry in getattr(module, "BATCH", ())
        if entry.export_file is not None
    }


@pytest.mark.parametrize("scene", ["empty", "static_mesh", "armature_without_action"])
def test_batch_exports_are_a_file_or_a_sentence(blank_blend, tmp_path, scene):
    """batch.py's export functions with what an input left behind (nothing, a static
    mesh, an armature without action): a file or a FormatError, never a KeyError."""
    from rigport.io_formats.codec import FormatError

    bpy = blank_blend
    SCENES[scene](bpy)
    state: dict = {"objects": list(bpy.data.objects)}
    arms = [o for o in bpy.data.objects if o.type == "ARMATURE"]
    if arms:
        state["armature"] = arms[0]
    exports = _batch_exports()
    assert len(exports) >= 8
    for key, export in sorted(exports.items()):
        out = tmp_path / f"{key}.out"
        try:
            export(bpy.context, str(out), state, {})
        except FormatError as err:
            assert "\n" not in str(err)
        else:
            assert out.stat().st_size > 0, key
