"""IMG archives in Blender and batch: a ped, its textures and its walk cycle come
out of an archive of either version; exports go back into it; DragonFF reads ours."""

from __future__ import annotations

import hashlib

import pytest

from rigport.io_formats.renderware import dff, ifp, img
from rigport.samples import renderware as samples
from rigport.samples import renderware_ifp as ifp_samples
from rigport.samples import renderware_txd as txd_samples
from rigport.tests import clients
from rigport.tests.support import run_batch

IFP = ifp.write(ifp_samples.walk_package("SA", animations=2))


def _archive(tmp_path, version: int, damaged: bool = False):
    a = img.new_archive(version)
    a.put("ped.dff", dff.write(samples.skinned_ped("SA")))
    a.put("PED.TXD", txd_samples.dictionary([("ped_skin", "dxt1", 32, 32)], "SA"))
    a.put("ped.ifp", IFP[:200] if damaged else IFP)
    a.put("readme.txt", b"not a model")
    path = tmp_path / ("gta3.img" if version == 2 else "ped.img")
    img.save_archive(str(path), a)
    return path


@pytest.mark.parametrize("version", [1, 2])
def test_import_everything_from_an_archive(blank_blend, tmp_path, version):
    bpy = blank_blend
    path = _archive(tmp_path, version)
    assert bpy.ops.import_scene.gta_img(filepath=str(path)) == {"FINISHED"}
    arm = next(o for o in bpy.data.objects if o.type == "ARMATURE")
    assert {a.name for a in bpy.data.actions} == {"walk", "anim001"}
    layer = bpy.context.view_layer  # what it made is selected, the root active
    assert all(o.select_get() for o in layer.objects) and layer.objects.active.parent is None
    assert arm.animation_data.action.name == "walk"
    image = bpy.data.images["ped_skin"]
    skin = next(m for m in bpy.data.materials if m.get("rw_texture_name") == "ped_skin")
    assert any(n.type == "TEX_IMAGE" and n.image == image for n in skin.node_tree.nodes)


def test_a_damaged_member_leaves_nothing(blank_blend, tmp_path):
    bpy = blank_blend
    path = _archive(tmp_path, 2, damaged=True)
    with pytest.raises(RuntimeError, match="ped.ifp"):
        bpy.ops.import_scene.gta_img(filepath=str(path))
    assert not bpy.data.objects and not bpy.data.actions and not bpy.data.images
    assert bpy.ops.import_scene.gta_img(filepath=str(path), members="ped.dff;PED.TXD") == {
        "FINISHED"
    }
    assert "ped_skin" in bpy.data.images


@pytest.mark.parametrize("version", [1, 2])
def test_batch_roundtrip_into_the_archive(tmp_path, version):
    path = _archive(tmp_path, version)
    r = run_batch(
        "roundtrip", f"{path}:ped.ifp", f"{path}:ped_out.ifp", "--model", f"{path}:ped.dff"
    )
    assert r.returncode == 0, r.stdout + r.stderr
    a = img.open_archive(str(path))
    out = a.read("ped_out.ifp")
    assert out[: len(IFP)] == IFP and not out[len(IFP) :].strip(b"\0")
    r = run_batch("check", path)
    assert r.returncode == 0 and f"{path}:ped_out.ifp: lossless" in r.stdout


@pytest.mark.parametrize("version", [1, 2])
def test_dragonff_reads_our_archives(tmp_path, version):
    path = _archive(tmp_path, version)
    a = img.open_archive(str(path))
    a.put("ped.ifp", IFP * 2)  # moved to the end: it no longer fits its sectors
    img.save_archive(str(path), a)
    theirs = clients.dragonff_img_members(path)
    a = img.open_archive(str(path))
    ours = [[n, len(a.read(n)), hashlib.sha256(a.read(n)).hexdigest()] for n in a.names()]
    assert theirs == ours


def test_batch_import_of_a_member_finds_its_txd_in_the_archive(tmp_path):
    path = _archive(tmp_path, 2)
    blend = tmp_path / "out.blend"
    script = (
        "import bpy, sys; bpy.ops.wm.open_mainfile(filepath=sys.argv[-1]); "
        "im = bpy.data.images.get('ped_skin'); "
        "print('IMAGE', im is not None and im.packed_file is not None); "
        "import os; sys.stdout.flush(); os._exit(0)"
    )
    r = run_batch("import", f"{path}:ped.dff", "--save", blend)
    assert r.returncode == 0, r.stdout + r.stderr
    import subprocess
    import sys

    res = subprocess.run(
        [sys.executable, "-c", script, str(blend)], capture_output=True, text=True, timeout=300
    )
    assert "IMAGE True" in res.stdout, res.stderr
