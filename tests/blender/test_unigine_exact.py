"""Unigine through Blender: what the import kept of a .mesh (bounds, weight bytes,
zero-weight influences, a vertex no triangle uses) is written back while the
mesh is unedited, and follows an edit when it is not."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

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


def _anim_trip(bpy, tmp_path, data: bytes) -> bytes:
    """Import ``data`` onto the imported character's armature and export it again."""
    src = tmp_path / "clip.anim"
    src.write_bytes(data)
    assert bpy.ops.import_anim.unigine_anim(filepath=str(src), frame_rate="CUSTOM") == {"FINISHED"}
    out = tmp_path / "out.anim"
    assert bpy.ops.export_anim.unigine_anim(filepath=str(out), frame_rate="CUSTOM") == {"FINISHED"}
    return out.read_bytes()


def test_anim_header_kept_through_blender(blank_blend, tmp_path):
    """An .anim whose header lists two "Nub" bones the armature lacks and leaves out
    one it has comes back byte for byte: header, bounds, and the Nubs' keys (not
    their bind pose)."""
    from rigport.io_formats.unigine import anim

    bpy = blank_blend
    m = samples.skinned_mesh(animations=0)
    _import(bpy, tmp_path, m)
    original = samples.nub_anim_file(m)
    data = anim.write(original)
    back = _anim_trip(bpy, tmp_path, data)
    assert back == data
    arm = next(o for o in bpy.data.objects if o.type == "ARMATURE")
    names = [original.bones[i].name for i in original.animations[0].bones]
    nubs = [k for k, n in enumerate(names) if n.endswith("Nub")]
    assert len(nubs) == 2 and not any(names[k] in arm.data.bones for k in nubs)
    rot = anim.read(back).animations[0].frames.rotation[:, nubs]
    assert len(np.unique(rot.reshape(len(rot), -1), axis=0)) > 1  # keyed, not held at bind
    from rigport.operators.unigine import exporter, settings

    done = exporter.export_anim_file(
        bpy.context, str(tmp_path / "api.anim"), arm, settings.AnimExportOptions()
    )
    assert (tmp_path / "api.anim").read_bytes() == data
    assert any(
        "carried 2 tracks of bones the armature lacks" in t and "Bip01 Nub, Root Nub" in t
        for t in done.infos
    ), done.infos


def test_clip_without_scale_gains_no_scale_box(blank_blend, tmp_path):
    """Flag 15 (translation and rotation only): the Nub clip and a clip with loose
    boxes and an empty scale box come back byte for byte; a clip Blender made that
    stores no scale writes an empty scale box."""
    from rigport.io_formats.unigine import anim
    from rigport.io_formats.unigine.anim_convert import BOXES_KEY

    bpy = blank_blend
    m = samples.skinned_mesh(animations=0)
    _import(bpy, tmp_path, m)
    for f in (samples.nub_anim_file(m, anim_flag=0x0F), samples.loose_box_anim_file(m)):
        data = anim.write(f)
        assert _anim_trip(bpy, tmp_path, data) == data
    arm = next(o for o in bpy.data.objects if o.type == "ARMATURE")
    action = arm.animation_data.action
    assert "_" + BOXES_KEY in action and BOXES_KEY not in action  # hidden, as kept data is
    # quantised keys Blender gives back within a step need no residue: the kept
    # record is digests and little else (it was larger than the file before)
    assert len(action["_rigport_exact_keys"]) < len(data) / 4
    del action["_" + BOXES_KEY]  # as if Blender made the clip
    out = tmp_path / "made.anim"
    assert bpy.ops.export_anim.unigine_anim(
        filepath=str(out), frame_rate="CUSTOM", export_animations="ACTIVE"
    ) == {"FINISHED"}
    clip = anim.read(out.read_bytes()).animations[0]
    assert clip.flag == 0x0F
    assert not clip.scale_min.any() and not clip.scale_size.any()
    assert not (clip.frames.flags & 0x70).any()


def test_edited_keys_leave_the_loose_box_when_they_do_not_fit(blank_blend, tmp_path):
    """The file's translation box is used while every value fits in it; a key moved
    outside makes the export fit a new box that holds it."""
    from rigport.io_formats.unigine import anim
    from rigport.operators.blender import compat

    bpy = blank_blend
    m = samples.skinned_mesh(animations=0)
    _import(bpy, tmp_path, m)
    f = samples.loose_box_anim_file(m)
    _anim_trip(bpy, tmp_path, anim.write(f))
    arm = next(o for o in bpy.data.objects if o.type == "ARMATURE")
    action = arm.animation_data.action
    curve = next(c for c in compat.fcurves(action) if c.data_path.endswith("location"))
    curve.keyframe_points[0].co.y += 50.0
    out = tmp_path / "edited.anim"
    assert bpy.ops.export_anim.unigine_anim(
        filepath=str(out), frame_rate="CUSTOM", export_animations="ACTIVE"
    ) == {"FINISHED"}
    clip = anim.read(out.read_bytes()).animations[0]
    kept = f.animations[1]
    corners = np.concatenate([clip.translation_min, clip.translation_min + clip.translation_size])
    file_corners = np.concatenate(
        [kept.translation_min, kept.translation_min + kept.translation_size]
    )
    assert np.abs(corners - file_corners).max() > 10.0  # a box that holds the moved key


@pytest.mark.parametrize("case", ["nub", "nub_no_scale", "loose_boxes"])
def test_batch_roundtrip_of_anim_is_byte_identical(tmp_path, case):
    """``batch.py roundtrip --model`` (import onto the mesh's armature, export)."""
    from rigport.io_formats.unigine import anim

    m = samples.skinned_mesh(animations=0)
    f = {
        "nub": lambda: samples.nub_anim_file(m),
        "nub_no_scale": lambda: samples.nub_anim_file(m, anim_flag=0x0F),
        "loose_boxes": lambda: samples.loose_box_anim_file(m),
    }[case]()
    model, src, out = tmp_path / "hero.mesh", tmp_path / "hero.anim", tmp_path / "out.anim"
    model.write_bytes(mesh.write(m))
    src.write_bytes(anim.write(f))
    batch = Path(__file__).resolve().parents[2] / "batch.py"
    proc = subprocess.run(
        [
            sys.executable,
            str(batch),
            "--jobs",
            "1",
            "roundtrip",
            str(src),
            str(out),
            "--model",
            str(model),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert out.read_bytes() == src.read_bytes()


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
