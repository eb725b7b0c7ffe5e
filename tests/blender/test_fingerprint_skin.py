"""The weights' fingerprint a RenderWare import stores from the arrays it gave
Blender (no node group, no depsgraph evaluation) equals the one read back from the
vertex groups, which the exporter compares: otherwise an unedited skin would be
taken as repainted and its split data zeroed."""

from __future__ import annotations

import numpy as np
import pytest

from rigport.io_formats.renderware import dff
from rigport.samples import renderware as samples


def _import(bpy, tmp_path, data: bytes) -> list:
    from rigport.operators.renderware.clump_importer import ClumpImportOptions, import_clump_file

    path = tmp_path / "in.dff"
    path.write_bytes(data)
    import_clump_file(bpy.context, str(path), ClumpImportOptions())
    return [o for o in bpy.context.scene.objects if o.type == "MESH"]


def _check_weights_read_back(objects) -> int:
    """Every skinned object's stored weights digest against a fresh read; the count."""
    from rigport.operators.blender import fingerprint
    from rigport.operators.renderware.build import FINGERPRINT

    checked = 0
    for obj in objects:
        stored = fingerprint.stored(obj, FINGERPRINT)
        assert stored is not None, obj.name
        # the mesh parts, hashed from the arrays the build gave, equal a read-back
        again = fingerprint.compute(obj.data)
        assert {p: stored[p] for p in fingerprint.PARTS} == again, obj.name
        if fingerprint.WEIGHTS in stored:
            assert stored[fingerprint.WEIGHTS] == fingerprint._weights(obj), obj.name
            assert fingerprint.changed(obj, FINGERPRINT) == set(), obj.name
            checked += 1
    return checked


@pytest.mark.parametrize(
    "make",
    [
        lambda: samples.skinned_ped("SA", split=True, strips=True),
        lambda: samples.skinned_ped("VC", n_bones=64, parts=2, morphs=1),
        lambda: samples.gta_ped("SA"),
    ],
    ids=["split", "parts_morphs", "gta"],
)
def test_weights_digest_from_arrays_equals_read_back(blank_blend, tmp_path, make, monkeypatch):
    from rigport.operators.blender import fingerprint

    read = []
    for part, reader in list(fingerprint._READERS.items()):
        monkeypatch.setitem(
            fingerprint._READERS, part, lambda me, *a, r=reader: read.append(me) or r(me, *a)
        )
    real = fingerprint._weights
    monkeypatch.setattr(fingerprint, "_weights", lambda obj, *a: read.append(obj) or real(obj, *a))
    objects = _import(blank_blend, tmp_path, dff.write(make()))
    # no group read back, and no mesh part but of a mesh with shape keys (RenderWare
    # builds them after the mesh: the arrays given then are not all the mesh holds)
    assert all(x.shape_keys is not None for x in read)
    monkeypatch.undo()
    assert _check_weights_read_back(objects) >= 1


def test_odd_skins_fall_back_to_reading(blank_blend, tmp_path):
    """One bone twice on a vertex and a weight above 1 (Blender clamps it): the
    arrays do not say what the groups hold, so the digest is read back instead,
    and still equals a fresh read."""
    f = samples.skinned_ped("SA", n_bones=8)
    skin = f.clump.geometries()[0].skin
    skin.indices[0, 1] = skin.indices[0, 0]
    skin.weights[0, :2] = 0.5
    skin.weights[1, 0] = 1.5
    assert np.any(skin.weights > 1)
    assert _check_weights_read_back(_import(blank_blend, tmp_path, dff.write(f))) == 1


def test_corpus_clumps(blank_blend, tmp_path, corpus_dir):
    for path in sorted((corpus_dir / "renderware").glob("*.dff")):
        bpy = blank_blend
        for obj in list(bpy.data.objects):
            bpy.data.objects.remove(obj)
        _check_weights_read_back(_import(bpy, tmp_path, path.read_bytes()))


@pytest.mark.parametrize("which", ["skinned", "inexact", "large"])
def test_unigine_skin_digest_from_arrays_equals_read_back(
    blank_blend, tmp_path, which, monkeypatch
):
    """Unigine's weights part, stored from the skin the import gave, equals the
    digest of the skin read back from the groups (what the exporter compares);
    the shared parts, hashed from the arrays the build gave, equal a read-back."""
    from rigport.io_formats.unigine import mesh
    from rigport.operators.blender import fingerprint
    from rigport.operators.blender.extract import read_skin
    from rigport.operators.unigine import mesh_keep
    from rigport.operators.unigine.kept import FINGERPRINT
    from rigport.samples import unigine

    bpy = blank_blend
    m = {
        "skinned": unigine.skinned_mesh,
        "inexact": unigine.inexact_mesh,
        "large": lambda: unigine.large_mesh(rings=40, segments=30, n_bones=6),
    }[which]()
    src = tmp_path / "in.mesh"
    src.write_bytes(mesh.write(m))
    read = []
    monkeypatch.setattr(mesh_keep, "read_skin", lambda *a: read.append(a) or read_skin(*a))
    for part, reader in list(fingerprint._READERS.items()):
        monkeypatch.setitem(
            fingerprint._READERS, part, lambda me, *a, r=reader: read.append(me) or r(me, *a)
        )
    assert bpy.ops.import_scene.unigine_mesh(filepath=str(src)) == {"FINISHED"}
    assert read == []  # the import read no group and no mesh part back
    monkeypatch.undo()
    names = [b.name for b in m.bones]
    checked = 0
    for obj in (o for o in bpy.context.scene.objects if o.type == "MESH"):
        stored = fingerprint.stored(obj, FINGERPRINT)
        assert stored[mesh_keep.WEIGHTS] == mesh_keep._skin_digest(read_skin(obj, names), names)
        assert mesh_keep.holds(obj, read_skin(obj, names), names) == (True, True)
        again = fingerprint.compute(obj.data)
        assert {p: stored[p] for p in fingerprint.PARTS} == again, obj.name
        checked += bool(stored[mesh_keep.WEIGHTS])
    assert checked >= 1
