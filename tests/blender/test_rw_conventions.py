"""The RenderWare operators follow Blender's import/export conventions: options
with tooltips drawn once in panels, UPPER_CASE enums, Collection Exporter,
Apply Modifiers, axes and scale ("As Imported" gives the file back), Reuse
Materials, frame rate and scene timing, and animations out (active, all
actions, NLA tracks)."""

from __future__ import annotations

import re
from types import SimpleNamespace

import numpy as np
import pytest

from rigport.io_formats.renderware import anm, dff, ifp, img
from rigport.io_formats.renderware.chunks import TARGETS
from rigport.io_formats.renderware.frames import frame_matrices
from rigport.io_formats.transforms import world_from_local
from rigport.samples import renderware as samples
from rigport.samples import renderware_ifp as ifp_samples

# -- draw() with a recording layout (no window) -----------------------------------


class _Layout:
    """Records ``prop`` calls; only what an operator's draw() may use exists."""

    __slots__ = ("log", "active", "enabled", "use_property_split", "use_property_decorate")

    def __init__(self, log: list):
        self.log = log
        self.active = self.enabled = True
        self.use_property_split = self.use_property_decorate = False

    def prop(self, data, name, **_kw):
        self.log.append((data, name))

    def label(self, **_kw):
        pass

    def row(self, **_kw):
        return _Layout(self.log)

    column = box = split = row

    def panel(self, idname, default_closed=False):
        self.log.append(("panel", idname))
        return _Layout(self.log), _Layout(self.log)

    def template_list(self, *args, **_kw):
        self.log.append(("list", args))


class _Items(list):
    """A CollectionProperty stand-in for FileBrowserList."""

    def add(self):
        item = type("Item", (), {})()
        self.append(item)
        return item


def _properties(cls) -> list:
    """The operator's properties (RNA), as the operator call sees them."""
    import bpy

    group, name = cls.bl_idname.split(".")
    return [
        p
        for p in getattr(getattr(bpy.ops, group), name).get_rna_type().properties
        if p.identifier != "rna_type"
    ]


def _fake(cls, **values):
    """An object with ``cls``'s methods and its properties' defaults (RNA), no window."""
    import bpy

    attrs: dict = {}
    for klass in reversed(cls.__mro__):
        if klass is object or issubclass(klass, bpy.types.bpy_struct) and klass is not cls:
            continue
        attrs.update({k: v for k, v in vars(klass).items() if not k.startswith("__")})
    fake = type("Fake" + cls.__name__, (), attrs)()
    for p in _properties(cls):
        if p.type == "COLLECTION":
            value = _Items()
        elif getattr(p, "is_array", False):
            value = list(p.default_array)
        else:
            value = p.default
        setattr(fake, p.identifier, value)
    for k, v in values.items():
        setattr(fake, k, v)
    return fake


def _classes():
    from rigport.operators.renderware import anm as anm_ops
    from rigport.operators.renderware import ifp as ifp_ops
    from rigport.operators.renderware import img as img_ops
    from rigport.operators.renderware import operators as dff_ops
    from rigport.operators.renderware import txd as txd_ops

    return [
        c
        for m in (dff_ops, ifp_ops, anm_ops, img_ops, txd_ops)
        for c in m.CLASSES
        if hasattr(c, "bl_idname") and "_OT_" in c.__name__
    ]


OPERATORS = [
    "IMPORT_SCENE_OT_rw_dff",
    "EXPORT_SCENE_OT_rw_dff",
    "IMPORT_ANIM_OT_gta_ifp",
    "EXPORT_ANIM_OT_gta_ifp",
    "IMPORT_ANIM_OT_rw_anm",
    "EXPORT_ANIM_OT_rw_anm",
    "IMPORT_SCENE_OT_gta_img",
    "IMPORT_SCENE_OT_rw_txd",
]


@pytest.mark.parametrize("name", OPERATORS)
def test_every_option_has_a_tooltip_and_is_drawn_once(rigport_registered, name):
    cls = next(c for c in _classes() if c.__name__ == name)
    visible = [p for p in _properties(cls) if p.identifier != "filepath" and not p.is_hidden]
    for p in visible:
        assert p.description, f"{name}.{p.identifier} has no tooltip"
        if p.type == "ENUM":
            for item in p.enum_items:
                # orientation_helper's own axes are "-X" ... "Z"
                assert re.fullmatch(r"-?[A-Z0-9_]+", item.identifier), item.identifier
            assert "As imported" not in [i.name for i in p.enum_items]
    log: list = []
    fake = _fake(cls, collection="")
    fake.layout = _Layout(log)
    cls.draw(fake, None)
    drawn = [n for d, n in log if d is fake]
    for p in visible:
        assert drawn.count(p.identifier) == 1, (
            f"{name}.{p.identifier} drawn {drawn.count(p.identifier)} times"
        )
    panels = [n for d, n in log if d == "panel"]
    assert len(visible) <= 3 or panels, f"{name}: {len(visible)} options and no panel"


@pytest.mark.parametrize(
    "name,rows", [("IMPORT_ANIM_OT_gta_ifp", 3), ("IMPORT_SCENE_OT_gta_img", 4)]
)
def test_a_dropped_file_lists_its_contents_in_the_popup(rigport_registered, tmp_path, name, rows):
    if name.endswith("ifp"):
        path = tmp_path / "ped.ifp"
        path.write_bytes(ifp.write(ifp_samples.walk_package("SA", animations=3)))
    else:
        a = img.new_archive(2)
        for member in ("ped.dff", "ped.ifp", "ped.txd", "readme.txt"):
            a.put(member, b"x" * 10)
        path = tmp_path / "gta3.img"
        img.save_archive(str(path), a)
    cls = next(c for c in _classes() if c.__name__ == name)
    fake = _fake(cls, filepath=str(path))
    fake.properties = SimpleNamespace(is_property_set=lambda prop: prop == "filepath")
    popups = []
    fake.invoke_popup = lambda context: popups.append(True) or {"RUNNING_MODAL"}
    # an importer of one archive has no ``files``: its dialog is opened directly
    dialog = SimpleNamespace(
        invoke_props_dialog=lambda op, **kw: popups.append(kw) or {"RUNNING_MODAL"}
    )
    context = SimpleNamespace(window_manager=dialog)
    assert cls.invoke(fake, context, None) == {"RUNNING_MODAL"} and popups
    assert len(getattr(fake, cls.list_attr)) == rows and fake.listed == str(path)
    log: list = []
    fake.layout = _Layout(log)
    cls.draw(fake, None)
    assert sum(1 for d, n in log if n == "select") == (rows if name.endswith("ifp") else 3)


# -- DFF: scope, modifiers, axes and scale, materials ------------------------------


def _write(tmp_path, name: str, f: dff.DffFile) -> str:
    path = tmp_path / name
    path.write_bytes(dff.write(f))
    return str(path)


def _world_positions(f: dff.DffFile) -> list[np.ndarray]:
    frames = f.clump.frame_list.frames
    world = world_from_local(frame_matrices(frames), frames["parent"].astype(np.int32))
    out = []
    for atomic in f.clump.atomics:
        p = f.clump.atomic_geometry(atomic).morph_targets[0].positions.astype(np.float64)
        w = world[atomic.frame]
        out.append(p @ w[:3, :3].T + w[:3, 3])
    return out


@pytest.mark.parametrize("first", ["static", "ped"])
def test_import_selects_what_it_made_with_the_root_active(blank_blend, tmp_path, first):
    """Into an empty scene (whose view layer is not synced yet) and after."""
    bpy = blank_blend
    layer = bpy.context.view_layer
    before: set = set()
    for name in (first, "ped" if first == "static" else "static"):
        path = _write(tmp_path, f"{name}.dff", SOURCES[name]())
        assert bpy.ops.import_scene.rw_dff(filepath=path) == {"FINISHED"}
        made = [o for o in layer.objects if o.name not in before]
        assert made and all(o.select_get() for o in made)
        assert not any(o.select_get() for o in layer.objects if o.name in before)
        active = layer.objects.active
        assert active in made and active.parent is None
        if name == "ped":
            # the frame holding the skinned atomic is its mesh, the armature its child
            assert active.type == "MESH" and active.children
        before |= {o.name for o in made}


def test_a_collection_export_writes_only_that_collection(blank_blend, tmp_path):
    bpy = blank_blend
    source = samples.static_clump("SA", atomics=3)
    path = _write(tmp_path, "static.dff", source)
    coll = bpy.data.collections.new("Props")
    bpy.context.scene.collection.children.link(coll)
    layer = bpy.context.view_layer.layer_collection.children["Props"]
    bpy.context.view_layer.active_layer_collection = layer
    assert bpy.ops.import_scene.rw_dff(filepath=path) == {"FINISHED"}
    bpy.context.view_layer.active_layer_collection = bpy.context.view_layer.layer_collection
    bpy.ops.mesh.primitive_cube_add()
    out = tmp_path / "out.dff"
    assert bpy.ops.export_scene.rw_dff(filepath=str(out), collection="Props") == {"FINISHED"}
    assert out.read_bytes() == dff.write(source)
    assert bpy.ops.export_scene.rw_dff(filepath=str(out)) == {"FINISHED"}
    assert len(dff.read(out.read_bytes()).clump.atomics) == 4
    with pytest.raises(RuntimeError, match="does not exist"):
        bpy.ops.export_scene.rw_dff(filepath=str(out), collection="Nothing")


def test_apply_modifiers(blank_blend, tmp_path):
    bpy = blank_blend
    bpy.ops.mesh.primitive_cube_add()
    cube = bpy.context.active_object
    cube.modifiers.new("Bevel", "BEVEL")
    out = tmp_path / "cube.dff"

    def vertices(**kw) -> int:
        assert bpy.ops.export_scene.rw_dff(filepath=str(out), **kw) == {"FINISHED"}
        return dff.read(out.read_bytes()).clump.geometries()[0].num_vertices

    plain = vertices(apply_modifiers=False)
    bevelled = vertices()
    assert plain == 24 and bevelled > plain
    assert [m.type for m in cube.modifiers] == ["BEVEL"] and cube.name == "Cube"
    assert len(bpy.data.objects) == 1 and len(bpy.data.meshes) == 1


def test_an_armature_skinned_ped_still_round_trips_byte_identical(blank_blend, tmp_path):
    bpy = blank_blend
    data = dff.write(samples.skinned_ped("SA"))
    path = tmp_path / "ped.dff"
    path.write_bytes(data)
    assert bpy.ops.import_scene.rw_dff(filepath=str(path)) == {"FINISHED"}
    mesh = next(o for o in bpy.data.objects if o.type == "MESH")
    assert [m.type for m in mesh.modifiers] == ["ARMATURE"]
    out = tmp_path / "out.dff"
    assert bpy.ops.export_scene.rw_dff(filepath=str(out)) == {"FINISHED"}
    assert out.read_bytes() == data


SOURCES = {
    "ped": lambda: samples.skinned_ped("SA"),
    "ped_on_bone": lambda: samples.skinned_ped("SA", root_frame=False),
    "gta_ped": lambda: samples.gta_ped("SA"),
    "static": lambda: samples.static_clump("VC"),
}


@pytest.mark.parametrize("name", list(SOURCES))
@pytest.mark.parametrize(
    "options",
    [
        {"global_scale": 0.01},
        {"axis_forward": "X", "axis_up": "Z"},
        {"global_scale": 2.0, "axis_forward": "-Z", "axis_up": "Y"},
    ],
)
def test_import_transform_and_export_as_imported_give_the_file_back(
    blank_blend, tmp_path, name, options
):
    bpy = blank_blend
    source = SOURCES[name]()
    data = dff.write(source)
    path = _write(tmp_path, "in.dff", source)
    assert bpy.ops.import_scene.rw_dff(filepath=path, **options) == {"FINISHED"}
    roots = [o for o in bpy.data.objects if o.parent is None]
    assert not any(
        np.allclose(np.array(o.matrix_world), np.eye(4)) for o in roots if o.type != "MESH"
    )
    out = tmp_path / "out.dff"
    assert bpy.ops.export_scene.rw_dff(filepath=str(out)) == {"FINISHED"}
    back = dff.read(out.read_bytes())
    ca, cb = source.clump, back.clump
    np.testing.assert_allclose(
        cb.frame_list.frames["position"], ca.frame_list.frames["position"], atol=1e-5
    )
    np.testing.assert_allclose(
        cb.frame_list.frames["rotation"], ca.frame_list.frames["rotation"], atol=1e-5
    )
    for ga, gb in zip(ca.geometries(), cb.geometries(), strict=True):
        np.testing.assert_array_equal(gb.morph_targets[0].positions, ga.morph_targets[0].positions)
    # the root frames held the file's matrices: the very bytes come back
    assert out.read_bytes() == data


def test_an_explicit_scale_scales_what_is_written(blank_blend, tmp_path):
    bpy = blank_blend
    source = samples.static_clump("SA")
    path = _write(tmp_path, "in.dff", source)
    assert bpy.ops.import_scene.rw_dff(filepath=path) == {"FINISHED"}
    out = tmp_path / "out.dff"
    options = {"use_transform_as_imported": False, "global_scale": 2.0}
    assert bpy.ops.export_scene.rw_dff(filepath=str(out), **options) == {"FINISHED"}
    back = dff.read(out.read_bytes())
    for a, b in zip(_world_positions(source), _world_positions(back), strict=True):
        np.testing.assert_allclose(b, a * 2.0, atol=1e-4)
    for ga, gb in zip(source.clump.geometries(), back.clump.geometries(), strict=True):
        np.testing.assert_allclose(
            gb.morph_targets[0].positions, ga.morph_targets[0].positions * 2.0, atol=1e-5
        )
        np.testing.assert_allclose(gb.morph_targets[0].sphere, ga.morph_targets[0].sphere * 2)
    # objects RigPort did not import: the options apply "As Imported" too
    bpy.ops.wm.read_factory_settings(use_empty=True)
    bpy.ops.mesh.primitive_cube_add(location=(1.0, 0.0, 0.0))
    out1, out3 = tmp_path / "one.dff", tmp_path / "three.dff"
    assert bpy.ops.export_scene.rw_dff(filepath=str(out1)) == {"FINISHED"}
    assert bpy.ops.export_scene.rw_dff(filepath=str(out3), global_scale=3.0) == {"FINISHED"}
    one, three = dff.read(out1.read_bytes()), dff.read(out3.read_bytes())
    for a, b in zip(_world_positions(one), _world_positions(three), strict=True):
        np.testing.assert_allclose(b, a * 3.0, atol=1e-4)


def test_materials_are_new_unless_reused_by_name(blank_blend, tmp_path):
    bpy = blank_blend
    source = samples.static_clump("SA", atomics=1)
    path = _write(tmp_path, "in.dff", source)
    assert bpy.ops.import_scene.rw_dff(filepath=path) == {"FINISHED"}
    first = {m.name for m in bpy.data.materials}
    assert first
    assert bpy.ops.import_scene.rw_dff(filepath=path) == {"FINISHED"}
    assert len(bpy.data.materials) == 2 * len(first)
    n = len(bpy.data.materials)
    assert bpy.ops.import_scene.rw_dff(filepath=path, reuse_materials=True) == {"FINISHED"}
    assert len(bpy.data.materials) == n
    layer = bpy.context.view_layer
    mesh = next(o for o in layer.objects if o.type == "MESH" and o.select_get())
    assert {s.material.name for s in mesh.material_slots} <= first


# -- animations: frame rate, scene timing, scale, animations out -------------------


def _ped(bpy, tmp_path):
    path = _write(tmp_path, "ped.dff", samples.skinned_ped("SA"))
    assert bpy.ops.import_scene.rw_dff(filepath=path) == {"FINISHED"}
    return next(o for o in bpy.data.objects if o.type == "ARMATURE")


def _package(tmp_path, animations: int = 3):
    path = tmp_path / "ped.ifp"
    data = ifp.write(ifp_samples.walk_package("SA", animations=animations, quirks=False))
    path.write_bytes(data)
    return path, data


def _last_key(action) -> float:
    from rigport.operators.blender import compat

    return max(fc.keyframe_points[-1].co[0] for fc in compat.fcurves(action))


def test_frame_rate_and_scene_timing(blank_blend, tmp_path):
    bpy = blank_blend
    arm = _ped(bpy, tmp_path)
    path, data = _package(tmp_path, 1)
    scene = bpy.context.scene
    scene.render.fps, scene.render.fps_base = 24, 1.0
    assert bpy.ops.import_anim.gta_ifp(filepath=str(path), set_scene_timing=False) == {"FINISHED"}
    at_scene = _last_key(bpy.data.actions["walk"])
    assert (scene.render.fps, scene.frame_start, scene.frame_end) == (24, 1, 250)
    bpy.data.actions.remove(bpy.data.actions["walk"])
    bpy.context.view_layer.objects.active = arm
    assert bpy.ops.import_anim.gta_ifp(filepath=str(path), frame_rate="CUSTOM", fps=60.0) == {
        "FINISHED"
    }
    action = arm.animation_data.action
    assert _last_key(action) == pytest.approx(at_scene * 60 / 24, abs=1e-3)
    assert scene.render.fps == 60 and scene.render.fps_base == 1.0
    assert (scene.frame_start, scene.frame_end) == (0, int(np.ceil(_last_key(action))))
    out = tmp_path / "out.ifp"
    assert bpy.ops.export_anim.gta_ifp(filepath=str(out), replace=False) == {"FINISHED"}
    assert out.read_bytes() == data  # the action's own rate converts back


def test_anm_frame_rate(blank_blend, tmp_path):
    bpy = blank_blend
    arm = _ped(bpy, tmp_path)
    path = tmp_path / "walk.anm"
    path.write_bytes(anm.write(_anm_file()))
    assert bpy.ops.import_anim.rw_anm(filepath=str(path), frame_rate="CUSTOM", fps=50.0) == {
        "FINISHED"
    }
    action = arm.animation_data.action
    scene = bpy.context.scene
    assert scene.render.fps == 50
    assert _last_key(action) == pytest.approx(50 * _anm_file().keys["time"].max(), abs=1e-2)


def _anm_file() -> anm.AnmFile:
    skeleton = samples.ped_skeleton(32)
    tracks = []
    for i, k in enumerate(ifp_samples.cycle_keys(skeleton, 9)):
        t = (
            k.translation
            if k.translation is not None
            else np.tile(skeleton.local_translation[i], (len(k.times), 1))
        )
        tracks.append((k.times.astype(np.float32).astype(np.float64), k.rotation, t))
    return anm.from_tracks(tracks, TARGETS["SA"][2])


def test_key_scale_as_imported_gives_the_file_back(blank_blend, tmp_path):
    bpy = blank_blend
    arm = _ped(bpy, tmp_path)
    path, data = _package(tmp_path, 1)
    assert bpy.ops.import_anim.gta_ifp(filepath=str(path), global_scale=0.01) == {"FINISHED"}
    bpy.context.view_layer.objects.active = arm
    out = tmp_path / "out.ifp"
    assert bpy.ops.export_anim.gta_ifp(filepath=str(out), replace=False) == {"FINISHED"}
    assert out.read_bytes() == data
    plain = {"replace": False, "use_transform_as_imported": False}
    assert bpy.ops.export_anim.gta_ifp(filepath=str(out), **plain) == {"FINISHED"}
    a, b = ifp.read(data).animations[0], ifp.read(out.read_bytes()).animations[0]
    root_a = next(o for o in a.objects if o.name == "Root").keys()
    root_b = next(o for o in b.objects if o.name == "Root").keys()
    step = 1 / ifp.TRANSLATION_STEP
    np.testing.assert_allclose(root_b.translation, root_a.translation * 0.01, atol=step)
    assert np.abs(root_a.translation).max() > 10 * step


def _three_actions(bpy, tmp_path):
    arm = _ped(bpy, tmp_path)
    path, _ = _package(tmp_path, 3)
    assert bpy.ops.import_anim.gta_ifp(filepath=str(path)) == {"FINISHED"}
    bpy.context.view_layer.objects.active = arm
    assert len(bpy.data.actions) == 3
    return arm


def test_ifp_export_animations(blank_blend, tmp_path):
    bpy = blank_blend
    arm = _three_actions(bpy, tmp_path)
    out = tmp_path / "out.ifp"

    def names(**kw) -> list[str]:
        assert bpy.ops.export_anim.gta_ifp(filepath=str(out), replace=False, **kw) == {"FINISHED"}
        return [a.name for a in ifp.read(out.read_bytes()).animations]

    assert names() == ["walk", "anim001", "anim002"]
    assert names(export_animations="ACTIVE") == ["walk"]
    arm.animation_data.nla_tracks[1].name = "run"
    assert names(export_animations="NLA") == ["walk", "run", "anim002"]
    assert names(export_animations="ACTIONS") == ["walk", "anim001", "anim002"]


def test_anm_export_animations(blank_blend, tmp_path):
    bpy = blank_blend
    arm = _three_actions(bpy, tmp_path)
    out = tmp_path / "ped.anm"
    assert bpy.ops.export_anim.rw_anm(filepath=str(out)) == {"FINISHED"}
    assert sorted(p.name for p in tmp_path.glob("*.anm")) == ["ped.anm"]
    assert bpy.ops.export_anim.rw_anm(filepath=str(out), export_animations="ACTIONS") == {
        "FINISHED"
    }
    written = sorted(p.name for p in tmp_path.glob("ped_*.anm"))
    assert written == ["ped_anim001.anm", "ped_anim002.anm", "ped_walk.anm"]
    one = anm.read((tmp_path / "ped_walk.anm").read_bytes())
    assert one.keys["time"].max() == pytest.approx(anm.read(out.read_bytes()).keys["time"].max())
    arm.animation_data.nla_tracks[2].name = "run fast"
    (tmp_path / "x").mkdir()
    assert bpy.ops.export_anim.rw_anm(
        filepath=str(tmp_path / "x" / "ignored.anm"), export_animations="NLA", use_action_names=True
    ) == {"FINISHED"}
    assert sorted(p.name for p in (tmp_path / "x").glob("*.anm")) == [
        "anim001.anm",
        "run_fast.anm",
        "walk.anm",
    ]
    arm.animation_data.nla_tracks[2].name = "walk"
    with pytest.raises(RuntimeError, match="would both be written"):
        bpy.ops.export_anim.rw_anm(
            filepath=str(out), export_animations="NLA", use_action_names=True
        )


def test_animation_exports_take_a_collection_exporters_armature(blank_blend, tmp_path):
    bpy = blank_blend
    coll = bpy.data.collections.new("Peds")
    bpy.context.scene.collection.children.link(coll)
    layer = bpy.context.view_layer
    layer.active_layer_collection = layer.layer_collection.children["Peds"]
    arm = _three_actions(bpy, tmp_path)
    layer.active_layer_collection = layer.layer_collection
    other = bpy.data.objects.new("Other", bpy.data.armatures.new("Other"))
    bpy.context.scene.collection.objects.link(other)
    layer.objects.active = other
    out = tmp_path / "out.ifp"
    with pytest.raises(RuntimeError, match="no action"):
        bpy.ops.export_anim.gta_ifp(filepath=str(out), replace=False)
    assert bpy.ops.export_anim.gta_ifp(filepath=str(out), replace=False, collection="Peds") == {
        "FINISHED"
    }
    assert [a.name for a in ifp.read(out.read_bytes()).animations] == ["walk", "anim001", "anim002"]
    anm_out = tmp_path / "ped.anm"
    assert bpy.ops.export_anim.rw_anm(filepath=str(anm_out), collection="Peds") == {"FINISHED"}
    assert anm.read(anm_out.read_bytes()).keys is not None
    assert layer.objects.active == other and arm.name in coll.all_objects
    coll.objects.link(other)
    with pytest.raises(RuntimeError, match="2 armatures"):
        bpy.ops.export_anim.rw_anm(filepath=str(anm_out), collection="Peds")


def test_apply_modifiers_on_a_skinned_ped_keeps_its_skin(blank_blend, tmp_path):
    bpy = blank_blend
    source = samples.skinned_ped("SA")
    path = _write(tmp_path, "ped.dff", source)
    assert bpy.ops.import_scene.rw_dff(filepath=path) == {"FINISHED"}
    mesh = next(o for o in bpy.data.objects if o.type == "MESH")
    mesh.modifiers.new("Subdivision", "SUBSURF").levels = 1
    out = tmp_path / "out.dff"
    assert bpy.ops.export_scene.rw_dff(filepath=str(out)) == {"FINISHED"}
    geo = dff.read(out.read_bytes()).clump.geometries()[0]
    before = source.clump.geometries()[0]
    assert geo.num_vertices > before.num_vertices
    assert geo.skin is not None and geo.skin.weights.sum(axis=1).min() > 0.99
    np.testing.assert_allclose(geo.skin.matrices, before.skin.matrices, atol=1e-5)
    assert [m.type for m in mesh.modifiers] == ["ARMATURE", "SUBSURF"]
    assert mesh.modifiers["Armature"].show_viewport
