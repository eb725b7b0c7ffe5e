"""Exact animation keys through Blender (operators/blender/exact_keys.py): every
animation format's unedited round trip gives back the file's bytes; an edited
key is written from Blender and the other tracks stay exact; tracks of bones
the armature lacks are carried through."""

from __future__ import annotations

import numpy as np
import pytest

from rigport.io_formats.codec.errors import counted
from rigport.io_formats.renderware import anm, ifp
from rigport.io_formats.renderware import dff as dff_codec
from rigport.io_formats.renderware.chunks import TARGETS
from rigport.io_formats.unigine import anim as unigine_anim
from rigport.io_formats.unigine import mesh as unigine_mesh
from rigport.io_formats.urho3d import ani, mdl
from rigport.samples import rbfx as rbfx_samples
from rigport.samples import renderware as rw_samples
from rigport.samples import renderware_ifp as ifp_samples
from rigport.samples import unigine as unigine_samples


def _armature(bpy):
    arm = next(o for o in bpy.data.objects if o.type == "ARMATURE")
    bpy.context.view_layer.objects.active = arm
    return arm


def _urho_model(bpy, tmp_path, data: bytes):
    (tmp_path / "m.mdl").write_bytes(data)
    assert bpy.ops.import_scene.urho3d_mdl(filepath=str(tmp_path / "m.mdl")) == {"FINISHED"}
    return _armature(bpy)


def _urho_trip(bpy, tmp_path, data: bytes, name: str = "a.ani") -> bytes:
    (tmp_path / name).write_bytes(data)
    assert bpy.ops.import_anim.urho3d_ani(filepath=str(tmp_path / name)) == {"FINISHED"}
    out = tmp_path / ("out_" + name)
    assert bpy.ops.export_anim.urho3d_ani(filepath=str(out)) == {"FINISHED"}
    return out.read_bytes()


def _edit_one_key(action, bone: str, prop: str = "location", index: int = 0, key: int = 2):
    from rigport.operators.blender import compat

    path = f'pose.bones["{bone}"].{prop}'
    fc = next(f for f in compat.fcurves(action) if f.data_path == path and f.array_index == index)
    fc.keyframe_points[key].co[1] += 0.25
    fc.update()


@pytest.mark.parametrize("name", ["Jack_Walk.ani", "reattiva/Tube_Wave.ani"])
def test_urho3d_corpus_animation_byte_for_byte(blank_blend, tmp_path, corpus_dir, name):
    bpy = blank_blend
    src = corpus_dir / "urho3d" / name
    model = src.parent / ("Jack.mdl" if "Jack" in name else "Tube.mdl")
    _urho_model(bpy, tmp_path, model.read_bytes())
    data = src.read_bytes()
    assert _urho_trip(bpy, tmp_path, data) == data


def test_exact_keys_survive_a_save(blank_blend, tmp_path, corpus_dir):
    bpy = blank_blend
    _urho_model(bpy, tmp_path, (corpus_dir / "urho3d" / "Jack.mdl").read_bytes())
    data = (corpus_dir / "urho3d" / "Jack_Walk.ani").read_bytes()
    (tmp_path / "a.ani").write_bytes(data)
    assert bpy.ops.import_anim.urho3d_ani(filepath=str(tmp_path / "a.ani")) == {"FINISHED"}
    blend = tmp_path / "saved.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(blend))
    bpy.ops.wm.open_mainfile(filepath=str(blend))
    _armature(bpy)
    out = tmp_path / "out.ani"
    assert bpy.ops.export_anim.urho3d_ani(filepath=str(out)) == {"FINISHED"}
    assert out.read_bytes() == data


def test_urho3d_edited_key_written_from_blender_others_exact(blank_blend, tmp_path, corpus_dir):
    bpy = blank_blend
    arm = _urho_model(bpy, tmp_path, (corpus_dir / "urho3d" / "Jack.mdl").read_bytes())
    data = (corpus_dir / "urho3d" / "Jack_Walk.ani").read_bytes()
    assert _urho_trip(bpy, tmp_path, data) == data
    anim = ani.read(data)
    bone = next(t.name for t in anim.tracks if t.mask & ani.CHANNEL_POSITION)
    _edit_one_key(arm.animation_data.action, bone)
    out = tmp_path / "edited.ani"
    assert bpy.ops.export_anim.urho3d_ani(filepath=str(out)) == {"FINISHED"}
    back = ani.read(out.read_bytes())
    assert [t.name for t in back.tracks] == [t.name for t in anim.tracks]
    for a, b in zip(anim.tracks, back.tracks, strict=True):
        if a.name != bone:  # untouched: the file's bits
            assert a.keys.tobytes() == b.keys.tobytes(), a.name
            continue
        moved = np.abs(b.keys["position"] - a.keys["position"]).max(axis=1)
        assert np.count_nonzero(moved > 0.1) == 1 and moved.argmax() == 2
        for field in a.keys.dtype.names:  # the bone's other channels: still the file's
            if field != "position":
                assert a.keys[field].tobytes() == b.keys[field].tobytes(), field


def _with_target_tracks(anim: ani.Animation) -> ani.Animation:
    """rbfx's IK ``*_Target`` tracks: bones the model has no bone for, between
    the model's own tracks."""
    tracks = []
    for t in anim.tracks:
        tracks.append(t)
        if len(tracks) % 3 == 1:
            tracks.append(ani.Track(t.name + "_Target", t.mask, t.keys.copy(), 0.5))
    anim.tracks = tracks
    return anim


@pytest.mark.parametrize("version", [1, 2, 3])
def test_uan2_target_tracks_carried_through(blank_blend, tmp_path, version):
    bpy = blank_blend
    model = rbfx_samples.umd3_model()
    _urho_model(bpy, tmp_path, mdl.write(model))
    anim = _with_target_tracks(rbfx_samples.uan2_animation(model, version))
    data = ani.write(anim)
    targets = [t.name for t in anim.tracks if t.name.endswith("_Target")]
    assert len(targets) >= 2
    (tmp_path / "a.ani").write_bytes(data)
    from rigport.operators.urho3d.animation_exporter import AnimationExportOptions, export_ani
    from rigport.operators.urho3d.animation_importer import AnimationImportOptions, import_ani

    arm = _armature(bpy)
    got = import_ani(bpy.context, str(tmp_path / "a.ani"), AnimationImportOptions())
    assert len(got.warnings) == 1 and "written back on export" in got.warnings[0]
    assert all(n in got.warnings[0] for n in targets)
    done = export_ani(bpy.context, str(tmp_path / "b.ani"), arm, None, AnimationExportOptions())
    assert (tmp_path / "b.ani").read_bytes() == data
    carried = [m.text for m in done.messages if "carried" in m.text]
    assert carried and f"carried {len(targets)} tracks" in carried[0]
    assert all(n in carried[0] for n in targets)


def test_uan2_target_tracks_stay_after_an_edit(blank_blend, tmp_path):
    bpy = blank_blend
    model = rbfx_samples.umd3_model()
    arm = _urho_model(bpy, tmp_path, mdl.write(model))
    anim = _with_target_tracks(rbfx_samples.uan2_animation(model, 3))
    data = ani.write(anim)
    _urho_trip(bpy, tmp_path, data)
    bone = model.bones[1].name
    _edit_one_key(arm.animation_data.action, bone, "rotation_quaternion", 1)
    out = tmp_path / "edited.ani"
    assert bpy.ops.export_anim.urho3d_ani(filepath=str(out)) == {"FINISHED"}
    back = ani.read(out.read_bytes())
    assert [t.name for t in back.tracks] == [t.name for t in anim.tracks]
    for a, b in zip(anim.tracks, back.tracks, strict=True):
        assert (a.keys.tobytes() == b.keys.tobytes()) == (a.name != bone), a.name
        assert a.weight == b.weight
        if a.name == bone:
            assert a.keys["position"].tobytes() == b.keys["position"].tobytes()


def _ped(bpy, tmp_path, game: str = "SA", **shape):
    path = tmp_path / "ped.dff"
    path.write_bytes(dff_codec.write(rw_samples.skinned_ped(game, **shape)))
    assert bpy.ops.import_scene.rw_dff(filepath=str(path)) == {"FINISHED"}
    return _armature(bpy)


@pytest.mark.parametrize("game", ["SA", "VC"])
def test_ifp_byte_for_byte_and_one_edit(blank_blend, tmp_path, game):
    """ANP3 (SA, compressed) and ANPK (VC): unedited the same bytes; one edited
    key changes that object's keys only."""
    bpy = blank_blend
    _ped(bpy, tmp_path, game)
    data = ifp.write(ifp_samples.walk_package(game, animations=2, quirks=False))
    (tmp_path / "in.ifp").write_bytes(data)
    assert bpy.ops.import_anim.gta_ifp(filepath=str(tmp_path / "in.ifp")) == {"FINISHED"}
    out = tmp_path / "out.ifp"
    assert bpy.ops.export_anim.gta_ifp(filepath=str(out), replace=False) == {"FINISHED"}
    assert out.read_bytes() == data
    walk = bpy.data.actions["walk"]
    bone = "Root"
    _edit_one_key(walk, bone)
    assert bpy.ops.export_anim.gta_ifp(filepath=str(out), replace=False) == {"FINISHED"}
    a, b = ifp.read(data), ifp.read(out.read_bytes())
    for x, y in zip(a.animations, b.animations, strict=True):
        for ox, oy in zip(x.objects, y.objects, strict=True):
            same = ox.frames.tobytes() == oy.frames.tobytes()
            assert same == (x.name != "walk" or ox.name.lower() != bone.lower()), ox.name


@pytest.mark.parametrize(
    "shape",
    [
        {"turned_frame": True},
        {"turned_frame": True, "root_frame": False},
        {"breadth_first": True},
    ],
    ids=["turned-frame", "turned-root-bone", "breadth-first"],
)
def test_ifp_byte_for_byte_on_awkward_peds(blank_blend, tmp_path, shape):
    """Peds whose atomic hangs from a turned frame (inverse bind matrices that
    disagree with the frame hierarchy, as stock SA peds) or whose frames are
    not in node order: an unedited IFP still comes back byte for byte."""
    bpy = blank_blend
    _ped(bpy, tmp_path, "SA", **shape)
    data = ifp.write(ifp_samples.walk_package("SA", animations=2, quirks=True))
    (tmp_path / "in.ifp").write_bytes(data)
    assert bpy.ops.import_anim.gta_ifp(filepath=str(tmp_path / "in.ifp")) == {"FINISHED"}
    out = tmp_path / "out.ifp"
    assert bpy.ops.export_anim.gta_ifp(filepath=str(out), replace=False) == {"FINISHED"}
    assert out.read_bytes() == data


def test_anm_byte_for_byte_and_one_edit(blank_blend, tmp_path):
    bpy = blank_blend
    arm = _ped(bpy, tmp_path)
    skeleton = rw_samples.ped_skeleton(32)
    from rigport.operators.renderware.anm_importer import hanim_bones

    order = hanim_bones(arm)
    tracks = []
    for i, k in enumerate(ifp_samples.cycle_keys(skeleton, 9)):
        t = k.translation
        if t is None:
            t = np.tile(skeleton.local_translation[i], (len(k.times), 1))
        tracks.append((k.times.astype(np.float32).astype(np.float64), k.rotation, t))
    data = anm.write(anm.from_tracks(tracks, TARGETS["SA"][2]))
    (tmp_path / "walk.anm").write_bytes(data)
    assert bpy.ops.import_anim.rw_anm(filepath=str(tmp_path / "walk.anm")) == {"FINISHED"}
    out = tmp_path / "out.anm"
    assert bpy.ops.export_anim.rw_anm(filepath=str(out)) == {"FINISHED"}
    assert out.read_bytes() == data
    bone = order[3]
    _edit_one_key(arm.animation_data.action, bone, "rotation_quaternion", 2)
    assert bpy.ops.export_anim.rw_anm(filepath=str(out)) == {"FINISHED"}
    n = len(order)
    a, b = anm.read(data).tracks(n), anm.read(out.read_bytes()).tracks(n)
    for name, x, y in zip(order, a, b, strict=True):
        same = all(np.array_equal(u, v) for u, v in zip(x, y, strict=True))
        assert same == (name != bone), name


def _unigine_mesh(bpy, tmp_path):
    m = unigine_samples.skinned_mesh(animations=0)
    (tmp_path / "c.mesh").write_bytes(unigine_samples.mesh.write(m))
    assert bpy.ops.import_scene.unigine_mesh(filepath=str(tmp_path / "c.mesh")) == {"FINISHED"}
    return m


def test_unigine_anim_byte_for_byte(blank_blend, tmp_path):
    """Every component stored (flag 127): the keys come back as quantised. (Flag 15
    stores no scale, and the sample's scale box is then no function of the keys:
    the Unigine exporter fits a new one.)"""
    bpy = blank_blend
    m = _unigine_mesh(bpy, tmp_path)
    data = unigine_anim.write(unigine_samples.anim_file(m, 127))
    (tmp_path / "in.anim").write_bytes(data)
    assert bpy.ops.import_anim.unigine_anim(filepath=str(tmp_path / "in.anim")) == {"FINISHED"}
    out = tmp_path / "out.anim"
    assert bpy.ops.export_anim.unigine_anim(filepath=str(out)) == {"FINISHED"}
    assert out.read_bytes() == data


def _with_nubs(f: unigine_anim.AnimFile, parents: list[int]) -> list[str]:
    """Add a "Nub" end bone under each of ``parents`` to the file's skeleton and
    animate it in every clip (3ds Max's biped ends, which the mesh lacks)."""
    names = []
    for p in parents:
        names.append(f"{f.bones[p].name} Nub")
        f.bones.append(unigine_mesh.Bone(names[-1], p))
        f.bind = np.concatenate([f.bind, f.bind[p : p + 1]])
    for clip in f.animations:
        n = len(parents)
        clip.bones = np.concatenate(
            [clip.bones, np.arange(len(f.bones) - n, len(f.bones), dtype=clip.bones.dtype)]
        )
        fr = clip.frames
        for name in ("flags", "translation", "rotation", "scale"):
            a = getattr(fr, name)
            setattr(fr, name, np.concatenate([a, a[:, :n]], axis=1))
    return names


def test_unigine_nub_tracks_carried_through(blank_blend, tmp_path):
    """The .anim's tracks of bones the mesh lacks stay with the action and come
    back, in file order and exact, from ``extract_animation``, whatever skeleton
    header the Unigine exporter writes."""
    bpy = blank_blend
    from rigport.io_formats.unigine import anim_file_convert
    from rigport.io_formats.unigine.common import FRAME_RATE
    from rigport.operators.blender.extract import extract_animation
    from rigport.operators.result import Result

    m = _unigine_mesh(bpy, tmp_path)
    f = unigine_samples.anim_file(m, 127)
    nubs = _with_nubs(f, [2, 4])
    data = unigine_anim.write(f)
    (tmp_path / "in.anim").write_bytes(data)
    from rigport.operators.unigine.importer import import_anim_file
    from rigport.operators.unigine.settings import AnimImportOptions

    done = import_anim_file(bpy.context, str(tmp_path / "in.anim"), AnimImportOptions())
    assert any(all(n in w for n in nubs) for w in done.warnings), done.warnings
    arm = done.armature
    wanted = anim_file_convert.import_anim_file(unigine_anim.read(data), "in.anim", FRAME_RATE)
    for action, neutral in zip(done.actions, wanted, strict=True):
        result = Result()
        got = extract_animation(arm, action, result=result)
        assert [t.bone for t in got.tracks] == [t.bone for t in neutral.tracks]
        for a, b in zip(neutral.tracks, got.tracks, strict=True):
            for name in ("times", "translation", "rotation", "scale"):
                x, y = getattr(a, name), getattr(b, name)
                assert (x is None) == (y is None)
                if x is not None:  # as the file stores them (quantised: no residue kept)
                    same = neutral.settle(name, x).tobytes() == neutral.settle(name, y).tobytes()
                    assert same, (a.bone, name)
        assert any(f"carried {counted(len(nubs), 'track')}" in t for t in result.infos)
    out = tmp_path / "out.anim"
    assert bpy.ops.export_anim.unigine_anim(filepath=str(out)) == {"FINISHED"}
    assert out.read_bytes() == data


def test_forgotten_or_damaged_record(blank_blend, tmp_path, corpus_dir):
    """Forget Kept Data removes the record: Blender's keys are written (within
    float32 of the file's); a damaged record is refused with a sentence naming
    the action and the property."""
    bpy = blank_blend
    from rigport.io_formats.codec import FormatError
    from rigport.operators.blender import exact_keys, kept_keys
    from rigport.operators.blender.extract import extract_animation

    arm = _urho_model(bpy, tmp_path, (corpus_dir / "urho3d" / "Jack.mdl").read_bytes())
    data = (corpus_dir / "urho3d" / "Jack_Walk.ani").read_bytes()
    assert _urho_trip(bpy, tmp_path, data) == data
    action = arm.animation_data.action
    record = action[exact_keys.PROP]
    assert isinstance(record, bytes)  # version 4: raw bytes
    action[exact_keys.PROP] = record[:-8] + b"AAAAAAA="
    with pytest.raises(FormatError, match=f"action {action.name!r}.*{exact_keys.PROP}.*damaged"):
        extract_animation(arm, action)
    assert kept_keys.forget([action]) >= 1 and exact_keys.PROP not in action
    out = tmp_path / "forgotten.ani"
    assert bpy.ops.export_anim.urho3d_ani(filepath=str(out)) == {"FINISHED"}
    a, b = ani.read(data), ani.read(out.read_bytes())
    assert out.read_bytes() != data
    for x, y in zip(a.tracks, b.tracks, strict=True):
        assert x.name == y.name and x.mask == y.mask
        assert np.allclose(x.keys["time"], y.keys["time"], atol=1e-6)
        if x.mask & ani.CHANNEL_POSITION:
            assert np.allclose(x.keys["position"], y.keys["position"], atol=1e-5)


def _spy_keep(monkeypatch) -> list:
    """Every ``exact_keys.keep`` call's action, armature, rest and the tracks
    ``build_action`` converted from the keys it gave Blender."""
    from rigport.operators.blender import exact_keys as blender_exact_keys

    seen = []
    keep = blender_exact_keys.keep

    def spy(action, armature, anim, rest, missing, made=None, lossy=None, given=None):
        seen.append((action, armature, rest, made))
        return keep(action, armature, anim, rest, missing, made, lossy, given)

    monkeypatch.setattr(blender_exact_keys, "keep", spy)
    return seen


def _assert_made_is_blenders(seen: list) -> None:
    """keep()'s tracks equal, bit for bit, a conversion of Blender's read-back
    of the action (what an export reads)."""
    from rigport.operators.blender.extract import read_key_coords, tracks_from_coords

    assert seen
    for action, armature, rest, made in seen:
        assert made is not None
        back = tracks_from_coords(
            armature, read_key_coords(action, rest), rest, action["rigport_fps"]
        )
        back = [t for t in back if t.bone in {m.bone for m in made}]  # the rest are given
        assert [t.bone for t in made] == [t.bone for t in back]
        for a, b in zip(made, back, strict=True):
            for field in ("times", "translation", "rotation", "scale"):
                x, y = getattr(a, field), getattr(b, field)
                assert (x is None) == (y is None), (a.bone, field)
                if x is not None:
                    assert x.dtype == y.dtype and x.shape == y.shape, (a.bone, field)
                    assert x.tobytes() == y.tobytes(), (action.name, a.bone, field)


@pytest.mark.parametrize("name", ["Jack_Walk.ani", "reattiva/Tube_Wave.ani"])
def test_kept_tracks_equal_blenders_read_back_corpus(
    blank_blend, tmp_path, corpus_dir, monkeypatch, name
):
    bpy = blank_blend
    src = corpus_dir / "urho3d" / name
    _urho_model(
        bpy, tmp_path, (src.parent / ("Jack.mdl" if "Jack" in name else "Tube.mdl")).read_bytes()
    )
    seen = _spy_keep(monkeypatch)
    data = src.read_bytes()
    assert _urho_trip(bpy, tmp_path, data) == data
    _assert_made_is_blenders(seen)


@pytest.mark.parametrize("game", ["SA", "VC"])
def test_kept_tracks_equal_blenders_read_back_ifp(blank_blend, tmp_path, monkeypatch, game):
    bpy = blank_blend
    _ped(bpy, tmp_path, game, turned_frame=True)
    data = ifp.write(ifp_samples.walk_package(game, animations=3, quirks=True))
    (tmp_path / "in.ifp").write_bytes(data)
    seen = _spy_keep(monkeypatch)
    assert bpy.ops.import_anim.gta_ifp(filepath=str(tmp_path / "in.ifp")) == {"FINISHED"}
    assert len(seen) == 3
    _assert_made_is_blenders(seen)


@pytest.mark.parametrize("disorder", ["unsorted", "repeated"])
def test_kept_tracks_equal_blenders_read_back_disordered_times(
    blank_blend, tmp_path, corpus_dir, monkeypatch, disorder
):
    """Keys out of time order or at one time twice: Blender's F-curve update
    sorts them, so those tracks are read back from Blender, and still equal it."""
    bpy = blank_blend
    _urho_model(bpy, tmp_path, (corpus_dir / "urho3d" / "Jack.mdl").read_bytes())
    anim = ani.read((corpus_dir / "urho3d" / "Jack_Walk.ani").read_bytes())
    times = anim.tracks[1].keys["time"]
    assert len(times) > 4
    if disorder == "unsorted":
        anim.tracks[1].keys[[1, 3]] = anim.tracks[1].keys[[3, 1]]
    else:
        times[2] = times[1]
    seen = _spy_keep(monkeypatch)
    _urho_trip(bpy, tmp_path, ani.write(anim))
    _assert_made_is_blenders(seen)
    from rigport.operators.blender import compat

    action = seen[0][0]
    bone = anim.tracks[1].name
    fc = next(f for f in compat.fcurves(action) if f.data_path.startswith(f'pose.bones["{bone}"]'))
    co = np.empty(2 * len(fc.keyframe_points), np.float32)
    fc.keyframe_points.foreach_get("co", co)
    assert np.all(np.diff(co[0::2]) >= 0)  # Blender sorted them, unlike the file
