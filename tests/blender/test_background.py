"""The array work an import hands to the background worker (the fingerprint's
digests, the vertex groups' sort): it runs there, gives what the synchronous
path gives, a failure in it refuses the import as any other, and the add-on's
unregister ends the worker."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from rigport.io_formats.urho3d import mdl
from rigport.samples import urho3d as samples


def _model_file(tmp_path, **kw):
    path = tmp_path / "in.mdl"
    path.write_bytes(mdl.write(samples.skinned_model(n_bones=6, grid=(24, 10), **kw)))
    return path


def _skin_by_vertex(obj) -> dict[tuple[int, str], float]:
    names = [g.name for g in obj.vertex_groups]
    return {(v.index, names[g.group]): g.weight for v in obj.data.vertices for g in v.groups}


def test_import_hands_digests_and_sort_to_the_worker(blank_blend, tmp_path, monkeypatch):
    from rigport.operators.blender import background, build, fingerprint
    from rigport.operators.urho3d.kept import FINGERPRINT

    bpy = blank_blend
    ran: list[str] = []
    submit = background.submit

    def spy(fn, *args):
        ran.append(fn.__name__)
        return submit(fn, *args)

    monkeypatch.setattr(build.background, "submit", spy)
    # a part read back from Blender would mean the worker's digests went unused
    read = []
    for part, reader in list(fingerprint._READERS.items()):
        monkeypatch.setitem(
            fingerprint._READERS, part, lambda me, *a, r=reader: read.append(me) or r(me, *a)
        )
    path = _model_file(tmp_path, morphs=1)
    assert bpy.ops.import_scene.urho3d_mdl(filepath=str(path)) == {"FINISHED"}
    assert sorted(ran) == ["given_parts", "sorted_skin"]
    assert read == []
    monkeypatch.undo()
    (obj,) = [o for o in bpy.context.scene.objects if o.type == "MESH"]
    stored = fingerprint.stored(obj, FINGERPRINT)
    # the digests worked out beside the build equal a read-back of what Blender holds
    assert {p: stored[p] for p in fingerprint.PARTS} == fingerprint.compute(obj.data)
    held = _skin_by_vertex(obj)
    # and the groups the sorted entries filled hold what the synchronous path gives
    for g in list(obj.vertex_groups):
        obj.vertex_groups.remove(g)
    model = mdl.read(path.read_bytes())
    from rigport.io_formats.urho3d.model_import import import_model

    skin = import_model(model, "in").meshes[0].skin
    build.assign_vertex_groups(
        bpy.context, obj, skin.joints, skin.weights, [b.name for b in obj.parent.data.bones]
    )
    assert len(held) > 0
    assert _skin_by_vertex(obj).keys() == held.keys()
    assert np.array_equal(
        np.array([_skin_by_vertex(obj)[k] for k in held]), np.array(list(held.values()))
    )


def test_a_failure_on_the_worker_refuses_the_import(blank_blend, tmp_path, monkeypatch):
    from rigport.operators.blender import build

    bpy = blank_blend

    def broken(mesh):
        raise MemoryError("no room for the digests")

    monkeypatch.setattr(build, "given_parts", broken)
    before = {o.name for o in bpy.data.objects}, {m.name for m in bpy.data.meshes}
    path = _model_file(tmp_path)
    with pytest.raises(RuntimeError) as err:
        bpy.ops.import_scene.urho3d_mdl(filepath=str(path))
    assert "in.mdl" in str(err.value)
    assert ({o.name for o in bpy.data.objects}, {m.name for m in bpy.data.meshes}) == before


def test_unregister_ends_the_worker(rigport_registered, tmp_path):
    from rigport.operators.blender import background

    assert background.submit(sum, [1, 2, 3]).result() == 6
    assert any(t.name.startswith("rigport") for t in threading.enumerate())
    rigport_registered.unregister()
    try:
        assert not any(t.name.startswith("rigport") for t in threading.enumerate())
    finally:
        rigport_registered.register()
    assert background.submit(sum, [4]).result() == 4  # a new worker after registering again


def _workers() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("rigport")]


def test_the_worker_ends_with_each_import(blank_blend, tmp_path, monkeypatch):
    """No thread of RigPort's stays in Blender once an import operator returns,
    after an import that used the worker and after one that failed with its
    tasks unclaimed (they are done before the operator returns)."""
    from rigport.operators.blender import build

    bpy = blank_blend
    path = _model_file(tmp_path, morphs=1)
    assert bpy.ops.import_scene.urho3d_mdl(filepath=str(path)) == {"FINISHED"}
    assert _workers() == []
    ran = []
    real = build.given_parts

    def broken(*args, **kwargs):
        raise MemoryError("no room for the mesh")

    monkeypatch.setattr(build, "given_parts", lambda mesh: ran.append(mesh.name) or real(mesh))
    monkeypatch.setattr(build, "_fill_mesh", broken)  # the digests are queued before it
    with pytest.raises(RuntimeError):
        bpy.ops.import_scene.urho3d_mdl(filepath=str(path))
    assert ran
    assert _workers() == []
