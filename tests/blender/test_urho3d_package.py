"""File > Import > Urho3D Package and batch.py's package paths, in Blender."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rigport.io_formats.urho3d import ani, mdl, package
from rigport.samples import rbfx as rbfx_samples
from rigport.tests.support import run_batch

pytest.importorskip("lz4.block")


def _pak(tmp_path: Path, compressed: bool = True, rbfx: bool = False) -> Path:
    path = tmp_path / ("rbfx.pak" if rbfx else "Data.pak")
    path.write_bytes(rbfx_samples.sample_package(compressed, rbfx))
    return path


def _state(bpy) -> tuple:
    return (
        sorted(o.name for o in bpy.data.objects),
        sorted(m.name for m in bpy.data.meshes),
        sorted(a.name for a in bpy.data.armatures),
        sorted(a.name for a in bpy.data.actions),
        sorted(c.name for c in bpy.data.collections),
    )


@pytest.mark.parametrize("layout", ["ULZ4", "RPAK"])
def test_import_whole_package(blank_blend, tmp_path, layout):
    bpy = blank_blend
    pak = _pak(tmp_path, compressed=layout == "ULZ4", rbfx=layout == "RPAK")
    assert bpy.ops.import_scene.urho3d_package(filepath=str(pak)) == {"FINISHED"}
    arms = {o.name: o for o in bpy.data.objects if o.type == "ARMATURE"}
    assert set(arms) == {"Tentacle", "Ünïcode_模型"}
    tentacle = arms["Tentacle"]
    assert tentacle.animation_data.action.name == "Wave"
    assert (
        arms["Ünïcode_模型"].animation_data is None
        or not arms["Ünïcode_模型"].animation_data.action
    )
    # the animation on the imported armature exports back to the package's keys
    out = tmp_path / "back.ani"
    bpy.context.view_layer.objects.active = tentacle
    assert bpy.ops.export_anim.urho3d_ani(filepath=str(out)) == {"FINISHED"}
    src = ani.read(package.read(pak.read_bytes()).get("Models/Tentacle_Wave.ani"))
    back = ani.read(out.read_bytes())
    assert back.version == src.version == 3
    for x, y in zip(src.tracks, back.tracks, strict=True):
        assert x.name == y.name and x.weight == y.weight
        u, v = x.keys["rotation"], y.keys["rotation"]
        v = v * np.sign(np.sum(u * v, axis=1, keepdims=True))
        assert np.allclose(u, v, atol=1e-5)
        assert np.allclose(x.keys["position"], y.keys["position"], atol=1e-5)
    # the UMD3 model's morph weights are shape key values
    mesh = next(o for o in bpy.data.objects if o.type == "MESH" and o.parent is tentacle)
    assert [k.value for k in mesh.data.shape_keys.key_blocks[1:]] == [0.25, 0.75]


def test_import_chosen_members(blank_blend, tmp_path):
    bpy = blank_blend
    pak = _pak(tmp_path)
    assert bpy.ops.import_scene.urho3d_package(
        filepath=str(pak), members=rbfx_samples.NON_ASCII_NAME, lods="ALL"
    ) == {"FINISHED"}
    assert sorted(o.type for o in bpy.data.objects) == ["ARMATURE", "MESH"]
    assert not bpy.data.actions


def test_animation_only_goes_onto_the_active_armature(blank_blend, tmp_path):
    bpy = blank_blend
    pak = _pak(tmp_path)
    bpy.ops.import_scene.urho3d_package(filepath=str(pak), members="Models/Tentacle.mdl")
    arm = next(o for o in bpy.data.objects if o.type == "ARMATURE")
    bpy.context.view_layer.objects.active = arm
    assert bpy.ops.import_scene.urho3d_package(
        filepath=str(pak), members="Models/Tentacle_Wave.ani"
    ) == {"FINISHED"}
    assert arm.animation_data.action.name == "Wave"


def test_damaged_member_leaves_nothing(blank_blend, tmp_path):
    bpy = blank_blend
    pkg = package.read(rbfx_samples.sample_package(True))
    anim = pkg.get("Models/Tentacle_Wave.ani")
    pkg.put("Models/Tentacle_Wave.ani", anim[: len(anim) // 2])  # valid package, bad file
    bad = tmp_path / "bad.pak"
    bad.write_bytes(package.write(pkg))
    before = _state(bpy)
    with pytest.raises(RuntimeError, match="Tentacle_Wave.ani"):
        bpy.ops.import_scene.urho3d_package(filepath=str(bad))
    assert _state(bpy) == before
    # a damaged package (checksum) too
    data = bytearray(rbfx_samples.sample_package(True))
    data[9] ^= 2
    bad.write_bytes(bytes(data))
    with pytest.raises(RuntimeError, match="checksum"):
        bpy.ops.import_scene.urho3d_package(filepath=str(bad))
    with pytest.raises(RuntimeError, match="no file"):
        bpy.ops.import_scene.urho3d_package(filepath=str(_pak(tmp_path)), members="Nope.mdl")
    with pytest.raises(RuntimeError, match="not a model or an animation"):
        bpy.ops.import_scene.urho3d_package(filepath=str(_pak(tmp_path)), members="Data/Big.bin")
    assert _state(bpy) == before


def test_browser_list(rigport_registered, tmp_path):
    from rigport.operators.urho3d.package import package_rows

    pak = _pak(tmp_path)
    rows = {r["name"]: r for r in package_rows(str(pak))}
    files = dict(rbfx_samples.package_files())
    assert list(rows) == list(files)
    assert all(rows[n]["size"] == len(files[n]) for n in files)
    assert rows["Data/Big.bin"]["stored"] < rows["Data/Big.bin"]["size"]
    ticked = sorted(n for n, r in rows.items() if r["select"])
    assert ticked == sorted(n for n in files if n.endswith((".mdl", ".ani")))
    assert rows["Shaders/LitSolid.ps4"]["detail"].startswith("pixel shader SM4, 3 parameters")
    assert rows["Data/Empty.txt"]["kind"] == "other"


def test_browser_descriptions(rigport_registered):
    from rigport.operators.urho3d.package import describe

    files = dict(rbfx_samples.package_files())
    assert describe("Models/Tentacle.mdl", files["Models/Tentacle.mdl"]) == (
        "model UMD3, 6 bones, 2 morphs"
    )
    assert describe("a.ani", files["Models/Tentacle_Wave.ani"]).startswith("animation, 6 tracks")
    assert describe("x.vs3", files["Shaders/LitSolid.vs3"]) == (
        "vertex shader SM3, 3 parameters, texture units: DiffMap, NormalMap"
    )
    assert describe("Data/Big.bin", b"") == "other"
    assert describe("broken.mdl", b"UMD2").startswith("model, unreadable:")


# --------------------------------------------------------------------------
# batch.py


def test_batch_import_member_and_whole_package(tmp_path):
    pak = _pak(tmp_path)
    saved = tmp_path / "out.blend"
    proc = run_batch("import", f"{pak}:Models/Tentacle.mdl", "--save", saved)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"{pak}:Models/Tentacle.mdl: ok (" in proc.stdout and saved.is_file()
    proc = run_batch("import", pak)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "2 models, 1 animation" in proc.stdout


def test_batch_roundtrip_into_a_package_member(tmp_path):
    pak = _pak(tmp_path)
    before = package.read(pak.read_bytes())
    proc = run_batch(
        "roundtrip",
        f"{pak}:Models/Tentacle_Wave.ani",
        f"{pak}:Models/Wave2.ani",
        "--model",
        f"{pak}:Models/Tentacle.mdl",
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    after = package.read(pak.read_bytes())
    assert after.names() == before.names() + ["Models/Wave2.ani"]
    a = ani.read(before.get("Models/Tentacle_Wave.ani"))
    b = ani.read(after.get("Models/Wave2.ani"))
    assert (a.version, [t.name for t in a.tracks]) == (b.version, [t.name for t in b.tracks])
    proc = run_batch("convert", f"{pak}:Models/Tentacle.mdl", tmp_path / "t.mdl")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert mdl.read((tmp_path / "t.mdl").read_bytes()).magic == b"UMD3"


def test_batch_missing_member(tmp_path):
    pak = _pak(tmp_path)
    proc = run_batch("import", f"{pak}:Models/Nope.mdl")
    assert proc.returncode == 1
    assert "no file 'Models/Nope.mdl'" in proc.stdout + proc.stderr
