"""Unigine .mesh through the neutral scene (no Blender): what the import keeps of
the file (bounds, weight bytes, zero-weight influences, vertices no triangle
uses) comes back byte for byte while unedited, and follows an edit when not."""

from __future__ import annotations

import json

import numpy as np

from rigport.io_formats.unigine import mesh, mesh_export, mesh_import, mesh_kept
from rigport.samples import unigine as samples


def _scene(m: mesh.Mesh):
    data = mesh.write(m)
    return data, mesh_import.import_mesh(mesh.read(data), "x")


def test_sample_holds_what_a_remake_would_lose():
    m = samples.inexact_mesh()
    s = m.surfaces[0]
    assert s.n_coords == int(s.coords.max()) + 2  # one coordinate vertex no triangle uses
    assert (s.weights.values == 0).sum() == len(s.weights) - 1  # but the lone vertex's
    tight = mesh.read(mesh.write(m)).surfaces[0].bounds
    from rigport.io_formats.unigine.common import compute_bounds

    assert not np.array_equal(tight, compute_bounds(s.targets[0].positions))


def test_unedited_roundtrip_is_byte_identical():
    m = samples.inexact_mesh()
    data, scene = _scene(m)
    out, warnings = mesh_export.export_scene(scene)
    assert warnings == []
    assert mesh.write(out) == data


def test_moved_vertex_gets_new_bounds_that_hold_it():
    m = samples.inexact_mesh()
    data, scene = _scene(m)
    me = scene.meshes[0]
    me.positions[3] += np.float32(20.0)
    out, _ = mesh_export.export_scene(scene)
    p = me.positions[3]
    for b in (out.bounds, out.surfaces[0].bounds):
        assert np.all(p >= b[0:3]) and np.all(p <= b[3:6])
        assert np.linalg.norm(p - b[6:9]) <= b[9] * (1 + 1e-6)
    # the surface that did not move keeps the file's bounds
    assert np.array_equal(out.surfaces[1].bounds, m.surfaces[1].bounds)


def test_edited_weights_are_written_from_the_skin():
    m = samples.inexact_mesh()
    _, scene = _scene(m)
    out, _ = mesh_export.export_mesh(
        scene.meshes[0],
        mesh_export.file_order(scene.skeleton),
        [],
        mesh_export.ExportOptions(topology_holds=True, weights_hold=False),
    )
    w = out.surfaces[0].weights
    assert (w.values > 0).all()  # zero influences are not made up
    counts = w.counts.astype(np.int64)
    sums = np.add.reduceat(w.values.astype(np.int64), np.cumsum(counts) - counts)
    assert (sums == 65535).all()


def test_loose_vertex_left_out_with_a_warning_when_topology_changed():
    m = samples.inexact_mesh()
    _, scene = _scene(m)
    out, warnings = mesh_export.export_mesh(
        scene.meshes[0], mesh_export.file_order(scene.skeleton), [], mesh_export.ExportOptions()
    )
    assert out.surfaces[0].n_coords == m.surfaces[0].n_coords - 1
    assert any("1 vertices no triangle uses are left out" in w for w in warnings)


def test_kept_record_refuses_what_it_cannot_use():
    m = samples.inexact_mesh()
    kept = mesh_kept.parse(mesh_kept.record(m))
    assert kept is not None
    names = [b.name for b in m.bones]
    n = sum(s.n_coords for s in m.surfaces)
    assert kept.weights_for(names, n) is not None
    assert kept.weights_for(names, n + 1) is None  # another vertex count
    assert kept.weights_for(names[1:], n) is None  # a bone it uses is gone
    reordered = kept.weights_for(names[::-1], n)
    assert reordered is not None and reordered.bones.max() < len(names)
    for bad in ("", "[]", "{}", '{"bounds":[1],"coords":[],"surfaces":[]}', 7):
        assert mesh_kept.parse(bad) is None
    d = json.loads(mesh_kept.record(m))
    d["weights"]["values"] = "AAAA"  # too short for the counts
    kept = mesh_kept.parse(d)
    assert kept is not None and kept.counts is None


def test_skin_digest_ignores_bone_order_but_not_weights():
    from rigport.io_formats.fingerprint import skin_digest

    names = ["a", "b\udcff", "c"]  # a file's name that is not UTF-8
    joints = np.array([[0, 1], [2, 0]], np.int32)
    weights = np.array([[0.25, 0.75], [1.0, 0.0]], np.float32)
    base = skin_digest(joints, weights, names)
    reordered = skin_digest(np.array([[2, 1], [0, 2]]), weights, ["c", "b\udcff", "a"])
    assert reordered == base
    swapped = skin_digest(joints[:, ::-1], weights[:, ::-1], names)  # slots in another order
    assert swapped == base
    assert skin_digest(joints, weights * np.float32(1.0000001), names) != base
    assert skin_digest(joints, weights, ["a", "x", "c"]) != base
