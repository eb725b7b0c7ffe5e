"""Animations apply only where they fit: the same rule in every format, in package
import and in batch. No matching bone: refused with the counts, naming the file and
the armature, and nothing is left behind. Some bones missing: applied, with a
warning that counts and names the first missing bones."""

from __future__ import annotations

import pytest

from rigport.io_formats.urho3d import ani, mdl, package
from rigport.samples import urho3d as samples
from rigport.tests.support import run_batch


def _state(bpy) -> dict:
    arms = {o.name: o for o in bpy.data.objects if o.type == "ARMATURE"}
    return {
        "actions": sorted(a.name for a in bpy.data.actions),
        "objects": sorted(bpy.data.objects.keys()),
        "active": {
            n: (
                o.animation_data.action.name
                if o.animation_data and o.animation_data.action
                else None
            )
            for n, o in arms.items()
        },
        "tracks": {
            n: len(o.animation_data.nla_tracks) if o.animation_data else 0 for n, o in arms.items()
        },
    }


def _urho_files(tmp_path):
    model = samples.skinned_model(n_bones=6)
    names = [b.name for b in model.bones]
    (tmp_path / "m.mdl").write_bytes(mdl.write(model))
    alien = [f"Alien{i}" for i in range(28)]
    (tmp_path / "alien.ani").write_bytes(ani.write(samples.walk_animation(alien, name="Alien")))
    partial = names[:4] + [f"Gone{i}" for i in range(7)]
    (tmp_path / "partial.ani").write_bytes(ani.write(samples.walk_animation(partial, name="Part")))
    return model


def test_urho3d_refuses_an_animation_of_another_skeleton(blank_blend, tmp_path, capfd):
    bpy = blank_blend
    _urho_files(tmp_path)
    bpy.ops.import_scene.urho3d_mdl(filepath=str(tmp_path / "m.mdl"))
    arm = next(o for o in bpy.data.objects if o.type == "ARMATURE")
    bpy.context.view_layer.objects.active = arm
    before = _state(bpy)
    with pytest.raises(RuntimeError) as err:
        bpy.ops.import_anim.urho3d_ani(filepath=str(tmp_path / "alien.ani"))
    text = str(err.value)
    assert "alien.ani" in text and repr(arm.name) in text
    assert "0 of 28 animated bones match" in text
    assert _state(bpy) == before


def test_urho3d_partial_fit_warns(blank_blend, tmp_path, capfd):
    bpy = blank_blend
    _urho_files(tmp_path)
    bpy.ops.import_scene.urho3d_mdl(filepath=str(tmp_path / "m.mdl"))
    capfd.readouterr()
    assert bpy.ops.import_anim.urho3d_ani(filepath=str(tmp_path / "partial.ani")) == {"FINISHED"}
    out = capfd.readouterr().out
    assert "4 of 11 animated bones match armature" in out
    assert "Gone0, Gone1, Gone2, Gone3, Gone4 and 2 more" in out
    arm = next(o for o in bpy.data.objects if o.type == "ARMATURE")
    assert arm.animation_data.action.name == "Part"


def test_urho3d_multi_file_refusal_takes_back_the_good_file(blank_blend, tmp_path):
    bpy = blank_blend
    _urho_files(tmp_path)
    bpy.ops.import_scene.urho3d_mdl(filepath=str(tmp_path / "m.mdl"))
    before = _state(bpy)
    with pytest.raises(RuntimeError, match="0 of 28"):
        bpy.ops.import_anim.urho3d_ani(
            filepath=str(tmp_path / "partial.ani"),
            directory=str(tmp_path),
            files=[{"name": "partial.ani"}, {"name": "alien.ani"}],
        )
    assert _state(bpy) == before


def test_package_refuses_an_animation_of_another_skeleton(blank_blend, tmp_path):
    bpy = blank_blend
    model = _urho_files(tmp_path)
    pkg = package.new_package()
    pkg.put("Models/m.mdl", mdl.write(model))
    pkg.put("Models/alien.ani", (tmp_path / "alien.ani").read_bytes())
    (tmp_path / "p.pak").write_bytes(package.write(pkg))
    before = _state(bpy)
    with pytest.raises(RuntimeError) as err:
        bpy.ops.import_scene.urho3d_package(filepath=str(tmp_path / "p.pak"))
    assert "p.pak:Models/alien.ani" in str(err.value)
    assert "0 of 28 animated bones match" in str(err.value)
    assert _state(bpy) == before


def test_batch_refuses_an_animation_of_another_skeleton(tmp_path):
    _urho_files(tmp_path)
    proc = run_batch("import", tmp_path / "m.mdl", tmp_path / "alien.ani")
    assert proc.returncode != 0
    text = proc.stdout + proc.stderr
    assert "0 of 28 animated bones match" in text and "alien.ani" in text
    assert "Traceback" not in text


def test_batch_partial_fit_warns(tmp_path):
    _urho_files(tmp_path)
    proc = run_batch("import", tmp_path / "m.mdl", tmp_path / "partial.ani")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "4 of 11 animated bones match" in proc.stdout


def _unigine_files(tmp_path, rename: int):
    from rigport.io_formats.unigine import anim, mesh
    from rigport.samples import unigine as us

    m = us.skinned_mesh(animations=0)
    (tmp_path / "m.mesh").write_bytes(mesh.write(m))
    a = us.anim_file(m, clips=1)
    for b in a.bones[:rename]:
        b.name = f"Other_{b.name}"
    (tmp_path / "a.anim").write_bytes(anim.write(a))
    return len(a.bones)


def test_unigine_refuses_an_animation_of_another_skeleton(blank_blend, tmp_path):
    bpy = blank_blend
    n = _unigine_files(tmp_path, rename=99)
    bpy.ops.import_scene.unigine_mesh(filepath=str(tmp_path / "m.mesh"))
    before = _state(bpy)
    with pytest.raises(RuntimeError, match=f"a.anim: 0 of {n} animated bones match"):
        bpy.ops.import_anim.unigine_anim(filepath=str(tmp_path / "a.anim"))
    assert _state(bpy) == before


def test_unigine_partial_fit_warns(blank_blend, tmp_path, capfd):
    bpy = blank_blend
    n = _unigine_files(tmp_path, rename=2)
    bpy.ops.import_scene.unigine_mesh(filepath=str(tmp_path / "m.mesh"))
    capfd.readouterr()
    assert bpy.ops.import_anim.unigine_anim(filepath=str(tmp_path / "a.anim")) == {"FINISHED"}
    out = capfd.readouterr().out
    assert f"{n - 2} of {n} animated bones match armature" in out
    assert "Other_" in out


def test_bonespro_refuses_another_bone_count(blank_blend, tmp_path):
    """BonesPro animations carry no bone names: the bone count is the fit."""
    bpy = blank_blend
    from rigport.io_formats.bonespro import animation, structure
    from rigport.samples import bonespro as bs

    s = bs.structure()
    (tmp_path / "rig.txt").write_bytes(structure.write(s))
    small = bs.structure(names=["a", "b"], parents=[-1, 0])
    (tmp_path / "anim.txt").write_bytes(animation.write(bs.animation(small)))
    bpy.ops.import_scene.bonespro_structure(filepath=str(tmp_path / "rig.txt"))
    arm = next(o for o in bpy.data.objects if o.type == "ARMATURE")
    bpy.context.view_layer.objects.active = arm
    before = _state(bpy)
    with pytest.raises(RuntimeError) as err:
        bpy.ops.import_anim.bonespro_anim(filepath=str(tmp_path / "anim.txt"))
    assert "anim.txt" in str(err.value) and repr(arm.name) in str(err.value)
    assert _state(bpy) == before
