"""The guard in Blender: what it leaves out, what an unedited export writes back,
and what a failed import leaves behind."""

from __future__ import annotations

import numpy as np
import pytest

from rigport.io_formats.urho3d import mdl
from rigport.operators.blender import guard
from rigport.samples import urho3d as u3_samples


def _degenerate_model() -> mdl.Model:
    m = u3_samples.skinned_model(n_bones=4, grid=(8, 6), morphs=1)
    t = m.index_buffers[0].indices.reshape(-1, 3)
    t[::4, 1] = t[::4, 0]  # a repeated vertex (crashed Blender 5.0 and 5.2)
    t[1::9] = t[0::9][: len(t[1::9])]  # duplicates
    return m


def _import(bpy, tmp_path, model: mdl.Model, name: str = "in.mdl"):
    src = tmp_path / name
    src.write_bytes(mdl.write(model))
    assert bpy.ops.import_scene.urho3d_mdl(filepath=str(src)) == {"FINISHED"}
    return src


def test_dropped_faces_are_counted_once_and_written_back(blank_blend, tmp_path, capsys):
    bpy = blank_blend
    model = _degenerate_model()
    n_tris = model.geometries[0].lods[0].index_count // 3
    src = _import(bpy, tmp_path, model)
    warnings = [line for line in capsys.readouterr().out.splitlines() if "cannot hold" in line]
    assert len(warnings) == 1, warnings
    assert "faces with a repeated vertex" in warnings[0] and "duplicate faces" in warnings[0]
    obj = next(o for o in bpy.data.objects if o.type == "MESH")
    kept = guard.loads(obj.data[guard.KEPT])
    assert len(obj.data.polygons) + len(kept["faces"]["sizes"]) == n_tris
    out = tmp_path / "out.mdl"
    assert bpy.ops.export_scene.urho3d_mdl(filepath=str(out)) == {"FINISHED"}
    a, b = mdl.read(src.read_bytes()), mdl.read(out.read_bytes())
    # unedited: the file's own triangles, in the file's order, on the same vertices
    assert [len(ib.indices) for ib in a.index_buffers] == [
        len(ib.indices) for ib in b.index_buffers
    ]
    for ia, ib in zip(a.index_buffers, b.index_buffers, strict=True):
        assert np.array_equal(ia.indices, ib.indices)
    for va, vb in zip(a.vertex_buffers, b.vertex_buffers, strict=True):
        assert va.count == vb.count
        for name in va.data.dtype.names:
            assert np.allclose(va.data[name], vb.data[name], atol=2e-3), name


def test_an_edited_mesh_exports_what_blender_has(blank_blend, tmp_path):
    bpy = blank_blend
    _import(bpy, tmp_path, _degenerate_model())
    obj = next(o for o in bpy.data.objects if o.type == "MESH")
    import bmesh

    bm = bmesh.new()
    bm.from_mesh(obj.data)
    bm.faces.ensure_lookup_table()
    bmesh.ops.delete(bm, geom=[bm.faces[0]], context="FACES_ONLY")  # an edit
    bm.to_mesh(obj.data)
    bm.free()
    nf = len(obj.data.polygons)
    out = tmp_path / "out.mdl"
    assert bpy.ops.export_scene.urho3d_mdl(filepath=str(out)) == {"FINISHED"}
    b = mdl.read(out.read_bytes())
    assert sum(g.lods[0].index_count for g in b.geometries) == 3 * nf


def _scene_state(bpy) -> dict:
    layer = bpy.context.view_layer
    return {
        "objects": sorted(o.name for o in bpy.data.objects),
        "meshes": sorted(m.name for m in bpy.data.meshes),
        "armatures": sorted(a.name for a in bpy.data.armatures),
        "actions": sorted(a.name for a in bpy.data.actions),
        "materials": sorted(m.name for m in bpy.data.materials),
        "collections": sorted(c.name for c in bpy.data.collections),
        "selected": sorted(o.name for o in layer.objects if o.select_get()),
        "active": layer.objects.active.name if layer.objects.active else None,
    }


def _busy_scene(bpy):
    bpy.ops.mesh.primitive_cube_add()
    cube = bpy.context.active_object
    bpy.ops.object.empty_add()
    empty = bpy.context.active_object
    cube.select_set(True)
    bpy.context.view_layer.objects.active = cube
    return cube, empty


def test_any_failure_takes_back_every_file_and_keeps_the_selection(
    blank_blend, tmp_path, monkeypatch, capsys
):
    """A good file then one whose build raises something other than a FormatError:
    nothing of either stays, the selection and active object are as they were, and
    the error is a sentence naming the file."""
    from rigport.operators.urho3d import model_importer as urho

    bpy = blank_blend
    _busy_scene(bpy)
    good, bad = tmp_path / "good.mdl", tmp_path / "bad.mdl"
    good.write_bytes(mdl.write(u3_samples.skinned_model(n_bones=3, grid=(6, 4))))
    bad.write_bytes(mdl.write(u3_samples.skinned_model(n_bones=3, grid=(6, 4))))
    real = urho.build_scene

    def build_then_fail(context, scene, *args, **kw):
        built = real(context, scene, *args, **kw)
        if scene.name == "bad":
            raise ZeroDivisionError("a bug")  # half-way: its objects exist already
        return built

    monkeypatch.setattr(urho, "build_scene", build_then_fail)
    before = _scene_state(bpy)
    with pytest.raises(RuntimeError) as err:
        bpy.ops.import_scene.urho3d_mdl(
            directory=str(tmp_path), files=[{"name": "good.mdl"}, {"name": "bad.mdl"}]
        )
    assert _scene_state(bpy) == before
    message = str(err.value)
    assert str(bad) in message and "ZeroDivisionError" in message and "bug" in message
    assert "Traceback" not in message
    assert "ZeroDivisionError: a bug" in capsys.readouterr().err  # the console has it


def test_a_refused_file_keeps_the_active_object(blank_blend, tmp_path):
    bpy = blank_blend
    cube, _ = _busy_scene(bpy)
    bad = tmp_path / "short.mdl"
    bad.write_bytes(mdl.write(u3_samples.skinned_model(n_bones=3, grid=(6, 4)))[:100])
    before = _scene_state(bpy)
    with pytest.raises(RuntimeError, match="short.mdl"):
        bpy.ops.import_scene.urho3d_mdl(filepath=str(bad))
    assert _scene_state(bpy) == before
    assert bpy.context.view_layer.objects.active == cube


def test_package_failure_leaves_the_scene(blank_blend, tmp_path, monkeypatch):
    from rigport.io_formats.urho3d import package
    from rigport.operators.urho3d import package as pak_op

    bpy = blank_blend
    _busy_scene(bpy)
    pkg = package.new_package()
    pkg.put("Models/A.mdl", mdl.write(u3_samples.skinned_model(n_bones=3, grid=(6, 4))))
    pkg.put("Models/B.mdl", mdl.write(u3_samples.skinned_model(n_bones=3, grid=(6, 4))))
    path = tmp_path / "p.pak"
    path.write_bytes(package.write(pkg))
    real, calls = pak_op.build_model, []

    def second_fails(*args, **kw):
        calls.append(1)
        if len(calls) == 2:
            raise KeyError("a bug")
        return real(*args, **kw)

    monkeypatch.setattr(pak_op, "build_model", second_fails)
    before = _scene_state(bpy)
    with pytest.raises(RuntimeError, match="p.pak"):
        bpy.ops.import_scene.urho3d_package(filepath=str(path))
    assert _scene_state(bpy) == before


def test_batch_import_says_what_was_left_out(tmp_path):
    from rigport.tests.support import run_batch

    src = tmp_path / "gizmo.mdl"
    src.write_bytes(mdl.write(_degenerate_model()))
    run = run_batch("import", src)
    assert run.returncode == 0, run.stderr
    line = next(x for x in run.stdout.splitlines() if "gizmo.mdl" in x)
    assert "ok" in line and "faces with a repeated vertex" in line and "kept for export" in line


def test_custom_properties_blender_cannot_hold_come_back(blank_blend):
    """Integers of 2**31 or more (RenderWare atomic flags) and text that is not UTF-8
    raised OverflowError and UnicodeEncodeError; they now come back as they went in."""
    from rigport.operators.blender.build import set_prop
    from rigport.operators.blender.extract import read_prop

    bpy = blank_blend
    obj = bpy.data.objects.new("holder", None)
    bad = b"tex\xff".decode("utf-8", "surrogateescape")
    values = {
        "flags": 2**32 - 1,
        "small": -(2**31),
        "name": bad,
        "names": ["a", bad],
        "big_list": [1, 2**40],
        "plain": "Kopf ü",
        "quoted": '"not json"',
    }
    for key, value in values.items():
        set_prop(obj, key, value)
    set_prop(obj, bad, 1)  # a key that is not UTF-8
    for key, value in values.items():
        got = read_prop(obj, key)
        assert got == value and type(got) is type(value), key
    assert read_prop(obj, guard.blender_name(bad)) == 1


def _rw_degenerate() -> bytes:
    from rigport.io_formats.renderware import dff
    from rigport.samples import renderware as rw_samples

    d = rw_samples.skinned_ped(n_bones=6, rings=4, segments=6)
    g = d.clump.geometries()[0]
    t = g.triangles
    extra = np.array([[0, 0, 1], t[0], t[1][::-1], [2, 3, 3]], t.dtype)
    g.triangles = np.concatenate([t[:5], extra, t[5:]])
    mats = g.tri_materials
    g.tri_materials = np.concatenate([mats[:5], mats[:4], mats[5:]])
    return dff.write(d)


def _unigine_degenerate() -> bytes:
    from rigport.io_formats.unigine import mesh as ug_mesh
    from rigport.samples import unigine as ug_samples

    m = ug_samples.skinned_mesh(n_bones=4, rings=4, segments=6, surfaces=2, animations=1)
    s = m.surfaces[0]
    for attr in ("coords", "tris"):
        t = getattr(s, attr).reshape(-1, 3)
        extra = [[t[0, 0], t[0, 0], t[0, 1]], t[1]]  # a repeated vertex, a duplicate
        setattr(s, attr, np.concatenate([t[:3], extra, t[3:]]).ravel().astype(t.dtype))
    return ug_mesh.write(m)


@pytest.mark.parametrize("kind", ["dff", "mesh"])
def test_other_formats_write_dropped_faces_back(blank_blend, tmp_path, kind):
    """RenderWare and Unigine meshes go through the same guard: an unedited round
    trip of a file with a degenerate and a duplicate triangle keeps them."""
    bpy = blank_blend
    src = tmp_path / f"in.{kind}"
    out = tmp_path / f"out.{kind}"
    if kind == "dff":
        src.write_bytes(_rw_degenerate())
        assert bpy.ops.import_scene.rw_dff(filepath=str(src)) == {"FINISHED"}
    else:
        src.write_bytes(_unigine_degenerate())
        assert bpy.ops.import_scene.unigine_mesh(filepath=str(src)) == {"FINISHED"}
    obj = next(o for o in bpy.data.objects if o.type == "MESH" and guard.KEPT in o.data)
    assert "faces" in guard.loads(obj.data[guard.KEPT])
    if kind == "dff":
        assert bpy.ops.export_scene.rw_dff(filepath=str(out)) == {"FINISHED"}
        assert out.read_bytes() == src.read_bytes()
    else:
        from rigport.io_formats.unigine import mesh as ug_mesh

        assert bpy.ops.export_scene.unigine_mesh(filepath=str(out)) == {"FINISHED"}
        a, b = ug_mesh.read(src.read_bytes()), ug_mesh.read(out.read_bytes())
        for sa, sb in zip(a.surfaces, b.surfaces, strict=True):
            assert np.array_equal(sa.coords, sb.coords) and np.array_equal(sa.tris, sb.tris)
            assert np.array_equal(sa.uv0, sb.uv0)


def test_names_that_are_not_utf8_come_back_on_export(blank_blend, tmp_path):
    """Blender holds them as ``\\xNN`` text; an export writes the file's own bytes."""
    bpy = blank_blend
    bad = b"\xff\xfe".decode("utf-8", "surrogateescape")
    model = u3_samples.skinned_model(n_bones=4, grid=(8, 6), morphs=1)
    for b in model.bones:
        b.name = b.name + bad
    model.morphs[0].name = bad + "smile"
    _import(bpy, tmp_path, model)
    arm = next(o for o in bpy.data.objects if o.type == "ARMATURE")
    assert all(b.name.endswith("\\xff\\xfe") for b in arm.data.bones)
    out = tmp_path / "out.mdl"
    assert bpy.ops.export_scene.urho3d_mdl(filepath=str(out)) == {"FINISHED"}
    back = mdl.read(out.read_bytes())
    assert [b.name for b in back.bones] == [b.name for b in model.bones]
    assert [m.name for m in back.morphs] == [m.name for m in model.morphs]
    a, b = model.vertex_buffers[0].data, back.vertex_buffers[0].data
    assert np.array_equal(a["blendindices0"], b["blendindices0"])
    assert np.allclose(a["blendweights0"], b["blendweights0"], atol=1e-6)
