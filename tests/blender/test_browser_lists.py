"""The importers that list what a file holds (GTA IMG, Urho3D package, GTA IFP)
choose what to import one way (``FileBrowserList.chosen_names``): the names typed
in the option, else the rows ticked in the list of this file (rows of a kind
RigPort imports only), else everything; a list with nothing ticked is refused."""

from __future__ import annotations

import pytest

from rigport.io_formats.renderware import dff, ifp, img
from rigport.samples import rbfx as rbfx_samples
from rigport.samples import renderware as samples
from rigport.samples import renderware_ifp as ifp_samples


def _img(tmp_path):
    a = img.new_archive(2)
    a.put("ped.dff", dff.write(samples.skinned_ped("SA")))
    a.put("ped.ifp", ifp.write(ifp_samples.walk_package("SA", animations=2)))
    a.put("readme.txt", b"not a model")
    path = tmp_path / "gta3.img"
    img.save_archive(str(path), a)
    return str(path)


def _rows(ticked: dict[str, tuple[str, bool]]) -> list[dict]:
    return [
        {"name": n, "kind": kind, "select": tick, "size": 0} for n, (kind, tick) in ticked.items()
    ]


def _kinds(bpy) -> tuple[int, int]:
    return (
        sum(o.type == "ARMATURE" for o in bpy.data.objects),
        len(bpy.data.actions),
    )


def test_img_nothing_ticked_is_refused(blank_blend, tmp_path):
    """A ticked row RigPort does not import (a text file) does not count."""
    bpy = blank_blend
    path = _img(tmp_path)
    rows = _rows(
        {
            "ped.dff": ("model", False),
            "ped.ifp": ("animations", False),
            "readme.txt": ("other", True),
        }
    )
    with pytest.raises(RuntimeError, match="tick at least one member to import"):
        bpy.ops.import_scene.gta_img(filepath=path, listed=path, members_list=rows)
    assert _kinds(bpy) == (0, 0)


def test_img_ticked_typed_and_other_file(blank_blend, tmp_path):
    bpy = blank_blend
    path = _img(tmp_path)
    rows = _rows({"ped.dff": ("model", True), "ped.ifp": ("animations", False)})
    assert bpy.ops.import_scene.gta_img(filepath=path, listed=path, members_list=rows) == {
        "FINISHED"
    }
    assert _kinds(bpy) == (1, 0)  # the model only
    # typed names win over the list
    assert bpy.ops.import_scene.gta_img(
        filepath=path, listed=path, members_list=rows, members=" ped.ifp ;"
    ) == {"FINISHED"}
    assert _kinds(bpy) == (1, 2)
    # a list of another file says nothing about this one: everything
    assert bpy.ops.import_scene.gta_img(filepath=path, listed=path + ".old", members_list=rows) == {
        "FINISHED"
    }
    assert _kinds(bpy) == (2, 4)


def test_package_ticked_rows(blank_blend, tmp_path):
    pytest.importorskip("lz4.block")
    bpy = blank_blend
    pak = tmp_path / "Data.pak"
    pak.write_bytes(rbfx_samples.sample_package(True, False))
    path = str(pak)
    rows = _rows(
        {
            "Models/Tentacle.mdl": ("model", False),
            "Models/Tentacle_Wave.ani": ("animation", False),
            "Data/Big.bin": ("other", True),
        }
    )
    for row in rows:
        row.update(stored=0, detail="")
    with pytest.raises(RuntimeError, match="tick at least one model or animation to import"):
        bpy.ops.import_scene.urho3d_package(filepath=path, listed=path, package_files=rows)
    assert _kinds(bpy) == (0, 0)
    rows[0]["select"] = True
    assert bpy.ops.import_scene.urho3d_package(filepath=path, listed=path, package_files=rows) == {
        "FINISHED"
    }
    assert _kinds(bpy) == (1, 0)


def test_ifp_ticked_rows(blank_blend, tmp_path):
    bpy = blank_blend
    ped = tmp_path / "ped.dff"
    ped.write_bytes(dff.write(samples.skinned_ped("SA")))
    assert bpy.ops.import_scene.rw_dff(filepath=str(ped)) == {"FINISHED"}
    package = ifp_samples.walk_package("SA", animations=2)
    pkg = tmp_path / "ped.ifp"
    pkg.write_bytes(ifp.write(package))
    path = str(pkg)
    names = [a.name for a in package.animations]
    rows = [{"name": n, "frames": 1, "objects": 1, "select": False} for n in names]
    with pytest.raises(RuntimeError, match="tick at least one animation to import"):
        bpy.ops.import_anim.gta_ifp(filepath=path, listed=path, animations=rows)
    assert len(bpy.data.actions) == 0
    rows[1]["select"] = True
    assert bpy.ops.import_anim.gta_ifp(filepath=path, listed=path, animations=rows) == {"FINISHED"}
    assert [a.name for a in bpy.data.actions] == [names[1]]
