"""MRTK recordings edited in Blender, or authored there: what the export makes of them."""

from __future__ import annotations

import numpy as np
import pytest

from rigport.io_formats.mrtk import recording as R
from rigport.io_formats.mrtk.convert import FULL_LAYOUT_WARNING
from rigport.samples import mrtk as samples


def _import(bpy, tmp_path, rec: R.Recording, name: str = "take", **kw) -> bytes:
    bpy.context.scene.render.fps = 60
    bpy.context.scene.render.fps_base = 1.0
    data = R.write(rec)
    src = tmp_path / f"{name}.bin"
    src.write_bytes(data)
    assert bpy.ops.import_anim.mrtk_input(filepath=str(src), **kw) == {"FINISHED"}
    return data


def _export(bpy, tmp_path, **kw) -> R.Recording:
    out = tmp_path / "out.bin"
    assert bpy.ops.export_anim.mrtk_input(filepath=str(out), **kw) == {"FINISHED"}
    return R.read(out.read_bytes())


def _objects(bpy) -> dict:
    return {o["_mrtk_role"]: o for o in bpy.data.objects if "_mrtk_role" in o}


def _fcurve(obj, path: str, index: int):
    from rigport.operators.blender import compat

    return next(
        fc
        for fc in compat.fcurves(obj.animation_data.action)
        if fc.data_path == path and fc.array_index == index
    )


def test_overlong_weights_warn_and_still_round_trip(blank_blend, tmp_path) -> None:
    bpy = blank_blend
    rec = samples.sample_recording(hands=False, gaze=False, keys=6)
    k = rec.camera[0].keys
    k["weighted_mode"] = 3
    k["in_weight"] = k["out_weight"] = 0.8
    data = R.write(rec)
    src = tmp_path / "heavy.bin"
    src.write_bytes(data)
    from rigport.operators.mrtk.importer import RecordingImportOptions, import_file

    result = import_file(bpy.context, str(src), RecordingImportOptions())
    built, warnings = result.recording, result.warnings
    assert any("weights adding up to more than 1" in w for w in warnings)
    out = tmp_path / "out.bin"
    assert bpy.ops.export_anim.mrtk_input(filepath=str(out)) == {"FINISHED"}
    assert out.read_bytes() == data
    built.discard()
    assert not bpy.data.objects and not bpy.data.cameras


def test_cycles_modifier_edits_become_wrap_modes(blank_blend, tmp_path) -> None:
    bpy = blank_blend
    rec = samples.sample_recording(hands=False, gaze=False, keys=6)
    for c in rec.camera:
        c.pre_wrap, c.post_wrap = R.WRAP_ONCE, R.WRAP_LOOP
    _import(bpy, tmp_path, rec)
    cam = _objects(bpy)["camera"]
    fc = _fcurve(cam, "location", 0)  # Unity position x
    mod = next(m for m in fc.modifiers if m.type == "CYCLES")
    assert (mod.mode_before, mod.mode_after) == ("NONE", "REPEAT")
    mod.mode_before, mod.mode_after = "MIRROR", "NONE"
    back = _export(bpy, tmp_path)
    # PingPong from the edit; a Loop whose modifier went away clamps (Unity's ClampForever)
    assert (back.camera[0].pre_wrap, back.camera[0].post_wrap) == (4, R.WRAP_CLAMP_FOREVER)
    assert np.array_equal(back.camera[0].keys, rec.camera[0].keys)
    assert back.camera[1] == rec.camera[1]  # Once and Loop kept where nothing changed


def test_simple_recording_imports_as_linear_keys(blank_blend, tmp_path) -> None:
    bpy = blank_blend
    rec = samples.sample_recording((1, 1), R.SIMPLE, keys=7)
    _import(bpy, tmp_path, rec)
    fc = _fcurve(_objects(bpy)["joint.L.1"], "rotation_quaternion", 0)
    assert {k.interpolation for k in fc.keyframe_points} == {"LINEAR"}
    assert len(fc.keyframe_points) == 7


def test_frame_rate_option_keeps_the_bytes(blank_blend, tmp_path) -> None:
    bpy = blank_blend
    rec = samples.sample_recording(keys=6)
    data = _import(bpy, tmp_path, rec, frame_rate="CUSTOM", fps=24.0)
    fc = _fcurve(_objects(bpy)["camera"], "location", 0)
    t = rec.camera[0].keys["time"]
    assert np.allclose([k.co.x for k in fc.keyframe_points], t * 24.0, rtol=1e-6)
    out = tmp_path / "out.bin"
    assert bpy.ops.export_anim.mrtk_input(filepath=str(out)) == {"FINISHED"}
    assert out.read_bytes() == data


def test_markers_follow_the_timeline(blank_blend, tmp_path) -> None:
    bpy = blank_blend
    rec = samples.sample_recording(keys=4, markers=3)
    _import(bpy, tmp_path, rec)
    markers = bpy.context.scene.timeline_markers
    markers[1].frame = 200
    markers.remove(markers[2])
    back = _export(bpy, tmp_path)
    assert [m.name for m in back.markers] == [m.name for m in rec.markers[:2]]
    assert back.markers[0] == rec.markers[0]  # untouched: the exact time
    assert np.isclose(back.markers[1].time, 200 / 60)
    back = _export(bpy, tmp_path, markers="NONE")
    assert back.markers == []


def test_objects_authored_in_blender_export_with_their_mapping(blank_blend, tmp_path) -> None:
    """No import: an animated empty picked as the camera, written as MRTK reads it (1.1)."""
    bpy = blank_blend
    bpy.context.scene.render.fps = 30
    cam = bpy.data.objects.new("Rig Camera", None)
    bpy.context.scene.collection.objects.link(cam)
    cam.rotation_mode = "QUATERNION"
    for frame, y in ((1, 0.0), (31, 2.0), (61, 0.5)):
        cam.location = (0.0, y, 1.6)
        cam.keyframe_insert("location", frame=frame)
        cam.keyframe_insert("rotation_quaternion", frame=frame)
    back = _export(bpy, tmp_path, camera_object="Rig Camera", version="V11_SIMPLE")
    assert back.version == (1, 1) and back.layout == R.SIMPLE
    assert back.camera is not None and back.hands is None and back.gaze is None
    z = back.camera[2].keys  # Unity z = Blender y
    assert z["time"][0] == pytest.approx(1 / 30) and z["time"][-1] == pytest.approx(61 / 30)
    assert len(z) > 3  # Blender's auto-clamped Bezier keys are sampled
    got = np.interp([31 / 30], z["time"], z["value"])
    assert got[0] == pytest.approx(2.0, abs=1e-4)
    assert np.allclose(back.camera[1].keys["value"], 1.6)  # Unity y = Blender z
    assert np.allclose(back.camera[6].keys["value"], 1.0)  # w
    full = _export(bpy, tmp_path, camera_object="Rig Camera", version="V11_FULL")
    k = full.camera[2].keys
    assert len(k) == 3 and np.allclose(k["value"], [0.0, 2.0, 0.5])
    assert np.allclose(k["out_tangent"][1], 0.0, atol=1e-6)  # auto-clamped at an extreme


def test_export_without_a_recording_is_an_error(blank_blend, tmp_path) -> None:
    bpy = blank_blend
    with pytest.raises(RuntimeError, match="nothing to export"):
        bpy.ops.export_anim.mrtk_input(filepath=str(tmp_path / "none.bin"))


def test_fcurves_without_a_place_are_named_in_a_warning(blank_blend, tmp_path) -> None:
    bpy = blank_blend
    rec = samples.sample_recording(hands=False, gaze=False, keys=4)
    data = _import(bpy, tmp_path, rec)
    cam = _objects(bpy)["camera"]
    cam.keyframe_insert("scale", index=2, frame=3)
    from rigport.operators.mrtk.build import recording_meta
    from rigport.operators.mrtk.exporter import RecordingExportOptions, write_recording
    from rigport.operators.mrtk.extract import recording_collections, roles_in

    coll = recording_collections(bpy.context.scene)[0]
    out = tmp_path / "out.bin"
    warnings = write_recording(
        bpy.context, str(out), roles_in(coll), recording_meta(coll), RecordingExportOptions()
    ).warnings
    assert warnings == [
        "1 F-curve with no place in a recording, not written: camera scale[2]",
        FULL_LAYOUT_WARNING,
    ]
    assert out.read_bytes() == data


def test_saved_blend_file_keeps_the_exact_curves(blank_blend, tmp_path) -> None:
    """The kept file curves (bytes properties) survive saving and reopening the .blend."""
    bpy = blank_blend
    rec = samples.sample_recording((1, 1), R.FULL, keys=5)
    data = _import(bpy, tmp_path, rec)
    blend = tmp_path / "edit.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(blend))
    bpy.ops.wm.read_factory_settings(use_empty=True)
    bpy.ops.wm.open_mainfile(filepath=str(blend))
    cam = _objects(bpy)["camera"]
    bpy.context.view_layer.objects.active = cam
    out = tmp_path / "out.bin"
    assert bpy.ops.export_anim.mrtk_input(filepath=str(out)) == {"FINISHED"}
    assert out.read_bytes() == data


def test_rebuilt_keys_keep_wrap_modes_and_a_last_infinite_tangent(blank_blend, tmp_path) -> None:
    """Without the kept file keys (every key rebuilt from Blender's), the wrap modes Once
    and Default stay, and so does an infinite out tangent on a curve's last key."""
    bpy = blank_blend
    rec = samples.sample_recording((1, 0), R.FULL, keys=8)
    curves = [c for _, c in rec.float_curves() if len(c.keys)]
    for i, c in enumerate(curves):
        c.pre_wrap, c.post_wrap = R.WRAP_MODES[i % 5], R.WRAP_MODES[(i + 2) % 5]
        if i % 3 == 0:
            c.keys["out_tangent"][-1] = np.inf
    _import(bpy, tmp_path, rec)
    for obj in _objects(bpy).values():
        if obj.animation_data and obj.animation_data.action:
            del obj.animation_data.action["_mrtk_curves"]
    back = _export(bpy, tmp_path)
    wraps = {R.WRAP_ONCE, R.WRAP_DEFAULT}
    assert wraps <= {c.pre_wrap for c in curves}
    for (name, a), (_, b) in zip(rec.float_curves(), back.float_curves(), strict=True):
        assert (a.pre_wrap, a.post_wrap) == (b.pre_wrap, b.post_wrap), name
        if len(a.keys):
            last_a, last_b = a.keys["out_tangent"][-1], b.keys["out_tangent"][-1]
            assert np.isinf(last_a) == np.isinf(last_b), name
            if np.isinf(last_a):
                assert last_b == np.inf and not b.keys["weighted_mode"][-1] & 2, name


def test_eased_keys_are_written_from_their_handles(blank_blend, tmp_path) -> None:
    """An easing (which MRTK cannot hold) counts once in a warning and becomes a Bezier
    key; every time and value stays the file's, every other curve byte for byte."""
    from rigport.io_formats.mrtk import keys as K
    from rigport.operators.mrtk.extract import extract_curves

    bpy = blank_blend
    rec = samples.recorder_recording(minutes=0.05)
    _import(bpy, tmp_path, rec)
    cam = _objects(bpy)["camera"]
    _fcurve(cam, "location", 0).keyframe_points[10].interpolation = "BOUNCE"
    curves, warnings = extract_curves({"camera": cam})
    assert warnings == [
        "1 key with an easing interpolation MRTK cannot hold: written from the Bezier handles"
    ]
    codes = curves[("camera", "location", 0)].interpolation
    assert codes.dtype == np.uint8 and codes[10] == K.BEZIER
    assert (np.delete(codes, 10) == K.LINEAR).all()
    back = _export(bpy, tmp_path)
    a, b = rec.camera[0].keys, back.camera[0].keys
    assert np.array_equal(a["time"], b["time"]) and np.array_equal(a["value"], b["value"])
    assert a.tobytes() != b.tobytes()
    for other in range(1, 7):
        assert rec.camera[other] == back.camera[other]
