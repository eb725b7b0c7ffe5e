"""The rule for defaults: import, then export with default options, gives back the
file for every Urho3D model (byte for byte) and animation (DESIGN.md's
tolerances) of the corpus."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rigport.io_formats.urho3d import ani, engine_rules, mdl
from rigport.tests.support import assert_same_urho3d_skeleton

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus"
MODELS = sorted(
    str(p.relative_to(CORPUS))
    for pattern in ("urho3d/*.mdl", "urho3d/*/*.mdl", "rbfx/*.mdl")
    for p in CORPUS.glob(pattern)
) or ["urho3d/Box.mdl"]
ANIMATIONS = [
    ("urho3d/Jack.mdl", "urho3d/Jack_Walk.ani"),
    ("urho3d/reattiva/Tube.mdl", "urho3d/reattiva/Tube_Wave.ani"),
]


def assert_same_model(a: mdl.Model, b: mdl.Model) -> None:
    """Equal within DESIGN.md's tolerances: counts, layout, order and indices exactly;
    positions, UVs, weights, morphs and bones within 1e-5; normals and tangents
    within Blender's custom normal encoding (2e-3)."""
    assert (a.magic, a.version) == (b.magic, b.version)
    assert len(a.vertex_buffers) == len(b.vertex_buffers)
    for va, vb in zip(a.vertex_buffers, b.vertex_buffers, strict=True):
        assert (va.count, va.elements, va.legacy_mask) == (vb.count, vb.elements, vb.legacy_mask)
        assert (va.morph_start, va.morph_count) == (vb.morph_start, vb.morph_count)
        for name in va.data.dtype.names:
            x, y = va.data[name].astype(np.float64), vb.data[name].astype(np.float64)
            tol = 2e-3 if name.startswith(("normal", "tangent")) else 1e-5
            assert np.allclose(x, y, atol=tol, rtol=0), name
    assert [ia.index_size for ia in a.index_buffers] == [ib.index_size for ib in b.index_buffers]
    for ia, ib in zip(a.index_buffers, b.index_buffers, strict=True):
        assert np.array_equal(ia.indices, ib.indices)
    assert len(a.geometries) == len(b.geometries)
    for ga, gb in zip(a.geometries, b.geometries, strict=True):
        assert np.array_equal(ga.bone_mapping, gb.bone_mapping)
        assert [vars(x) for x in ga.lods] == [vars(x) for x in gb.lods]
    assert [m.name for m in a.morphs] == [m.name for m in b.morphs]
    for ma, mb in zip(a.morphs, b.morphs, strict=True):
        assert np.isclose(ma.weight, mb.weight)
        assert [(x.vertex_buffer, x.mask) for x in ma.buffers] == [
            (x.vertex_buffer, x.mask) for x in mb.buffers
        ]
        for x, y in zip(ma.buffers, mb.buffers, strict=True):
            assert np.array_equal(x.data["index"], y.data["index"])
            for f in x.data.dtype.names[1:]:
                assert np.allclose(x.data[f], y.data[f], atol=1e-5), f
    assert_same_urho3d_skeleton(a, b)
    assert np.allclose(a.bbox_min, b.bbox_min, atol=1e-5)
    assert np.allclose(a.bbox_max, b.bbox_max, atol=1e-5)
    assert (a.geometry_centers is None) == (b.geometry_centers is None)
    if a.geometry_centers is not None:
        assert np.allclose(a.geometry_centers, b.geometry_centers, atol=1e-5)


@pytest.mark.parametrize("rel", MODELS)
def test_default_round_trip(blank_blend, corpus_dir, tmp_path, rel):
    bpy = blank_blend
    src = corpus_dir / rel
    assert bpy.ops.import_scene.urho3d_mdl(filepath=str(src)) == {"FINISHED"}
    out = tmp_path / "out.mdl"
    assert bpy.ops.export_scene.urho3d_mdl(filepath=str(out)) == {"FINISHED"}
    a, b = mdl.read(src.read_bytes()), mdl.read(out.read_bytes())
    assert_same_model(a, b)
    assert engine_rules.check(b) == []
    # Beyond the tolerances: an unedited model comes back byte for byte (kept
    # normals, UVs, skin slots, bone and morph orders, signed zeros).
    assert out.read_bytes() == src.read_bytes()


@pytest.mark.parametrize("model_rel, anim_rel", ANIMATIONS)
def test_default_animation_round_trip(blank_blend, corpus_dir, tmp_path, model_rel, anim_rel):
    """Tracks in the file's order (Tube's bones and tracks list children first),
    the same key times, values within 1e-5."""
    bpy = blank_blend
    assert bpy.ops.import_scene.urho3d_mdl(filepath=str(corpus_dir / model_rel)) == {"FINISHED"}
    arm = next(o for o in bpy.data.objects if o.type == "ARMATURE")
    bpy.context.view_layer.objects.active = arm
    src = corpus_dir / anim_rel
    assert bpy.ops.import_anim.urho3d_ani(filepath=str(src)) == {"FINISHED"}
    out = tmp_path / "out.ani"
    assert bpy.ops.export_anim.urho3d_ani(filepath=str(out)) == {"FINISHED"}
    x, y = ani.read(src.read_bytes()), ani.read(out.read_bytes())
    assert (x.name, x.length, x.version) == (y.name, y.length, y.version)
    assert [(t.name, t.mask, len(t.keys)) for t in x.tracks] == [
        (t.name, t.mask, len(t.keys)) for t in y.tracks
    ]
    for tx, ty in zip(x.tracks, y.tracks, strict=True):
        assert np.allclose(tx.keys["time"], ty.keys["time"], atol=1e-6)
        for f in tx.keys.dtype.names[1:]:
            u, v = tx.keys[f].astype(np.float64), ty.keys[f].astype(np.float64)
            if f == "rotation":
                v = v * np.sign(np.sum(u * v, axis=1, keepdims=True))
            assert np.allclose(u, v, atol=1e-5), f


def test_degenerate_triangle_normals_are_kept(blank_blend, corpus_dir, rigport):
    """Jack has vertices on degenerate triangles. Blender 4.2's normal setter cannot
    hold their normals (its corner normals there are not unit vectors): the import
    counts them in a warning. 4.5+ hold every normal exactly (the custom_normal
    attribute), so there is nothing to warn about."""
    bpy = blank_blend
    from rigport.operators.blender import compat
    from rigport.operators.result import Level
    from rigport.operators.urho3d.model_importer import ModelImportOptions, import_mdl

    built = import_mdl(bpy.context, str(corpus_dir / "urho3d/Jack.mdl"), ModelImportOptions())
    warnings = [f"warning: {m.text}" for m in built.messages if m.level is Level.WARNING]
    if compat.HAS_NORMAL_ATTRIBUTE:
        assert warnings == []
        return
    (note,) = warnings
    assert note.startswith("warning: ") and "vertices lie on degenerate triangles" in note
    count = int(note.split()[1])
    assert 0 < count < 100


def test_unheld_normals_read_only_where_a_face_is_degenerate(blank_blend, corpus_dir):
    """4.2: the warning's corner-normal read (Blender computes every corner's)
    runs only on meshes with a degenerate face
    (``may_hold_unheld``). On every corpus model the meshes it passes over have
    no unheld corner, and the warning counts what reading every mesh counts."""
    bpy = blank_blend
    from rigport.operators.blender import compat
    from rigport.operators.urho3d import model_importer as mi
    from rigport.operators.urho3d.model_importer import ModelImportOptions, import_mdl

    if compat.HAS_NORMAL_ATTRIBUTE:
        pytest.skip("4.5+ hold every normal: there is no warning to count")
    read, passed = 0, 0
    for path in sorted((corpus_dir / "urho3d").glob("*.mdl")):
        bpy.ops.wm.read_factory_settings(use_empty=True)
        built = import_mdl(bpy.context, str(path), ModelImportOptions())
        total = 0
        for obj in built.objects:
            me = obj.data if obj.type == "MESH" else None
            if me is None or mi.NORMAL_ATTRIBUTE not in me.attributes or not len(me.loops):
                continue
            exact = mi.unheld_vertex_count(me)
            total += exact
            if mi.may_hold_unheld(me):
                read += 1
            else:
                passed += 1
                assert exact == 0, (path.name, obj.name)
        assert mi.unheld_normals_warning(built.objects).split(" ")[:1] == (
            [str(total)] if total else [""]
        ), path.name
    assert read and passed  # Jack's meshes are read, the clean models' passed over


def test_a_flat_face_is_not_taken_for_a_degenerate_one(blank_blend):
    """``may_hold_unheld`` reads Blender's face normals: a degenerate face gets +Z,
    and so does a real face lying flat. Only the one whose corners are in line
    (or coincide) counts."""
    bpy = blank_blend
    from rigport.operators.urho3d.model_importer import may_hold_unheld

    def mesh(triangles):
        me = bpy.data.meshes.new("m")
        me.from_pydata(
            [v for t in triangles for v in t], [], [(0, 1, 2), (3, 4, 5)][: len(triangles)]
        )
        me.update()
        return me

    flat = [(0, 0, 0), (1, 0, 0), (0, 1, 0)]  # normal +Z, a real face
    tilted = [(0, 0, 0), (1, 0, 1), (0, 1, 0)]
    in_line = [(0, 0, 0), (1, 1, 1), (2, 2, 2)]
    same_point = [(0, 0, 0), (0, 0, 0), (0, 1, 0)]
    assert not may_hold_unheld(mesh([flat, tilted]))
    assert may_hold_unheld(mesh([flat, in_line]))
    assert may_hold_unheld(mesh([tilted, same_point]))
