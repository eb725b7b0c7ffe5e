"""extract.py's shortcuts give what Blender's own data gives (issue 16's leaner
export: the triangulation of an all-triangle mesh, a bone's shared key frames,
keys taken as they are)."""

from __future__ import annotations

import numpy as np


def _blender_triangles(me):
    me.calc_loop_triangles()
    nt = len(me.loop_triangles)
    loops = np.empty(nt * 3, np.int32)
    me.loop_triangles.foreach_get("loops", loops)
    polys = np.empty(nt, np.int32)
    me.loop_triangle_polygons.foreach_get("value", polys)
    return loops, polys


def _mesh(bpy, faces):
    me = bpy.data.meshes.new("t")
    verts = [(np.cos(a), np.sin(a), 0.1 * (i % 3)) for i, a in enumerate(np.linspace(0, 6, 12))]
    me.from_pydata(verts, [], faces)
    me.update()
    return me


def test_triangle_corners_match_blenders_triangulation(blank_blend):
    from rigport.operators.blender.extract import triangle_corners

    bpy = blank_blend
    tris = _mesh(bpy, [(0, 1, 2), (2, 3, 4), (4, 5, 0), (6, 7, 8), (9, 10, 11)])
    mixed = _mesh(bpy, [(0, 1, 2, 3), (3, 4, 5), (5, 6, 7, 8, 9), (9, 10, 11, 0)])
    for me in (tris, mixed):
        got_loops, got_polys = triangle_corners(me)
        want_loops, want_polys = _blender_triangles(me)
        np.testing.assert_array_equal(got_loops, want_loops)
        np.testing.assert_array_equal(got_polys, want_polys)
    assert len(triangle_corners(_mesh(bpy, []))[0]) == 0


def _keyed(bpy, frames_per_curve, values):
    from rigport.operators.blender import compat

    action = bpy.data.actions.new("a")
    curves = []
    for i, frames in enumerate(frames_per_curve):
        fc = compat.new_fcurve(action, 'pose.bones["b"].location', i, "b")
        fc.keyframe_points.add(len(frames))
        co = np.stack([np.asarray(frames, np.float32), values[: len(frames)]], axis=1)
        fc.keyframe_points.foreach_set("co", co.reshape(-1))
        for k in fc.keyframe_points:
            k.interpolation = "LINEAR"
        if len(set(frames)) == len(frames):  # update() would merge an instant step's keys
            fc.update()
        curves.append(fc)
    return curves


def test_sample_fcurve_at_its_own_keys_and_between_them(blank_blend):
    from rigport.operators.blender.extract import _key_coords, _shared_frames, sample_fcurve

    bpy = blank_blend
    values = np.array([1.0, 2.0, 4.0, 8.0, 16.0], np.float32)
    same, other, step = _keyed(bpy, [[1, 2, 3, 4, 5], [1, 3, 5], [1, 2, 2, 3]], np.array(values))
    coords = [_key_coords(fc) for fc in (same, other)]
    frames = _shared_frames([c[:, 0] for c in coords])
    np.testing.assert_array_equal(frames, [1, 2, 3, 4, 5])
    assert frames.dtype == np.float64
    np.testing.assert_array_equal(sample_fcurve(same, frames, coords[0]), values)
    # keys at 1, 3, 5 hold 1, 2, 4: frames 2 and 4 are evaluated between them
    np.testing.assert_allclose(sample_fcurve(other, frames), [1, 1.5, 2, 3, 4])
    np.testing.assert_array_equal(_shared_frames([coords[0][:, 0]] * 3), [1, 2, 3, 4, 5])
    # two keys at frame 2 (an instant step): the frame takes the first key's value,
    # both read from Blender's keys and through the shortcut's guard
    step_frames = _key_coords(step)[:, 0].astype(np.float64)
    np.testing.assert_array_equal(step_frames, [1, 2, 2, 3])
    got = sample_fcurve(step, step_frames)
    assert got[1] == got[2] == 2.0
    np.testing.assert_array_equal(_shared_frames([step_frames]), [1, 2, 3])
