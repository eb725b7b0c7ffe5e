"""The fingerprint an Urho3D import stores is hashed from the arrays it gave
Blender (``build.Built.filled``), not read back with ``foreach_get``: it must
equal the read-back's, which the exporter compares, or an unedited model would
be taken as edited and its kept data dropped."""

from __future__ import annotations

import json

import numpy as np
import pytest

from rigport.io_formats.urho3d import mdl
from rigport.samples import urho3d as samples


def _import(bpy, path) -> list:
    before = set(bpy.data.objects)
    assert bpy.ops.import_scene.urho3d_mdl(filepath=str(path)) == {"FINISHED"}
    return [o for o in bpy.data.objects if o not in before and o.type == "MESH"]


def _check(objects) -> int:
    """Each mesh's stored fingerprint against a fresh read-back; the count."""
    from rigport.operators.blender import fingerprint
    from rigport.operators.urho3d.kept import FINGERPRINT

    for obj in objects:
        stored = json.loads(obj[FINGERPRINT])
        assert stored == fingerprint.compute(obj.data), obj.name
        assert fingerprint.changed(obj, FINGERPRINT) == set(), obj.name
    return len(objects)


def _cases() -> dict:
    return {
        "skinned": lambda: samples.skinned_model(n_bones=6, morphs=2, lods=2, geometries=2),
        "unused": lambda: samples.with_unused_vertex(samples.skinned_model(n_bones=6), 0, 200),
        "lod-buffer": lambda: samples.lod_buffer_model(n_bones=6),
        "legacy": samples.legacy_all_bits_model,
        "all-elements": samples.all_elements_model,
    }


@pytest.mark.parametrize("case", list(_cases()))
def test_given_fingerprint_equals_read_back(blank_blend, tmp_path, case, monkeypatch):
    from rigport.operators.blender import fingerprint

    read = []
    for part, reader in list(fingerprint._READERS.items()):
        monkeypatch.setitem(
            fingerprint._READERS,
            part,
            lambda me, version, r=reader: read.append(me) or r(me, version),
        )
    path = tmp_path / "in.mdl"
    path.write_bytes(mdl.write(_cases()[case]()))
    objects = _import(blank_blend, path)
    assert read == []  # the import read nothing back
    monkeypatch.undo()
    assert _check(objects) >= 1


def test_non_finite_position_hashed_as_held(blank_blend, tmp_path):
    """A non-finite position (the guard gives Blender 0 and keeps the file's) is
    hashed as Blender holds it."""
    model = samples.skinned_model(n_bones=4, morphs=1)
    model.vertex_buffers[0].data["position0"][3] = np.nan
    path = tmp_path / "in.mdl"
    path.write_bytes(mdl.write(model))
    assert _check(_import(blank_blend, path)) >= 1


def test_corpus_models(blank_blend, corpus_dir):
    checked = 0
    for path in sorted(corpus_dir.rglob("*.mdl")):
        bpy = blank_blend
        for obj in list(bpy.data.objects):
            bpy.data.objects.remove(obj)
        try:
            objects = _import(bpy, path)
        except RuntimeError:  # a file the importer refuses (hostile corpus entries)
            continue
        checked += _check(objects)
    assert checked >= 1
