"""Names people recognise: clips whose name inside the file says nothing ("Take 001")
become actions named after their files, without ``.001`` suffixes; the exporter
writes the inner name back; batch's glTF export names its animations by file."""

from __future__ import annotations

from pathlib import Path

import pytest

from rigport.cli.bridges import _gltf_animation_names
from rigport.io_formats.urho3d import ani, mdl
from rigport.samples import urho3d as urho3d_samples
from rigport.tests.support import run_batch

CLIPS = ("Hero_Death", "Hero_Run", "Hero_Walk")


@pytest.fixture
def hero(tmp_path) -> list[Path]:
    """Hero.mdl and three animations all named "Take 001" inside."""
    model = urho3d_samples.skinned_model(n_bones=6, morphs=1)
    paths = [tmp_path / "Hero.mdl"]
    paths[0].write_bytes(mdl.write(model))
    for k, stem in enumerate(CLIPS):
        clip = urho3d_samples.walk_animation(model, n_keys=7 + k, name="Take 001", cycles=1 + k)
        paths.append(tmp_path / f"{stem}.ani")
        paths[-1].write_bytes(ani.write(clip))
    return paths


def test_take_001_clips_are_named_by_their_files(blank_blend, hero, tmp_path):
    bpy = blank_blend
    model, *anims = hero
    assert bpy.ops.import_scene.urho3d_mdl(filepath=str(model)) == {"FINISHED"}
    arm = next(o for o in bpy.data.objects if o.type == "ARMATURE")
    bpy.context.view_layer.objects.active = arm
    done = bpy.ops.import_anim.urho3d_ani(
        directory=str(tmp_path), files=[{"name": p.name} for p in anims]
    )
    assert done == {"FINISHED"}
    assert sorted(a.name for a in bpy.data.actions) == list(CLIPS)
    out = tmp_path / "out"
    out.mkdir()
    done = bpy.ops.export_anim.urho3d_ani(
        filepath=str(out / "Hero.ani"), export_animations="ACTIONS", use_action_names=True
    )
    assert done == {"FINISHED"}
    written = sorted(out.glob("*.ani"))
    assert [p.stem for p in written] == list(CLIPS)
    for path in written:
        again = ani.read(path.read_bytes())
        source = ani.read((tmp_path / path.name).read_bytes())
        assert again.name == "Take 001"
        assert len(again.tracks[0].keys) == len(source.tracks[0].keys)  # the file's own clip


def test_a_renamed_action_exports_its_new_name(blank_blend, hero, tmp_path):
    bpy = blank_blend
    model, walk = hero[0], hero[3]
    bpy.ops.import_scene.urho3d_mdl(filepath=str(model))
    arm = next(o for o in bpy.data.objects if o.type == "ARMATURE")
    bpy.context.view_layer.objects.active = arm
    assert bpy.ops.import_anim.urho3d_ani(filepath=str(walk)) == {"FINISHED"}
    action = bpy.data.actions["Hero_Walk"]
    action.name = "Stroll"
    out = tmp_path / "stroll.ani"
    assert bpy.ops.export_anim.urho3d_ani(filepath=str(out)) == {"FINISHED"}
    assert ani.read(out.read_bytes()).name == "Stroll"


def test_specific_names_are_kept(blank_blend, corpus_dir):
    bpy = blank_blend
    bpy.ops.import_scene.urho3d_mdl(filepath=str(corpus_dir / "urho3d/Jack.mdl"))
    arm = next(o for o in bpy.data.objects if o.type == "ARMATURE")
    bpy.context.view_layer.objects.active = arm
    bpy.ops.import_anim.urho3d_ani(filepath=str(corpus_dir / "urho3d/Jack_Walk.ani"))
    assert [a.name for a in bpy.data.actions] == ["Walk"]  # the file's own, specific name


def test_batch_gltf_animations_take_file_names(hero, tmp_path):
    glb = tmp_path / "hero.glb"
    proc = run_batch("convert", *hero, glb)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert sorted(_gltf_animation_names(str(glb))) == list(CLIPS)
    assert "Take 001" not in proc.stdout
    # a folder walk of a conversion finds the glTF; its clips come out by name
    folder, out = tmp_path / "gl", tmp_path / "out"
    folder.mkdir()
    out.mkdir()
    glb.rename(folder / "hero.glb")
    proc = run_batch("convert", folder, out, "--to", ".mdl", "--to", ".ani")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    want = ["hero.mdl", *(f"hero_{c}.ani" for c in CLIPS)]
    assert sorted(p.name for p in out.iterdir()) == sorted(want)
    assert {ani.read((out / f"hero_{c}.ani").read_bytes()).name for c in CLIPS} == set(CLIPS)
