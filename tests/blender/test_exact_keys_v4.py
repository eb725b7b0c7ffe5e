"""Exact-keys record version 4 ("given keys"): the import keeps the file's arrays
and digests of what Blender was given, with no rebuild; the export hashes what
it reads back. Each single edit makes just what it touches Blender's: one
channel's values (that channel), a moved key, an edited rest or another frame
rate (the track or all tracks), a deleted curve (its channel), a new channel."""

from __future__ import annotations

import numpy as np
import pytest

from rigport.io_formats import exact_keys as codec
from rigport.io_formats.urho3d import ani

CORPUS_MODEL = ("urho3d", "Jack.mdl")
CORPUS_ANIM = ("urho3d", "Jack_Walk.ani")


def _setup(bpy, tmp_path, corpus_dir, data: bytes | None = None):
    """Jack with Jack_Walk (or ``data``) imported; the armature, the action and
    the file's bytes. The unedited export is the file, byte for byte."""
    model = corpus_dir.joinpath(*CORPUS_MODEL).read_bytes()
    (tmp_path / "m.mdl").write_bytes(model)
    assert bpy.ops.import_scene.urho3d_mdl(filepath=str(tmp_path / "m.mdl")) == {"FINISHED"}
    arm = next(o for o in bpy.data.objects if o.type == "ARMATURE")
    bpy.context.view_layer.objects.active = arm
    data = corpus_dir.joinpath(*CORPUS_ANIM).read_bytes() if data is None else data
    (tmp_path / "a.ani").write_bytes(data)
    assert bpy.ops.import_anim.urho3d_ani(filepath=str(tmp_path / "a.ani")) == {"FINISHED"}
    assert _export(bpy, tmp_path, "unedited.ani") == data
    return arm, arm.animation_data.action, data


def _export(bpy, tmp_path, name: str, **options) -> bytes:
    out = tmp_path / name
    assert bpy.ops.export_anim.urho3d_ani(filepath=str(out), **options) == {"FINISHED"}
    return out.read_bytes()


def _curve(action, bone: str, prop: str, index: int):
    from rigport.operators.blender import compat

    path = f'pose.bones["{bone}"].{prop}'
    return next(f for f in compat.fcurves(action) if f.data_path == path and f.array_index == index)


def _leaf_tracked_bone(arm, anim: ani.Animation, mask: int) -> str:
    """A bone with no children whose track keys every channel of ``mask``."""
    return next(
        t.name
        for t in anim.tracks
        if t.mask & mask == mask
        and (b := arm.data.bones.get(t.name)) is not None
        and not b.children
        and len(t.keys) > 4
    )


def _others_exact(a: ani.Animation, b: ani.Animation, skip: set[str]) -> None:
    assert [t.name for t in a.tracks] == [t.name for t in b.tracks]
    for x, y in zip(a.tracks, b.tracks, strict=True):
        if x.name not in skip:
            assert x.keys.tobytes() == y.keys.tobytes(), x.name


def test_record_is_version_4_bytes_and_unedited_bones_are_not_converted(
    blank_blend, tmp_path, corpus_dir, monkeypatch
):
    bpy = blank_blend
    from rigport.operators.blender import exact_keys, extract

    arm, action, data = _setup(bpy, tmp_path, corpus_dir)
    record = action[exact_keys.PROP]
    assert isinstance(record, bytes)
    kept = codec.decode(record)
    anim = ani.read(data)
    assert len(kept) == len(anim.tracks) and all(k.version == 4 for k in kept)
    assert all(k.given is not None and not k.xor for k in kept)
    for k, t in zip(kept, anim.tracks, strict=True):  # the file's own float32 arrays
        assert k.given.times.tobytes() == t.keys["time"].tobytes()
    converted = []
    to_tracks = extract.tracks_from_coords

    def spy(armature, per_bone, *args, **kw):
        converted.extend(per_bone)
        return to_tracks(armature, per_bone, *args, **kw)

    monkeypatch.setattr(extract, "tracks_from_coords", spy)
    assert _export(bpy, tmp_path, "again.ani") == data
    assert converted == []  # every bone as given: none converted


def test_saved_and_reopened_exports_byte_for_byte(blank_blend, tmp_path, corpus_dir):
    bpy = blank_blend
    from rigport.operators.blender import exact_keys

    _, _, data = _setup(bpy, tmp_path, corpus_dir)
    blend = tmp_path / "saved.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(blend))
    bpy.ops.wm.open_mainfile(filepath=str(blend))
    arm = next(o for o in bpy.data.objects if o.type == "ARMATURE")
    bpy.context.view_layer.objects.active = arm
    assert isinstance(arm.animation_data.action[exact_keys.PROP], bytes)
    assert _export(bpy, tmp_path, "reopened.ani") == data


def test_one_channel_edited_is_blenders_the_others_and_times_the_files(
    blank_blend, tmp_path, corpus_dir
):
    bpy = blank_blend
    arm, action, data = _setup(bpy, tmp_path, corpus_dir)
    anim = ani.read(data)
    bone = _leaf_tracked_bone(arm, anim, ani.CHANNEL_POSITION | ani.CHANNEL_ROTATION)
    fc = _curve(action, bone, "rotation_quaternion", 1)
    fc.keyframe_points[2].co[1] += 0.2
    fc.update()
    back = ani.read(_export(bpy, tmp_path, "edited.ani"))
    _others_exact(anim, back, {bone})
    a = next(t for t in anim.tracks if t.name == bone).keys
    b = next(t for t in back.tracks if t.name == bone).keys
    for field in a.dtype.names:
        if field != "rotation":  # the times and unedited channels: the file's bits
            assert a[field].tobytes() == b[field].tobytes(), field
    moved = np.abs(b["rotation"] - a["rotation"]).max(axis=1)
    assert moved[2] > 0.05 and np.count_nonzero(moved > 0.05) == 1
    assert np.allclose(np.delete(b["rotation"], 2, 0), np.delete(a["rotation"], 2, 0), atol=1e-5)


def test_a_moved_key_makes_the_track_blenders(blank_blend, tmp_path, corpus_dir):
    bpy = blank_blend
    arm, action, data = _setup(bpy, tmp_path, corpus_dir)
    anim = ani.read(data)
    bone = _leaf_tracked_bone(arm, anim, ani.CHANNEL_POSITION)
    fc = _curve(action, bone, "location", 0)
    k = fc.keyframe_points[2]
    k.co[0] = (k.co[0] + fc.keyframe_points[3].co[0]) / 2  # between its neighbours
    fc.update()
    back = ani.read(_export(bpy, tmp_path, "moved.ani"))
    _others_exact(anim, back, {bone})
    a = next(t for t in anim.tracks if t.name == bone).keys
    b = next(t for t in back.tracks if t.name == bone).keys
    assert len(b) == len(a) + 1  # the other curves' key and the moved one: both frames
    assert a["time"].tobytes() != b["time"].tobytes()


def test_an_edited_rest_makes_the_track_blenders(blank_blend, tmp_path, corpus_dir):
    bpy = blank_blend
    arm, action, data = _setup(bpy, tmp_path, corpus_dir)
    anim = ani.read(data)
    bone = _leaf_tracked_bone(arm, anim, ani.CHANNEL_POSITION)
    bpy.ops.object.mode_set(mode="EDIT")
    arm.data.edit_bones[bone].head.x += 0.05
    bpy.ops.object.mode_set(mode="OBJECT")
    back = ani.read(_export(bpy, tmp_path, "rest.ani"))
    _others_exact(anim, back, {bone})
    a = next(t for t in anim.tracks if t.name == bone).keys
    b = next(t for t in back.tracks if t.name == bone).keys
    assert len(a) == len(b) and a["position"].tobytes() != b["position"].tobytes()


def test_another_frame_rate_at_export_makes_every_track_blenders(blank_blend, tmp_path, corpus_dir):
    bpy = blank_blend
    _, action, data = _setup(bpy, tmp_path, corpus_dir)
    fps = float(action["rigport_fps"])
    back = ani.read(_export(bpy, tmp_path, "fps.ani", frame_rate="CUSTOM", fps=fps * 2))
    anim = ani.read(data)
    for a, b in zip(anim.tracks, back.tracks, strict=True):
        assert a.name == b.name
        assert np.allclose(b.keys["time"], a.keys["time"] / 2, rtol=1e-5, atol=1e-6)
        assert a.keys["time"].tobytes() != b.keys["time"].tobytes()


def test_a_deleted_curve_makes_its_channel_blenders(blank_blend, tmp_path, corpus_dir):
    bpy = blank_blend
    from rigport.operators.blender import compat, kept_keys

    arm, action, data = _setup(bpy, tmp_path, corpus_dir)
    anim = ani.read(data)
    bone = _leaf_tracked_bone(arm, anim, ani.CHANNEL_POSITION | ani.CHANNEL_ROTATION)
    fc = _curve(action, bone, "location", 1)
    if compat.HAS_SLOTS:
        action.layers[0].strips[0].channelbag(action.slots[0]).fcurves.remove(fc)
    else:
        action.fcurves.remove(fc)
    back = ani.read(_export(bpy, tmp_path, "deleted.ani"))
    _others_exact(anim, back, {bone})
    a = next(t for t in anim.tracks if t.name == bone).keys
    b = next(t for t in back.tracks if t.name == bone).keys
    assert a["time"].tobytes() == b["time"].tobytes()
    assert a["rotation"].tobytes() == b["rotation"].tobytes()
    assert a["position"].tobytes() != b["position"].tobytes()
    kept_keys.forget([action])  # Blender's keys alone: the position written is theirs
    blender = ani.read(_export(bpy, tmp_path, "forgotten.ani"))
    c = next(t for t in blender.tracks if t.name == bone).keys
    assert c["position"].tobytes() == b["position"].tobytes()


def test_a_new_scale_channel_is_blenders_the_others_the_files(blank_blend, tmp_path, corpus_dir):
    """A track the file keys without scale gains scale curves in Blender: the
    export writes them, the track's times, positions and rotations stay the file's."""
    bpy = blank_blend
    from rigport.operators.blender import compat

    anim = ani.read(corpus_dir.joinpath(*CORPUS_ANIM).read_bytes())
    full = ani.CHANNEL_POSITION | ani.CHANNEL_ROTATION
    i = next(n for n, t in enumerate(anim.tracks) if t.mask & full == full and len(t.keys) > 4)
    track = anim.tracks[i]
    keys = np.zeros(len(track.keys), ani.keyframe_dtype(full))
    for field in keys.dtype.names:
        keys[field] = track.keys[field]
    anim.tracks[i] = ani.Track(track.name, full, keys, track.weight)
    arm, action, data = _setup(bpy, tmp_path, corpus_dir, ani.write(anim))
    frames = np.empty(2 * len(keys), np.float32)
    _curve(action, track.name, "location", 0).keyframe_points.foreach_get("co", frames)
    co = frames.reshape(-1, 2).copy()
    co[:, 1] = 1.5
    for index in range(3):
        fc = compat.new_fcurve(action, f'pose.bones["{track.name}"].scale', index, track.name)
        fc.keyframe_points.add(len(co))
        fc.keyframe_points.foreach_set("co", co.ravel())
        fc.update()
    back = ani.read(_export(bpy, tmp_path, "scaled.ani"))
    _others_exact(anim, back, {track.name})
    b = back.tracks[i]
    assert b.mask & ani.CHANNEL_SCALE
    for field in ("time", "position", "rotation"):
        assert keys[field].tobytes() == b.keys[field].tobytes(), field
    assert np.allclose(b.keys["scale"], 1.5, atol=1e-3)


@pytest.mark.parametrize("cut", [1, 9, 200])
def test_a_damaged_version_4_record_is_refused_naming_the_action(
    blank_blend, tmp_path, corpus_dir, cut
):
    bpy = blank_blend
    from rigport.io_formats.codec import FormatError
    from rigport.operators.blender import exact_keys
    from rigport.operators.blender.extract import extract_animation

    arm, action, _ = _setup(bpy, tmp_path, corpus_dir)
    action[exact_keys.PROP] = action[exact_keys.PROP][:-cut]
    with pytest.raises(FormatError, match=f"action {action.name!r}.*{exact_keys.PROP}.*damaged"):
        extract_animation(arm, action)
