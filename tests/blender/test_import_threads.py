"""An import runs on Blender's thread alone: bpy 5.0 crashed applying the
vertex groups' Geometry Nodes modifier while an import's second thread was alive.
These tests fail if any thread is alive then, or after the operator returns."""

from __future__ import annotations

import threading

import numpy as np

from rigport.io_formats.urho3d import mdl
from rigport.samples import urho3d as samples


def test_a_skinned_import_applies_its_weights_with_no_other_thread(
    blank_blend, tmp_path, monkeypatch
):
    from rigport.operators.blender import weights

    bpy = blank_blend
    model = samples.skinned_model(n_bones=6, grid=(24, 10), morphs=1)
    data = model.vertex_buffers[0].data
    # a weight of its own per vertex (the sample's rings share theirs): few vertices
    # share a (bone, weight) pair, so the weights go in through Geometry Nodes
    data["blendweights0"] *= np.linspace(0.5, 1.0, len(data), dtype=np.float32)[:, None]
    path = tmp_path / "in.mdl"
    path.write_bytes(mdl.write(model))
    before = set(threading.enumerate())
    alive_at_apply: list[set] = []
    real = weights.write_weights

    def spy(*args, **kwargs):
        alive_at_apply.append(set(threading.enumerate()) - before)
        return real(*args, **kwargs)

    monkeypatch.setattr(weights, "write_weights", spy)
    assert bpy.ops.import_scene.urho3d_mdl(filepath=str(path)) == {"FINISHED"}
    assert alive_at_apply == [set()]  # the Geometry Nodes path ran, on this thread alone
    assert set(threading.enumerate()) - before == set()
    (obj,) = [o for o in bpy.context.scene.objects if o.type == "MESH"]
    assert len(obj.vertex_groups) == 6
    assert sum(len(v.groups) for v in obj.data.vertices) > len(obj.data.vertices)
