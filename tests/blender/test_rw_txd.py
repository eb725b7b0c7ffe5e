"""TXD textures in Blender: on the DFF's materials, packed, the same pixels as
DragonFF's import, console rasters refused, missing textures in one warning."""

from __future__ import annotations

import numpy as np
import pytest

from rigport.io_formats.renderware import dff, txd
from rigport.samples import renderware as samples
from rigport.samples import renderware_txd as txd_samples
from rigport.tests import clients


def _ped_with_txd(tmp_path, layout="dxt1", names=("ped_skin", "unused")):
    (tmp_path / "ped.dff").write_bytes(dff.write(samples.skinned_ped("SA")))
    data = txd_samples.dictionary([(n, layout, 32, 16) for n in names], "SA")
    (tmp_path / "PED.TXD").write_bytes(data)
    return tmp_path / "ped.dff", data


def _pixels(image) -> np.ndarray:
    w, h = image.size
    px = np.empty(w * h * 4, np.float32)
    image.pixels.foreach_get(px)
    return px.reshape(h, w, 4)


@pytest.mark.parametrize("layout", ["dxt1", "c8888", "pal8"])
def test_textures_appear_on_the_materials(blank_blend, tmp_path, layout):
    bpy = blank_blend
    path, data = _ped_with_txd(tmp_path, layout)
    assert bpy.ops.import_scene.rw_dff(filepath=str(path)) == {"FINISHED"}
    skin = next(m for m in bpy.data.materials if m.get("rw_texture_name") == "ped_skin")
    node = next(n for n in skin.node_tree.nodes if n.type == "TEX_IMAGE")
    image = node.image
    assert image is not None and image.name == "ped_skin" and image.packed_file is not None
    want = txd.decode(txd.read(data).find("ped_skin"), 0)[::-1].astype(np.float32) / 255
    assert np.allclose(_pixels(image), want, atol=1e-6)
    assert "unused" not in bpy.data.images  # only what the materials name
    blend = tmp_path / "saved.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(blend))
    bpy.ops.wm.open_mainfile(filepath=str(blend))
    image = bpy.data.images["ped_skin"]
    assert image.packed_file is not None
    assert np.allclose(_pixels(image), want, atol=1e-6)


def test_missing_texture_is_one_warning(blank_blend, tmp_path):
    bpy = blank_blend
    path, _ = _ped_with_txd(tmp_path, "c565", names=("other",))
    from rigport.operators.renderware.clump_importer import ClumpImportOptions, import_clump_file

    options = ClumpImportOptions(use_transform=False)
    warnings = import_clump_file(bpy.context, str(path), options).warnings
    assert [w for w in warnings if "PED.TXD" in w] == [
        "1 texture the materials name, not found in PED.TXD: ped_skin"
    ]


def test_txd_import_binds_and_refuses_consoles(blank_blend, tmp_path):
    bpy = blank_blend
    path, data = _ped_with_txd(tmp_path)
    (tmp_path / "PED.TXD").unlink()
    assert bpy.ops.import_scene.rw_dff(filepath=str(path)) == {"FINISHED"}
    txd_path = tmp_path / "textures.txd"
    txd_path.write_bytes(data)
    assert bpy.ops.import_scene.rw_txd(filepath=str(txd_path), mipmaps=True) == {"FINISHED"}
    assert {"ped_skin", "ped_skin/1", "ped_skin/2", "unused"} <= set(bpy.data.images.keys())
    skin = next(m for m in bpy.data.materials if m.get("rw_texture_name") == "ped_skin")
    node = next(n for n in skin.node_tree.nodes if n.type == "TEX_IMAGE")
    assert node.image.name == "ped_skin"
    ps2 = bytearray(data)
    at = data.index(b"ped_skin\0") - 8
    ps2[at : at + 4] = b"PS2\0"
    bad = tmp_path / "ps2.txd"
    bad.write_bytes(bytes(ps2))
    n = len(bpy.data.images)
    with pytest.raises(RuntimeError, match="PlayStation 2"):
        bpy.ops.import_scene.rw_txd(filepath=str(bad))
    assert len(bpy.data.images) == n


def _three_colour_blocks(tex) -> np.ndarray:
    """Pixels (top row first) of DXT blocks whose first colour is not above the second."""
    w, h = tex.level_size(0)
    bw, bh = (w + 3) // 4, (h + 3) // 4
    blocks = np.frombuffer(tex.levels[0], np.uint8).reshape(bw * bh, 16)
    c = blocks[:, 8:12].copy().view("<u2")
    three = (c[:, 0] <= c[:, 1]).reshape(bh, bw)
    return np.repeat(np.repeat(three, 4, 0), 4, 1)[:h, :w]


@pytest.mark.parametrize("target", ["SA", "VC"])
def test_same_pixels_as_dragonff(blank_blend, tmp_path, target):
    bpy = blank_blend
    data = txd_samples.every_layout(target)
    path = tmp_path / "all.txd"
    path.write_bytes(data)
    theirs = clients.dragonff_txd_pixels(path, tmp_path / "dragonff.npz")
    assert bpy.ops.import_scene.rw_txd(filepath=str(path)) == {"FINISHED"}
    compared = 0
    for tex in txd.read(data).textures():
        key = f"all.txd/{tex.name}/0"
        assert key in theirs, key
        ours = _pixels(bpy.data.images[tex.name])
        assert ours.shape == theirs[key].shape
        keep = np.ones(ours.shape[:2], bool)
        if tex.dxt in (3, 5):  # DragonFF decodes these blocks 3-colour, against Direct3D
            keep = ~_three_colour_blocks(tex)[::-1]
            assert keep.any()
        assert np.abs(ours - theirs[key])[keep].max() * 255 < 0.5, tex.name
        compared += 1
    assert compared == len(txd_samples.LAYOUTS)
