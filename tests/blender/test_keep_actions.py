"""Every action an import creates survives a save (keep_actions: one muted NLA
track per action, the last one active), and a take-back leaves nothing behind."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

#: Run in a fresh interpreter: open a .blend, print {action: keys} and per object
#: its active action and NLA track names.
_REPORT = textwrap.dedent(
    """
    import json, os, sys
    import bpy
    bpy.ops.wm.open_mainfile(filepath=sys.argv[1])

    def curves(action):
        if hasattr(bpy.types, "ActionSlot"):
            return [fc for layer in action.layers for strip in layer.strips
                    for bag in strip.channelbags for fc in bag.fcurves]
        return list(action.fcurves)

    owners = list(bpy.data.objects) + list(bpy.data.shape_keys)
    out = {
        "actions": {a.name: sum(len(fc.keyframe_points) for fc in curves(a))
                    for a in bpy.data.actions},
        "owners": {
            o.name: {
                "active": o.animation_data.action.name if o.animation_data.action else None,
                "tracks": [[s.action.name for s in t.strips] for t in o.animation_data.nla_tracks],
            }
            for o in owners if o.animation_data is not None
        },
    }
    sys.stdout.write("REPORT" + json.dumps(out) + "\\n")
    sys.stdout.flush()
    os._exit(0)
    """
)


def saved_report(path) -> dict:
    """What a fresh Blender finds in the saved ``path``."""
    proc = subprocess.run(
        [sys.executable, "-c", _REPORT, str(path)], capture_output=True, text=True, timeout=300
    )
    lines = [x for x in proc.stdout.splitlines() if x.startswith("REPORT")]
    assert lines, proc.stdout + proc.stderr
    return json.loads(lines[-1][len("REPORT") :])


def _action(bpy, name: str, keys: int):
    from rigport.operators.blender import compat

    action = bpy.data.actions.new(name)
    fc = compat.new_fcurve(action, "location", 0, "g")
    for k in range(keys):
        fc.keyframe_points.insert(k + 1, float(k))
    return action


def test_keep_actions_survive_save_and_take_back(blank_blend, tmp_path):
    bpy = blank_blend
    from rigport.operators.blender import compat
    from rigport.operators.blender.actions import keep_actions

    arm = bpy.data.objects.new("Rig", bpy.data.armatures.new("Rig"))
    bpy.context.scene.collection.objects.link(arm)
    own = _action(bpy, "Own", 2)
    compat.assign_action(arm, own)
    first = [_action(bpy, f"Clip{i}", i + 2) for i in range(3)]
    keep_actions(arm, first)
    second = [_action(bpy, f"More{i}", 3) for i in range(2)]
    undo = keep_actions(arm, second)
    assert arm.animation_data.action == second[-1]
    undo()  # the second import taken back: its tracks and actions go, Clip2 plays again
    assert arm.animation_data.action.name == "Clip2"
    assert sorted(a.name for a in bpy.data.actions) == ["Clip0", "Clip1", "Clip2", "Own"]
    assert [t.strips[0].action.name for t in arm.animation_data.nla_tracks] == [
        "Own",
        "Clip0",
        "Clip1",
        "Clip2",
    ]
    assert all(t.mute for t in arm.animation_data.nla_tracks)
    path = tmp_path / "kept.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(path))
    report = saved_report(path)
    assert report["actions"] == {"Own": 2, "Clip0": 2, "Clip1": 3, "Clip2": 4}
    assert report["owners"]["Rig"] == {
        "active": "Clip2",
        "tracks": [["Own"], ["Clip0"], ["Clip1"], ["Clip2"]],
    }


def test_take_back_restores_no_animation(blank_blend):
    bpy = blank_blend
    from rigport.operators.blender.actions import keep_actions

    arm = bpy.data.objects.new("Rig", bpy.data.armatures.new("Rig"))
    bpy.context.scene.collection.objects.link(arm)
    undo = keep_actions(arm, [_action(bpy, "A", 2), _action(bpy, "B", 2)])
    assert len(arm.animation_data.nla_tracks) == 2
    undo()
    assert arm.animation_data is None
    assert len(bpy.data.actions) == 0


@pytest.mark.parametrize("with_own", [False, True])
def test_take_back_after_owner_removed(blank_blend, with_own):
    """A take-back after the owner is gone (a failed model import) only removes actions."""
    bpy = blank_blend
    from rigport.operators.blender import compat
    from rigport.operators.blender.actions import keep_actions

    arm = bpy.data.objects.new("Rig", bpy.data.armatures.new("Rig"))
    bpy.context.scene.collection.objects.link(arm)
    if with_own:
        compat.assign_action(arm, _action(bpy, "Own", 2))
    undo = keep_actions(arm, [_action(bpy, "A", 2)])
    bpy.data.objects.remove(arm)
    undo()
    assert [a.name for a in bpy.data.actions] == (["Own"] if with_own else [])


# ------------------------------------------------------------------ every importer


def _counts(bpy) -> dict:
    from rigport.operators.blender import compat

    return {
        a.name: sum(len(fc.keyframe_points) for fc in compat.fcurves(a)) for a in bpy.data.actions
    }


def _save_and_check(bpy, tmp_path, owner: str, imported: list[str], embedded: int = 0) -> None:
    """Save, reopen in a fresh process: every action with all its keys, one track per
    imported action on ``owner`` in import order, the last one active."""
    expected = _counts(bpy)
    assert len(expected) == len(imported) + embedded
    assert all(n > 0 for n in expected.values()), expected
    path = tmp_path / "saved.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(path))
    report = saved_report(path)
    assert report["actions"] == expected
    tracks = report["owners"][owner]["tracks"]
    assert tracks[-len(imported) :] == [[n] for n in imported]
    assert report["owners"][owner]["active"] == imported[-1]


def _multi(op, paths, **kw):
    """Run an import operator on several files at once (multi-select)."""
    return op(
        filepath=str(paths[0]),
        directory=str(paths[0].parent),
        files=[{"name": p.name} for p in paths],
        **kw,
    )


def _rig_and_animations(bpy, tmp_path, ops: tuple[str, str], rig: tuple, anims: list):
    """Import the file ``rig`` (name, bytes) with ``import_scene.<ops[0]>``, then
    the animation files ``anims`` (name, bytes) in one multi-file
    ``import_anim.<ops[1]>``: the armature."""
    (tmp_path / rig[0]).write_bytes(rig[1])
    paths = []
    for name, data in anims:
        paths.append(tmp_path / name)
        paths[-1].write_bytes(data)
    rig_op, anim_op = getattr(bpy.ops.import_scene, ops[0]), getattr(bpy.ops.import_anim, ops[1])
    assert rig_op(filepath=str(tmp_path / rig[0])) == {"FINISHED"}
    assert _multi(anim_op, paths) == {"FINISHED"}
    return next(o for o in bpy.data.objects if o.type == "ARMATURE")


def test_urho3d_model_and_five_animations(blank_blend, tmp_path):
    bpy = blank_blend
    from rigport.io_formats.urho3d import ani, mdl
    from rigport.samples import urho3d as samples

    model = samples.skinned_model(n_bones=6)
    anims = [
        (f"a{i}.ani", ani.write(samples.walk_animation(model, 9 + i, name=f"Walk{i}")))
        for i in range(5)
    ]
    rig = ("m.mdl", mdl.write(model))
    arm = _rig_and_animations(bpy, tmp_path, ("urho3d_mdl", "urho3d_ani"), rig, anims)
    _save_and_check(bpy, tmp_path, arm.name, [f"Walk{i}" for i in range(5)])


def test_urho3d_package_five_clips_of_one_name(blank_blend, tmp_path):
    """The issue's case: four clips all named "Take 001" in one package; all kept."""
    bpy = blank_blend
    from rigport.io_formats.urho3d import ani, mdl, package
    from rigport.samples import urho3d as samples

    model = samples.skinned_model(n_bones=6)
    pkg = package.new_package()
    pkg.put("Models/m.mdl", mdl.write(model))
    for i in range(5):
        pkg.put(
            f"Models/t{i}.ani", ani.write(samples.walk_animation(model, 5 + i, name="Take 001"))
        )
    (tmp_path / "p.pak").write_bytes(package.write(pkg))
    assert bpy.ops.import_scene.urho3d_package(filepath=str(tmp_path / "p.pak")) == {"FINISHED"}
    arm = next(o for o in bpy.data.objects if o.type == "ARMATURE")
    names = [f"t{i}" for i in range(5)]  # "Take 001" inside each: named by file
    _save_and_check(bpy, tmp_path, arm.name, names)


def test_unigine_mesh_and_five_anims(blank_blend, tmp_path):
    bpy = blank_blend
    from rigport.io_formats.unigine import anim, mesh
    from rigport.samples import unigine as samples

    m = samples.skinned_mesh(animations=2)
    anims = [
        (f"a{i}.anim", anim.write(samples.anim_file(m, n_frames=6 + i, clips=1))) for i in range(5)
    ]
    rig = ("m.mesh", mesh.write(m))
    arm = _rig_and_animations(bpy, tmp_path, ("unigine_mesh", "unigine_anim"), rig, anims)
    names = [f"a{i}" for i in range(5)]  # "take_0" inside each: named by file
    _save_and_check(bpy, tmp_path, arm.name, names, embedded=2)


def test_bonespro_structure_and_five_animations(blank_blend, tmp_path):
    bpy = blank_blend
    from rigport.io_formats.bonespro import animation, structure
    from rigport.samples import bonespro as samples

    s = samples.structure()
    anims = [
        (f"anim{i}.txt", animation.write(samples.animation(s, n_frames=3 + i, seed=i)))
        for i in range(5)
    ]
    rig = ("rig.txt", structure.write(s))
    arm = _rig_and_animations(bpy, tmp_path, ("bonespro_structure", "bonespro_anim"), rig, anims)
    _save_and_check(bpy, tmp_path, arm.name, [f"anim{i}" for i in range(5)])


def test_mrtk_five_recordings(blank_blend, tmp_path):
    """Every object of every recording keeps its action."""
    bpy = blank_blend
    from rigport.io_formats.mrtk import recording
    from rigport.samples import mrtk as samples

    paths = []
    for i in range(5):
        p = tmp_path / f"rec{i}.bin"
        p.write_bytes(recording.write(samples.sample_recording(keys=4 + i, seed=i)))
        paths.append(p)
    assert _multi(bpy.ops.import_anim.mrtk_input, paths) == {"FINISHED"}
    expected = _counts(bpy)
    assert len(expected) >= 5
    path = tmp_path / "saved.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(path))
    report = saved_report(path)
    assert report["actions"] == expected
    for name, owner in report["owners"].items():
        if owner["active"] is not None:
            assert owner["tracks"] == [[owner["active"]]], name


def test_batch_import_save(tmp_path):
    """``batch.py import model anims --save``: every animation in the saved file."""
    from rigport.io_formats.urho3d import ani, mdl
    from rigport.samples import urho3d as samples
    from rigport.tests.support import run_batch

    model = samples.skinned_model(n_bones=6)
    (tmp_path / "m.mdl").write_bytes(mdl.write(model))
    paths = []
    for i in range(5):
        p = tmp_path / f"a{i}.ani"
        p.write_bytes(ani.write(samples.walk_animation(model, 9 + i, name=f"Walk{i}")))
        paths.append(p)
    out = tmp_path / "b.blend"
    proc = run_batch("import", tmp_path / "m.mdl", *paths, "--save", out)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = saved_report(out)
    assert sorted(report["actions"]) == [f"Walk{i}" for i in range(5)]
    assert all(n > 0 for n in report["actions"].values())
    (owner,) = [o for o in report["owners"].values() if o["tracks"]]
    assert owner["tracks"] == [[f"Walk{i}"] for i in range(5)]
    assert owner["active"] == "Walk4"


def test_switching_actions_in_a_fresh_session_does_not_crash(tmp_path):
    """4.4+: switching or clearing an action whose slot was assigned before the
    dependency graph was evaluated crashed Blender (bpy module, ``blender -b``);
    compat.assign_action and keep_actions settle the slot users first. In a child
    process: a crash is a signal, not an exception."""
    from rigport.tests.support import ROOT

    script = textwrap.dedent(
        """
        import os, runpy, sys
        root = sys.argv[1]
        rigport = runpy.run_path(os.path.join(root, "loader.py"))["package"](init=True)
        import bpy
        from rigport.operators.blender import compat
        from rigport.operators.blender.actions import keep_actions
        arm = bpy.data.objects.new("Arm", bpy.data.armatures.new("Arm"))
        bpy.context.scene.collection.objects.link(arm)
        def action(name):
            a = bpy.data.actions.new(name)
            compat.new_fcurve(a, "location", 0, "g").keyframe_points.insert(1, 0.0)
            return a
        compat.assign_action(arm, action("a"))
        compat.assign_action(arm, action("b"))
        undo = keep_actions(arm, [action("c")])
        undo()
        print("SURVIVED", arm.animation_data.action.name, flush=True)
        os._exit(0)
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", script, str(ROOT)], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "SURVIVED b" in proc.stdout


def test_scene_state_takes_back_stashed_tracks(blank_blend):
    """A failed import's snapshot covers NLA tracks: the tracks an import stashed on
    an armature that was there before go with its actions, and the armature plays
    its own action again."""
    bpy = blank_blend
    from rigport.operators.blender import compat
    from rigport.operators.blender.actions import keep_actions
    from rigport.operators.blender.snapshot import SceneState

    arm = bpy.data.objects.new("Rig", bpy.data.armatures.new("Rig"))
    bpy.context.scene.collection.objects.link(arm)
    own = _action(bpy, "Own", 2)
    compat.assign_action(arm, own)
    keep_actions(arm, [own])
    state = SceneState(bpy.context)
    keep_actions(arm, [_action(bpy, "A", 2), _action(bpy, "B", 2)])
    bare = bpy.data.objects.new("Bare", bpy.data.armatures.new("Bare"))
    bpy.context.scene.collection.objects.link(bare)
    state.restore()
    assert [a.name for a in bpy.data.actions] == ["Own"]
    assert arm.animation_data.action == own
    assert [t.strips[0].action.name for t in arm.animation_data.nla_tracks] == ["Own"]
    assert "Bare" not in bpy.data.objects
