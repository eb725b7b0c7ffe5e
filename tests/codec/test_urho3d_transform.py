"""An export's transform reaches what only Urho3D keeps: bone bounds, the imported
layout's centres and LOD distances, the file's own normals and tangents."""

from __future__ import annotations

import numpy as np

from io_formats.scene import Attribute, Mesh, Skeleton
from io_formats.urho3d import axes
from io_formats.urho3d.model_import import MORPH_NORMAL, NORMAL_ATTRIBUTE, TANGENT_ATTRIBUTE
from io_formats.urho3d.transform import bake_bones, bake_layout, bake_meshes

#: A quarter turn about Blender's Z, times 2, moved by (1, 2, 3).
TURN = np.array([[0.0, -2, 0, 1], [2, 0, 0, 2], [0, 0, 2, 3], [0, 0, 0, 1]])


def _mesh() -> Mesh:
    n = 3
    return Mesh(
        name="m",
        positions=np.eye(3, dtype=np.float32),
        corner_verts=np.arange(3, dtype=np.int32),
        face_starts=np.array([0], np.int32),
        face_materials=np.zeros(1, np.int32),
        attributes=[
            Attribute(NORMAL_ATTRIBUTE, "POINT", "FLOAT_VECTOR", np.eye(3, dtype=np.float32)),
            Attribute(
                TANGENT_ATTRIBUTE,
                "POINT",
                "FLOAT_COLOR",
                np.array([[1, 0, 0, -1]] * n, np.float32),
            ),
            Attribute(MORPH_NORMAL.format(0), "POINT", "FLOAT_VECTOR", np.eye(3, dtype=np.float32)),
            Attribute("urho:e:other_t7", "POINT", "FLOAT_VECTOR", np.eye(3, dtype=np.float32)),
        ],
    )


def test_kept_directions_turn_and_do_not_scale():
    mesh = _mesh()
    bake_meshes([mesh], TURN)
    assert np.allclose(mesh.positions, np.eye(3) @ TURN[:3, :3].T + TURN[:3, 3])
    turned = np.array([[0, 1, 0], [-1, 0, 0], [0, 0, 1]], np.float32)
    attrs = {a.name: a.data for a in mesh.attributes}
    assert np.allclose(attrs[NORMAL_ATTRIBUTE], turned)
    assert np.allclose(attrs[MORPH_NORMAL.format(0)], turned)
    assert np.allclose(attrs[TANGENT_ATTRIBUTE], [[0, 1, 0, -1]] * 3)  # the sign stays
    assert np.array_equal(attrs["urho:e:other_t7"], np.eye(3))  # not a direction we know


def test_bone_bounds_scale_and_identity_changes_nothing():
    skel = Skeleton(
        names=["root", "child"],
        parents=np.array([-1, 0], np.int32),
        local_translation=np.array([[0.0, 0, 0], [0, 1, 0]]),
        local_rotation=np.array([[1.0, 0, 0, 0]] * 2),
        local_scale=np.ones((2, 3)),
        extras=[{"urho_radius": 0.5}, {"urho_bbox": [-1.0, -1, -1, 1, 1, 1]}],
    )
    bake_bones(skel, np.eye(4))
    assert skel.extras == [{"urho_radius": 0.5}, {"urho_bbox": [-1.0, -1, -1, 1, 1, 1]}]
    bake_bones(skel, TURN)
    assert np.isclose(skel.extras[0]["urho_radius"], 1.0)
    assert np.allclose(skel.extras[1]["urho_bbox"], [-2.0, -2, -2, 2, 2, 2])
    assert np.allclose(skel.local_translation, [[1, 2, 3], [0, 2, 0]])


def test_layout_centres_in_the_file_axes_move_and_the_box_is_recomputed():
    centre = np.array([1.0, 2.0, 3.0])  # file axes (Y up)
    layout = {
        "bbox": [0.0] * 6,
        "centers": [centre.tolist()],
        "geometries": [{"lods": [[0.0, 0, 0, 0, 0, 3], [25.0, 0, 0, 0, 3, 3]]}],
    }
    assert bake_layout(layout, np.eye(4), True) is layout
    out = bake_layout(layout, TURN, True)
    blender = axes.vectors(centre, True)
    want = axes.vectors(TURN[:3, :3] @ blender + TURN[:3, 3], True)
    assert np.allclose(out["centers"][0], want)
    assert out["bbox"] is None
    assert np.allclose([lod[0] for lod in out["geometries"][0]["lods"]], [0.0, 50.0])
    assert layout["centers"] == [centre.tolist()] and layout["bbox"] == [0.0] * 6  # a copy


#: NaN payloads (quiet, signalling, negative), an infinity, signed zeros and a plain
#: value: a multiply by -1 quiets a signalling NaN, a negation flips the sign only
ODD_BITS = np.array(
    [0x7FC00000, 0x7FA00001, 0xFFC00123, 0x7F800000, 0x80000000, 0x00000000, 0x3F000000],
    np.uint32,
)


def test_tangent_conversion_inverts_bit_for_bit():
    """A tangent's w comes back bit for bit after import and export, a signalling
    NaN too, so an unedited file's kept tangents are written unchanged."""
    values = ODD_BITS.view(np.float32)
    tangents = np.stack([values, values[::-1], values, values[::-1]], axis=1)
    there = axes.tangents(tangents, True)
    assert np.array_equal(there[:, 3].view(np.uint32), ODD_BITS[::-1] ^ 0x80000000)
    back = axes.tangents(there, True)
    assert np.array_equal(back.view(np.uint32), tangents.view(np.uint32))
