"""``operators/conventions.py`` and ``operators/common.py`` on the import side, in
real Blender: frame-rate options and the scene's timing, what an import selects
and makes active, Reuse Materials by Name, and the options popup of a dropped
file that lists what it holds."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from rigport.io_formats.urho3d import mdl
from rigport.io_formats.urho3d.model_import import import_model
from rigport.samples import urho3d as samples
from rigport.tests.blender.fake_layout import FakeContext, FakeOperator, FakeWindowManager

#: Key times (seconds) of the probe importer's action.
SECONDS = (0.0, 1.0, 2.0)
FOUND: dict = {}


@pytest.fixture(scope="module")
def timing_probe(rigport_registered):
    """An importer made of ``FrameRateOptions``: one action keyed at ``SECONDS``
    converted at ``frames_per_second`` (the file's own rate is 25), then
    ``apply_scene_timing``."""
    import bpy

    from rigport.operators.conventions import FrameRateOptions

    class IMPORT_ANIM_OT_rigport_timing_probe(bpy.types.Operator, FrameRateOptions):
        bl_idname = "import_anim.rigport_timing_probe"
        bl_label = "Timing Probe"

        def execute(self, context):
            fps = self.frames_per_second(context, file_fps=25.0)
            action = bpy.data.actions.new("Probe")
            action.use_fake_user = True
            obj = bpy.data.objects.new("Animated", None)
            context.scene.collection.objects.link(obj)
            obj.animation_data_create()
            obj.animation_data.action = action
            for t in SECONDS:
                obj.location.x = t
                obj.keyframe_insert("location", index=0, frame=t * fps)
            FOUND["fps"], FOUND["action"] = fps, action
            self.apply_scene_timing(context, [action], file_fps=25.0)
            return {"FINISHED"}

    bpy.utils.register_class(IMPORT_ANIM_OT_rigport_timing_probe)
    yield bpy.ops.import_anim.rigport_timing_probe
    bpy.utils.unregister_class(IMPORT_ANIM_OT_rigport_timing_probe)


def _frames(action) -> list[float]:
    from rigport.operators.blender import compat

    return [k.co[0] for c in compat.fcurves(action) for k in c.keyframe_points]


def _scene_timing(scene) -> tuple:
    r = scene.render
    return r.fps, r.fps_base, scene.frame_start, scene.frame_end


def test_scene_rate_keeps_the_scene(blank_blend, timing_probe):
    scene = blank_blend.context.scene
    scene.render.fps, scene.render.fps_base = 24, 1.0
    scene.frame_start, scene.frame_end = 5, 7
    assert timing_probe() == {"FINISHED"}
    assert FOUND["fps"] == 24.0
    assert _frames(FOUND["action"]) == [0.0, 24.0, 48.0]
    assert _scene_timing(scene) == (24, 1.0, 5, 7)  # set_scene_timing is off by default
    assert timing_probe(set_scene_timing=True) == {"FINISHED"}
    assert _scene_timing(scene) == (24, 1.0, 0, 48)  # the range only


def test_custom_rate_moves_the_keys_and_sets_the_scene(blank_blend, timing_probe):
    scene = blank_blend.context.scene
    scene.render.fps, scene.render.fps_base = 24, 1.0
    assert timing_probe(frame_rate="CUSTOM", fps=29.97, set_scene_timing=True) == {"FINISHED"}
    assert np.allclose(_frames(FOUND["action"]), [0.0, 29.97, 59.94], atol=1e-4)
    assert scene.render.fps == 30
    assert scene.render.fps_base == pytest.approx(1.001, abs=1e-6)  # 30 / 1.001, as presets
    assert (scene.frame_start, scene.frame_end) == (0, 60)
    assert timing_probe(frame_rate="CUSTOM", fps=12.5, set_scene_timing=True) == {"FINISHED"}
    assert scene.render.fps / scene.render.fps_base == pytest.approx(12.5, abs=1e-5)
    assert timing_probe(frame_rate="CUSTOM", fps=60, set_scene_timing=True) == {"FINISHED"}
    assert (scene.render.fps, scene.render.fps_base) == (60, 1.0)
    assert (scene.frame_start, scene.frame_end) == (0, 120)


def test_fps_pairs():
    from rigport.operators.conventions import _fps_pair

    assert _fps_pair(29.97) == (30, 1.001)
    assert _fps_pair(30000 / 1001) == (30, 1.001)
    assert _fps_pair(23.976) == (24, 1.001)
    assert _fps_pair(59.94) == (60, 1.001)
    assert _fps_pair(25.0) == (25, 1.0)
    assert _fps_pair(0.5) == (1, 2.0)
    whole, base = _fps_pair(14.2)
    assert whole / base == pytest.approx(14.2)


def test_file_rate(blank_blend, timing_probe):
    """A format whose ``frame_rate`` has "As in File" (``FILE``) passes the file's
    rate: the keys and the scene follow it."""
    import bpy

    from rigport.operators.conventions import FRAME_RATE_ITEMS, FrameRateOptions

    class Options:
        frame_rate, fps, set_scene_timing = "FILE", 30.0, True

    assert FrameRateOptions.frames_per_second(Options(), bpy.context, 25.0) == 25.0
    scene = blank_blend.context.scene
    scene.render.fps, scene.render.fps_base = 24, 1.0
    assert FrameRateOptions.frames_per_second(Options(), bpy.context, None) == 24.0
    FrameRateOptions.apply_scene_timing(Options(), bpy.context, [], 25.0)
    assert scene.render.fps == 24  # no action: nothing to time
    assert [i[0] for i in FRAME_RATE_ITEMS] == ["SCENE", "CUSTOM"]


# -- selection after an import --------------------------------------------------------------


def test_select_imported(blank_blend):
    bpy = blank_blend
    from rigport.operators.conventions import select_imported

    scene, layer = bpy.context.scene, bpy.context.view_layer
    old = bpy.data.objects.new("Old", bpy.data.meshes.new("Old"))
    rig = bpy.data.objects.new("Rig", bpy.data.armatures.new("Rig"))
    skin = bpy.data.objects.new("Skin", bpy.data.meshes.new("Skin"))
    lod1 = bpy.data.objects.new("Skin_LOD1", bpy.data.meshes.new("Skin_LOD1"))
    for o in (old, rig, skin, lod1):
        scene.collection.objects.link(o)
    skin.parent = lod1.parent = rig
    lod1.hide_set(True)
    old.select_set(True)
    layer.objects.active = old
    select_imported(bpy.context, [skin, lod1, rig])
    assert [o.name for o in layer.objects if o.select_get()] == ["Rig", "Skin"]
    assert layer.objects.active == rig
    # no armature: a visible root, not the hidden LOD level made first
    lod0 = bpy.data.objects.new("Box", bpy.data.meshes.new("Box"))
    box1 = bpy.data.objects.new("Box_LOD1", bpy.data.meshes.new("Box_LOD1"))
    for o in (lod0, box1):
        scene.collection.objects.link(o)
    box1.hide_set(True)
    select_imported(bpy.context, [box1, lod0])
    assert [o.name for o in layer.objects if o.select_get()] == ["Box"]
    assert layer.objects.active == lod0
    # objects just linked into a new collection (not yet synced into the view layer)
    coll = bpy.data.collections.new("Imported")
    scene.collection.children.link(coll)
    fresh = bpy.data.objects.new("Fresh", bpy.data.meshes.new("Fresh"))
    coll.objects.link(fresh)
    select_imported(bpy.context, [fresh])
    assert [o.name for o in layer.objects if o.select_get()] == ["Fresh"]
    assert layer.objects.active == fresh
    # objects not in the view layer: nothing changes
    ghost = bpy.data.objects.new("Ghost", None)
    select_imported(bpy.context, [ghost])
    assert layer.objects.active == fresh


def test_an_import_selects_what_it_made(blank_blend, tmp_path):
    """Through a real importer (``ImportFiles.import_files``): every LOD is made,
    the hidden levels are not selected, the armature is active."""
    bpy = blank_blend
    path = tmp_path / "Tentacle.mdl"
    path.write_bytes(mdl.write(samples.skinned_model(lods=3)))
    old = bpy.data.objects.new("Old", None)
    bpy.context.scene.collection.objects.link(old)
    old.select_set(True)
    assert bpy.ops.import_scene.urho3d_mdl(filepath=str(path), lods="ALL") == {"FINISHED"}
    layer = bpy.context.view_layer
    meshes = [o for o in layer.objects if o.type == "MESH"]
    assert len(meshes) == 3
    selected = {o.name for o in layer.objects if o.select_get()}
    visible = {o.name for o in layer.objects if o.visible_get() and o.name != "Old"}
    assert selected == visible and len(selected) == 2  # the armature and LOD 0
    assert layer.objects.active.type == "ARMATURE"


# -- Reuse Materials by Name -------------------------------------------------------------------


@pytest.mark.parametrize("reuse", [False, True])
def test_reuse_materials_by_name(blank_blend, reuse):
    """A model read by the Urho3D reader and built by ``build_scene``: a material
    of the blend file with a surface's name is used only with the option on."""
    bpy = blank_blend
    from rigport.operators.blender.build import build_scene

    model = mdl.read(mdl.write(samples.skinned_model(geometries=2)))
    scene = import_model(model, "Tentacle")
    twin = copy.deepcopy(scene.meshes[0])  # a second mesh with the same surfaces
    twin.name = "Twin"
    scene.meshes.append(twin)
    names = scene.meshes[0].materials
    assert len(names) == 2
    existing = bpy.data.materials.new(names[0])
    existing["artist"] = "kept"
    before = len(bpy.data.materials)
    built = build_scene(bpy.context, scene, reuse_materials=reuse)
    lod0, lod1 = [o for o in built.objects if o.type == "MESH"]
    mats = [s.material for s in lod0.material_slots]
    # one file's surfaces of one name are one material, in every mesh
    assert [s.material for s in lod1.material_slots] == mats
    assert (mats[0] == existing) is reuse
    assert mats[1].name == names[1]
    if not reuse:
        assert mats[0].name != names[0] and mats[0].name.startswith(names[0])
        assert "artist" not in mats[0]
    assert len(bpy.data.materials) == before + (1 if reuse else 2)
    built.discard()
    assert existing.name == names[0] and existing["artist"] == "kept"  # never removed
    assert len(bpy.data.materials) == before


# -- a dropped file that lists what it holds -----------------------------------------------------


def test_a_dropped_package_is_listed_for_the_popup(rigport_registered, corpus_dir):
    """``FileBrowserList.invoke`` for a dropped .pak: the list holds the package's
    files when the options popup opens."""
    import bpy

    from rigport.operators.urho3d.package import package_rows

    path = str(corpus_dir / "rbfx" / "PackageTest.pak")
    cls = bpy.types.IMPORT_SCENE_OT_urho3d_package
    wm = FakeWindowManager()
    op = FakeOperator(cls, list_items=0, filepath=path)
    assert cls.invoke(op, FakeContext(window_manager=wm), None) == {"RUNNING_MODAL"}
    assert wm.names() == ["invoke_props_dialog"]
    assert wm.calls[0][2]["title"] == path
    rows = package_rows(path)
    assert rows and [i.name for i in op.package_files] == [r["name"] for r in rows]
    assert op.listed == path
