"""The shared Blender builders on neutral scenes the format tests do not reach."""

from __future__ import annotations

import numpy as np

from rigport.io_formats.scene import Mesh, Scene, Skeleton, Skin


def _child_first_scene() -> Scene:
    """Three bones listed children first: Blender keeps its own (parent-first) order."""
    names = ["hand", "arm", "root"]
    skeleton = Skeleton(
        names,
        np.array([1, 2, -1], np.int32),
        np.array([[0, 1, 0], [0, 1, 0], [0, 0, 0]], np.float64),
        np.tile([1.0, 0, 0, 0], (3, 1)),
        np.ones((3, 3)),
    )
    mesh = Mesh(
        "m",
        np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0]], np.float32),
        np.array([0, 1, 2], np.int32),
        np.array([0], np.int32),
        np.array([0], np.int32),
    )
    mesh.skin = Skin(
        np.array([[0, 1], [1, 2], [2, 0]], np.int32),
        np.array([[0.75, 0.25], [1.0, 0.0], [0.5, 0.5]], np.float32),
    )
    return Scene("s", skeleton, [mesh])


def test_weights_land_on_the_skeleton_order_bones(rigport_registered, blank_blend):
    from rigport.operators.blender.build import build_scene

    bpy = blank_blend
    built = build_scene(bpy.context, _child_first_scene())
    assert [b.name for b in built.armature.data.bones] != ["hand", "arm", "root"]
    assert built.bone_names == ["hand", "arm", "root"]
    obj = next(o for o in built.objects if o.type == "MESH")
    got = {
        (v.index, obj.vertex_groups[g.group].name): round(g.weight, 6)
        for v in obj.data.vertices
        for g in v.groups
    }
    assert got == {
        (0, "hand"): 0.75,
        (0, "arm"): 0.25,
        (1, "arm"): 1.0,
        (2, "root"): 0.5,
        (2, "hand"): 0.5,
    }
