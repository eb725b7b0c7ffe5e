"""Urho3D native <-> neutral conversion without Blender."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from rigport.io_formats.codec import FormatError
from rigport.io_formats.urho3d import mdl, model_export, model_import
from rigport.samples import urho3d as samples


def test_bone_cycle_is_a_format_error():
    model = samples.skinned_model(n_bones=3, morphs=0)
    model.bones[0].parent = 1
    model.bones[1].parent = 0
    with pytest.raises(FormatError, match="cycle"):
        model_import.import_model(model, "m")


def test_neutral_roundtrip_is_byte_identical_for_box(corpus_dir):
    data = (corpus_dir / "urho3d/Box.mdl").read_bytes()
    model = mdl.read(data)
    scene = model_import.import_model(model, "box", all_lods=True)
    lods = [(m.extras["urho_lod"], m) for m in scene.meshes]
    opts = model_export.ExportOptions(
        magic=model.magic, layout=scene.meshes[0].extras["urho_layout"]
    )
    out, warnings = model_export.export_model(lods, scene.skeleton, opts)
    assert warnings == []
    back = mdl.read(mdl.write(out))
    assert np.array_equal(back.index_buffers[0].indices, model.index_buffers[0].indices)
    assert np.allclose(
        back.vertex_buffers[0].data["position0"], model.vertex_buffers[0].data["position0"]
    )


def _arrays(value, path: str = "scene"):
    """Every numpy array in a neutral scene, with where it is."""
    if isinstance(value, np.ndarray):
        yield path, value
    elif dataclasses.is_dataclass(value):
        for f in dataclasses.fields(value):
            yield from _arrays(getattr(value, f.name), f"{path}.{f.name}")
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            yield from _arrays(item, f"{path}[{i}]")


@pytest.mark.parametrize(
    "model",
    [samples.skinned_model(morphs=2), samples.all_elements_model()],
    ids=["skinned", "all_elements"],
)
def test_arrays_for_blender_have_a_plain_buffer_format(model):
    """A model read from its bytes (its vertex data as views of them) gives the
    builders arrays whose buffer format is the plain one ("f", "i"): Blender's
    ``foreach_set`` copies only those in bulk and reads any other ("<f") item by
    item, many times slower."""
    scene = model_import.import_model(mdl.read(mdl.write(model)), "m", all_lods=True)
    found = dict(_arrays(scene))
    assert any(".normals" in p for p in found) and any(".morphs" in p for p in found)
    formats = {
        p: memoryview(np.ascontiguousarray(a)).format
        for p, a in found.items()
        if a.dtype.fields is None
    }
    assert {p: f for p, f in formats.items() if f[0] in "<>=!@"} == {}
