"""MRTK operators follow Blender's conventions (issue 14, items 1-3): options drawn
once with tooltips, axes and scale on a recording root ("As Imported" gives the
file back byte for byte), frame rate and scene timing, Collection Exporter scope,
and Active/All Recordings export."""

from __future__ import annotations

import numpy as np
import pytest

from rigport.io_formats.mrtk import recording as R
from rigport.samples import mrtk as samples
from rigport.tests.operator_draw import check_draw

FPS = 60


def _scene(bpy, fps: int = FPS) -> None:
    bpy.context.scene.render.fps = fps
    bpy.context.scene.render.fps_base = 1.0


def _write(tmp_path, name: str, rec: R.Recording) -> tuple:
    data = R.write(rec)
    path = tmp_path / f"{name}.bin"
    path.write_bytes(data)
    return path, data


def _import(bpy, path, **kw) -> None:
    assert bpy.ops.import_anim.mrtk_input(filepath=str(path), **kw) == {"FINISHED"}


def _export(bpy, path, **kw) -> None:
    assert bpy.ops.export_anim.mrtk_input(filepath=str(path), **kw) == {"FINISHED"}


def _root(bpy, name: str):
    return bpy.data.collections[name].objects[name]


def _camera(bpy, name: str):
    return next(
        o for o in bpy.data.collections[name].all_objects if o.get("_mrtk_role") == "camera"
    )


def _keys(obj) -> dict:
    from rigport.operators.blender import compat

    return {
        (fc.data_path, fc.array_index): [tuple(k.co) for k in fc.keyframe_points]
        for fc in compat.fcurves(obj.animation_data.action)
    }


def _linear_camera(seed: int = 3) -> R.Recording:
    """Camera only, 1.1 MRTK layout (straight lines), its curves' keys at their own
    times, clamped: what a turn of the axes can still write exactly."""
    rec = samples.sample_recording((1, 1), R.SIMPLE, hands=False, gaze=False, keys=9, seed=seed)
    for c in rec.camera:
        c.pre_wrap = c.post_wrap = R.WRAP_CLAMP_FOREVER
    return rec


def test_draw_every_option_once_with_a_tooltip(blank_blend) -> None:
    from rigport.operators.mrtk.operators import (
        EXPORT_ANIM_OT_mrtk_input,
        IMPORT_ANIM_OT_mrtk_input,
    )

    drawn = check_draw(blank_blend.context, IMPORT_ANIM_OT_mrtk_input)
    assert {"global_scale", "axis_forward", "frame_rate", "set_scene_timing"} <= set(drawn)
    drawn = check_draw(blank_blend.context, EXPORT_ANIM_OT_mrtk_input)
    assert {"use_selection", "use_transform_as_imported", "export_animations"} <= set(drawn)
    # a Collection Exporter's collection decides what is exported: no Include panel
    include = ("use_selection", "use_visible", "use_active_collection")
    drawn = check_draw(blank_blend.context, EXPORT_ANIM_OT_mrtk_input, include, collection="X")
    assert "use_selection" not in drawn


def test_import_selects_the_root_and_makes_it_active(blank_blend, tmp_path) -> None:
    bpy = blank_blend
    _scene(bpy)
    path, _ = _write(tmp_path, "take", samples.sample_recording(keys=4))
    _import(bpy, path)
    root = _root(bpy, "take")
    assert bpy.context.view_layer.objects.active == root
    assert root.select_get() and _camera(bpy, "take").select_get()
    assert _camera(bpy, "take").parent == root


@pytest.mark.parametrize(
    "options",
    [{"global_scale": 0.01}, {"axis_forward": "X", "axis_up": "Z"}],
    ids=["scale", "axes"],
)
def test_import_transform_goes_on_the_root_and_as_imported_gives_the_file_back(
    blank_blend, tmp_path, options
) -> None:
    from mathutils import Matrix

    bpy = blank_blend
    _scene(bpy)
    rec = samples.sample_recording((1, 1), R.FULL, keys=6)
    path, data = _write(tmp_path, "take", rec)
    _import(bpy, path)
    plain = _keys(_camera(bpy, "take"))
    path2, _ = _write(tmp_path, "moved", rec)
    _import(bpy, path2, **options)
    root = _root(bpy, "moved")
    if "global_scale" in options:
        assert np.allclose(np.array(root.matrix_world), np.diag([0.01, 0.01, 0.01, 1.0]))
    else:
        assert not np.allclose(np.array(root.matrix_world), np.eye(4))
        assert np.isclose(abs(np.linalg.det(np.array(root.matrix_world))), 1.0)
    assert root.matrix_world != Matrix.Identity(4)
    assert _keys(_camera(bpy, "moved")) == plain  # the curves stay the file's
    for obj in bpy.data.objects:
        obj.select_set(obj.name == "Camera.001")
    bpy.context.view_layer.objects.active = _camera(bpy, "moved")
    out = tmp_path / "out.bin"
    _export(bpy, out)
    assert out.read_bytes() == data


def test_explicit_scale_scales_the_written_positions(blank_blend, tmp_path) -> None:
    bpy = blank_blend
    _scene(bpy)
    rec = samples.sample_recording((1, 1), R.FULL, hands=False, gaze=False, keys=6)
    path, data = _write(tmp_path, "take", rec)
    _import(bpy, path)
    out = tmp_path / "scaled.bin"
    _export(bpy, out, use_transform_as_imported=False, global_scale=2.0)
    back = R.read(out.read_bytes())
    for i in range(3):  # positions: values and tangents twice as large, same times
        a, b = rec.camera[i].keys, back.camera[i].keys
        assert np.allclose(a["time"], b["time"], rtol=0, atol=4.8e-7)  # a float32 step
        assert np.allclose(b["value"], 2.0 * a["value"], rtol=1e-6, atol=1e-6)
        finite = np.isfinite(a["in_tangent"])
        assert np.allclose(b["in_tangent"][finite], 2 * a["in_tangent"][finite], rtol=1e-4)
    for i in range(3, 7):  # rotations: unchanged
        assert np.allclose(back.camera[i].keys["value"], rec.camera[i].keys["value"], atol=1e-7)
    out2 = tmp_path / "same.bin"
    _export(bpy, out2, use_transform_as_imported=False)  # options at their defaults
    assert out2.read_bytes() == data


def test_explicit_axes_write_what_the_same_axes_import_back(blank_blend, tmp_path) -> None:
    """A quarter turn mixes rotation curves keyed at different times: straight lines
    are mixed at the union of their times, so the turn is exact."""
    bpy = blank_blend
    _scene(bpy)
    path, _ = _write(tmp_path, "take", _linear_camera())
    _import(bpy, path)
    out = tmp_path / "turned.bin"
    axes = {"axis_forward": "X", "axis_up": "Y"}
    _export(bpy, out, use_transform_as_imported=False, **axes)
    _import(bpy, out, **axes)
    a, b = _camera(bpy, "take"), _camera(bpy, "turned")
    assert not np.allclose(np.array(_root(bpy, "turned").matrix_world), np.eye(4))
    for frame in (0, 17, 61, 130, 239):
        bpy.context.scene.frame_set(frame)
        assert np.allclose(np.array(a.matrix_world), np.array(b.matrix_world), atol=1e-5), frame


def test_a_turn_curves_cannot_hold_is_refused(blank_blend, tmp_path) -> None:
    bpy = blank_blend
    _scene(bpy)
    path, _ = _write(tmp_path, "take", samples.sample_recording((1, 1), R.FULL, keys=6))
    _import(bpy, path)
    _root(bpy, "take").rotation_euler = (0.0, 0.0, 0.5)
    out = tmp_path / "bad.bin"
    with pytest.raises(RuntimeError, match="bad.bin.*mixes curves whose keys are at different"):
        bpy.ops.export_anim.mrtk_input(filepath=str(out))
    assert not out.exists()


def test_moved_root_is_written_into_the_curves(blank_blend, tmp_path) -> None:
    bpy = blank_blend
    _scene(bpy)
    rec = samples.sample_recording((1, 1), R.FULL, hands=False, gaze=False, keys=6)
    path, _ = _write(tmp_path, "take", rec)
    _import(bpy, path)
    _root(bpy, "take").location = (0.0, 0.0, 1.5)  # Blender's Z is Unity's Y
    out = tmp_path / "lifted.bin"
    _export(bpy, out)
    back = R.read(out.read_bytes())
    assert np.allclose(back.camera[1].keys["value"], rec.camera[1].keys["value"] + 1.5, atol=1e-6)
    assert np.array_equal(back.camera[0].keys, rec.camera[0].keys)


def test_frame_rate_and_scene_timing(blank_blend, tmp_path) -> None:
    bpy = blank_blend
    _scene(bpy, 30)
    rec = samples.sample_recording(keys=6, duration=4.0)
    path, data = _write(tmp_path, "take", rec)
    _import(bpy, path, frame_rate="CUSTOM", fps=24.0)
    scene = bpy.context.scene
    assert scene.render.fps == 24 and scene.render.fps_base == 1.0
    t = rec.camera[0].keys["time"]
    frames = [k[0] for k in _keys(_camera(bpy, "take"))[("location", 0)]]
    assert np.allclose(frames, t * 24.0, rtol=1e-6)
    times = np.concatenate([c.keys["time"] for _, c in rec.float_curves() if len(c.keys)])
    assert scene.frame_start == int(np.floor(times.min() * 24.0))
    assert scene.frame_end == int(np.ceil(times.max() * 24.0))
    out = tmp_path / "out.bin"
    _export(bpy, out)
    assert out.read_bytes() == data
    # the scene's own rate, timing left alone
    bpy.ops.wm.read_factory_settings(use_empty=True)
    _scene(bpy, 30)
    bpy.context.scene.frame_end = 77
    _import(bpy, path, set_scene_timing=False)
    assert bpy.context.scene.render.fps == 30 and bpy.context.scene.frame_end == 77


def _three_recordings(bpy, tmp_path) -> dict:
    _scene(bpy)
    out = {}
    for i, name in enumerate(("walk", "wave", "look")):
        path, data = _write(tmp_path, name, samples.sample_recording(keys=4 + i, seed=i))
        _import(bpy, path)
        out[name] = data
    return out


def test_collection_exporter_writes_only_its_collection(blank_blend, tmp_path) -> None:
    bpy = blank_blend
    sources = _three_recordings(bpy, tmp_path)
    bpy.context.view_layer.objects.active = _camera(bpy, "walk")
    out = tmp_path / "coll.bin"
    _export(bpy, out, collection="wave")
    assert out.read_bytes() == sources["wave"]
    _export(bpy, out)  # without a collection: the active object's recording
    assert out.read_bytes() == sources["walk"]
    holder = bpy.data.collections.new("Holder")
    bpy.context.scene.collection.children.link(holder)
    with pytest.raises(RuntimeError, match="nothing to export"):
        bpy.ops.export_anim.mrtk_input(filepath=str(out), collection="Holder")


def test_all_recordings_one_file_each(blank_blend, tmp_path) -> None:
    bpy = blank_blend
    sources = _three_recordings(bpy, tmp_path)
    folder = tmp_path / "out"
    folder.mkdir()
    _export(bpy, folder / "take.bin", export_animations="ACTIONS")
    assert sorted(p.name for p in folder.iterdir()) == [
        "take_look.bin",
        "take_walk.bin",
        "take_wave.bin",
    ]
    for name, data in sources.items():
        assert (folder / f"take_{name}.bin").read_bytes() == data
    named = tmp_path / "named"
    named.mkdir()
    _export(bpy, named / "ignored.bin", export_animations="ACTIONS", use_action_names=True)
    assert sorted(p.name for p in named.iterdir()) == ["look.bin", "walk.bin", "wave.bin"]
    # Selected Only: the recordings with a selected object
    for obj in bpy.data.objects:
        obj.select_set(False)
    _camera(bpy, "look").select_set(True)
    _root(bpy, "walk").select_set(True)
    some = tmp_path / "some"
    some.mkdir()
    _export(bpy, some / "s.bin", export_animations="ACTIONS", use_selection=True)
    assert sorted(p.name for p in some.iterdir()) == ["s_look.bin", "s_walk.bin"]


def test_several_recordings_and_no_active_one_is_refused(blank_blend, tmp_path) -> None:
    bpy = blank_blend
    _three_recordings(bpy, tmp_path)
    bpy.context.view_layer.objects.active = None
    with pytest.raises(RuntimeError, match="3 recordings can be exported"):
        bpy.ops.export_anim.mrtk_input(filepath=str(tmp_path / "x.bin"))
