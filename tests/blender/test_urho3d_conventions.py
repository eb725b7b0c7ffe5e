"""The Urho3D operators follow Blender's import/export conventions: options drawn
once with tooltips, Collection Exporters, Apply Modifiers, axes and scale with
"As Imported", frame rate, one .ani per action or NLA track, the package list
in the drop popup, what an import selects."""

from __future__ import annotations

import types
from pathlib import Path

import numpy as np
import pytest

from rigport.io_formats.urho3d import ani, mdl
from rigport.samples import urho3d as samples

OPERATORS = (
    "IMPORT_SCENE_OT_urho3d_mdl",
    "EXPORT_SCENE_OT_urho3d_mdl",
    "IMPORT_ANIM_OT_urho3d_ani",
    "EXPORT_ANIM_OT_urho3d_ani",
    "IMPORT_SCENE_OT_urho3d_package",
)
#: Drawn by the file browser, not the operator.
BROWSER = {"rna_type", "filepath", "filter_glob", "directory", "files", "filename"}


class Recorder:
    """A layout without a window: records every property drawn."""

    def __init__(self, drawn: list):
        self.drawn = drawn
        self.active = self.enabled = True
        self.use_property_split = self.use_property_decorate = False

    def prop(self, data, name, **kw):
        self.drawn.append(name)

    def label(self, **kw):
        pass

    def template_list(self, list_type, list_id, data, name, active_data, active_name, **kw):
        self.drawn += [name, active_name]

    def _child(self, *args, **kw):
        return Recorder(self.drawn)

    row = column = box = split = _child

    def panel(self, idname, default_closed=False):
        return Recorder(self.drawn), Recorder(self.drawn)


def _properties(cls) -> list:
    import bpy

    category, _, name = cls.bl_idname.partition(".")
    rna = getattr(getattr(bpy.ops, category), name).get_rna_type()
    return [p for p in rna.properties if p.identifier != "rna_type"]


class FakeOperator:
    """The operator's RNA defaults, with its class's methods bound to it."""

    def __init__(self, cls, layout):
        self._cls = cls
        self.layout = layout
        for p in _properties(cls):
            if p.type == "COLLECTION":
                value = FakeCollection()
            elif getattr(p, "is_array", False):
                value = tuple(p.default_array)
            else:
                value = p.default
            setattr(self, p.identifier, value)

    def __getattr__(self, name):
        attr = getattr(self._cls, name)
        return types.MethodType(attr, self) if callable(attr) else attr


class FakeCollection(list):
    def add(self):
        item = types.SimpleNamespace()
        self.append(item)
        return item


def _visible(cls) -> list:
    return [
        p
        for p in _properties(cls)
        if p.identifier not in BROWSER | {"collection"} and not p.is_hidden
    ]


@pytest.mark.parametrize("name", OPERATORS)
def test_every_option_has_a_tooltip_and_is_drawn_once(blank_blend, name):
    bpy = blank_blend
    cls = getattr(bpy.types, name)
    drawn: list[str] = []
    op = FakeOperator(cls, Recorder(drawn))
    cls.draw(op, bpy.context)
    visible = _visible(cls)
    assert visible
    for p in visible:
        assert p.description, f"{name}.{p.identifier} has no tooltip"
        assert drawn.count(p.identifier) == 1, (p.identifier, drawn)
        if p.type == "ENUM":
            for item in p.enum_items:
                assert item.identifier.isupper() or item.identifier.isdigit(), item.identifier
                assert "As imported" not in item.name
    assert not set(drawn) - {p.identifier for p in visible}, drawn
    # the vocabulary every format shares
    names = {p.identifier for p in visible}
    assert "axes" not in names
    if name.startswith("EXPORT"):
        assert {"collection", "use_selection", "use_visible", "use_active_collection"} <= {
            p.identifier for p in _properties(cls)
        }
        assert {"global_scale", "axis_forward", "axis_up", "use_transform_as_imported"} <= names
    if name == "EXPORT_ANIM_OT_urho3d_ani":
        assert {"export_animations", "use_action_names", "frame_rate", "fps"} <= names
        props = {p.identifier: p for p in _properties(cls)}
        items = [i.identifier for i in props["export_animations"].enum_items]
        assert items == ["ACTIVE", "ACTIONS", "NLA"]
    if name == "IMPORT_ANIM_OT_urho3d_ani":
        props = {p.identifier: p for p in _properties(cls)}
        assert props["set_scene_timing"].default is True


def _write(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def test_dropped_package_shows_its_files_in_the_popup(blank_blend, tmp_path):
    """invoke with the path set (a drop) fills the list before the dialog opens."""
    pytest.importorskip("lz4.block")
    from rigport.samples import rbfx as rbfx_samples

    bpy = blank_blend
    pak = _write(tmp_path, "Data.pak", rbfx_samples.sample_package(True, False))
    cls = bpy.types.IMPORT_SCENE_OT_urho3d_package
    drawn: list[str] = []
    op = FakeOperator(cls, Recorder(drawn))
    op.filepath = str(pak)
    op.properties = types.SimpleNamespace(is_property_set=lambda name: name == "filepath")
    calls = []
    wm = types.SimpleNamespace(
        invoke_props_dialog=lambda o, **kw: (
            calls.append(("dialog", len(o.package_files))) or {"RUNNING_MODAL"}
        ),
        fileselect_add=lambda o: calls.append(("browser", 0)),
    )
    cls.invoke(op, types.SimpleNamespace(window_manager=wm), None)
    names = [i.name for i in op.package_files]
    assert calls == [("dialog", len(names))] and "Models/Tentacle.mdl" in names
    assert all(i.select == (i.kind in ("model", "animation")) for i in op.package_files)
    cls.draw(op, bpy.context)
    assert drawn.count("package_files") == 1
    # File > Import (no path yet) opens the file browser
    op2 = FakeOperator(cls, Recorder([]))
    op2.properties = types.SimpleNamespace(is_property_set=lambda name: False)
    calls.clear()
    cls.invoke(op2, types.SimpleNamespace(window_manager=wm), None)
    assert calls == [("browser", 0)]


def _box_on_the_side(bpy):
    bpy.ops.mesh.primitive_cube_add(size=1.0, location=(5, 0, 0))
    return bpy.context.active_object


def test_collection_exporter_writes_only_its_collection(blank_blend, tmp_path):
    bpy = blank_blend
    model = samples.skinned_model(n_bones=4, morphs=0)
    src = _write(tmp_path, "in.mdl", mdl.write(model))
    coll = bpy.data.collections.new("X")
    bpy.context.scene.collection.children.link(coll)
    layer_coll = bpy.context.view_layer.layer_collection.children["X"]
    bpy.context.view_layer.active_layer_collection = layer_coll
    assert bpy.ops.import_scene.urho3d_mdl(filepath=str(src)) == {"FINISHED"}
    bpy.context.view_layer.active_layer_collection = bpy.context.view_layer.layer_collection
    _box_on_the_side(bpy)  # outside X
    out = tmp_path / "x.mdl"
    assert bpy.ops.export_scene.urho3d_mdl(filepath=str(out), collection="X") == {"FINISHED"}
    assert out.read_bytes() == src.read_bytes()
    # the whole scene: the cube outside X comes too
    whole = tmp_path / "whole.mdl"
    assert bpy.ops.export_scene.urho3d_mdl(filepath=str(whole)) == {"FINISHED"}
    assert _vertices(mdl.read(whole.read_bytes())) > _vertices(model)
    with pytest.raises(RuntimeError, match="does not exist"):
        bpy.ops.export_scene.urho3d_mdl(filepath=str(out), collection="Nope")
    # the animation exporter takes X's armature, not the active one outside it
    anim = samples.walk_animation(model, n_keys=5)
    src_ani = _write(tmp_path, "in.ani", ani.write(anim))
    arm = next(o for o in coll.all_objects if o.type == "ARMATURE")
    bpy.context.view_layer.objects.active = arm
    assert bpy.ops.import_anim.urho3d_ani(filepath=str(src_ani)) == {"FINISHED"}
    bpy.ops.object.armature_add(location=(0, 3, 0))  # active, outside X
    out_ani = tmp_path / "x.ani"
    assert bpy.ops.export_anim.urho3d_ani(filepath=str(out_ani), collection="X") == {"FINISHED"}
    assert [t.name for t in ani.read(out_ani.read_bytes()).tracks] == [t.name for t in anim.tracks]


def _vertices(model: mdl.Model) -> int:
    return sum(vb.count for vb in model.vertex_buffers)


def test_apply_modifiers(blank_blend, tmp_path):
    """A Bevel changes what the default export writes, not with Apply Modifiers
    off; a skinned mesh with only its Armature modifier comes back byte for byte."""
    bpy = blank_blend
    model = samples.skinned_model(n_bones=4, morphs=0)
    src = _write(tmp_path, "in.mdl", mdl.write(model))
    assert bpy.ops.import_scene.urho3d_mdl(filepath=str(src)) == {"FINISHED"}
    out = tmp_path / "out.mdl"
    assert bpy.ops.export_scene.urho3d_mdl(filepath=str(out)) == {"FINISHED"}
    assert out.read_bytes() == src.read_bytes()
    bpy.ops.wm.read_factory_settings(use_empty=True)
    cube = _box_on_the_side(bpy)
    cube.location = (0, 0, 0)
    plain = tmp_path / "plain.mdl"
    assert bpy.ops.export_scene.urho3d_mdl(filepath=str(plain)) == {"FINISHED"}
    cube.modifiers.new("Bevel", "BEVEL").width = 0.1
    on = tmp_path / "on.mdl"
    off = tmp_path / "off.mdl"
    assert bpy.ops.export_scene.urho3d_mdl(filepath=str(on)) == {"FINISHED"}
    assert bpy.ops.export_scene.urho3d_mdl(filepath=str(off), apply_modifiers=False) == {"FINISHED"}
    assert off.read_bytes() == plain.read_bytes()
    n_plain = mdl.read(plain.read_bytes()).vertex_buffers[0].count
    assert mdl.read(on.read_bytes()).vertex_buffers[0].count > n_plain
    assert [o.name for o in bpy.data.objects] == ["Cube"]  # the temporary copy is gone
    assert len(bpy.data.meshes) == 1


def _positions(model: mdl.Model) -> np.ndarray:
    return model.vertex_buffers[0].data["position0"].astype(np.float64)


@pytest.mark.parametrize(
    "options",
    [
        {"global_scale": 0.01},
        {"axis_forward": "-Y", "axis_up": "Z", "global_scale": 2.5},
    ],
)
def test_import_transform_comes_back_as_imported(blank_blend, tmp_path, options):
    """Imported with a scale (and other axes): the roots carry it, the data stays
    the file's, and the default export ("As Imported") writes the file back."""
    bpy = blank_blend
    model = samples.skinned_model(n_bones=5, morphs=0)
    anim = samples.walk_animation(model, n_keys=7)
    src = _write(tmp_path, "in.mdl", mdl.write(model))
    src_ani = _write(tmp_path, "in.ani", ani.write(anim))
    assert bpy.ops.import_scene.urho3d_mdl(filepath=str(src), **options) == {"FINISHED"}
    arm = next(o for o in bpy.data.objects if o.type == "ARMATURE")
    assert bpy.context.view_layer.objects.active == arm and arm.select_get()
    scale = np.array(arm.matrix_world)[:3, :3]
    assert np.isclose(abs(np.linalg.det(scale)) ** (1 / 3), options["global_scale"], rtol=1e-6)
    assert bpy.ops.import_anim.urho3d_ani(filepath=str(src_ani)) == {"FINISHED"}
    out = tmp_path / "out.mdl"
    assert bpy.ops.export_scene.urho3d_mdl(filepath=str(out)) == {"FINISHED"}
    assert out.read_bytes() == src.read_bytes()
    out_ani = tmp_path / "out.ani"
    assert bpy.ops.export_anim.urho3d_ani(filepath=str(out_ani)) == {"FINISHED"}
    # what the same file exports without any import transform, byte for byte
    bpy.ops.wm.read_factory_settings(use_empty=True)
    bpy.ops.import_scene.urho3d_mdl(filepath=str(src))
    bpy.ops.import_anim.urho3d_ani(filepath=str(src_ani))
    ref = tmp_path / "ref.ani"
    assert bpy.ops.export_anim.urho3d_ani(filepath=str(ref)) == {"FINISHED"}
    assert out_ani.read_bytes() == ref.read_bytes()


def test_explicit_scale_scales_what_is_written(blank_blend, tmp_path):
    bpy = blank_blend
    model = samples.skinned_model(n_bones=5, morphs=1)
    anim = samples.walk_animation(model, n_keys=7)
    src = _write(tmp_path, "in.mdl", mdl.write(model))
    assert bpy.ops.import_scene.urho3d_mdl(filepath=str(src)) == {"FINISHED"}
    bpy.ops.import_anim.urho3d_ani(filepath=str(_write(tmp_path, "in.ani", ani.write(anim))))
    out = tmp_path / "big.mdl"
    assert bpy.ops.export_scene.urho3d_mdl(
        filepath=str(out), use_transform_as_imported=False, global_scale=3.0
    ) == {"FINISHED"}
    big = mdl.read(out.read_bytes())
    assert np.allclose(_positions(big), 3.0 * _positions(model), atol=1e-4)
    for a, b in zip(model.bones, big.bones, strict=True):
        assert np.allclose(b.position, 3.0 * np.asarray(a.position), atol=1e-5)
        assert np.isclose(b.radius, 3.0 * a.radius, rtol=1e-5)
    assert np.allclose(big.bbox_max, 3.0 * model.bbox_max, atol=1e-4)
    assert np.allclose(big.geometry_centers, 3.0 * model.geometry_centers, atol=1e-4)
    morph = big.morphs[0].buffers[0].data["position"]
    assert np.allclose(morph, 3.0 * model.morphs[0].buffers[0].data["position"], atol=1e-4)
    out_ani = tmp_path / "big.ani"
    assert bpy.ops.export_anim.urho3d_ani(
        filepath=str(out_ani), use_transform_as_imported=False, global_scale=3.0
    ) == {"FINISHED"}
    got = ani.read(out_ani.read_bytes())
    for x, y in zip(anim.tracks, got.tracks, strict=True):
        assert np.allclose(y.keys["position"], 3.0 * x.keys["position"], atol=1e-4)
    # a moved and scaled armature is honoured: its scale reaches the file
    arm = next(o for o in bpy.data.objects if o.type == "ARMATURE")
    arm.scale = (0.5, 0.5, 0.5)
    bpy.context.view_layer.update()
    half = tmp_path / "half.mdl"
    assert bpy.ops.export_scene.urho3d_mdl(filepath=str(half), use_transform_as_imported=False) == {
        "FINISHED"
    }
    assert np.allclose(_positions(mdl.read(half.read_bytes())), 0.5 * _positions(model), atol=1e-4)


def _key_frames(action) -> np.ndarray:
    from rigport.operators.blender import compat

    fc = compat.fcurves(action)[0]
    co = np.empty(2 * len(fc.keyframe_points), np.float32)
    fc.keyframe_points.foreach_get("co", co)
    return co[0::2]


def test_frame_rate_options(blank_blend, tmp_path):
    """CUSTOM moves the keys to that rate and, by default, sets the scene's rate
    and frame range; SCENE keeps the scene's."""
    bpy = blank_blend
    model = samples.skinned_model(n_bones=4, morphs=0)
    anim = samples.walk_animation(model, n_keys=5, length=2.0)
    src = _write(tmp_path, "in.mdl", mdl.write(model))
    src_ani = _write(tmp_path, "in.ani", ani.write(anim))
    bpy.ops.import_scene.urho3d_mdl(filepath=str(src))
    scene = bpy.context.scene
    scene.render.fps, scene.render.fps_base = 24, 1.0
    assert bpy.ops.import_anim.urho3d_ani(filepath=str(src_ani), set_scene_timing=False) == {
        "FINISHED"
    }
    arm = next(o for o in bpy.data.objects if o.type == "ARMATURE")
    at24 = _key_frames(arm.animation_data.action)
    assert np.allclose(at24, np.linspace(0, 48, 5))
    assert scene.render.fps == 24
    assert bpy.ops.import_anim.urho3d_ani(filepath=str(src_ani), frame_rate="CUSTOM", fps=60.0) == {
        "FINISHED"
    }
    at60 = _key_frames(arm.animation_data.action)
    assert np.allclose(at60, at24 * 60 / 24)
    assert (scene.render.fps, scene.render.fps_base) == (60, 1.0)
    assert (scene.frame_start, scene.frame_end) == (0, 120)
    # the recorded rate brings the times back; an explicit export rate wins
    out = tmp_path / "out.ani"
    assert bpy.ops.export_anim.urho3d_ani(filepath=str(out)) == {"FINISHED"}
    times = ani.read(out.read_bytes()).tracks[0].keys["time"]
    assert np.allclose(times, anim.tracks[0].keys["time"], atol=1e-6)
    assert bpy.ops.export_anim.urho3d_ani(filepath=str(out), frame_rate="CUSTOM", fps=120.0) == {
        "FINISHED"
    }
    times = ani.read(out.read_bytes()).tracks[0].keys["time"]
    assert np.allclose(times, anim.tracks[0].keys["time"] / 2, atol=1e-6)


def _three_actions(bpy, tmp_path) -> tuple[dict[str, bytes], object]:
    model = samples.skinned_model(n_bones=4, morphs=0)
    bpy.ops.import_scene.urho3d_mdl(filepath=str(_write(tmp_path, "m.mdl", mdl.write(model))))
    arm = next(o for o in bpy.data.objects if o.type == "ARMATURE")
    written = {}
    for i, name in enumerate(("Walk", "Run", "Idle/Look")):
        anim = samples.walk_animation(model, n_keys=5 + i, name=name, amplitude=0.1 * (i + 1))
        path = _write(tmp_path, f"src{i}.ani", ani.write(anim))
        bpy.context.view_layer.objects.active = arm
        assert bpy.ops.import_anim.urho3d_ani(filepath=str(path)) == {"FINISHED"}
        written[arm.animation_data.action.name] = path.read_bytes()
    return written, arm


def _exported_alone(bpy, arm, action, path: Path) -> bytes:
    arm.animation_data.action = action
    assert bpy.ops.export_anim.urho3d_ani(filepath=str(path)) == {"FINISHED"}
    return path.read_bytes()


def test_export_every_action_and_nla_track(blank_blend, tmp_path):
    bpy = blank_blend
    sources, arm = _three_actions(bpy, tmp_path)
    assert set(sources) == {"Walk", "Run", "Idle/Look"}
    out = tmp_path / "out"
    out.mkdir()
    assert bpy.ops.export_anim.urho3d_ani(
        filepath=str(out / "hero.ani"), export_animations="ACTIONS"
    ) == {"FINISHED"}
    files = sorted(p.name for p in out.iterdir())
    assert files == ["hero_Idle_Look.ani", "hero_Run.ani", "hero_Walk.ani"]
    got = {p.name: p.read_bytes() for p in out.iterdir()}
    alone = tmp_path / "alone"
    alone.mkdir()
    for name in sources:
        action = bpy.data.actions[name]
        ref = _exported_alone(bpy, arm, action, alone / "a.ani")
        assert got[f"hero_{bpy.path.clean_name(name)}.ani"] == ref
        assert ani.read(ref).name == ani.read(sources[name]).name
    # named by action, from the NLA tracks the imports stashed
    named = tmp_path / "named"
    named.mkdir()
    arm.animation_data.nla_tracks["Run"].name = "Sprint"
    assert bpy.ops.export_anim.urho3d_ani(
        filepath=str(named / "ignored.ani"), export_animations="NLA", use_action_names=True
    ) == {"FINISHED"}
    assert sorted(p.name for p in named.iterdir()) == ["Idle_Look.ani", "Sprint.ani", "Walk.ani"]
    assert (named / "Sprint.ani").read_bytes() == got["hero_Run.ani"]


def test_clashing_file_names_are_refused(blank_blend, tmp_path):
    bpy = blank_blend
    _three_actions(bpy, tmp_path)
    bpy.data.actions["Run"].name = "Idle?Look"  # cleans to Idle_Look as well
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(RuntimeError, match="would both be written to Idle_Look.ani"):
        bpy.ops.export_anim.urho3d_ani(
            filepath=str(out / "x.ani"), export_animations="ACTIONS", use_action_names=True
        )
    assert not list(out.iterdir())


def test_import_selects_visible_lods_and_reuses_materials_on_request(blank_blend, tmp_path):
    bpy = blank_blend
    model = samples.skinned_model(n_bones=4, morphs=0, lods=3)
    src = _write(tmp_path, "lods.mdl", mdl.write(model))
    bpy.ops.mesh.primitive_cube_add()
    assert bpy.ops.import_scene.urho3d_mdl(filepath=str(src)) == {"FINISHED"}
    selected = {o.name for o in bpy.context.selected_objects}
    meshes = [o for o in bpy.data.objects if o.type == "MESH" and "urho_lod" in o]
    assert len(meshes) == 3
    assert selected == {o.name for o in meshes if not o.hide_get()} | {"lods"}
    assert bpy.context.view_layer.objects.active.type == "ARMATURE"
    assert "Cube" not in selected
    materials = len(bpy.data.materials)
    bpy.ops.import_scene.urho3d_mdl(filepath=str(src))
    assert len(bpy.data.materials) > materials
    materials = len(bpy.data.materials)
    bpy.ops.import_scene.urho3d_mdl(filepath=str(src), reuse_materials=True)
    assert len(bpy.data.materials) == materials


def test_animation_import_transform_is_taken_back_out(blank_blend, tmp_path):
    """An .ani imported with a scale and other axes: its keys are moved (the armature
    is the file's), the default export writes the file's keys back (within float32,
    as an untransformed import does), and the keys as they are in Blender otherwise."""
    bpy = blank_blend
    model = samples.skinned_model(n_bones=5, morphs=0)
    anim = samples.walk_animation(model, n_keys=7)
    src = _write(tmp_path, "in.mdl", mdl.write(model))
    src_ani = _write(tmp_path, "in.ani", ani.write(anim))
    bpy.ops.import_scene.urho3d_mdl(filepath=str(src))
    ref = tmp_path / "ref.ani"
    assert bpy.ops.import_anim.urho3d_ani(filepath=str(src_ani)) == {"FINISHED"}
    assert bpy.ops.export_anim.urho3d_ani(filepath=str(ref)) == {"FINISHED"}
    bpy.ops.wm.read_factory_settings(use_empty=True)
    bpy.ops.import_scene.urho3d_mdl(filepath=str(src))
    assert bpy.ops.import_anim.urho3d_ani(
        filepath=str(src_ani), global_scale=0.01, axis_forward="X", axis_up="Y"
    ) == {"FINISHED"}
    out = tmp_path / "out.ani"
    assert bpy.ops.export_anim.urho3d_ani(filepath=str(out)) == {"FINISHED"}
    back, want = ani.read(out.read_bytes()), ani.read(ref.read_bytes())
    for x, y in zip(want.tracks, back.tracks, strict=True):  # the keys went through float32
        assert (x.name, x.mask) == (y.name, y.mask)
        assert np.array_equal(x.keys["time"], y.keys["time"])
        assert np.allclose(x.keys["position"], y.keys["position"], atol=1e-5)
        q, r = x.keys["rotation"], y.keys["rotation"]
        assert np.allclose(q, r * np.sign(np.sum(q * r, axis=1, keepdims=True)), atol=1e-5)
        if "scale" in x.keys.dtype.names:
            assert np.allclose(x.keys["scale"], y.keys["scale"], atol=1e-5)
    small = tmp_path / "small.ani"
    assert bpy.ops.export_anim.urho3d_ani(filepath=str(small), use_transform_as_imported=False) == {
        "FINISHED"
    }
    got = ani.read(small.read_bytes())
    parents = {b.name: model.bones[b.parent].name != b.name for b in model.bones}
    for x, y in zip(anim.tracks, got.tracks, strict=True):
        size = np.linalg.norm(x.keys["position"], axis=1)
        assert np.allclose(np.linalg.norm(y.keys["position"], axis=1), 0.01 * size, atol=1e-6)
        if parents[x.name]:  # a child's keys only scale; the root's turn too
            assert np.allclose(y.keys["position"], 0.01 * x.keys["position"], atol=1e-6)


def test_package_import_places_models_and_selects_them(blank_blend, tmp_path):
    """The package's models get the axes and scale on their roots (recorded for an
    As Imported export), the animations the chosen frame rate; what was made is
    selected with an armature active."""
    pytest.importorskip("lz4.block")
    from rigport.samples import rbfx as rbfx_samples

    bpy = blank_blend
    pak = _write(tmp_path, "Data.pak", rbfx_samples.sample_package(True, False))
    scene = bpy.context.scene
    scene.render.fps = 24
    assert bpy.ops.import_scene.urho3d_package(
        filepath=str(pak), global_scale=0.5, frame_rate="CUSTOM", fps=48.0, set_scene_timing=True
    ) == {"FINISHED"}
    arms = [o for o in bpy.data.objects if o.type == "ARMATURE"]
    for arm in arms:
        assert np.allclose(np.array(arm.matrix_world)[:3, :3], 0.5 * np.eye(3))
        assert len(arm["_rigport_import_transform"]) == 16
    assert bpy.context.view_layer.objects.active in arms
    assert {o.name for o in bpy.context.selected_objects} == {
        o.name for o in bpy.data.objects if o.visible_get()
    }
    assert scene.render.fps == 48
    tentacle = bpy.data.objects["Tentacle"]
    out = tmp_path / "back.ani"
    bpy.context.view_layer.objects.active = tentacle
    assert bpy.ops.export_anim.urho3d_ani(filepath=str(out)) == {"FINISHED"}
    from rigport.io_formats.urho3d import package

    src = ani.read(package.read(pak.read_bytes()).get("Models/Tentacle_Wave.ani"))
    back = ani.read(out.read_bytes())
    for x, y in zip(src.tracks, back.tracks, strict=True):
        assert np.allclose(x.keys["time"], y.keys["time"], atol=1e-6)
        assert np.allclose(x.keys["position"], y.keys["position"], atol=1e-5)
