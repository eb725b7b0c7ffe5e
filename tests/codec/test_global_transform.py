"""The global transform baked into a neutral scene keeps the skinned result."""

from __future__ import annotations

import numpy as np
import pytest

from io_formats.codec import FormatError
from io_formats.global_transform import bake, is_identity, split
from io_formats.scene import Animation, BoneTrack, Mesh, MorphTarget, Scene, Skeleton
from io_formats.transforms import compose_trs, quat_to_matrix, world_from_local


def _rotation(axis, angle) -> np.ndarray:
    axis = np.asarray(axis, np.float64) / np.linalg.norm(axis)
    q = np.array([np.cos(angle / 2), *(np.sin(angle / 2) * axis)])
    return quat_to_matrix(q[None])[0]


def _matrix(r, s, t) -> np.ndarray:
    m = np.eye(4)
    m[:3, :3], m[:3, 3] = s * r, t
    return m


def _scene(rng) -> Scene:
    n = 4
    q = rng.normal(size=(n, 4))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    skel = Skeleton(
        names=[f"b{i}" for i in range(n)],
        parents=np.array([-1, 0, 1, 0], np.int32),
        local_translation=rng.normal(size=(n, 3)),
        local_rotation=q,
        local_scale=np.ones((n, 3)),
    )
    world = world_from_local(
        compose_trs(skel.local_translation, skel.local_rotation, skel.local_scale), skel.parents
    )
    skel.inverse_bind = np.linalg.inv(world)
    mesh = Mesh(
        name="m",
        positions=rng.normal(size=(6, 3)).astype(np.float32),
        corner_verts=np.arange(6, dtype=np.int32),
        face_starts=np.array([0, 3], np.int32),
        face_materials=np.zeros(2, np.int32),
        normals=np.tile(np.array([[0, 0, 1]], np.float32), (6, 1)),
        morphs=[MorphTarget("k", rng.normal(size=(6, 3)).astype(np.float32))],
    )
    times = np.array([0.0, 1.0])
    tracks = [
        BoneTrack("b0", times, translation=rng.normal(size=(2, 3)), rotation=q[[0, 1]]),
        BoneTrack("b2", times, translation=rng.normal(size=(2, 3)), rotation=q[[2, 3]]),
    ]
    return Scene("s", skel, [mesh], [Animation("a", 1.0, tracks)])


def _skin_matrices(skel: Skeleton) -> np.ndarray:
    world = world_from_local(
        compose_trs(skel.local_translation, skel.local_rotation, skel.local_scale), skel.parents
    )
    return world @ skel.inverse_bind


def test_bake_moves_bind_pose_with_the_mesh() -> None:
    rng = np.random.default_rng(3)
    scene = _scene(rng)
    g = _matrix(_rotation([1, 2, 3], 0.7), 0.01, np.array([1.0, -2.0, 0.5]))
    before_pos = scene.meshes[0].positions.astype(np.float64)
    before_off = scene.meshes[0].morphs[0].position_offsets.astype(np.float64)
    before_root = scene.animations[0].tracks[0].translation.copy()
    before_child = scene.animations[0].tracks[1].translation.copy()
    bake(scene, g)
    mesh = scene.meshes[0]
    expect = before_pos @ g[:3, :3].T + g[:3, 3]
    np.testing.assert_allclose(mesh.positions, expect, atol=1e-6)
    np.testing.assert_allclose(mesh.morphs[0].position_offsets, before_off @ g[:3, :3].T, atol=1e-6)
    # the bind pose (world @ inverse bind) is the identity before and after: the
    # skinned mesh sits where the baked mesh is
    np.testing.assert_allclose(
        _skin_matrices(scene.skeleton), np.tile(np.eye(4), (4, 1, 1)), atol=1e-9
    )
    r = g[:3, :3] / 0.01
    np.testing.assert_allclose(mesh.normals, np.tile(r[:, 2], (6, 1)), atol=1e-6)
    tr = scene.animations[0].tracks
    np.testing.assert_allclose(tr[0].translation, before_root * 0.01 @ r.T + g[:3, 3], atol=1e-9)
    np.testing.assert_allclose(tr[1].translation, before_child * 0.01, atol=1e-12)


def test_identity_leaves_data_untouched() -> None:
    scene = _scene(np.random.default_rng(1))
    pos = scene.meshes[0].positions
    bake(scene, np.eye(4))
    assert scene.meshes[0].positions is pos
    assert is_identity(np.eye(4))


@pytest.mark.parametrize(
    "basis",
    [
        np.diag([1.0, 1.0, -1.0]),
        np.diag([1.0, 2.0, 1.0]),
        np.array([[1, 0.5, 0], [0, 1, 0], [0, 0, 1.0]]),
    ],
)
def test_split_refuses_what_a_file_cannot_hold(basis) -> None:
    """A sentence the exporter reports (a FormatError), not a Python error: a
    mirrored or unevenly scaled armature reaches here through ``file_matrix``."""
    m = np.eye(4)
    m[:3, :3] = basis
    with pytest.raises(FormatError, match="Object > Apply > Rotation & Scale"):
        split(m)
    m[0, 3] = np.nan
    with pytest.raises(FormatError, match="not finite"):
        split(m)
