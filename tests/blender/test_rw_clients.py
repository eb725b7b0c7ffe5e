"""RenderWare files RigPort writes, read by other people's readers: librw (``rwinfo``)
and DragonFF (inside bpy, in a child process).

Each file is imported into Blender and exported with default options (unedited,
then after a simple edit); the readers' view of the output must equal their view
of the original.
"""

from __future__ import annotations

import numpy as np
import pytest

from rigport.io_formats.renderware import dff
from rigport.io_formats.renderware.clump_import import import_dff
from rigport.samples import renderware as samples
from rigport.tests.clients import dragonff_import, run_rwinfo

CORPUS = ["clump.dff", "teapot.dff"]


def _samples() -> dict:
    return {
        "ped_III.dff": samples.skinned_ped("III", uv_sets=2, prelit=True, morphs=0),
        "ped_VC.dff": samples.skinned_ped("VC", split=True),
        "ped_SA.dff": samples.skinned_ped("SA", uv_sets=1, prelit=True, split=True),
        "ped_on_bone_SA.dff": samples.skinned_ped("SA", root_frame=False),
        "static_SA.dff": samples.static_clump("SA"),
        "static_III.dff": samples.static_clump("III", uv_sets=1),
        "gta_prop_SA.dff": samples.gta_map_prop(),
        "gta_ped_SA.dff": samples.gta_ped(),
    }


SAMPLES = list(_samples())


@pytest.fixture(
    params=[("corpus", n) for n in CORPUS] + [("sample", n) for n in SAMPLES], ids=lambda p: p[1]
)
def source(request, tmp_path):
    kind, name = request.param
    if kind == "corpus":
        corpus = request.getfixturevalue("corpus_dir")
        return corpus / "renderware" / name
    path = tmp_path / name
    path.write_bytes(dff.write(_samples()[name]))
    return path


def _rwinfo(path, **kw) -> list[str]:
    """rwinfo's lines without the one naming the file."""
    return run_rwinfo(path, **kw).splitlines()[1:]


def _round_trip(bpy, src, out, edit=None) -> None:
    bpy.ops.wm.read_factory_settings(use_empty=True)
    assert bpy.ops.import_scene.rw_dff(filepath=str(src)) == {"FINISHED"}
    if edit is not None:
        edit(bpy)
    assert bpy.ops.export_scene.rw_dff(filepath=str(out)) == {"FINISHED"}


def test_rwinfo_reads_the_round_trip_as_the_original(blank_blend, source, tmp_path):
    out = tmp_path / "out.dff"
    _round_trip(blank_blend, source, out)
    assert _rwinfo(out) == _rwinfo(source)
    assert _rwinfo(out, gta_raw=True) == _rwinfo(source, gta_raw=True)
    # librw's own re-write of our output (librw orders frames its own way) equals its
    # re-write of the original, and reads back in RigPort with the same content
    ours, theirs = tmp_path / "librw_ours.dff", tmp_path / "librw_original.dff"
    run_rwinfo(out, ours, gta_raw=True)
    run_rwinfo(source, theirs, gta_raw=True)
    assert _rwinfo(ours, gta_raw=True) == _rwinfo(theirs, gta_raw=True)
    a, b = dff.read(theirs.read_bytes()), dff.read(ours.read_bytes())
    ia, ib = import_dff(a, "a")[0], import_dff(b, "a")[0]
    assert [f.name for f in ia.frames] == [f.name for f in ib.frames]
    assert [m.name for m in ia.scene.meshes] == [m.name for m in ib.scene.meshes]
    for ma, mb in zip(ia.scene.meshes, ib.scene.meshes, strict=True):
        np.testing.assert_allclose(ma.positions, mb.positions, atol=1e-6)
        np.testing.assert_array_equal(ma.corner_verts, mb.corner_verts)
        np.testing.assert_array_equal(ma.face_materials, mb.face_materials)
        if ma.skin is not None:
            np.testing.assert_array_equal(ma.skin.joints, mb.skin.joints)
            np.testing.assert_allclose(ma.skin.weights, mb.skin.weights, atol=1e-7)


def _same(a, b, path="") -> None:
    """Equal JSON summaries; numbers within 2e-4 (values are rounded to 4 or 5 digits)."""
    if isinstance(a, dict):
        assert isinstance(b, dict) and sorted(a) == sorted(b), path
        for k in a:
            _same(a[k], b[k], f"{path}/{k}")
    elif isinstance(a, list) and a and all(isinstance(x, int | float) for x in a):
        assert isinstance(b, list) and len(a) == len(b), path
        np.testing.assert_allclose(np.array(a, float), np.array(b, float), atol=2e-4, err_msg=path)
    elif isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _same(x, y, f"{path}[{i}]")
    elif isinstance(a, float) or isinstance(b, float):
        assert a == pytest.approx(b, abs=2e-4), path
    else:
        assert a == b, path


def test_dragonff_reads_the_round_trip_as_the_original(blank_blend, source, tmp_path):
    out = tmp_path / "out.dff"
    _round_trip(blank_blend, source, out)
    _same(dragonff_import(source), dragonff_import(out))
    assert out.read_bytes() == source.read_bytes()  # in fact: the same bytes


def _delete_last_face(bpy) -> None:
    """The simple edit: the last face of the first mesh (by atomic index) goes."""
    import bmesh

    obj = min(
        (o for o in bpy.data.objects if o.type == "MESH"), key=lambda o: o["_rw_atomic_index"]
    )
    bm = bmesh.new()
    bm.from_mesh(obj.data)
    bm.faces.ensure_lookup_table()
    bmesh.ops.delete(bm, geom=[bm.faces[-1]], context="FACES_ONLY")
    bm.to_mesh(obj.data)
    bm.free()
    obj.data.update()


EDITED = ["teapot.dff", "gta_prop_SA.dff", "gta_ped_SA.dff", "static_SA.dff"]


@pytest.mark.parametrize("name", EDITED)
def test_dragonff_reads_an_edited_round_trip_as_the_edit(blank_blend, corpus_dir, tmp_path, name):
    """After deleting one face, DragonFF sees one face less and everything else as it was:
    vertices, UVs, colours, weights, materials, the frames and the 2d effects."""
    if name in CORPUS:
        source = corpus_dir / "renderware" / name
    else:
        source = tmp_path / name
        source.write_bytes(dff.write(_samples()[name]))
    out = tmp_path / "out.dff"
    _round_trip(blank_blend, source, out, _delete_last_face)
    a, b = dragonff_import(source), dragonff_import(out)
    assert a["counts"] == b["counts"]
    assert sorted(a["objects"]) == sorted(b["objects"])
    edited = 0
    for key, x in a["objects"].items():
        y = b["objects"][key]
        if x["type"] == "MESH" and x["faces"] != y["faces"]:
            edited += 1
            assert y["faces"] == x["faces"] - 1
            for k in ("corners", "face_materials", "uvs", "colors", "faces"):
                x.pop(k), y.pop(k)
        _same(x, y, key)
    assert edited == 1
