"""Hostile files through Blender (issue 26): the shared Blender side and the
Urho3D importers. Each file is built by our own writers."""

from __future__ import annotations

import numpy as np
import pytest

from rigport.io_formats.urho3d import mdl
from rigport.operators.blender import guard
from rigport.samples import rbfx as rbfx_samples
from rigport.tests.codec.test_hostile_urho3d import sparse_morph_model


def _f32(bits: int) -> np.float32:
    return np.array(bits, np.uint32).view(np.float32)[()]


def _bits(value) -> int:
    return int(np.asarray(value, np.float32).view(np.uint32))


@pytest.mark.parametrize("bits", [0x7FA00001, 0x7FC00000, 0xFFC00123, 0x7F800000])
def test_umd3_weight_nan_keeps_its_bits(blank_blend, tmp_path, bits):
    """Finding 9: a signalling NaN, NaN or infinite default weight (Blender's key
    gets 0) is written back with its exact bits; the other morph's weight too."""
    bpy = blank_blend
    model = rbfx_samples.umd3_model(version=2)
    model.morphs[0].weight = _f32(bits)
    src, out = tmp_path / "in.mdl", tmp_path / "out.mdl"
    src.write_bytes(mdl.write(model))
    assert bpy.ops.import_scene.urho3d_mdl(filepath=str(src)) == {"FINISHED"}
    obj = next(o for o in bpy.data.objects if o.type == "MESH")
    assert obj.data.shape_keys.key_blocks[1].value == 0.0
    assert bpy.ops.export_scene.urho3d_mdl(filepath=str(out)) == {"FINISHED"}
    back = mdl.read(out.read_bytes())
    assert [_bits(m.weight) for m in back.morphs] == [bits, _bits(model.morphs[1].weight)]


def test_umd3_weight_nan_edited_is_what_blender_has(blank_blend, tmp_path):
    """A key the artist set after the import exports its own value."""
    bpy = blank_blend
    model = rbfx_samples.umd3_model(version=2)
    model.morphs[0].weight = _f32(0x7FA00001)
    src, out = tmp_path / "in.mdl", tmp_path / "out.mdl"
    src.write_bytes(mdl.write(model))
    assert bpy.ops.import_scene.urho3d_mdl(filepath=str(src)) == {"FINISHED"}
    obj = next(o for o in bpy.data.objects if o.type == "MESH")
    obj.data.shape_keys.key_blocks[1].value = 0.5
    assert bpy.ops.export_scene.urho3d_mdl(filepath=str(out)) == {"FINISHED"}
    assert mdl.read(out.read_bytes()).morphs[0].weight == 0.5


def _scene(bpy) -> tuple:
    return tuple(
        sorted(x.name for x in getattr(bpy.data, kind))
        for kind in ("objects", "meshes", "shape_keys", "actions")
    )


def test_many_sparse_morphs_import_and_export_as_they_were(blank_blend, tmp_path):
    """Finding 5: one-vertex morphs each become a shape key moving its vertex,
    and go back to the file as they came (the sparse neutral morphs)."""
    bpy = blank_blend
    model = sparse_morph_model(300, n_vertices=400)
    src, out = tmp_path / "in.mdl", tmp_path / "out.mdl"
    src.write_bytes(mdl.write(model))
    assert bpy.ops.import_scene.urho3d_mdl(filepath=str(src)) == {"FINISHED"}
    obj = next(o for o in bpy.data.objects if o.type == "MESH")
    blocks = obj.data.shape_keys.key_blocks
    assert len(blocks) == 301
    n = len(obj.data.vertices)
    base = np.empty(3 * n, np.float32)
    blocks[0].data.foreach_get("co", base)
    co = np.empty(3 * n, np.float32)
    blocks[300].data.foreach_get("co", co)
    assert np.count_nonzero((co - base).reshape(n, 3).any(axis=1)) == 1
    assert bpy.ops.export_scene.urho3d_mdl(filepath=str(out)) == {"FINISHED"}
    back = mdl.read(out.read_bytes())
    assert [m.name for m in back.morphs] == [m.name for m in model.morphs]
    for a, b in zip(model.morphs, back.morphs, strict=True):
        assert [mb.mask for mb in a.buffers] == [mb.mask for mb in b.buffers]
        assert len(b.buffers[0].data) == 1
        for name in a.buffers[0].data.dtype.names[1:]:
            assert np.allclose(a.buffers[0].data[name], b.buffers[0].data[name], atol=1e-5)


def test_shape_keys_blender_cannot_hold_are_refused_first(blank_blend, tmp_path, monkeypatch):
    """Finding 5: shape keys that would need more memory than RigPort lets Blender
    take are refused with a sentence before anything is built."""
    bpy = blank_blend
    bpy.ops.mesh.primitive_cube_add()
    src = tmp_path / "many.mdl"
    src.write_bytes(mdl.write(sparse_morph_model(50, n_vertices=400)))
    monkeypatch.setattr(guard, "SHAPE_KEY_BYTES", 12 * 400 * 10)
    before = _scene(bpy)
    with pytest.raises(RuntimeError, match="shape keys would take .* GiB in Blender"):
        bpy.ops.import_scene.urho3d_mdl(filepath=str(src))
    assert _scene(bpy) == before


def test_keys_beyond_blenders_last_frame_are_a_warning(blank_blend, tmp_path, capsys):
    """Finding 11: key times of 1e7 s and more (beyond frame 1,048,574 at any rate)
    import with a warning saying what is lost, never silently."""
    from rigport.io_formats.urho3d import ani
    from rigport.samples import urho3d as u3_samples

    bpy = blank_blend
    model = u3_samples.skinned_model(n_bones=4, grid=(8, 6), morphs=0)
    (tmp_path / "m.mdl").write_bytes(mdl.write(model))
    assert bpy.ops.import_scene.urho3d_mdl(filepath=str(tmp_path / "m.mdl")) == {"FINISHED"}
    far = tmp_path / "far.ani"
    far.write_bytes(ani.write(u3_samples.walk_animation(model, n_keys=3, length=2e7)))
    near = tmp_path / "near.ani"
    near.write_bytes(ani.write(u3_samples.walk_animation(model, n_keys=3, length=2.0)))
    capsys.readouterr()
    assert bpy.ops.import_anim.urho3d_ani(filepath=str(near)) == {"FINISHED"}
    assert "beyond frame" not in capsys.readouterr().out
    assert bpy.ops.import_anim.urho3d_ani(filepath=str(far)) == {"FINISHED"}
    warned = [line for line in capsys.readouterr().out.splitlines() if "beyond frame" in line]
    assert len(warned) == 1, warned
    # both keys past the limit on each of the 4 bones' tracks
    assert "8 keys beyond frame 1,048,574 (up to 2e+07 s" in warned[0]
    assert "never play" in warned[0] and "frame range stops at 1,048,574" in warned[0]
    assert bpy.context.scene.frame_end == 1_048_574


def _counting_keeps(monkeypatch) -> list:
    """Record each ``keep_actions`` call (owner name, action names)."""
    from rigport.operators.blender import actions

    calls = []
    real = actions.keep_actions

    def counted(owner, made, active=None):
        calls.append((owner.name, [a.name for a in made]))
        return real(owner, made, active)

    monkeypatch.setattr(actions, "keep_actions", counted)
    return calls


def test_package_animations_are_stashed_once(blank_blend, tmp_path, monkeypatch):
    """Finding 13: a package's animations are stashed by one ``keep_actions`` call
    per armature (one scan of its tracks, one dependency graph update), each as a
    muted track in package order, the last one playing."""
    from rigport.io_formats.urho3d import ani, package
    from rigport.samples import urho3d as u3_samples

    bpy = blank_blend
    model = u3_samples.skinned_model(n_bones=4, grid=(8, 6), morphs=0)
    pkg = package.new_package()
    pkg.entries.append(package.Entry("Models/Thing.mdl", mdl.write(model)))
    names = [f"Anim{i:02d}" for i in range(12)]
    for name in names:
        anim = u3_samples.walk_animation(model, n_keys=2, name=name)
        pkg.entries.append(package.Entry(f"Models/{name}.ani", ani.write(anim)))
    path = tmp_path / "many.pak"
    path.write_bytes(package.write(pkg))
    calls = _counting_keeps(monkeypatch)
    assert bpy.ops.import_scene.urho3d_package(filepath=str(path)) == {"FINISHED"}
    assert calls == [("Thing", names)]
    ad = bpy.data.objects["Thing"].animation_data
    assert [t.strips[0].action.name for t in ad.nla_tracks] == names
    assert all(t.mute for t in ad.nla_tracks) and ad.action.name == names[-1]


def test_ani_files_are_stashed_once_per_import(blank_blend, tmp_path, monkeypatch):
    """Finding 13: several .ani files in one import are stashed by one call."""
    from rigport.io_formats.urho3d import ani
    from rigport.samples import urho3d as u3_samples

    bpy = blank_blend
    model = u3_samples.skinned_model(n_bones=4, grid=(8, 6), morphs=0)
    (tmp_path / "m.mdl").write_bytes(mdl.write(model))
    assert bpy.ops.import_scene.urho3d_mdl(filepath=str(tmp_path / "m.mdl")) == {"FINISHED"}
    names = ["Walk", "Run", "Idle"]
    for name in names:
        anim = u3_samples.walk_animation(model, n_keys=2, name=name)
        (tmp_path / f"{name}.ani").write_bytes(ani.write(anim))
    calls = _counting_keeps(monkeypatch)
    files = [{"name": f"{name}.ani"} for name in names]
    assert bpy.ops.import_anim.urho3d_ani(directory=str(tmp_path), files=files) == {"FINISHED"}
    arm = next(o for o in bpy.data.objects if o.type == "ARMATURE")
    assert calls == [(arm.name, names)]
    assert [t.strips[0].action.name for t in arm.animation_data.nla_tracks] == names
    assert arm.animation_data.action.name == "Idle"


def test_morph_names_colliding_once_cut_come_back(blank_blend, tmp_path):
    """Finding 5: names Blender cuts to the same 63 bytes get Blender's own unique
    names from RigPort (Blender's search took minutes for thousands), and the
    file's names come back on export."""
    bpy = blank_blend
    model = sparse_morph_model(300, n_vertices=400)
    for i, m in enumerate(model.morphs):
        m.name = "x" * 100 + f"{i:03d}"
    src, out = tmp_path / "in.mdl", tmp_path / "out.mdl"
    src.write_bytes(mdl.write(model))
    assert bpy.ops.import_scene.urho3d_mdl(filepath=str(src)) == {"FINISHED"}
    obj = next(o for o in bpy.data.objects if o.type == "MESH")
    got = [kb.name for kb in obj.data.shape_keys.key_blocks[1:]]
    assert got == guard.unique_names([m.name for m in model.morphs], {"Basis"})
    assert got[:3] == ["x" * 63, "x" * 59 + ".001", "x" * 59 + ".002"]
    assert bpy.ops.export_scene.urho3d_mdl(filepath=str(out)) == {"FINISHED"}
    assert [m.name for m in mdl.read(out.read_bytes()).morphs] == [m.name for m in model.morphs]
