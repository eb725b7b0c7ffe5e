"""Unigine files -> neutral scene -> files again, without Blender."""

from __future__ import annotations

import numpy as np
import pytest

from rigport.io_formats.unigine import mesh
from rigport.io_formats.unigine.anim_file_convert import export_anim_file, import_anim_file
from rigport.io_formats.unigine.mesh_export import export_scene, file_order, tangent_quaternions
from rigport.io_formats.unigine.mesh_import import import_mesh, tangent_normals
from rigport.samples import unigine as samples
from rigport.samples import unigine_compare as compare


def _no_tangents() -> mesh.Mesh:
    m = samples.static_mesh()
    for t in m.surfaces[1].targets:
        t.tangents = t.tangents[:0]
    return m


def _morph_without_tangents() -> mesh.Mesh:
    m = samples.skinned_mesh()
    m.surfaces[0].targets[2].tangents = m.surfaces[0].targets[2].tangents[:0]
    return m


CASES = {
    "skinned": lambda: samples.skinned_mesh(),
    "no-tangents": _no_tangents,
    "morph-without-tangents": _morph_without_tangents,
    "static": lambda: samples.static_mesh(),
    "wide": lambda: samples.large_mesh(),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_mesh_through_neutral(case):
    original = CASES[case]()
    scene = import_mesh(original, case, fps=30.0)
    back, warnings = export_scene(scene, 30.0)
    assert warnings == []
    assert compare.mesh_differences(original, back) == []


def test_neutral_scene_content():
    m = samples.skinned_mesh()
    scene = import_mesh(m, "c")
    me = scene.meshes[0]
    assert me.materials == ["surface_0", "surface_1"]
    assert len(me.positions) == sum(s.n_coords for s in m.surfaces)
    assert [u.name for u in me.uv_sets] == ["UVMap", "UVMap2"]
    assert [t.name for t in me.morphs] == ["bulge", "pinch"]
    # surface 1 has no "pinch" target: zero offsets there
    assert not me.morphs[1].position_offsets[m.surfaces[0].n_coords :].any()
    # bones parent-first as Blender keeps them, each with its file index; bind scales kept
    sk = scene.skeleton
    assert sk.parents[0] == -1 and sk.extras[0]["unigine_index"] == len(m.bones) - 1
    assert np.isclose(sk.local_scale[0], 0.25).all()
    assert file_order(sk).names == [b.name for b in m.bones]
    assert file_order(sk).parents.tolist() == [b.parent for b in m.bones]
    # normals: the tubes' normals point away from the axis
    radial = me.positions[me.corner_verts][:, :2]
    cosang = (me.normals[:, :2] * radial).sum(1) / np.linalg.norm(radial, axis=1)
    assert cosang.min() > 0.999
    assert [a.name for a in scene.animations] == ["clip_0", "clip_1"]
    assert scene.animations[1].tracks[0].scale is None  # flag 15: no scale channel
    # tangents of a morph target are kept only where they differ from the base ones
    names = [a.name for a in me.attributes]
    assert "unigine:morph_tangent:bulge" in names and "unigine:morph_tangent:pinch" not in names


def test_tangent_quaternions_round_trip():
    rng = np.random.default_rng(3)
    n = rng.normal(size=(500, 3))
    t = np.concatenate([rng.normal(size=(500, 3)), rng.choice([-1.0, 1.0], (500, 1))], 1)
    q = tangent_quaternions(n, t)
    assert (np.sign(q[:, 3]) == t[:, 3]).all()
    nn = n / np.linalg.norm(n, axis=1, keepdims=True)
    assert (tangent_normals(q) * nn).sum(1).min() > 1 - 1e-7


@pytest.mark.parametrize("flag", [15, 127])
def test_anim_through_neutral(flag):
    m = samples.skinned_mesh()
    original = samples.anim_file(m, flag)
    anims = import_anim_file(original, "x.anim", 30.0)
    skeleton = file_order(import_mesh(m, "c").skeleton)
    back = export_anim_file([(a, 30.0) for a in anims], skeleton)
    assert compare.anim_differences(original, back) == []
    assert np.array_equal(back.bounds, original.bounds)
    # boxes are refitted to the same data
    for x, y in zip(original.animations, back.animations, strict=True):
        assert np.allclose(x.translation_min, y.translation_min, atol=1e-6)
        assert np.allclose(x.translation_size, y.translation_size, atol=1e-6)


def test_export_stores_only_changes():
    m = samples.skinned_mesh(n_frames=20)
    scene = import_mesh(m, "c")
    back, _ = export_scene(scene, 30.0)
    for x, y in zip(m.animations, back.animations, strict=True):
        assert np.array_equal(x.frames.flags, y.frames.flags)
    assert len(mesh.write(back)) == len(mesh.write(m))  # the same components stored


def test_rotate_kept_tangents_turns_the_frames_and_keeps_handedness():
    """Baked a rotation, the file's tangent quaternions still turn +Z into the
    (turned) normals; the w signs that mark left-handed bitangents stay; a whole
    export through the rotation and back gives the file's tangents."""
    from rigport.io_formats import global_transform
    from rigport.io_formats.unigine.mesh_export import rotate_kept_tangents
    from rigport.io_formats.unigine.mesh_import import MORPH_TANGENT, TANGENT_ATTRIBUTE

    m = samples.skinned_mesh()  # its last surface is mirrored: left-handed tangents
    scene = import_mesh(m, "c")
    me = scene.meshes[0]
    kept = {a.name: a.data.copy() for a in me.attributes if "tangent" in a.name}
    assert TANGENT_ATTRIBUTE in kept and any(n.startswith(MORPH_TANGENT[:-2]) for n in kept)
    before = np.rint(kept[TANGENT_ATTRIBUTE]).astype(np.int16)
    assert (before[:, 3] < 0).any() and (before[:, 3] > 0).any()
    angle = 0.7
    c, s = np.cos(angle), np.sin(angle)
    turn = np.array([[c, -s, 0], [s, c, 0], [0, 0, 1.0]]) @ np.array(
        [[1, 0, 0], [0, 0, -1.0], [0, 1, 0]]
    )
    rotate_kept_tangents(me, turn)
    after = np.rint(next(a for a in me.attributes if a.name == TANGENT_ATTRIBUTE).data)
    after = after.astype(np.int16)
    assert np.allclose(tangent_normals(after), tangent_normals(before) @ turn.T, atol=2e-4)
    assert np.array_equal(after[:, 3] < 0, before[:, 3] < 0)
    assert np.allclose(np.linalg.norm(after / 32767.0, axis=1), 1.0, atol=1e-3)
    # and back: the inverse turn gives the file's quaternions within one step
    rotate_kept_tangents(me, turn.T)
    for a in me.attributes:
        if a.name in kept:
            assert np.abs(np.rint(a.data) - np.rint(kept[a.name])).max() <= 2, a.name
    # a file exported through a turn and its inverse is the file
    matrix = np.eye(4)
    matrix[:3, :3] = turn
    global_transform.bake_mesh(me, matrix)
    rotate_kept_tangents(me, turn)
    inverse = np.eye(4)
    inverse[:3, :3] = turn.T
    global_transform.bake_mesh(me, inverse)
    rotate_kept_tangents(me, turn.T)
    back, _ = export_scene(scene)
    assert compare.mesh_differences(m, back) == []


def _grouped_by_sorting(fields: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """The surface vertices by definition: distinct rows of fields, numbered by surface,
    imported surface vertex, then first appearance."""
    rows = np.stack(fields, axis=1)
    _, first, inverse = np.unique(rows, axis=0, return_index=True, return_inverse=True)
    order = np.lexsort((first, fields[1][first], fields[0][first]))
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return first[order], rank[inverse.reshape(-1)]


@pytest.mark.parametrize("keyed_by", ["surface_vertex", "vertex"])
def test_corners_group_into_surface_vertices_as_sorting_would(keyed_by: str) -> None:
    """Corners keyed by vertex or imported surface vertex, with seams, edits and keys
    whose corners differ, group exactly as sorting every corner's fields does."""
    from rigport.io_formats.unigine.mesh_export import _group_corners

    rng = np.random.default_rng(4)
    n, nv = 3000, 500
    verts = rng.integers(0, nv, n)
    surf = (verts >= 300).astype(np.int64)
    svid = verts.copy()
    seam = rng.random(n) < 0.2
    svid[seam] += nv  # split at a seam: another surface vertex
    uv = rng.integers(0, 3, (n, 2)).astype(np.float32)[svid % 7]  # follows the surface vertex
    edited = rng.random(n) < 0.05
    uv[edited, 0] = 9.0  # edits inside a surface vertex
    uv[rng.random(n) < 0.01] = -0.0
    words = np.ascontiguousarray(uv).view(np.int64).reshape(-1)
    fields = [surf, svid, verts, words, rng.integers(0, 2, n) * edited]
    if keyed_by == "vertex":
        first, sv = _group_corners(fields, verts, nv)
    else:
        first, sv = _group_corners(fields, surf * 2 * nv + svid, 4 * nv)
    want_first, want_sv = _grouped_by_sorting(fields)
    np.testing.assert_array_equal(first, want_first)
    np.testing.assert_array_equal(sv, want_sv)
    empty = [f[:0] for f in fields]
    got = _group_corners(empty, verts[:0], nv)
    assert len(got[0]) == len(got[1]) == 0
