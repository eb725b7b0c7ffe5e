"""Merging neutral meshes: nothing dropped silently."""

from __future__ import annotations

import numpy as np

from rigport.io_formats.merge import merge_meshes
from rigport.io_formats.scene import Attribute, ColorSet, Mesh, MorphTarget, Skin, UVSet


def _tri(name: str, offset: float, uv_sets: int = 1, skinned: bool = True) -> Mesh:
    m = Mesh(
        name,
        np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0]], np.float32) + offset,
        np.array([0, 1, 2], np.int32),
        np.array([0], np.int32),
        np.array([0], np.int32),
        loose_edges=np.array([[0, 1]], np.int32),
        materials=[f"{name}_mat"],
    )
    m.uv_sets = [UVSet(f"UV{i}", np.full((3, 2), offset + i, np.float32)) for i in range(uv_sets)]
    if skinned:
        m.skin = Skin(np.array([[1, 0], [2, 0], [3, 0]], np.int32), np.ones((3, 2), np.float32) / 2)
    m.attributes = [
        Attribute("fmt:geometry", "EDGE", "INT", np.array([0], np.int32)),
        Attribute("fmt:only_" + name, "POINT", "FLOAT", np.zeros(3, np.float32)),
    ]
    return m


def test_merge_keeps_and_warns():
    a = _tri("a", 0.0, uv_sets=2)
    a.colors = [ColorSet("Col", np.full((3, 4), 0.5, np.float32), True)]
    a.morphs = [MorphTarget("smile", np.ones((3, 3), np.float32), 0.25)]
    b = _tri("b", 10.0, uv_sets=1, skinned=False)
    out, warnings = merge_meshes([a, b], ("fmt:geometry",))
    assert len(out.positions) == 6
    assert out.corner_verts.tolist() == [0, 1, 2, 3, 4, 5]
    assert out.face_materials.tolist() == [0, 1]
    assert out.loose_edges.tolist() == [[0, 1], [3, 4]]
    assert out.materials == ["a_mat", "b_mat"]
    # second UV set and the colours: filled for b, with a warning each
    assert [u.name for u in out.uv_sets] == ["UV0", "UV1"]
    assert np.array_equal(out.uv_sets[1].uv[3:], np.zeros((3, 2)))
    assert np.array_equal(out.colors[0].color[3:], np.ones((3, 4)))
    assert any("b: no UV set 2" in w for w in warnings)
    assert any("b: no colour set 1" in w for w in warnings)
    # the slot attribute is offset like the material indices; the one-sided ones are left out
    geo = next(x for x in out.attributes if x.name == "fmt:geometry")
    assert geo.data.tolist() == [0, 1] and geo.data.dtype == np.int32
    assert {x.name for x in out.attributes} == {"fmt:geometry"}
    assert sum("left out" in w for w in warnings) == 2
    # skin: b has none (zeros, warned); morph: zero offsets for b, weight kept
    assert out.skin.joints[:3, 0].tolist() == [1, 2, 3]
    assert not out.skin.weights[3:].any()
    assert any("b: not skinned" in w for w in warnings)
    assert out.morphs[0].name == "smile" and out.morphs[0].default_weight == 0.25
    assert np.array_equal(out.morphs[0].position_offsets[:3], np.ones((3, 3)))
    assert not out.morphs[0].position_offsets[3:].any()


def test_single_mesh_is_returned_as_is():
    a = _tri("a", 0.0)
    out, warnings = merge_meshes([a])
    assert out is a and warnings == []
