"""Unigine through Blender: what the import kept of a .mesh (bounds, weight bytes,
zero-weight influences, a vertex no triangle uses) is written back while the
mesh is unedited, and follows an edit when it is not."""

from __future__ import annotations

import numpy as np

from rigport.io_formats.unigine import mesh
from rigport.samples import unigine as samples


def _import(bpy, tmp_path, m: mesh.Mesh):
    src = tmp_path / "in.mesh"
    src.write_bytes(mesh.write(m))
    assert bpy.ops.import_scene.unigine_mesh(filepath=str(src)) == {"FINISHED"}
    return src.read_bytes(), next(o for o in bpy.data.objects if o.type == "MESH")


def _export(bpy, tmp_path) -> bytes:
    out = tmp_path / "out.mesh"
    assert bpy.ops.export_scene.unigine_mesh(filepath=str(out)) == {"FINISHED"}
    return out.read_bytes()


def test_unedited_roundtrip_is_byte_identical(blank_blend, tmp_path):
    data, obj = _import(blank_blend, tmp_path, samples.inexact_mesh())
    assert len(obj.data.vertices) == sum(s.n_coords for s in samples.inexact_mesh().surfaces)
    assert _export(blank_blend, tmp_path) == data


def test_moved_vertex_lies_inside_the_new_bounds(blank_blend, tmp_path):
    bpy = blank_blend
    m = samples.inexact_mesh()
    _, obj = _import(bpy, tmp_path, m)
    moved = np.array(obj.data.vertices[5].co) + 20.0
    obj.data.vertices[5].co = moved
    if obj.data.shape_keys is not None:
        obj.data.shape_keys.reference_key.data[5].co = moved
    out = mesh.read(_export(bpy, tmp_path))
    for b in (out.bounds, out.surfaces[0].bounds):
        assert np.all(moved >= b[0:3] - 1e-5) and np.all(moved <= b[3:6] + 1e-5)
        assert np.linalg.norm(moved - b[6:9]) <= b[9] + 1e-4
    assert np.array_equal(out.surfaces[1].bounds, m.surfaces[1].bounds)  # unmoved: the file's
    assert out.surfaces[0].n_coords == m.surfaces[0].n_coords  # the lone vertex too


def test_weight_paint_is_written(blank_blend, tmp_path):
    bpy = blank_blend
    m = samples.inexact_mesh()
    _, obj = _import(bpy, tmp_path, m)
    bone = m.bones[int(m.surfaces[0].weights.bones[0])].name
    group = obj.vertex_groups[bone]
    group.add([0], 1.0, "REPLACE")
    for g in obj.vertex_groups:
        if g != group:
            g.remove([0])
    out = mesh.read(_export(bpy, tmp_path))
    w = out.surfaces[0].weights
    assert int(w.counts[0]) == 1 and int(w.values[0]) == 65535
    assert out.bones[int(w.bones[0])].name == bone
    assert (w.values > 0).all()  # written from Blender: no zero influences
    # positions did not change: the file's bounds stay
    assert np.array_equal(out.surfaces[0].bounds, m.surfaces[0].bounds)


def test_deleted_face_leaves_the_lone_vertex_out(blank_blend, tmp_path):
    """After a topology edit the kept vertex-to-surface map no longer applies: the
    loose vertex is left out, and the export says so."""
    bpy = blank_blend
    m = samples.inexact_mesh()
    _, obj = _import(bpy, tmp_path, m)
    import bmesh

    bm = bmesh.new()
    bm.from_mesh(obj.data)
    bm.faces.ensure_lookup_table()
    bmesh.ops.delete(bm, geom=[bm.faces[0]], context="FACES_ONLY")
    bm.to_mesh(obj.data)
    bm.free()
    out = mesh.read(_export(bpy, tmp_path))
    assert out.surfaces[0].n_coords == m.surfaces[0].n_coords - 1


def test_anim_header_kept_through_blender(blank_blend, tmp_path):
    """An .anim whose header lists two "Nub" bones the armature lacks and leaves out
    one it has comes back under its own header: bones, parents, bind bytes, bounds
    and each clip's bone list as the file had them."""
    from rigport.io_formats.unigine import anim

    bpy = blank_blend
    m = samples.skinned_mesh(animations=0)
    _import(bpy, tmp_path, m)
    original = samples.nub_anim_file(m)
    src = tmp_path / "nub.anim"
    src.write_bytes(anim.write(original))
    assert bpy.ops.import_anim.unigine_anim(filepath=str(src), frame_rate="CUSTOM") == {"FINISHED"}
    out = tmp_path / "out.anim"
    assert bpy.ops.export_anim.unigine_anim(filepath=str(out), frame_rate="CUSTOM") == {"FINISHED"}
    back = anim.read(out.read_bytes())
    assert [(b.name, b.parent) for b in back.bones] == [(b.name, b.parent) for b in original.bones]
    assert back.bind.tobytes() == original.bind.tobytes()
    assert back.bounds.tobytes() == original.bounds.tobytes()
    a, b = original.animations[0], back.animations[0]
    assert np.array_equal(a.bones, b.bones)
    # the bones the armature has play as in the file (the Nubs' keys are the
    # shared exact-keys mechanism's to keep)
    names = [original.bones[i].name for i in a.bones]
    arm = next(o for o in bpy.data.objects if o.type == "ARMATURE")
    have = [k for k, n in enumerate(names) if n in arm.data.bones]
    assert (
        np.abs(
            a.frames.rotation[:, have].astype(int) - b.frames.rotation[:, have].astype(int)
        ).max()
        <= 1
    )


def test_panel_says_what_is_kept_and_what_an_edit_changes(blank_blend, tmp_path):
    from rigport.ui.report import report_kept

    _, obj = _import(blank_blend, tmp_path, samples.inexact_mesh())
    text = "\n".join(report_kept(obj))
    assert "the file's bounds, weight bytes and zero-weight influences" in text
    assert "bounds are recomputed" not in text
    obj.data.vertices[0].co.x += 1.0
    assert (
        "vertices moved: the surfaces' kept data is kept, bounds recomputed from the mesh"
        in "\n".join(report_kept(obj))
    )
