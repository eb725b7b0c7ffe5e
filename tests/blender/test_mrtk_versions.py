"""MRTK round trips that do not depend on the Blender version.

Blender 4.5 and later move a Bezier handle that lies closer than 0.001 frame
to its key out to that distance whenever a curve is recalculated (4.2 leaves
it). MRTK's recorder writes linear keys (weighted mode Both, tangents and
weights 0): zero-length handles. These tests run on every supported version
and expect the same bytes back on each.
"""

from __future__ import annotations

import numpy as np
import pytest

from rigport.io_formats.mrtk import recording as R
from rigport.samples import mrtk as samples

FPS = 60


def _import(bpy, path) -> None:
    bpy.context.scene.render.fps = FPS
    bpy.context.scene.render.fps_base = 1.0
    assert bpy.ops.import_anim.mrtk_input(filepath=str(path)) == {"FINISHED"}


def _export(bpy, path, **options) -> None:
    assert bpy.ops.export_anim.mrtk_input(filepath=str(path), **options) == {"FINISHED"}


def _all_fcurves(bpy) -> list:
    from rigport.operators.blender import compat

    return [
        fc
        for o in bpy.data.objects
        if o.animation_data and o.animation_data.action
        for fc in compat.fcurves(o.animation_data.action)
    ]


def test_compat_knows_what_this_version_does_to_short_handles(blank_blend) -> None:
    """compat.HANDLE_MIN_X is what this Blender does on recalculation: measured here."""
    bpy = blank_blend
    from rigport.operators.blender import compat
    from rigport.operators.mrtk.build import fill_fcurve

    action = bpy.data.actions.new("probe")
    fc = compat.new_fcurve(action, "location", 0, "probe")
    x = np.array([0.0, 1.0, 2.0, 36000.0], np.float32)
    co = np.stack([x, np.float32([0.5, -1.0, 2.0, 0.25])], axis=1)
    interp = np.full(4, 2, np.uint8)
    fill_fcurve(fc, co, co.copy(), co.copy(), interp)
    got = np.empty(8, np.float32)
    fc.keyframe_points.foreach_get("handle_left", got)
    assert np.array_equal(got.reshape(4, 2), co)  # the import keeps what it set
    fc.update()  # what any edit of the curve does
    fc.keyframe_points.foreach_get("handle_left", got)
    left = got.reshape(4, 2)
    assert np.array_equal(left[:, 1], co[:, 1])  # y is kept
    moved = co[:, 0].astype(np.float64) - left[:, 0]
    if compat.HANDLE_MIN_X:
        step = np.spacing(np.maximum(np.abs(x), np.abs(left[:, 0]))).astype(np.float64)
        assert np.all(moved >= compat.HANDLE_MIN_X - 2 * step)
        assert np.all(moved <= np.maximum(compat.HANDLE_MIN_X, step) + 2 * step)
    else:
        assert not moved.any()


@pytest.mark.parametrize("recalculate", [False, True], ids=["as imported", "recalculated"])
def test_recorder_keys_come_back_byte_for_byte(blank_blend, tmp_path, recalculate) -> None:
    """Also after every curve was recalculated (what an edit in the Graph Editor does)."""
    bpy = blank_blend
    data = R.write(samples.recorder_recording(minutes=0.05))
    src = tmp_path / "rec.bin"
    src.write_bytes(data)
    _import(bpy, src)
    if recalculate:
        for fc in _all_fcurves(bpy):
            fc.update()
    out = tmp_path / "out.bin"
    _export(bpy, out)
    assert out.read_bytes() == data


def test_an_edit_rebuilds_only_its_neighbourhood(blank_blend, tmp_path) -> None:
    """Moving one key rewrites it and its neighbours; every other key keeps its zero weights,
    on every version."""
    bpy = blank_blend
    rec = samples.recorder_recording(minutes=0.05)
    src = tmp_path / "rec.bin"
    src.write_bytes(R.write(rec))
    _import(bpy, src)
    cam = next(o for o in bpy.data.objects if o.get("_mrtk_role") == "camera")
    from rigport.operators.blender import compat

    fc = next(
        f
        for f in compat.fcurves(cam.animation_data.action)
        if f.data_path == "location" and f.array_index == 0
    )
    kp = fc.keyframe_points[40]
    for point in (kp.co, kp.handle_left, kp.handle_right):
        point.y += 0.125
    fc.update()
    out = tmp_path / "out.bin"
    _export(bpy, out)
    back = R.read(out.read_bytes())
    a, b = rec.camera[0].keys, back.camera[0].keys
    same = np.ones(len(a), bool)
    same[39:42] = False
    assert a[same].tobytes() == b[same].tobytes()
    assert b["value"][40] == np.float32(a["value"][40] + 0.125)
    for other in range(1, 7):
        assert rec.camera[other] == back.camera[other]
    assert rec.hands == back.hands


def test_ten_minute_recorder_recording_comes_back_byte_for_byte(blank_blend, tmp_path) -> None:
    """Issue 12: 10 minutes at 60 Hz, 14 million linear recorder keys, on every version."""
    bpy = blank_blend
    rec = samples.recorder_recording(minutes=10.0, rate=60.0)
    assert sum(len(c.keys) for _, c in rec.float_curves()) == 385 * 36001
    data = R.write(rec)
    del rec
    src = tmp_path / "long.bin"
    src.write_bytes(data)
    _import(bpy, src)
    out = tmp_path / "out.bin"
    _export(bpy, out)
    assert out.read_bytes() == data
