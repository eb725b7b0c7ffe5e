"""Hostile RenderWare files in Blender (issue 26): every one is imported or refused
with a sentence, a refusal leaves the scene as it was, and nothing is lost on
save or on export. The files come from our own writers (``samples/``)."""

from __future__ import annotations

import ast
import json
import struct
import subprocess
import sys

import numpy as np
import pytest

from rigport.io_formats.renderware import dff as dff_codec
from rigport.io_formats.renderware import ifp, img
from rigport.samples import renderware as samples
from rigport.samples import renderware_ifp as ifp_samples
from rigport.samples import renderware_txd as txd_samples


def _ped(bpy, tmp_path, game: str = "SA"):
    path = tmp_path / "ped.dff"
    path.write_bytes(dff_codec.write(samples.skinned_ped(game)))
    assert bpy.ops.import_scene.rw_dff(filepath=str(path)) == {"FINISHED"}
    arm = next(o for o in bpy.data.objects if o.type == "ARMATURE")
    bpy.context.view_layer.objects.active = arm
    return arm


def _state(bpy) -> dict:
    arms = [o for o in bpy.data.objects if o.type == "ARMATURE"]
    return {
        "actions": sorted(a.name for a in bpy.data.actions),
        "images": sorted(i.name for i in bpy.data.images),
        "objects": sorted(bpy.data.objects.keys()),
        "tracks": {
            o.name: len(o.animation_data.nla_tracks) if o.animation_data else 0 for o in arms
        },
        "playing": {
            o.name: o.animation_data.action.name
            if o.animation_data and o.animation_data.action
            else None
            for o in arms
        },
    }


# -- 1: two animations of one name ----------------------------------------------


@pytest.mark.parametrize("game", ["SA", "VC"])
def test_two_animations_of_one_name_import_and_export(blank_blend, tmp_path, game):
    bpy = blank_blend
    arm = _ped(bpy, tmp_path, game)
    f = ifp_samples.walk_package(game, animations=2)
    f.animations[1].name_raw = f.animations[0].name_raw
    f.animations[1].name_pad = f.animations[0].name_pad
    path = tmp_path / "twins.ifp"
    path.write_bytes(ifp.write(f))
    assert bpy.ops.import_anim.gta_ifp(filepath=str(path)) == {"FINISHED"}
    made = sorted(bpy.data.actions, key=lambda a: json.loads(a["_rw_ifp"])["index"])
    assert [a.name for a in made] == ["walk", "twins walk"]  # the second: file and clip
    out = tmp_path / "out.ifp"
    bpy.context.view_layer.objects.active = arm
    assert bpy.ops.export_anim.gta_ifp(filepath=str(out), replace=False) == {"FINISHED"}
    assert len(ifp.read(out.read_bytes()).animations) == 2


# -- 10: nothing fits, nothing in the package ------------------------------------


def test_ifp_whose_bones_all_fail_is_refused(blank_blend, tmp_path):
    bpy = blank_blend
    arm = _ped(bpy, tmp_path)
    f = ifp_samples.walk_package("SA", animations=2)
    for a in f.animations:
        for k, o in enumerate(a.objects):
            o.name_raw = ifp.name_field(f"Alien{k}", ifp.ANP3_NAME)
            o.bone_id = 90000 + k
    path = tmp_path / "alien.ifp"
    path.write_bytes(ifp.write(f))
    before = _state(bpy)
    with pytest.raises(RuntimeError) as err:
        bpy.ops.import_anim.gta_ifp(filepath=str(path))
    text = str(err.value)
    assert "alien.ifp" in text and repr(arm.name) in text
    assert f"0 of {len(f.animations[0].objects)} animated bones match" in text
    assert "nothing imported" in text
    assert _state(bpy) == before


@pytest.mark.parametrize("game", ["SA", "VC"])
def test_ifp_without_animations_is_refused(blank_blend, tmp_path, game):
    bpy = blank_blend
    _ped(bpy, tmp_path, game)
    f = ifp_samples.walk_package(game, animations=1)
    f.animations = []
    path = tmp_path / "empty.ifp"
    path.write_bytes(ifp.write(f))
    before = _state(bpy)
    with pytest.raises(RuntimeError) as err:
        bpy.ops.import_anim.gta_ifp(filepath=str(path))
    assert "empty.ifp" in str(err.value) and "no animation" in str(err.value)
    assert _state(bpy) == before


# -- 8: NaN, Inf and signalling NaN keys -----------------------------------------

SNAN = np.array([0x7FA00001], np.uint32).view(np.float32)[0]


@pytest.mark.parametrize("game", ["SA_float", "VC", "III"])
def test_non_finite_keys_are_written_back_exactly(blank_blend, tmp_path, game):
    bpy = blank_blend
    arm = _ped(bpy, tmp_path, {"SA_float": "SA"}.get(game, game))
    f = ifp_samples.walk_package(game, animations=2, frames=8)
    spoiled = 0
    for a in f.animations:
        for i, o in enumerate(a.objects):
            k = i % 8
            bad = (np.float32(np.nan), np.float32(np.inf), SNAN)[i % 3]
            if i % 4 == 0:
                o.frames["time"][k] = bad
            elif i % 4 == 1 and "t" in o.frames.dtype.names:
                o.frames["t"][k, 1] = bad
            else:
                o.frames["q"][k, i % 4] = bad
            spoiled += 1
    data = ifp.write(f)
    assert struct.pack("<I", 0x7FA00001) in data
    path = tmp_path / "nan.ifp"
    path.write_bytes(data)
    assert bpy.ops.import_anim.gta_ifp(filepath=str(path)) == {"FINISHED"}
    out = tmp_path / "out.ifp"
    bpy.context.view_layer.objects.active = arm
    assert bpy.ops.export_anim.gta_ifp(filepath=str(out), replace=False) == {"FINISHED"}
    got = ifp.read(out.read_bytes())
    assert [len(o.frames) for a in got.animations for o in a.objects] == [8] * spoiled
    assert out.read_bytes() == data


# -- 16: trailing bytes kept once per file ---------------------------------------


def _stored_bytes(bpy) -> int:
    total = sum(len(a.get("_rw_ifp", "")) for a in bpy.data.actions)
    for o in bpy.data.objects:
        ends = o.get("_rw_ifp_ends")
        if ends is not None:
            total += sum(len(v) for v in ends.values())
    return total


@pytest.mark.parametrize("game", ["SA", "VC"])
def test_trailing_bytes_are_kept_once_and_written_back(blank_blend, tmp_path, game):
    bpy = blank_blend
    arm = _ped(bpy, tmp_path, game)
    f = ifp_samples.walk_package(game, animations=40, frames=4)
    f.tail = bytes(range(256)) * 64  # 16 KB inside the package, after its animations
    f.trailing = bytes(range(255, -1, -1)) * 1024  # 256 KB after the package
    data = ifp.write(f)
    path = tmp_path / "padded.ifp"
    path.write_bytes(data)
    assert bpy.ops.import_anim.gta_ifp(filepath=str(path)) == {"FINISHED"}
    assert len(bpy.data.actions) == 40
    # once: base64 of the file and a little per action, not 40 copies of the ends
    assert _stored_bytes(bpy) < 2 * len(data)
    out = tmp_path / "out.ifp"
    bpy.context.view_layer.objects.active = arm
    assert bpy.ops.export_anim.gta_ifp(filepath=str(out), replace=False) == {"FINISHED"}
    assert out.read_bytes() == data
    # and after a save and reopen
    blend = tmp_path / "padded.blend"
    name = arm.name
    bpy.ops.wm.save_as_mainfile(filepath=str(blend))
    assert blend.stat().st_size < 20 * len(data)
    bpy.ops.wm.open_mainfile(filepath=str(blend))
    arm = bpy.data.objects[name]
    bpy.context.view_layer.objects.active = arm
    out.unlink()
    assert bpy.ops.export_anim.gta_ifp(filepath=str(out), replace=False) == {"FINISHED"}
    assert out.read_bytes() == data


# -- 6: an IMG refusal leaves the scene as it was ---------------------------------


def _bad_depth_txd() -> bytes:
    """A dictionary whose 8888 raster says depth 8: it reads, and fails to decode."""
    tex = bytearray(txd_samples.native_texture("broken", "c8888", 8, 8, levels=1))
    assert tex[108] == 32
    tex[108] = 8
    good = txd_samples.dictionary([("fine", "c8888", 8, 8)], levels=1)
    return _with_textures(good, [bytes(tex)])


def _with_textures(dictionary: bytes, extra: list[bytes]) -> bytes:
    """``dictionary`` with ``extra`` native textures added (count and sizes fixed)."""
    body = bytearray(dictionary[12:])
    count = struct.unpack_from("<H", body, 12)[0]
    struct.pack_into("<H", body, 12, count + len(extra))
    ext = body[-12:]  # the dictionary's (empty) extension closes it
    body = body[:-12] + b"".join(extra) + ext
    head = bytearray(dictionary[:12])
    struct.pack_into("<I", head, 4, len(body))
    return bytes(head + body)


def _alien_ifp() -> bytes:
    f = ifp_samples.walk_package("SA", animations=1)
    for k, o in enumerate(f.animations[0].objects):
        o.name_raw = ifp.name_field(f"Alien{k}", ifp.ANP3_NAME)
        o.bone_id = 90000 + k
    return ifp.write(f)


def _scene_with_work(bpy, tmp_path):
    """A ped playing an action, and a cube the artist has active and selected."""
    arm = _ped(bpy, tmp_path)
    path = tmp_path / "own.ifp"
    path.write_bytes(ifp.write(ifp_samples.walk_package("SA", animations=1)))
    assert bpy.ops.import_anim.gta_ifp(filepath=str(path)) == {"FINISHED"}
    bpy.ops.mesh.primitive_cube_add()
    cube = bpy.context.view_layer.objects.active
    assert cube is not None and cube != arm
    return cube


def test_img_refusal_after_a_dictionary_with_two_same_names(blank_blend, tmp_path):
    bpy = blank_blend
    cube = _scene_with_work(bpy, tmp_path)
    a = img.new_archive(2)
    twins = txd_samples.dictionary([("same", "c8888", 8, 8), ("same", "c565", 8, 8)], levels=1)
    a.put("twins.txd", twins)
    a.put("alien.ifp", _alien_ifp())
    path = tmp_path / "gta3.img"
    img.save_archive(str(path), a)
    before = _state(bpy)
    with pytest.raises(RuntimeError, match="alien.ifp"):
        bpy.ops.import_scene.gta_img(filepath=str(path))
    assert _state(bpy) == before
    assert bpy.context.view_layer.objects.active == cube and cube.select_get()


def test_img_refusal_after_a_model_keeps_the_active_object(blank_blend, tmp_path):
    bpy = blank_blend
    cube = _scene_with_work(bpy, tmp_path)
    a = img.new_archive(2)
    a.put("ped.dff", dff_codec.write(samples.skinned_ped("SA")))
    a.put("bad.txd", _bad_depth_txd())
    path = tmp_path / "gta3.img"
    img.save_archive(str(path), a)
    before = _state(bpy)
    with pytest.raises(RuntimeError, match="bad.txd"):
        bpy.ops.import_scene.gta_img(filepath=str(path))
    assert _state(bpy) == before
    assert bpy.context.view_layer.objects.active == cube and cube.select_get()


# -- 7: imported images survive a save, and are made once -------------------------

_COUNT_IMAGES = (
    "import os, sys, bpy\n"
    "bpy.ops.wm.open_mainfile(filepath=sys.argv[-1])\n"
    "print('IMAGES', sorted(i.name for i in bpy.data.images), flush=True)\n"
    "os._exit(0)\n"
)


def _images_after_reopening(bpy, tmp_path) -> list[str]:
    """Save, then open the file in a fresh process: the images it holds."""
    blend = tmp_path / "saved.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(blend))
    proc = subprocess.run(
        [sys.executable, "-c", _COUNT_IMAGES, str(blend)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    line = next(x for x in proc.stdout.splitlines() if x.startswith("IMAGES "))
    return ast.literal_eval(line[len("IMAGES ") :])


def test_txd_on_its_own_keeps_its_images(blank_blend, tmp_path):
    bpy = blank_blend
    path = tmp_path / "loose.txd"
    path.write_bytes(txd_samples.dictionary([("one", "c8888", 8, 8), ("two", "dxt1", 8, 8)]))
    assert bpy.ops.import_scene.rw_txd(filepath=str(path)) == {"FINISHED"}
    assert sorted(i.name for i in bpy.data.images) == ["one", "two"]
    assert _images_after_reopening(bpy, tmp_path) == ["one", "two"]


def test_mipmap_levels_are_kept(blank_blend, tmp_path):
    bpy = blank_blend
    path = tmp_path / "levels.txd"
    path.write_bytes(txd_samples.dictionary([("deep", "c8888", 64, 64)], levels=7))
    assert bpy.ops.import_scene.rw_txd(filepath=str(path), mipmaps=True) == {"FINISHED"}
    names = sorted(i.name for i in bpy.data.images)
    assert len(names) == 7
    assert _images_after_reopening(bpy, tmp_path) == names


def test_img_texture_member_is_kept(blank_blend, tmp_path):
    bpy = blank_blend
    a = img.new_archive(2)
    a.put("loose.txd", txd_samples.dictionary([("alone", "c565", 8, 8)]))
    path = tmp_path / "gta3.img"
    img.save_archive(str(path), a)
    assert bpy.ops.import_scene.gta_img(filepath=str(path)) == {"FINISHED"}
    assert [i.name for i in bpy.data.images] == ["alone"]
    assert _images_after_reopening(bpy, tmp_path) == ["alone"]


def test_img_model_and_its_dictionary_make_each_texture_once(blank_blend, tmp_path):
    bpy = blank_blend
    a = img.new_archive(2)
    a.put("ped.dff", dff_codec.write(samples.skinned_ped("SA")))
    a.put(
        "PED.TXD", txd_samples.dictionary([("ped_skin", "dxt1", 32, 32), ("spare", "c8888", 8, 8)])
    )
    path = tmp_path / "gta3.img"
    img.save_archive(str(path), a)
    assert bpy.ops.import_scene.gta_img(filepath=str(path), members="ped.dff;PED.TXD") == {
        "FINISHED"
    }
    assert sorted(i.name for i in bpy.data.images) == ["ped_skin", "spare"]
    skin = next(m for m in bpy.data.materials if m.get("rw_texture_name") == "ped_skin")
    assert any(
        n.type == "TEX_IMAGE" and n.image == bpy.data.images["ped_skin"]
        for n in skin.node_tree.nodes
    )
    assert _images_after_reopening(bpy, tmp_path) == ["ped_skin", "spare"]


def test_dictionary_with_two_textures_of_one_name_is_taken_back_whole(blank_blend, tmp_path):
    from rigport.operators.renderware.txd_importer import TxdImportOptions, import_txd_file

    bpy = blank_blend
    path = tmp_path / "twins.txd"
    twins = txd_samples.dictionary([("same", "c8888", 8, 8), ("same", "c565", 8, 8)], levels=1)
    path.write_bytes(twins)
    result = import_txd_file(bpy.context, str(path), TxdImportOptions())
    assert len(bpy.data.images) == 2
    result.take_back()
    assert not bpy.data.images
