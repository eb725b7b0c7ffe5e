"""Unigine edits as an artist makes them, exported and read back into an empty scene."""

from __future__ import annotations

import numpy as np
import pytest

from rigport.io_formats.unigine import mesh
from rigport.samples import unigine as samples


def _mesh_object(bpy):
    return next(o for o in bpy.data.objects if o.type == "MESH")


def _offsets(obj, name: str) -> np.ndarray:
    keys = obj.data.shape_keys.key_blocks
    n = len(obj.data.vertices)
    base, co = np.empty(n * 3, np.float32), np.empty(n * 3, np.float32)
    keys[0].data.foreach_get("co", base)
    keys[name].data.foreach_get("co", co)
    return (co - base).reshape(n, 3)


@pytest.mark.parametrize(
    "build",
    [lambda: samples.skinned_mesh(), lambda: samples.static_mesh()],
    ids=["with-morphs", "without-morphs"],
)
def test_new_shape_key_on_an_imported_mesh_is_exported(blank_blend, tmp_path, build):
    bpy = blank_blend
    src = tmp_path / "in.mesh"
    src.write_bytes(mesh.write(build()))
    assert bpy.ops.import_scene.unigine_mesh(filepath=str(src)) == {"FINISHED"}
    obj = _mesh_object(bpy)
    if obj.data.shape_keys is None:
        obj.shape_key_add(name="Basis", from_mix=False)
    before = [k.name for k in obj.data.shape_keys.key_blocks[1:]]
    key = obj.shape_key_add(name="smile", from_mix=False)
    n = len(obj.data.vertices)
    co = np.empty(n * 3, np.float32)
    key.data.foreach_get("co", co)
    co = co.reshape(n, 3)
    moved = np.arange(0, n, 3)  # every third vertex, on every surface
    co[moved] += np.array([0.25, -0.5, 0.125], np.float32) * (1 + moved % 5)[:, None]
    key.data.foreach_set("co", co.ravel())
    expected = _offsets(obj, "smile")
    positions = np.array([v.co[:] for v in obj.data.vertices], np.float32)

    out = tmp_path / "out.mesh"
    for o in bpy.data.objects:
        o.select_set(o == obj)
    bpy.context.view_layer.objects.active = obj
    assert bpy.ops.export_scene.unigine_mesh(filepath=str(out)) == {"FINISHED"}
    written = mesh.read(out.read_bytes())
    assert all(s.targets[-1].name == "smile" for s in written.surfaces)

    bpy.ops.wm.read_factory_settings(use_empty=True)
    assert bpy.ops.import_scene.unigine_mesh(filepath=str(out)) == {"FINISHED"}
    again = _mesh_object(bpy)
    assert [k.name for k in again.data.shape_keys.key_blocks[1:]] == [*before, "smile"]
    got = np.array([v.co[:] for v in again.data.vertices], np.float32)
    assert np.allclose(got, positions, atol=1e-6)
    assert np.allclose(_offsets(again, "smile"), expected, atol=1e-5)
    for name in before:  # the imported shape keys are still what they were
        assert np.abs(_offsets(again, name)).max() > 0
