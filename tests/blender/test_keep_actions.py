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
