"""A base position that is not finite (NaN, signalling NaN, infinite) on a mesh
with morph targets. Blender holds 0 for it; the shape keys hold the file's own
target positions there (an offset from a NaN would be NaN), and the unedited
export writes the file back byte for byte: the base from what the import kept, the
targets from the shape keys, not NaN plus an offset."""

from __future__ import annotations

import numpy as np
import pytest

from rigport.io_formats.renderware import dff
from rigport.io_formats.unigine import mesh
from rigport.io_formats.urho3d import mdl
from rigport.samples import renderware as rw_samples
from rigport.samples import unigine as unigine_samples
from rigport.samples import urho3d as urho3d_samples
from rigport.tests.support import ODD_VALUES

NON_FINITE = [k for k, bits in ODD_VALUES.items() if not np.isfinite(np.uint32(bits).view("f4"))]


def _poison(positions: np.ndarray, row: int, bits: int) -> None:
    positions[row : row + 1, 1:2].view(np.uint32)[...] = bits


def _key_rows(bpy) -> dict[str, np.ndarray]:
    obj = next(o for o in bpy.data.objects if o.type == "MESH" and o.data.shape_keys)
    out = {}
    for kb in obj.data.shape_keys.key_blocks:
        co = np.empty(len(kb.data) * 3, np.float32)
        kb.data.foreach_get("co", co)
        out[kb.name] = co.reshape(-1, 3)
    return out


def _moved_row(keys: dict[str, np.ndarray]) -> np.ndarray:
    """The vertices where Blender's basis holds the stand-in 0."""
    return np.nonzero(~keys["Basis"].any(axis=1))[0]


def _check_keys(bpy, targets: list[np.ndarray]) -> None:
    """Every shape key is finite, and at the poisoned vertex (basis 0) holds a
    target position of the file (any axis order: the formats turn axes)."""
    keys = _key_rows(bpy)
    rows = _moved_row(keys)
    assert len(rows) == 1
    for name, co in keys.items():
        assert np.isfinite(co).all(), name
    held = sorted(float(np.linalg.norm(co[rows[0]])) for n, co in keys.items() if n != "Basis")
    want = sorted(float(np.linalg.norm(t)) for t in targets)
    assert held == pytest.approx(want, rel=1e-6)


@pytest.mark.parametrize("value", NON_FINITE)
def test_unigine(blank_blend, tmp_path, value):
    bpy = blank_blend
    m = unigine_samples.skinned_mesh(animations=0)
    s = m.surfaces[0]
    _poison(s.targets[0].positions, 5, ODD_VALUES[value])
    src = tmp_path / "in.mesh"
    src.write_bytes(mesh.write(m))
    assert bpy.ops.import_scene.unigine_mesh(filepath=str(src)) == {"FINISHED"}
    _check_keys(bpy, [t.positions[5] for t in s.targets[1:]])
    out = tmp_path / "out.mesh"
    assert bpy.ops.export_scene.unigine_mesh(filepath=str(out)) == {"FINISHED"}
    assert out.read_bytes() == src.read_bytes()


@pytest.mark.parametrize("value", NON_FINITE)
def test_renderware(blank_blend, tmp_path, value):
    bpy = blank_blend
    f = rw_samples.static_clump("SA", atomics=1)
    geo = f.clump.geometries()[0]
    _poison(geo.morph_targets[0].positions, 5, ODD_VALUES[value])
    src = tmp_path / "in.dff"
    src.write_bytes(dff.write(f))
    assert bpy.ops.import_scene.rw_dff(filepath=str(src)) == {"FINISHED"}
    _check_keys(bpy, [mt.positions[5] for mt in geo.morph_targets[1:]])
    out = tmp_path / "out.dff"
    assert bpy.ops.export_scene.rw_dff(filepath=str(out)) == {"FINISHED"}
    assert out.read_bytes() == src.read_bytes()


@pytest.mark.parametrize("value", NON_FINITE)
def test_urho3d(blank_blend, tmp_path, value):
    """Urho3D stores offsets: the shape key holds the file's offset from the origin."""
    bpy = blank_blend
    model = urho3d_samples.skinned_model(n_bones=4, morphs=1, color=False)
    _poison(model.vertex_buffers[0].data["position0"], 5, ODD_VALUES[value])
    src = tmp_path / "in.mdl"
    src.write_bytes(mdl.write(model))
    assert bpy.ops.import_scene.urho3d_mdl(filepath=str(src)) == {"FINISHED"}
    keys = _key_rows(bpy)
    assert all(np.isfinite(co).all() for co in keys.values())
    out = tmp_path / "out.mdl"
    assert bpy.ops.export_scene.urho3d_mdl(filepath=str(out)) == {"FINISHED"}
    assert out.read_bytes() == src.read_bytes()
