"""Which actions an animation export writes and the files they go to: the one
shared module (``operators/animation_files.py``) every exporter uses, and the
exporters that write one animation per file agreeing on its names and its
refusals."""

from __future__ import annotations

import pytest

FRAMES = (1, 5)


def _rig(bpy):
    """An armature with bones "A" and "B" and no action assigned."""
    bpy.ops.object.armature_add()
    arm = bpy.context.view_layer.objects.active
    arm.name = "Rig"
    bpy.ops.object.mode_set(mode="EDIT")
    b = arm.data.edit_bones.new("B")
    b.head, b.tail = (0, 0, 1), (0, 0, 2)
    b.parent = arm.data.edit_bones["Bone"]
    arm.data.edit_bones["Bone"].name = "A"
    bpy.ops.object.mode_set(mode="OBJECT")
    return arm


def _action(bpy, arm, name: str, bone: str = "A", z: float = 1.0):
    """A new action keying ``bone``'s location, left unassigned."""
    ad = arm.animation_data or arm.animation_data_create()
    ad.action = None
    pb = arm.pose.bones[bone]
    for frame in FRAMES:
        pb.location = (0.0, 0.0, z * frame)
        pb.keyframe_insert("location", frame=frame)
    action = ad.action
    action.name = name
    action.use_fake_user = True
    ad.action = None
    return action


def _track(arm, name: str, *actions):
    """An NLA track ``name`` with one strip per action, one after the other."""
    track = arm.animation_data.nla_tracks.new()
    track.name = name
    for k, action in enumerate(actions):
        track.strips.new(f"{name}{k}", 1 + 100 * k, action)
    return track


def test_bone_actions_are_the_armatures_by_name(blank_blend):
    from rigport.operators.animation_files import bone_actions

    bpy = blank_blend
    arm = _rig(bpy)
    walk, idle = _action(bpy, arm, "walk", "B"), _action(bpy, arm, "Idle", "A")
    bpy.ops.object.empty_add()
    other = bpy.context.view_layer.objects.active
    other.location = (1, 2, 3)
    other.keyframe_insert("location", frame=1)
    other.animation_data.action.name = "Aaa_object"
    assert bone_actions(arm) == [idle, walk]


def test_nla_names_are_the_track_then_track_dot_n(blank_blend):
    from rigport.operators.animation_files import chosen_actions, nla_actions

    bpy = blank_blend
    arm = _rig(bpy)
    walk, run, jump = (_action(bpy, arm, n) for n in ("walk", "run", "jump"))
    _track(arm, "Moves", walk, run, walk)
    _track(arm, "Jump", jump)
    arm.animation_data.nla_tracks.new().name = "Empty"
    want = [("Moves", walk), ("Moves.1", run), ("Moves.2", walk), ("Jump", jump)]
    assert nla_actions(arm) == want
    assert chosen_actions(arm, "NLA") == want
    assert chosen_actions(arm, "ACTIONS") == [("jump", jump), ("run", run), ("walk", walk)]
    assert chosen_actions(arm, "ACTIVE") == []
    arm.animation_data.action = run
    assert chosen_actions(arm, "ACTIVE") == [("run", run)]
    with pytest.raises(ValueError, match="SOME"):
        chosen_actions(arm, "SOME")


def test_nothing_chosen_is_one_sentence_per_choice(blank_blend):
    from rigport.operators.animation_files import chosen_actions, none_message

    arm = _rig(blank_blend)
    for which, words in (
        ("ACTIVE", "has no action to export"),
        ("ACTIONS", "no action animates a bone of armature 'Rig'"),
        ("NLA", "has no NLA track with an action"),
    ):
        assert chosen_actions(arm, which) == []
        assert words in none_message(arm, which)


def test_clashing_file_names_are_refused_letter_case_ignored(blank_blend):
    from rigport.io_formats.codec import FormatError
    from rigport.operators.animation_files import action_paths

    paths = action_paths("/x/out.anim", ["a b", "r/un", "Walk"], False)
    assert [p.replace("\\", "/") for p in paths] == [
        "/x/out_a_b.anim",
        "/x/out_r_un.anim",
        "/x/out_Walk.anim",
    ]
    assert action_paths("/x/out.anim", ["walk"], True)[0].replace("\\", "/") == "/x/walk.anim"
    clash = r"/x/out\.anim: animations 'a b' and 'A_B' would both be written to out_A_B\.anim"
    with pytest.raises(FormatError, match=clash):
        action_paths("/x/out.anim", ["a b", "A_B"], False)
    with pytest.raises(FormatError, match=r"'Walk' and 'walk' would both be written to walk\.anim"):
        action_paths("/x/out.anim", ["Walk", "walk"], True)


def test_chosen_files_active_to_the_path_others_beside_it(blank_blend):
    from rigport.io_formats.codec import FormatError
    from rigport.operators.animation_files import chosen_files

    bpy = blank_blend
    arm = _rig(bpy)
    with pytest.raises(FormatError, match=r"/x/hero\.ani: armature 'Rig' has no action"):
        chosen_files(arm, "ACTIVE", "/x/hero.ani", False)
    walk, run = _action(bpy, arm, "walk"), _action(bpy, arm, "run")
    arm.animation_data.action = walk
    assert chosen_files(arm, "ACTIVE", "/x/hero.ani", True) == [("/x/hero.ani", "walk", walk)]
    got = chosen_files(arm, "ACTIONS", "/x/hero.ani", False)
    assert [(p.replace("\\", "/"), n, a) for p, n, a in got] == [
        ("/x/hero_run.ani", "run", run),
        ("/x/hero_walk.ani", "walk", walk),
    ]


#: Exporters of one animation per file: (operator, extension).
ONE_PER_FILE = (
    ("urho3d_ani", ".ani"),
    ("unigine_anim", ".anim"),
    ("rw_anm", ".anm"),
    ("bonespro_anim", ".txt"),
)


def _export(bpy, idname: str, path, **kw):
    return getattr(bpy.ops.export_anim, idname)(filepath=str(path), **kw)


def _unnamed(idname: str, data: bytes) -> bytes:
    """The file without the animation name a Unigine .anim writes in it."""
    if idname != "unigine_anim":
        return data
    from rigport.io_formats.unigine import anim

    f = anim.read(data)
    for clip in f.animations:
        clip.name = ""
    return anim.write(f)


@pytest.mark.parametrize(("idname", "ext"), ONE_PER_FILE)
def test_every_exporter_names_nla_files_alike(blank_blend, tmp_path, idname, ext):
    bpy = blank_blend
    arm = _rig(bpy)
    walk, run = _action(bpy, arm, "walk"), _action(bpy, arm, "run", z=2.0)
    _track(arm, "Moves", walk, run)
    _track(arm, "Rest", walk)
    bpy.context.view_layer.objects.active = arm
    arm.select_set(True)
    out = tmp_path / "nla"
    out.mkdir()
    assert _export(bpy, idname, out / f"hero{ext}", export_animations="NLA") == {"FINISHED"}
    assert sorted(p.name for p in out.iterdir()) == sorted(
        f"hero_{n}{ext}" for n in ("Moves", "Moves_1", "Rest")
    )
    # each strip's own action: walk twice, run once
    got = {n: _unnamed(idname, (out / f"hero_{n}{ext}").read_bytes()) for n in ("Moves", "Rest")}
    assert got["Moves"] == got["Rest"]
    assert got["Moves"] != _unnamed(idname, (out / f"hero_Moves_1{ext}").read_bytes())


@pytest.mark.parametrize(("idname", "ext"), ONE_PER_FILE)
def test_every_exporter_refuses_a_clash_before_writing(blank_blend, tmp_path, idname, ext):
    bpy = blank_blend
    arm = _rig(bpy)
    _action(bpy, arm, "Walk")
    _action(bpy, arm, "walk", z=2.0)
    bpy.context.view_layer.objects.active = arm
    arm.select_set(True)
    with pytest.raises(RuntimeError, match=f"'Walk' and 'walk' would both be written to walk{ext}"):
        _export(
            bpy, idname, tmp_path / f"x{ext}", export_animations="ACTIONS", use_action_names=True
        )
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("idname", "ext"), ONE_PER_FILE)
def test_every_exporter_says_when_nothing_is_chosen(blank_blend, tmp_path, idname, ext):
    bpy = blank_blend
    arm = _rig(bpy)
    bpy.context.view_layer.objects.active = arm
    arm.select_set(True)
    with pytest.raises(RuntimeError, match="has no NLA track with an action"):
        _export(bpy, idname, tmp_path / f"x{ext}", export_animations="NLA")
    with pytest.raises(RuntimeError, match="no action animates a bone of armature 'Rig'"):
        _export(bpy, idname, tmp_path / f"x{ext}", export_animations="ACTIONS")
    assert list(tmp_path.iterdir()) == []
