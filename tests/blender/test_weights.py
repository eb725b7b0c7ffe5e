"""Vertex group weights in bulk (Geometry Nodes) against the vertex-by-vertex path."""

from __future__ import annotations

import numpy as np
import pytest

from rigport.tests.support import group_table

#: Bone counts: one node group, and nested groups (more than weights.CHUNK).
BONES = (7, 30)


def _mesh_with_groups(bpy, nv: int, names: list[str]):
    me = bpy.data.meshes.new("w")
    me.vertices.add(nv)
    obj = bpy.data.objects.new("w", me)
    bpy.context.collection.objects.link(obj)
    for n in names:
        obj.vertex_groups.new(name=n)
    return obj


@pytest.mark.parametrize("bones", BONES)
def test_bulk_reader_matches_vertex_by_vertex(rigport_registered, blank_blend, bones):
    from rigport.operators.blender.extract import read_skin, triplets_by_vertex
    from rigport.operators.blender.weights import CHUNK, weight_triplets

    assert (bones > CHUNK) == (bones == max(BONES))
    bpy = blank_blend
    names = [f"b{i}" for i in range(bones)]
    obj = _mesh_with_groups(bpy, 60, names)
    obj.vertex_groups.new(name="not_a_bone").add(list(range(60)), 0.5, "REPLACE")
    rng = np.random.default_rng(3)
    for v in range(60):
        for j in rng.permutation(bones)[: rng.integers(0, 6)]:
            obj.vertex_groups[names[j]].add([v], float(rng.random()), "REPLACE")
    obj.vertex_groups["b2"].add([0, 1], 0.0, "REPLACE")  # a zero weight: no influence
    obj.modifiers.new("Armature", "ARMATURE")
    bulk = weight_triplets(bpy.context, obj, names)
    slow = triplets_by_vertex(obj, names)
    keep = (slow[1] >= 0) & (slow[2] > 0)
    slow = [x[keep] for x in slow]
    key_b = np.lexsort((bulk[1], bulk[0]))
    key_s = np.lexsort((slow[1], slow[0]))
    for a, b in zip(bulk, slow, strict=True):
        np.testing.assert_array_equal(a[key_b], b[key_s])
    skin = read_skin(obj, names, max_weights=4)
    assert skin.joints.shape == (60, 4)
    assert np.all(np.diff(skin.weights, axis=1) <= 0)  # strongest first
    # the object is as it was: modifiers on, no node group or attribute left
    assert [m.show_viewport for m in obj.modifiers] == [True]
    assert not [ng for ng in bpy.data.node_groups if ng.name.startswith("rigport")]
    assert not [a for a in obj.data.attributes if a.name.startswith("rigport")]


def test_bulk_reader_declines_a_group_named_like_an_attribute(rigport_registered, blank_blend):
    from rigport.operators.blender.weights import weight_triplets

    bpy = blank_blend
    obj = _mesh_with_groups(bpy, 4, [])
    obj.data.attributes.new("bone", "FLOAT", "POINT")  # Blender allows it in this order
    obj.vertex_groups.new(name="bone")
    assert weight_triplets(bpy.context, obj, ["bone"]) is None


@pytest.mark.parametrize("bones", BONES)
def test_bulk_weight_writer(rigport_registered, blank_blend, bones):
    from rigport.operators.blender.weights import write_weights

    bpy = blank_blend
    names = [f"b{i}" for i in range(bones)]
    obj = _mesh_with_groups(bpy, 50, names)
    me = obj.data
    rng = np.random.default_rng(5)
    joints = np.stack([rng.permutation(bones)[:3] for _ in range(50)]).astype(np.int32)
    weights = rng.random((50, 3)).astype(np.float32)
    weights[::7, 2] = 0.0  # no entry for a zero weight
    assert write_weights(bpy.context, obj, joints, weights, names)
    for v in range(50):
        got = {obj.vertex_groups[g.group].name: g.weight for g in me.vertices[v].groups}
        want = {names[j]: w for j, w in zip(joints[v], weights[v], strict=True) if w > 0}
        assert got.keys() == want.keys()
        np.testing.assert_array_equal([got[k] for k in want], list(want.values()))
    assert not obj.modifiers and not bpy.data.node_groups
    assert not [a for a in me.attributes if a.name.startswith("rigport")]


def test_object_outside_the_view_layer_reads_vertex_by_vertex(rigport_registered, blank_blend):
    from rigport.operators.blender.extract import read_skin

    bpy = blank_blend
    obj = _mesh_with_groups(bpy, 3, ["a", "b"])
    obj.vertex_groups["a"].add([0, 1], 0.25, "REPLACE")
    obj.vertex_groups["b"].add([1, 2], 0.75, "REPLACE")
    bpy.context.collection.objects.unlink(obj)  # in no scene: never evaluated
    skin = read_skin(obj, ["a", "b"], max_weights=2)
    assert skin.joints.tolist() == [[0, 0], [1, 0], [1, 0]]
    assert skin.weights.tolist() == [[0.25, 0], [0.75, 0.25], [0.75, 0]]


def test_reader_groups_kept_for_a_block(rigport_registered, blank_blend):
    from rigport.operators.blender.extract import read_skin
    from rigport.operators.blender.weights import reader_groups_kept

    bpy = blank_blend
    objs = []
    for k in range(2):
        obj = _mesh_with_groups(bpy, 3, ["a", "b"])
        obj.vertex_groups["a"].add([0, 1], 0.25 + k / 4, "REPLACE")
        obj.vertex_groups["b"].add([2], 1.0, "REPLACE")
        objs.append(obj)
    with reader_groups_kept():
        skins = [read_skin(o, ["a", "b"], max_weights=1) for o in objs]
        assert len([ng for ng in bpy.data.node_groups if ng.name.startswith("rigport")]) == 1
    assert not [ng for ng in bpy.data.node_groups if ng.name.startswith("rigport")]
    assert [s.weights[:, 0].tolist() for s in skins] == [[0.25, 0.25, 1.0], [0.5, 0.5, 1.0]]


def test_strongest_first_matches_lexsort():
    from rigport.operators.blender.extract import _strongest_first

    rng = np.random.default_rng(1)
    owner = rng.integers(0, 500, 5000)
    bone = rng.integers(0, 40, 5000)
    weight = rng.choice(np.float32([0.0, 0.125, 0.5, 1.0, 0.3]), 5000)
    want = np.lexsort((bone, -weight, owner))
    got = _strongest_first(owner, bone, weight, 500, 40)  # the packed key, sorted
    for a, g in zip((owner, bone, weight), got, strict=True):
        np.testing.assert_array_equal(g, a[want])
    assert got[2].dtype == np.float32
    heavy = weight * np.float32(2)  # a weight above 1: the lexsort
    want = np.lexsort((bone, -heavy, owner))
    got = _strongest_first(owner, bone, heavy, 500, 40)
    for a, g in zip((owner, bone, heavy), got, strict=True):
        np.testing.assert_array_equal(g, a[want])


def test_a_half_built_node_group_is_removed(rigport_registered, blank_blend, monkeypatch):
    """A failure while the nested reader group is built leaves no node group behind."""
    from rigport.operators.blender import weights

    bpy = blank_blend
    built = []
    chain = weights._chain

    def failing(label, pairs):
        if built:
            raise RuntimeError("no more nodes")
        built.append(chain(label, pairs))
        return built[-1]

    monkeypatch.setattr(weights, "_chain", failing)
    names = [f"b{i}" for i in range(weights.CHUNK + 1)]
    with pytest.raises(RuntimeError):
        weights._copy_group("rigport_read_weights", names, names)
    assert len(built) == 1 and not bpy.data.node_groups


def test_distinct_neighbours_skip_the_count(rigport):
    """A large skin whose neighbouring vertices have weights of their own goes
    through Geometry Nodes without its runs counted; one whose neighbours share
    them (rigid, rings of a tube, few weight steps), a small one and one with no
    entry are counted exactly (``_sorted_entries``)."""
    from rigport.operators.blender.weights import BLOCK_ROWS, BLOCKS, _distinct_nearby

    rng = np.random.default_rng(11)
    nv = 40 * BLOCKS * BLOCK_ROWS
    joints = rng.integers(0, 64, (nv, 4)).astype(np.int32)
    assert _distinct_nearby(joints, rng.random((nv, 4)).astype(np.float32), 64)
    one = np.zeros((nv, 4), np.float32)
    one[:, 0] = 1
    rigid = np.repeat(np.arange(nv // 500), 500)[:, None].repeat(4, 1).astype(np.int32)
    assert not _distinct_nearby(rigid, one, 64)
    # rings of 12 vertices sharing their weights, every ring its own
    ring_j = np.repeat(joints[: nv // 12 + 1], 12, axis=0)[:nv]
    ring_w = np.repeat(rng.random((nv // 12 + 1, 4)).astype(np.float32), 12, axis=0)[:nv]
    assert not _distinct_nearby(ring_j, ring_w, 64)
    steps = (rng.integers(1, 4, (nv, 4)) / 4).astype(np.float32)
    assert not _distinct_nearby(joints, steps, 64)
    assert not _distinct_nearby(joints, steps, 0)  # no bone in range: no entry
    small = BLOCKS * BLOCK_ROWS
    assert not _distinct_nearby(joints[:small], rng.random((small, 4)).astype(np.float32), 64)


@pytest.mark.parametrize("path", ["geometry nodes", "fallback", "shape keys"])
def test_a_large_distinct_skin_fills_its_groups(rigport_registered, blank_blend, monkeypatch, path):
    """``assign_vertex_groups`` end to end on a skin of distinct weights large
    enough to skip the count: through Geometry Nodes without ``_sorted_entries``;
    when the modifier cannot be applied, or the mesh has shape keys, one ``add``
    per run fills the same groups. Zero, NaN and out-of-range entries make none."""
    from rigport.operators.blender import weights

    bpy = blank_blend
    nv, n_bones = 2 * weights.BLOCKS * weights.BLOCK_ROWS + 5, 12
    rng = np.random.default_rng(3)
    joints = np.stack([rng.permutation(n_bones)[:4] for _ in range(nv)]).astype(np.int32)
    given = rng.uniform(0.05, 1.0, (nv, 4)).astype(np.float32)
    given[::9, 3] = 0.0
    given[::13, 2] = np.nan
    joints[::17, 1] = n_bones + 2
    want = np.zeros((nv, n_bones), np.float32)
    ok = (given > 0) & (joints < n_bones)
    rows = np.repeat(np.arange(nv), 4).reshape(nv, 4)
    want[rows[ok], joints[ok]] = given[ok]

    me = bpy.data.meshes.new("skin")
    me.vertices.add(nv)
    obj = bpy.data.objects.new("skin", me)
    bpy.context.collection.objects.link(obj)
    counted = []
    real_sort = weights._sorted_entries
    monkeypatch.setattr(weights, "_sorted_entries", lambda *a: counted.append(1) or real_sort(*a))
    if path == "fallback":
        monkeypatch.setattr(weights, "write_weights", lambda *a: False)
    if path == "shape keys":
        obj.shape_key_add(name="Basis")
    weights.assign_vertex_groups(bpy.context, obj, joints, given, [f"b{i}" for i in range(n_bones)])
    assert bool(counted) == (path != "geometry nodes")
    np.testing.assert_array_equal(group_table(obj, n_bones), want)
    assert [g.name for g in obj.vertex_groups] == [f"b{i}" for i in range(n_bones)]
    assert not obj.modifiers and not bpy.data.node_groups
