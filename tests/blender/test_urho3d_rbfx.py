"""Blender round trips of rbfx's UMD3 models and UAN2 animations, and writing into packages."""

from __future__ import annotations

import numpy as np
import pytest

from rigport.io_formats.transforms import quat_to_matrix
from rigport.io_formats.urho3d import ani, mdl, package
from rigport.samples import rbfx as rbfx_samples


def _assert_same_model(a: mdl.Model, b: mdl.Model) -> None:
    import bpy

    assert (a.magic, a.version) == (b.magic, b.version)
    assert [vb.count for vb in a.vertex_buffers] == [vb.count for vb in b.vertex_buffers]
    for va, vb_ in zip(a.vertex_buffers, b.vertex_buffers, strict=True):
        assert va.elements == vb_.elements
        for name in va.data.dtype.names:
            if name.startswith("normal") and bpy.app.version >= (4, 5, 0):
                assert np.array_equal(va.data[name], vb_.data[name]), name  # exact on 4.5+
                continue
            tol = 2e-3 if name.startswith(("normal", "tangent")) else 1e-5
            assert np.allclose(va.data[name], vb_.data[name], atol=tol), name
    for ia, ib in zip(a.index_buffers, b.index_buffers, strict=True):
        assert np.array_equal(ia.indices, ib.indices)
    assert [(m.name, m.weight) for m in a.morphs] == [(m.name, m.weight) for m in b.morphs]
    for ma, mb in zip(a.morphs, b.morphs, strict=True):
        for ba, bb in zip(ma.buffers, mb.buffers, strict=True):
            assert np.array_equal(ba.data["index"], bb.data["index"])
            assert np.allclose(ba.data["position"], bb.data["position"], atol=1e-5)
    assert [x.name for x in a.bones] == [x.name for x in b.bones]
    for x, y in zip(a.bones, b.bones, strict=True):
        assert x.parent == y.parent
        assert np.allclose(x.position, y.position, atol=1e-5)
        assert np.allclose(quat_to_matrix(x.rotation), quat_to_matrix(y.rotation), atol=1e-5)
        assert np.allclose(x.offset_matrix, y.offset_matrix, atol=1e-5)


def _import_model(bpy, tmp_path, model: mdl.Model, name: str = "in.mdl"):
    src = tmp_path / name
    src.write_bytes(mdl.write(model))
    assert bpy.ops.import_scene.urho3d_mdl(filepath=str(src)) == {"FINISHED"}
    return next(o for o in bpy.data.objects if o.type == "ARMATURE")


@pytest.mark.parametrize("version", [1, 2])
def test_umd3_blender_round_trip(blank_blend, tmp_path, version):
    bpy = blank_blend
    model = rbfx_samples.umd3_model(version)
    _import_model(bpy, tmp_path, model)
    mesh = next(o for o in bpy.data.objects if o.type == "MESH")
    keys = mesh.data.shape_keys.key_blocks
    assert [k.value for k in keys[1:]] == [m.weight for m in model.morphs]
    out = tmp_path / "out.mdl"
    assert bpy.ops.export_scene.urho3d_mdl(filepath=str(out)) == {"FINISHED"}
    _assert_same_model(mdl.read(mdl.write(model)), mdl.read(out.read_bytes()))


def test_umd3_shape_key_value_becomes_default_weight(blank_blend, tmp_path):
    bpy = blank_blend
    _import_model(bpy, tmp_path, rbfx_samples.umd3_model(2))
    mesh = next(o for o in bpy.data.objects if o.type == "MESH")
    mesh.data.shape_keys.key_blocks[1].value = 0.5
    out = tmp_path / "out.mdl"
    assert bpy.ops.export_scene.urho3d_mdl(filepath=str(out)) == {"FINISHED"}
    assert [m.weight for m in mdl.read(out.read_bytes()).morphs] == [0.5, 0.75]
    # the format can still be chosen
    assert bpy.ops.export_scene.urho3d_mdl(filepath=str(out), file_format="UMD2") == {"FINISHED"}
    assert mdl.read(out.read_bytes()).magic == b"UMD2"


def test_umd2_model_exported_as_umd3(blank_blend, tmp_path):
    bpy = blank_blend
    src = rbfx_samples.umd3_model(2)
    src.magic, src.version = b"UMD2", None
    _import_model(bpy, tmp_path, src)
    mesh = next(o for o in bpy.data.objects if o.type == "MESH")
    mesh.data.shape_keys.key_blocks[2].value = 0.125
    out = tmp_path / "out.mdl"
    assert bpy.ops.export_scene.urho3d_mdl(filepath=str(out), file_format="UMD3") == {"FINISHED"}
    got = mdl.read(out.read_bytes())
    assert (got.magic, got.version) == (b"UMD3", 2)
    assert [m.weight for m in got.morphs] == [0.0, 0.125]
    got.magic, got.version = b"UMD2", None
    for m in got.morphs:
        m.weight = 0.0  # UMD2 has no weights
    _assert_same_model(mdl.read(mdl.write(src)), got)


@pytest.mark.parametrize("version", [1, 2, 3])
def test_uan2_blender_round_trip(blank_blend, tmp_path, version):
    bpy = blank_blend
    model = rbfx_samples.umd3_model()
    anim = ani.read(ani.write(rbfx_samples.uan2_animation(model, version)))  # as stored
    arm = _import_model(bpy, tmp_path, model)
    (tmp_path / "a.ani").write_bytes(ani.write(anim))
    bpy.context.view_layer.objects.active = arm
    assert bpy.ops.import_anim.urho3d_ani(filepath=str(tmp_path / "a.ani")) == {"FINISHED"}
    assert bpy.ops.export_anim.urho3d_ani(filepath=str(tmp_path / "b.ani")) == {"FINISHED"}
    back = ani.read((tmp_path / "b.ani").read_bytes())
    assert back.version == version and back.name == anim.name
    assert [(t.name, t.mask, t.weight) for t in anim.tracks] == [
        (t.name, t.mask, t.weight) for t in back.tracks
    ]
    for x, y in zip(anim.tracks, back.tracks, strict=True):
        assert np.allclose(x.keys["time"], y.keys["time"], atol=1e-6)
        for f in x.keys.dtype.names[1:]:
            u, v = x.keys[f], y.keys[f]
            if f == "rotation":
                v = v * np.sign(np.sum(u * v, axis=1, keepdims=True))
            assert np.allclose(u, v, atol=1e-5), f
    assert len(back.variant_tracks) == len(anim.variant_tracks)
    for x, y in zip(anim.variant_tracks, back.variant_tracks, strict=True):
        assert (x.name, x.value_type, x.interpolation, x.tension, x.weight) == (
            y.name,
            y.value_type,
            y.interpolation,
            y.tension,
            y.weight,
        )
        assert np.array_equal(x.times, y.times)
        assert np.array_equal(np.asarray(x.values), np.asarray(y.values))
        assert (x.tangents is None) == (y.tangents is None)
        if x.tangents is not None:
            assert np.array_equal(np.asarray(x.tangents), np.asarray(y.tangents))
    # UANI on request: no version, no weights, no variant tracks
    assert bpy.ops.export_anim.urho3d_ani(filepath=str(tmp_path / "c.ani"), file_format="UANI") == {
        "FINISHED"
    }
    assert ani.read((tmp_path / "c.ani").read_bytes()).version is None


def test_export_into_package(blank_blend, tmp_path):
    pytest.importorskip("lz4.block")
    bpy = blank_blend
    pak = tmp_path / "Data.pak"
    pak.write_bytes(rbfx_samples.sample_package(compressed=True))
    before = package.read(pak.read_bytes())
    model = rbfx_samples.umd3_model()
    arm = _import_model(bpy, tmp_path, model, "Tentacle.mdl")
    assert bpy.ops.export_scene.urho3d_mdl(
        filepath=str(tmp_path / "Tentacle.mdl"), package_file=str(pak)
    ) == {"FINISHED"}
    (tmp_path / "w.ani").write_bytes(ani.write(rbfx_samples.uan2_animation(model)))
    bpy.context.view_layer.objects.active = arm
    assert bpy.ops.import_anim.urho3d_ani(filepath=str(tmp_path / "w.ani")) == {"FINISHED"}
    assert bpy.ops.export_anim.urho3d_ani(
        filepath=str(tmp_path / "x.ani"), package_file=str(pak), package_entry="Anims/Wave.ani"
    ) == {"FINISHED"}
    after = package.read(pak.read_bytes())
    assert after.magic == b"ULZ4"
    assert after.names() == before.names() + ["Anims/Wave.ani"]
    _assert_same_model(
        mdl.read(before.get("Models/Tentacle.mdl")), mdl.read(after.get("Models/Tentacle.mdl"))
    )
    assert ani.read(after.get("Anims/Wave.ani")).version == 3
    for name in before.names():
        if name != "Models/Tentacle.mdl":
            assert after.get(name) == before.get(name)
    assert not (tmp_path / "x.ani").exists()


def test_export_into_damaged_package_fails_cleanly(blank_blend, tmp_path):
    bpy = blank_blend
    pak = tmp_path / "Bad.pak"
    data = bytearray(rbfx_samples.sample_package())
    data[9] ^= 1
    pak.write_bytes(bytes(data))
    _import_model(bpy, tmp_path, rbfx_samples.umd3_model())
    with pytest.raises(RuntimeError, match="checksum"):
        bpy.ops.export_scene.urho3d_mdl(filepath=str(tmp_path / "m.mdl"), package_file=str(pak))
    assert pak.read_bytes() == bytes(data)
