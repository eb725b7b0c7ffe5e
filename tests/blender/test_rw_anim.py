"""GTA IFP and RenderWare .anm in Blender: a ped takes a walk cycle and plays it;
exports are byte-identical while unedited and within the quantisation after an edit."""

from __future__ import annotations

import numpy as np
import pytest

from rigport.io_formats.renderware import anm, ifp
from rigport.io_formats.renderware import dff as dff_codec
from rigport.io_formats.renderware.chunks import TARGETS
from rigport.io_formats.transforms import quat_to_matrix
from rigport.samples import renderware as samples
from rigport.samples import renderware_ifp as ifp_samples

GAMES = {"SA": "SA", "SA_float": "SA", "VC": "VC", "III": "III"}


def _ped(bpy, tmp_path, game: str):
    path = tmp_path / "ped.dff"
    path.write_bytes(dff_codec.write(samples.skinned_ped(GAMES[game])))
    assert bpy.ops.import_scene.rw_dff(filepath=str(path)) == {"FINISHED"}
    return next(o for o in bpy.data.objects if o.type == "ARMATURE")


def _ifp(tmp_path, game: str, animations: int = 3, quirks: bool = True):
    path = tmp_path / "ped.ifp"
    data = ifp.write(ifp_samples.walk_package(game, animations=animations, quirks=quirks))
    path.write_bytes(data)
    return path, data


@pytest.mark.parametrize("game", list(GAMES))
def test_walk_cycle_plays_and_exports_byte_identical(blank_blend, tmp_path, game):
    bpy = blank_blend
    arm = _ped(bpy, tmp_path, game)
    path, data = _ifp(tmp_path, game)
    assert bpy.ops.import_anim.gta_ifp(filepath=str(path)) == {"FINISHED"}
    actions = {a.name: a for a in bpy.data.actions}
    assert set(actions) == {"walk", "anim001", "anim002"}
    # every action kept as an NLA track (survives a save), the first one playing
    stashed = {s.action.name for t in arm.animation_data.nla_tracks for s in t.strips}
    assert stashed == set(actions)
    assert arm.animation_data.action == actions["walk"]
    scene = bpy.context.scene
    # Frame 0 of the walk is the rest pose: the conventions (conjugation, bone IDs) agree.
    scene.frame_set(0)
    for pb in arm.pose.bones:
        assert np.allclose(np.array(pb.matrix_basis), np.eye(4), atol=2e-3), pb.name
    # It plays: half way the root has walked 0.4 units, the pose differs from rest.
    fps = scene.render.fps / scene.render.fps_base
    scene.frame_set(int(fps / 2))
    root = arm.pose.bones["Root"]
    rest_head = np.array(arm.data.bones["Root"].head_local)
    moved = np.array(root.head) - rest_head
    assert abs(np.linalg.norm(moved) - 0.4) < 0.03
    bent = [pb for pb in arm.pose.bones if not np.allclose(pb.matrix_basis, np.eye(4), atol=1e-3)]
    assert len(bent) > 20
    # Exported back unedited: the same bytes.
    out = tmp_path / "out.ifp"
    bpy.context.view_layer.objects.active = arm
    assert bpy.ops.export_anim.gta_ifp(filepath=str(out), replace=False) == {"FINISHED"}
    assert out.read_bytes() == data


@pytest.mark.parametrize("game", ["SA", "VC"])
def test_edited_key_within_quantisation(blank_blend, tmp_path, game):
    bpy = blank_blend
    arm = _ped(bpy, tmp_path, game)
    path, data = _ifp(tmp_path, game, animations=1, quirks=False)
    assert bpy.ops.import_anim.gta_ifp(filepath=str(path)) == {"FINISHED"}
    action = bpy.data.actions["walk"]
    from rigport.operators.blender import compat

    fcs = [fc for fc in compat.fcurves(action) if fc.data_path.endswith('"Root"].location')]
    assert fcs
    kp = fcs[0].keyframe_points[5]
    kp.co[1] += 0.25
    bpy.context.view_layer.objects.active = arm
    out = tmp_path / "edited.ifp"
    assert bpy.ops.export_anim.gta_ifp(filepath=str(out), replace=False) == {"FINISHED"}
    before = ifp.read(data).animations[0]
    after = ifp.read(out.read_bytes()).animations[0]
    assert [o.name for o in before.objects] == [o.name for o in after.objects]
    changed = 0
    for o0, o1 in zip(before.objects, after.objects, strict=True):
        k0, k1 = o0.keys(), o1.keys()
        assert np.allclose(k0.times, k1.times)
        same = np.all(o0.frames == o1.frames) if o0.name != "Root" else None
        if o0.name != "Root":
            assert same  # untouched bones: the same bytes
            continue
        diff = np.abs(k1.translation - k0.translation).max(1)
        changed = int(np.count_nonzero(diff > 1e-3))
        assert changed == 1 and np.argmax(diff) == 5
        step = 1 / ifp.TRANSLATION_STEP if o0.compressed else 1e-5
        world_move = np.linalg.norm(k1.translation[5] - k0.translation[5])
        assert abs(world_move - 0.25) < 0.01 + step
        others = np.delete(np.arange(len(diff)), 5)
        assert np.array_equal(o0.frames[others], o1.frames[others])
    assert changed == 1


def test_replace_in_existing_file_keeps_the_others(blank_blend, tmp_path):
    bpy = blank_blend
    arm = _ped(bpy, tmp_path, "SA")
    path, data = _ifp(tmp_path, "SA", animations=3, quirks=False)
    assert bpy.ops.import_anim.gta_ifp(filepath=str(path), names="anim001") == {"FINISHED"}
    assert [a.name for a in bpy.data.actions] == ["anim001"]
    bpy.data.actions["anim001"].name = "newmove"
    bpy.context.view_layer.objects.active = arm
    assert bpy.ops.export_anim.gta_ifp(filepath=str(path), export_animations="ACTIVE") == {
        "FINISHED"
    }
    f = ifp.read(path.read_bytes())
    assert [a.name for a in f.animations] == ["walk", "anim001", "anim002", "newmove"]
    orig = ifp.read(data)
    assert ifp.write(ifp.IfpFile("ANP3", f.name_raw, f.animations[:3])) == ifp.write(
        ifp.IfpFile("ANP3", orig.name_raw, orig.animations)
    )
    assert np.array_equal(f.animations[3].objects[2].frames, orig.animations[1].objects[2].frames)


def test_unmatched_objects_are_reported_and_bad_files_leave_nothing(blank_blend, tmp_path):
    bpy = blank_blend
    _ped(bpy, tmp_path, "III")
    f = ifp_samples.walk_package("III", animations=1, frames=4)
    extra = ifp.new_object("ANPK", "Tail", f.animations[0].objects[1].keys(), None, False, False)
    f.animations[0].objects.append(extra)
    path = tmp_path / "x.ifp"
    path.write_bytes(ifp.write(f))
    from rigport.operators.renderware.ifp_importer import IfpImportOptions, import_ifp_file

    lines = import_ifp_file(bpy.context, str(path), IfpImportOptions()).line().split("; ")
    assert "warning: no bone matches 1 bone track: Tail" in lines
    assert len(bpy.data.actions) == 1
    bad = tmp_path / "bad.ifp"
    bad.write_bytes(path.read_bytes()[:300])
    n = len(bpy.data.actions)
    with pytest.raises(RuntimeError):
        bpy.ops.import_anim.gta_ifp(filepath=str(bad))
    assert len(bpy.data.actions) == n


def test_actions_survive_a_save(blank_blend, tmp_path):
    bpy = blank_blend
    _ped(bpy, tmp_path, "VC")
    path, _ = _ifp(tmp_path, "VC")
    assert bpy.ops.import_anim.gta_ifp(filepath=str(path)) == {"FINISHED"}
    blend = tmp_path / "saved.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(blend))
    bpy.ops.wm.open_mainfile(filepath=str(blend))
    assert {a.name for a in bpy.data.actions} == {"walk", "anim001", "anim002"}


def test_anm_imports_onto_the_hanim_armature_and_round_trips(blank_blend, tmp_path):
    bpy = blank_blend
    arm = _ped(bpy, tmp_path, "SA")
    skeleton = samples.ped_skeleton(32)
    keys = ifp_samples.cycle_keys(skeleton, 9)
    tracks = []
    for i, k in enumerate(keys):
        t = (
            k.translation
            if k.translation is not None
            else np.tile(skeleton.local_translation[i], (len(k.times), 1))
        )
        tracks.append((k.times.astype(np.float32).astype(np.float64), k.rotation, t))
    f = anm.from_tracks(tracks, TARGETS["SA"][2])
    path = tmp_path / "walk.anm"
    path.write_bytes(anm.write(f))
    assert bpy.ops.import_anim.rw_anm(filepath=str(path)) == {"FINISHED"}
    action = arm.animation_data.action
    assert action.name == "walk"
    bpy.context.scene.frame_set(0)
    for pb in arm.pose.bones:
        assert np.allclose(np.array(pb.matrix_basis), np.eye(4), atol=2e-3), pb.name
    out = tmp_path / "out.anm"
    bpy.context.view_layer.objects.active = arm
    assert bpy.ops.export_anim.rw_anm(filepath=str(out)) == {"FINISHED"}
    back = anm.read(out.read_bytes())
    assert len(back.keys) == len(f.keys)
    for (t0, q0, p0), (t1, q1, p1) in zip(f.tracks(32), back.tracks(32), strict=True):
        assert np.allclose(t0, t1, atol=1e-4)
        assert np.allclose(quat_to_matrix(q0), quat_to_matrix(q1), atol=1e-4)
        assert np.allclose(p0, p1, atol=1e-4)


def test_anm_export_custom_frame_rate_rescales_times(blank_blend, tmp_path):
    """Frame Rate "Custom" on the .anm exporter: the same frames at twice the rate
    the action was imported with are keys at half the times; "Scene" (default)
    writes the times the file had."""
    bpy = blank_blend
    arm = _ped(bpy, tmp_path, "SA")
    skeleton = samples.ped_skeleton(32)
    keys = ifp_samples.cycle_keys(skeleton, 9)
    tracks = [
        (
            k.times.astype(np.float32).astype(np.float64),
            k.rotation,
            k.translation
            if k.translation is not None
            else np.tile(skeleton.local_translation[i], (len(k.times), 1)),
        )
        for i, k in enumerate(keys)
    ]
    f = anm.from_tracks(tracks, TARGETS["SA"][2])
    path = tmp_path / "walk.anm"
    path.write_bytes(anm.write(f))
    assert bpy.ops.import_anim.rw_anm(filepath=str(path)) == {"FINISHED"}
    rate = float(arm.animation_data.action["rigport_fps"])
    bpy.context.view_layer.objects.active = arm
    same, fast = tmp_path / "same.anm", tmp_path / "fast.anm"
    assert bpy.ops.export_anim.rw_anm(filepath=str(same)) == {"FINISHED"}
    assert bpy.ops.export_anim.rw_anm(filepath=str(fast), frame_rate="CUSTOM", fps=2 * rate) == {
        "FINISHED"
    }
    t_file = np.concatenate([t for t, _, _ in f.tracks(32)])
    t_same = np.concatenate([t for t, _, _ in anm.read(same.read_bytes()).tracks(32)])
    t_fast = np.concatenate([t for t, _, _ in anm.read(fast.read_bytes()).tracks(32)])
    assert np.allclose(t_same, t_file, atol=1e-5)
    assert np.allclose(t_fast, t_file / 2, atol=1e-5)
    assert t_file.max() > 0.2


def test_ifp_export_custom_frame_rate_rescales_times(blank_blend, tmp_path):
    """Frame Rate "Custom" on the IFP exporter (float keys, Vice City): every
    animation's key times at twice the imported rate are halved."""
    bpy = blank_blend
    arm = _ped(bpy, tmp_path, "VC")
    path, data = _ifp(tmp_path, "VC", animations=2, quirks=False)
    assert bpy.ops.import_anim.gta_ifp(filepath=str(path)) == {"FINISHED"}
    rate = float(bpy.data.actions["walk"]["rigport_fps"])
    bpy.context.view_layer.objects.active = arm
    out = tmp_path / "fast.ifp"
    assert bpy.ops.export_anim.gta_ifp(
        filepath=str(out), replace=False, frame_rate="CUSTOM", fps=2 * rate
    ) == {"FINISHED"}
    before = {a.name: a for a in ifp.read(data).animations}
    after = {a.name: a for a in ifp.read(out.read_bytes()).animations}
    assert set(after) == set(before)
    for name, anim in before.items():
        for o0, o1 in zip(anim.objects, after[name].objects, strict=True):
            t0, t1 = o0.keys().times, o1.keys().times
            assert np.allclose(t1, t0 / 2, atol=1e-4), (name, o0.name)
