"""RenderWare .anm keys in HAnim node order, as librw applies them.

librw plays an animation's node ``i`` on the hierarchy's node ``i``, whatever
the order of the frames. A ped whose bone frames are listed level by level
(not in the HAnim hierarchy's depth-first node order) takes a walk from an IFP;
its .anm export, read and played by librw itself (the ``pose`` verb of the
harness ``tests/clients/rwanim.cpp``), poses the hierarchy as the IFP poses it.
An .anm librw wrote comes back from Blender in its own order: the same times
and previous-key links, the values within float32 rounding (exact values while
unedited are issue 25's item 1)."""

from __future__ import annotations

import numpy as np
import pytest

from rigport.io_formats.renderware import anm, ifp
from rigport.io_formats.renderware import dff as dff_codec
from rigport.io_formats.renderware.frames import FrameName, frame_matrices, hanim_parents
from rigport.io_formats.transforms import compose_trs, world_from_local
from rigport.samples import renderware as samples
from rigport.samples import renderware_ifp as ifp_samples
from rigport.tests import clients

#: The agreement the issue asks for (metres); rotations are compared as the
#: ends of 0.1 m levers along each axis.
TOLERANCE = 1e-3
LEVER = 0.1


def _ifp_pose(f: dff_codec.DffFile, package: ifp.IfpFile, key: int) -> np.ndarray:
    """The hierarchy's node matrices for key ``key`` of the IFP's first animation,
    as librw's HAnimHierarchy::updateMatrices makes them: each node's animated
    local (bones matched by frame name) on its parent's, the root on the LTM of
    the frame above the hierarchy."""
    fl = f.clump.frame_list
    parents = fl.frames["parent"].astype(np.int32)
    local = frame_matrices(fl.frames)
    world = world_from_local(local, parents)
    root = next(i for i in range(len(fl)) if (h := fl.hanim(i)) is not None and h.nodes is not None)
    nodes = fl.hanim(root).nodes
    ids = {}
    for i in range(len(fl)):
        if fl.hanim(i) is not None:
            ids.setdefault(int(fl.hanim(i).node_id), i)
    names = [fl.extensions[i].find(FrameName).raw.split(b"\0")[0].decode() for i in range(len(fl))]
    keys = {o.name: o.keys() for o in package.animations[0].objects}
    hparents = hanim_parents(nodes["flags"])
    top = world[parents[root]] if parents[root] >= 0 else np.eye(4)
    out = np.zeros((len(nodes), 4, 4))
    for i, node_id in enumerate(nodes["id"].tolist()):
        frame = ids[node_id]
        k = keys[names[frame]]
        t = local[frame][:3, 3] if k.translation is None else k.translation[key]
        m = compose_trs(t[None], k.rotation[key][None], np.ones((1, 3)))[0]
        out[i] = (out[hparents[i]] if hparents[i] >= 0 else top) @ m
    return out


def _librw_pose(dff_path, anm_path, time: float) -> np.ndarray:
    """librw's node matrices after playing the .anm for ``time`` seconds."""
    rows = [
        line.split()
        for line in clients.run_rwanim("pose", dff_path, anm_path, f"{time:.9g}").splitlines()
        if line.startswith("node ")
    ]
    out = np.tile(np.eye(4), (len(rows), 1, 1))
    for i, row in enumerate(rows):
        v = np.array(row[3:], np.float64).reshape(4, 3)  # right, up, at, pos
        out[i, :3, :] = v.T
    return out


def _points(m: np.ndarray) -> np.ndarray:
    """Each matrix's origin and the ends of levers along its three axes."""
    o = m[:, :3, 3]
    return np.stack([o, *(o + LEVER * m[:, :3, k] for k in range(3))], axis=1)


def _ped(bpy, tmp_path):
    f = samples.skinned_ped("SA", breadth_first=True)
    path = tmp_path / "ped.dff"
    path.write_bytes(dff_codec.write(f))
    assert bpy.ops.import_scene.rw_dff(filepath=str(path)) == {"FINISHED"}
    arm = next(o for o in bpy.data.objects if o.type == "ARMATURE")
    bpy.context.view_layer.objects.active = arm
    return f, path, arm


def test_frames_are_not_in_node_order():
    """The sample this file tests on lists its frames otherwise than its nodes."""
    f = samples.skinned_ped("SA", breadth_first=True)
    fl = f.clump.frame_list
    root = next(i for i in range(len(fl)) if (h := fl.hanim(i)) is not None and h.nodes is not None)
    node_ids = fl.hanim(root).nodes["id"].tolist()
    frame_ids = [int(fl.hanim(i).node_id) for i in range(len(fl)) if fl.hanim(i) is not None]
    assert sorted(frame_ids) == sorted(node_ids) and frame_ids != node_ids


@pytest.mark.parametrize("key", [5, 15, 25])  # not the last: librw loops at the end
def test_librw_plays_our_anm_as_the_ifp_plays(blank_blend, tmp_path, key):
    bpy = blank_blend
    f, dff_path, arm = _ped(bpy, tmp_path)
    package = ifp_samples.walk_package("SA")
    ifp_path = tmp_path / "walk.ifp"
    ifp_path.write_bytes(ifp.write(package))
    assert bpy.ops.import_anim.gta_ifp(filepath=str(ifp_path)) == {"FINISHED"}
    anm_path = tmp_path / "walk.anm"
    bpy.context.view_layer.objects.active = arm
    assert bpy.ops.export_anim.rw_anm(filepath=str(anm_path)) == {"FINISHED"}
    want = _ifp_pose(f, ifp.read(ifp_path.read_bytes()), key)
    got = _librw_pose(dff_path, anm_path, key / 30.0)
    assert got.shape == want.shape
    far = np.linalg.norm(_points(got) - _points(want), axis=2).max()
    assert far < TOLERANCE, f"librw's pose is {far * 1000:.1f} mm from the IFP's"


def test_anm_librw_wrote_round_trips_in_its_order(blank_blend, tmp_path):
    bpy = blank_blend
    _, _, arm = _ped(bpy, tmp_path)
    package = ifp_samples.walk_package("SA")
    ifp_path = tmp_path / "walk.ifp"
    ifp_path.write_bytes(ifp.write(package))
    assert bpy.ops.import_anim.gta_ifp(filepath=str(ifp_path)) == {"FINISHED"}
    ours = tmp_path / "ours.anm"
    assert bpy.ops.export_anim.rw_anm(filepath=str(ours)) == {"FINISHED"}
    theirs = tmp_path / "librw.anm"
    clients.run_rwanim("anm", ours, theirs)
    assert bpy.ops.import_anim.rw_anm(filepath=str(theirs)) == {"FINISHED"}
    back = tmp_path / "back.anm"
    bpy.context.view_layer.objects.active = arm
    assert bpy.ops.export_anim.rw_anm(filepath=str(back)) == {"FINISHED"}
    a, b = anm.read(theirs.read_bytes()), anm.read(back.read_bytes())
    assert (a.stamp, a.flags, a.duration, len(a.keys)) == (
        b.stamp,
        b.flags,
        b.duration,
        len(b.keys),
    )
    assert np.array_equal(a.keys["time"], b.keys["time"])
    assert np.array_equal(a.keys["prev"], b.keys["prev"])
    assert np.abs(a.keys["q"].astype(np.float64) - b.keys["q"]).max() < 1e-6
    assert np.abs(a.keys["t"].astype(np.float64) - b.keys["t"]).max() < 1e-6
