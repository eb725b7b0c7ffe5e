"""An animation import works out its tracks per key count, all at once (frames,
``co`` blocks, digests, the file's arrays): tracks sharing one time list, tracks
of the same key count at other times and tracks of another key count in one
file each get the keys they would get one at a time, and come back exactly; a
NaN in one track of a group costs that track its key and no other track."""

from __future__ import annotations

import numpy as np

from rigport.io_formats import exact_keys as codec
from rigport.io_formats.posing import local_to_basis
from rigport.io_formats.urho3d import ani, mdl
from rigport.io_formats.urho3d.animation_convert import import_animation
from rigport.samples import urho3d as samples

BONES = 8
KEYS = 25


def _file() -> tuple[bytes, ani.Animation]:
    """The sample tentacle's walk with track 2 keyed at other times (same count)
    and track 5 at every other key (another count): three time lists."""
    model = samples.skinned_model(
        BONES, grid=(16, 6), morphs=0, uv_sets=1, color=False, collision=False
    )
    anim = samples.walk_animation(model, KEYS, 1.0)
    shifted = anim.tracks[2].keys.copy()
    shifted["time"] = np.linspace(0.0, 1.0, KEYS) ** 1.5  # ascending, not the others'
    anim.tracks[2] = ani.Track(anim.tracks[2].name, anim.tracks[2].mask, shifted)
    anim.tracks[5] = ani.Track(
        anim.tracks[5].name, anim.tracks[5].mask, anim.tracks[5].keys[::2].copy()
    )
    return mdl.write(model), anim


def _import(bpy, tmp_path, model: bytes, anim: ani.Animation):
    (tmp_path / "m.mdl").write_bytes(model)
    assert bpy.ops.import_scene.urho3d_mdl(filepath=str(tmp_path / "m.mdl")) == {"FINISHED"}
    arm = next(o for o in bpy.data.objects if o.type == "ARMATURE")
    bpy.context.view_layer.objects.active = arm
    data = ani.write(anim)
    (tmp_path / "a.ani").write_bytes(data)
    assert bpy.ops.import_anim.urho3d_ani(filepath=str(tmp_path / "a.ani")) == {"FINISHED"}
    return arm, arm.animation_data.action, data


def _export(bpy, tmp_path, name: str) -> bytes:
    out = tmp_path / name
    assert bpy.ops.export_anim.urho3d_ani(filepath=str(out)) == {"FINISHED"}
    return out.read_bytes()


def _co(action, bone: str, prop: str, index: int) -> np.ndarray:
    from rigport.operators.blender import compat

    path = f'pose.bones["{bone}"].{prop}'
    fc = next(f for f in compat.fcurves(action) if f.data_path == path and f.array_index == index)
    co = np.empty(2 * len(fc.keyframe_points), np.float32)
    fc.keyframe_points.foreach_get("co", co)
    return co.reshape(-1, 2)


def test_shared_and_distinct_times_get_one_tracks_keys_and_come_back_exactly(blank_blend, tmp_path):
    bpy = blank_blend
    from rigport.operators.blender import exact_keys
    from rigport.operators.blender.build import rest_relative, scene_fps

    model, anim = _file()
    arm, action, data = _import(bpy, tmp_path, model, anim)
    fps = scene_fps(bpy.context)
    rels = rest_relative(arm.data)
    for track in import_animation(ani.read(data)).tracks:  # one track at a time, as before
        loc, quat, scale = local_to_basis(
            *rels[track.bone],
            track.translation,
            track.rotation,
            track.scale if track.scale is not None else np.ones((len(track.times), 3)),
        )
        frames = (np.asarray(track.times, np.float64) * fps).astype(np.float32)
        keyed = [("location", loc), ("rotation_quaternion", quat)]
        if track.scale is not None:
            keyed.append(("scale", scale))
        for prop, values in keyed:
            for index in range(values.shape[1]):
                co = _co(action, track.bone, prop, index)
                assert co[:, 0].tobytes() == frames.tobytes(), (track.bone, prop)
                want = values[:, index].astype(np.float32)
                assert co[:, 1].tobytes() == want.tobytes(), (track.bone, prop, index)
    kept = codec.decode(action[exact_keys.PROP])
    assert [k.bone for k in kept] == [t.name for t in anim.tracks]
    assert all(k.given is not None for k in kept)
    times = [k.digests["times"] for k in kept]
    assert len(set(times)) == 3  # the shared list, track 2's and track 5's
    assert times[2] != times[0] and times[5] != times[0]
    assert len({times[i] for i in range(BONES) if i not in (2, 5)}) == 1
    for k, t in zip(kept, anim.tracks, strict=True):
        assert k.given.times.tobytes() == t.keys["time"].tobytes(), k.bone
    assert _export(bpy, tmp_path, "back.ani") == data


def test_a_nan_in_one_track_of_a_group_costs_that_track_its_key_only(blank_blend, tmp_path):
    bpy = blank_blend
    from rigport.operators.blender import exact_keys

    model, anim = _file()
    bad = 3  # shares its times and key count with most tracks
    keys = anim.tracks[bad].keys.copy()
    keys["rotation"][7] = np.nan
    anim.tracks[bad] = ani.Track(anim.tracks[bad].name, anim.tracks[bad].mask, keys)
    arm, action, data = _import(bpy, tmp_path, model, anim)
    for i, track in enumerate(anim.tracks):
        co = _co(action, track.name, "rotation_quaternion", 0)
        assert len(co) == len(track.keys) - (i == bad), track.name
    assert np.isfinite(_co(action, anim.tracks[bad].name, "rotation_quaternion", 0)).all()
    kept = codec.decode(action[exact_keys.PROP])
    assert anim.tracks[bad].name not in {k.bone for k in kept}
    back = ani.read(_export(bpy, tmp_path, "back.ani"))
    assert [t.name for t in back.tracks] == [t.name for t in anim.tracks]
    for i, (want, got) in enumerate(zip(anim.tracks, back.tracks, strict=True)):
        if i != bad:
            assert want.keys.tobytes() == got.keys.tobytes(), want.name
    good = np.delete(anim.tracks[bad].keys, 7)
    lost = back.tracks[bad].keys
    assert len(lost) == len(good)
    assert np.allclose(lost["time"], good["time"], atol=1e-6)
    assert np.allclose(np.abs((lost["rotation"] * good["rotation"]).sum(axis=1)), 1.0, atol=1e-5)
