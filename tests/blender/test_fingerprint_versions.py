"""Fingerprints stored by older builds (BLAKE2b, no version marker), as a saved
.blend file has them, still compare with their own hash: an unedited model
exports byte for byte and an edited one is seen as edited, for Urho3D,
RenderWare and Unigine, before and after saving and reopening the file. New
fingerprints (SHA-256) do the same."""

from __future__ import annotations

import json

import numpy as np
import pytest

from rigport.io_formats.fingerprint import version_of
from rigport.io_formats.renderware import dff
from rigport.io_formats.unigine import mesh as unigine_mesh
from rigport.io_formats.urho3d import mdl
from rigport.samples import renderware as rw_samples
from rigport.samples import unigine as unigine_samples
from rigport.samples import urho3d as urho_samples
from rigport.tests import edits
from rigport.tests.legacy_records import blake2b_digest


def _old_topology_and_positions(me) -> dict[str, str]:
    nv, nl, nf = len(me.vertices), len(me.loops), len(me.polygons)
    corner_vert = np.zeros(nl, np.int32)
    me.attributes[".corner_vert"].data.foreach_get("value", corner_vert)
    starts = np.empty(nf, np.int32)
    me.polygons.foreach_get("loop_start", starts)
    pos = np.empty(nv * 3, np.float32)
    me.attributes["position"].data.foreach_get("vector", pos)
    return {
        "topology": blake2b_digest(np.array([nv, nl, nf], np.int64), corner_vert, starts),
        "positions": blake2b_digest(pos),
    }


def _make_old(obj, key: str) -> dict:
    """Replace the fingerprint under ``key`` by the one an older build stored."""
    from rigport.operators.blender import fingerprint

    new = fingerprint.stored(obj, key)
    assert new and all(version_of(v) == 2 for v in new.values() if v)
    fingerprint.store(obj, key, tuple(new), version=1)
    old = fingerprint.stored(obj, key)
    assert set(old) == set(new)
    assert all(version_of(v) == 1 and len(v) == 32 for v in old.values())
    # the parts an older build hashed, rebuilt here independently
    for part, value in _old_topology_and_positions(obj.data).items():
        assert old[part] == value, part
    return old


def _reopen(bpy, tmp_path):
    path = tmp_path / "saved.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(path))
    bpy.ops.wm.read_factory_settings(use_empty=True)
    bpy.ops.wm.open_mainfile(filepath=str(path))


def _mesh(bpy, name: str | None = None):
    meshes = sorted((o for o in bpy.data.objects if o.type == "MESH"), key=lambda o: o.name)
    return next(o for o in meshes if name is None or o.name == name)


# -- Urho3D -------------------------------------------------------------------


def _urho_export(bpy, tmp_path) -> bytes:
    out = tmp_path / "out.mdl"
    objects = [o for o in bpy.data.objects if o.type in {"MESH", "ARMATURE"}]
    for o in bpy.context.view_layer.objects:
        o.select_set(o in objects)
    bpy.context.view_layer.objects.active = objects[-1]
    assert bpy.ops.export_scene.urho3d_mdl(filepath=str(out), use_selection=True) == {"FINISHED"}
    return out.read_bytes()


@pytest.mark.parametrize("old", [True, False], ids=["old-hash", "new-hash"])
def test_urho3d_fingerprint_by_its_hash(blank_blend, tmp_path, old):
    from rigport.operators.blender import fingerprint
    from rigport.operators.urho3d.kept import FINGERPRINT

    bpy = blank_blend
    src = tmp_path / "in.mdl"
    data = mdl.write(urho_samples.skinned_model(n_bones=8, morphs=1, grid=(12, 8)))
    src.write_bytes(data)
    assert bpy.ops.import_scene.urho3d_mdl(filepath=str(src)) == {"FINISHED"}
    name = _mesh(bpy).name
    if old:
        stored = _make_old(_mesh(bpy), FINGERPRINT)
    _reopen(bpy, tmp_path)
    body = _mesh(bpy, name)
    if old:
        assert fingerprint.stored(body, FINGERPRINT) == stored  # as saved
    assert fingerprint.changed(body, FINGERPRINT) == set()
    assert not fingerprint.topology_changed(body, FINGERPRINT)
    lines = edits.panel_lines(body)  # the panel compares by the stored hash too
    assert any("still matches the mesh's faces and positions" in line for line in lines), lines
    assert _urho_export(bpy, tmp_path) == data
    body.data.vertices[0].co.x += 0.5
    assert fingerprint.changed(body, FINGERPRINT) == {fingerprint.POSITIONS}
    lines = edits.panel_lines(body)
    assert any("vertices moved" in line for line in lines), lines
    assert _urho_export(bpy, tmp_path) != data
    # the stored fingerprint is not rewritten by an export: it keeps its hash
    kept = fingerprint.stored(body, FINGERPRINT).values()
    assert all(version_of(v) == (1 if old else 2) for v in kept)


# -- RenderWare ---------------------------------------------------------------


def _rw_export(bpy, tmp_path) -> bytes:
    from rigport.operators.renderware.clump_exporter import ClumpExportOptions, export_clump_file

    out = tmp_path / "out.dff"
    objects = [o for o in bpy.context.scene.objects if o.type == "MESH"]
    export_clump_file(bpy.context, str(out), ClumpExportOptions(), objects)
    return out.read_bytes()


@pytest.mark.parametrize("old", [True, False], ids=["old-hash", "new-hash"])
def test_renderware_fingerprint_by_its_hash(blank_blend, tmp_path, old):
    from rigport.operators.blender import fingerprint
    from rigport.operators.renderware.build import FINGERPRINT
    from rigport.operators.renderware.clump_importer import ClumpImportOptions, import_clump_file

    bpy = blank_blend
    data = dff.write(rw_samples.skinned_ped("SA", split=True, strips=True))
    src = tmp_path / "in.dff"
    src.write_bytes(data)
    import_clump_file(bpy.context, str(src), ClumpImportOptions())
    name = _mesh(bpy).name
    if old:
        stored = _make_old(_mesh(bpy), FINGERPRINT)
        assert fingerprint.WEIGHTS in stored
    _reopen(bpy, tmp_path)
    obj = _mesh(bpy, name)
    if old:
        assert fingerprint.stored(obj, FINGERPRINT) == stored
    assert fingerprint.changed(obj, FINGERPRINT) == set()
    assert _rw_export(bpy, tmp_path) == data
    group = obj.vertex_groups[obj.data.vertices[0].groups[0].group]
    group.add([0], 0.25, "REPLACE")
    assert fingerprint.changed(obj, FINGERPRINT) == {fingerprint.WEIGHTS}
    assert _rw_export(bpy, tmp_path) != data


# -- Unigine ------------------------------------------------------------------


def _unigine_export(bpy, tmp_path) -> bytes:
    out = tmp_path / "out.mesh"
    assert bpy.ops.export_scene.unigine_mesh(filepath=str(out)) == {"FINISHED"}
    return out.read_bytes()


@pytest.mark.parametrize("old", [True, False], ids=["old-hash", "new-hash"])
def test_unigine_fingerprint_by_its_hash(blank_blend, tmp_path, old):
    from rigport.io_formats.unigine.mesh_kept import KEPT_KEY, positions_digest
    from rigport.operators.blender import fingerprint, kept_keys
    from rigport.operators.unigine import mesh_keep
    from rigport.operators.unigine.kept import FINGERPRINT

    bpy = blank_blend
    m = unigine_samples.inexact_mesh()
    data = unigine_mesh.write(m)
    src = tmp_path / "in.mesh"
    src.write_bytes(data)
    assert bpy.ops.import_scene.unigine_mesh(filepath=str(src)) == {"FINISHED"}
    obj = _mesh(bpy)
    name, names = obj.name, [b.name for b in m.bones]
    if old:
        new = fingerprint.stored(obj, FINGERPRINT)
        mesh_keep.store(obj, names, version=1)
        stored = fingerprint.stored(obj, FINGERPRINT)
        assert set(stored) == set(new) and mesh_keep.WEIGHTS in stored
        assert all(version_of(v) == 1 for v in stored.values())
        for part, value in _old_topology_and_positions(obj.data).items():
            assert stored[part] == value, part
        prop = kept_keys.find(obj, KEPT_KEY)  # the hidden name it is kept under
        record = json.loads(obj[prop])
        for s, surface in zip(record["surfaces"], m.surfaces, strict=True):
            s["positions"] = positions_digest(surface.targets[0].positions, 1)
            assert s["positions"] == blake2b_digest(
                np.asarray(surface.targets[0].positions, "<f4").reshape(-1, 3)
            )
        obj[prop] = json.dumps(record, separators=(",", ":"))
    _reopen(bpy, tmp_path)
    obj = _mesh(bpy, name)
    assert _unigine_export(bpy, tmp_path) == data
    moved = np.array(obj.data.vertices[5].co) + 20.0
    obj.data.vertices[5].co = moved
    if obj.data.shape_keys is not None:
        obj.data.shape_keys.reference_key.data[5].co = moved
    out = unigine_mesh.read(_unigine_export(bpy, tmp_path))
    assert not np.array_equal(out.surfaces[0].bounds, m.surfaces[0].bounds)  # recomputed
    assert np.array_equal(out.surfaces[1].bounds, m.surfaces[1].bounds)  # the file's
    bone = m.bones[int(m.surfaces[0].weights.bones[0])].name
    obj.vertex_groups[bone].add([0], 1.0, "REPLACE")
    for g in obj.vertex_groups:
        if g.name != bone:
            g.remove([0])
    w = unigine_mesh.read(_unigine_export(bpy, tmp_path)).surfaces[0].weights
    assert int(w.counts[0]) == 1 and int(w.values[0]) == 65535  # written from Blender
