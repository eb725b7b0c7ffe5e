"""``batch.py convert`` to and from glTF, FBX and USD, checked by readers that are not
RigPort: the Khronos glTF-Validator (npm ``gltf-validator``, installed by ``make
venv`` into ``.venv/node``), Pixar's ``usd-core`` (in a subprocess: bpy links its
own USD libraries), Blender's FBX importer, the Urho3D engine rules and librw.

Every glTF a test here writes goes through the validator; every USD through
``usd-core``; every FBX through Blender's importer."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rigport.io_formats.urho3d import ani, engine_rules, mdl
from rigport.samples import urho3d as urho3d_samples
from rigport.tests.clients import run_rwinfo
from rigport.tests.support import ROOT, run_batch

NODE_PREFIX = Path(os.environ.get("RIGPORT_NODE_PREFIX", ROOT / ".venv" / "node"))
VALIDATOR = NODE_PREFIX / "node_modules" / "gltf-validator"

VALIDATE_JS = r"""
const fs = require("fs");
const path = require("path");
const validator = require(process.argv[1]);
const file = process.argv[2];
validator
  .validateBytes(new Uint8Array(fs.readFileSync(file)), {
    uri: path.basename(file),
    externalResourceFunction: (uri) =>
      new Promise((resolve, reject) =>
        fs.readFile(path.resolve(path.dirname(file), decodeURIComponent(uri)), (err, data) =>
          err ? reject(err.toString()) : resolve(new Uint8Array(data))
        )
      ),
  })
  .then((report) => process.stdout.write(JSON.stringify(report)))
  .catch((err) => { process.stderr.write(String(err) + "\n"); process.exit(2); });
"""

USD_PY = r"""
import json, sys
try:
    from pxr import Usd, UsdSkel
except ImportError:
    sys.exit(3)
stage = Usd.Stage.Open(sys.argv[1])
out = {"skeletons": [], "animations": []}
for prim in stage.Traverse():
    if prim.IsA(UsdSkel.Skeleton):
        out["skeletons"].append(len(UsdSkel.Skeleton(prim).GetJointsAttr().Get() or []))
    elif prim.IsA(UsdSkel.Animation):
        anim = UsdSkel.Animation(prim)
        out["animations"].append(len(anim.GetRotationsAttr().GetTimeSamples()))
print(json.dumps(out))
"""


def validate_gltf(path: Path) -> dict:
    """The glTF-Validator's report on ``path``; fails the test on any error."""
    if shutil.which("node") is None:
        pytest.skip("the glTF-Validator needs node, which is not installed")
    if not VALIDATOR.is_dir():
        pytest.skip(f"gltf-validator is not installed in {NODE_PREFIX} (make venv installs it)")
    res = subprocess.run(
        ["node", "-e", VALIDATE_JS, str(VALIDATOR), str(path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 0, res.stderr
    report = json.loads(res.stdout)
    errors = [m for m in report["issues"]["messages"] if m["severity"] == 0]
    assert report["issues"]["numErrors"] == 0, errors
    return report["info"]


def read_usd(path: Path) -> dict:
    """Joint counts of the skeletons and rotation time samples of the skeleton
    animations in ``path``, read by usd-core with this interpreter in a subprocess."""
    res = subprocess.run(
        [sys.executable, "-c", USD_PY, str(path)], capture_output=True, text=True, timeout=300
    )
    if res.returncode == 3:
        pytest.skip("usd-core is not installed for this Python (requirements/bpy*.txt)")
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def convert(*args: object) -> str:
    proc = run_batch("convert", *args)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


@pytest.fixture
def jack(corpus_dir) -> tuple[Path, Path]:
    u = corpus_dir / "urho3d"
    return u / "Jack.mdl", u / "Jack_Walk.ani"


@pytest.fixture
def tentacle(tmp_path) -> list[Path]:
    """A generated skinned tentacle with two morphs and two animations."""
    model = urho3d_samples.skinned_model(n_bones=8, morphs=2)
    paths = [tmp_path / "Tentacle.mdl"]
    paths[0].write_bytes(mdl.write(model))
    for name, cycles in (("Walk", 1), ("Wave", 2)):
        path = tmp_path / f"Tentacle_{name}.ani"
        path.write_bytes(ani.write(urho3d_samples.walk_animation(model, name=name, cycles=cycles)))
        paths.append(path)
    return paths


@pytest.mark.parametrize("ext", [".glb", ".gltf"])
def test_urho3d_character_to_gltf(jack, tmp_path, ext):
    out = tmp_path / f"jack{ext}"
    convert(*jack, out)
    info = validate_gltf(out)
    assert info["animationCount"] == 1 and info["hasSkins"]


def test_every_animation_and_morph_in_gltf(tentacle, tmp_path):
    out = tmp_path / "tentacle.glb"
    # the animations are named first: models are imported before them
    convert(*tentacle[1:], tentacle[0], out)
    info = validate_gltf(out)
    assert info["animationCount"] == 2
    assert info["hasSkins"] and info["hasMorphTargets"]
    again = tmp_path / "again.glb"
    convert(out, "--action", "Wave", again)
    assert validate_gltf(again)["animationCount"] == 1


@pytest.mark.parametrize("ext", [".usda", ".usdc", ".usd"])
def test_urho3d_character_to_usd(jack, tmp_path, ext):
    out = tmp_path / f"jack{ext}"
    convert(*jack, out)
    bones = len(mdl.read(jack[0].read_bytes()).bones)
    keys = ani.read(jack[1].read_bytes()).tracks[0].keys
    usd = read_usd(out)
    assert usd["skeletons"] == [bones]
    assert usd["animations"] and min(usd["animations"]) >= min(len(keys), 2)


def test_urho3d_character_to_fbx_read_by_blender(blank_blend, jack, tmp_path):
    bpy = blank_blend
    out = tmp_path / "jack.fbx"
    convert(*jack, out)
    assert bpy.ops.import_scene.urho3d_mdl(filepath=str(jack[0]), lods="ALL") == {"FINISHED"}
    bones = sum(len(o.data.bones) for o in bpy.data.objects if o.type == "ARMATURE")
    vertices = sum(len(o.data.vertices) for o in bpy.data.objects if o.type == "MESH")
    bpy.ops.wm.read_factory_settings(use_empty=True)
    import addon_utils

    if hasattr(bpy.types, "WM_OT_fbx_import"):  # the C++ importer (4.5 and later)
        assert bpy.ops.wm.fbx_import(filepath=str(out)) == {"FINISHED"}
    else:
        addon_utils.enable("io_scene_fbx", default_set=True)
        assert bpy.ops.import_scene.fbx(filepath=str(out)) == {"FINISHED"}
    armatures = [o for o in bpy.data.objects if o.type == "ARMATURE"]
    assert [len(o.data.bones) for o in armatures] == [bones]
    assert sum(len(o.data.vertices) for o in bpy.data.objects if o.type == "MESH") == vertices
    assert any("Walk" in a.name for a in bpy.data.actions), [a.name for a in bpy.data.actions]


def test_gltf_character_into_urho3d(tentacle, tmp_path):
    glb = tmp_path / "hero.glb"
    convert(*tentacle, glb)
    validate_gltf(glb)
    out = tmp_path / "hero.mdl"
    convert(glb, out)
    model = mdl.read(out.read_bytes())
    assert engine_rules.check(model) == []
    assert len(model.bones) == 8
    folder = tmp_path / "urho"
    folder.mkdir()
    convert(glb, folder, "--to", ".mdl", "--to", ".ani")
    names = sorted(p.name for p in folder.iterdir())
    assert names == ["hero.mdl", "hero_Walk.ani", "hero_Wave.ani"]
    assert engine_rules.check(mdl.read((folder / "hero.mdl").read_bytes())) == []
    walk = ani.read((folder / "hero_Walk.ani").read_bytes())
    assert len(walk.tracks) == 8


def test_gltf_character_into_renderware(jack, tmp_path):
    glb = tmp_path / "jack.glb"
    convert(*jack, glb)
    validate_gltf(glb)
    out = tmp_path / "jack.dff"
    convert(glb, out)
    assert "jack.dff" in run_rwinfo(out).splitlines()[0]


def test_fbx_and_usd_back_into_urho3d(jack, tmp_path):
    bones = len(mdl.read(jack[0].read_bytes()).bones)
    for ext in (".fbx", ".usdc"):
        scene = tmp_path / f"jack{ext}"
        convert(*jack, scene)
        out = tmp_path / f"from_{ext[1:]}.mdl"
        convert(scene, out)
        assert len(mdl.read(out.read_bytes()).bones) == bones


def test_axis_and_scale_flags(jack, tmp_path):
    bones = len(mdl.read(jack[0].read_bytes()).bones)
    fbx = tmp_path / "jack.fbx"
    convert(*jack, fbx, "--axis-forward", "Y", "--axis-up", "Z", "--scale", "0.5")
    usd = tmp_path / "jack.usda"
    convert(*jack, usd, "--axis-forward", "Y", "--axis-up", "Z")
    assert read_usd(usd)["skeletons"] == [bones]
    out = tmp_path / "back.mdl"
    convert(fbx, out, "--scale", "2")
    assert len(mdl.read(out.read_bytes()).bones) == bones


def test_usage(jack, tmp_path):
    proc = run_batch("convert", jack[0], tmp_path / "jack.obj")
    assert proc.returncode == 2
    assert all(ext in proc.stderr for ext in (".glb", ".gltf", ".fbx", ".usd", ".mdl"))
    proc = run_batch("convert", jack[0], tmp_path / "jack.glb", "--scale", "2")
    assert proc.returncode == 2 and "--scale applies to .fbx" in proc.stderr
    # a negative axis is given with "=": argparse takes "-Y" alone for an option
    proc = run_batch("convert", jack[0], tmp_path / "j.fbx", "--axis-up=Y", "--axis-forward=-Y")
    assert proc.returncode == 2 and "the same axis" in proc.stderr
    proc = run_batch("convert", *jack, tmp_path / "jack.glb", "--action", "Run")
    assert proc.returncode == 2 and "no such action" in proc.stderr
