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


def _unigine(bits: int) -> tuple[bytes, list[np.ndarray] | None]:
    m = unigine_samples.skinned_mesh(animations=0)
    s = m.surfaces[0]
    _poison(s.targets[0].positions, 5, bits)
    return mesh.write(m), [t.positions[5] for t in s.targets[1:]]


def _renderware(bits: int) -> tuple[bytes, list[np.ndarray] | None]:
    f = rw_samples.static_clump("SA", atomics=1)
    geo = f.clump.geometries()[0]
    _poison(geo.morph_targets[0].positions, 5, bits)
    return dff.write(f), [mt.positions[5] for mt in geo.morph_targets[1:]]


def _urho3d(bits: int) -> tuple[bytes, list[np.ndarray] | None]:
    """Urho3D stores offsets: the shape key holds the file's offset from the
    origin, so only its being finite is checked (no target to compare)."""
    model = urho3d_samples.skinned_model(n_bones=4, morphs=1, color=False)
    _poison(model.vertex_buffers[0].data["position0"], 5, bits)
    return mdl.write(model), None


#: Per format: the file with a poisoned base position and the targets the shape
#: keys must hold there, its operators' name, and its suffix.
FORMATS = {
    "unigine": (_unigine, "unigine_mesh", ".mesh"),
    "renderware": (_renderware, "rw_dff", ".dff"),
    "urho3d": (_urho3d, "urho3d_mdl", ".mdl"),
}


@pytest.mark.parametrize("value", NON_FINITE)
@pytest.mark.parametrize("fmt", list(FORMATS))
def test_targets_held_and_file_written_back(blank_blend, tmp_path, fmt, value):
    bpy = blank_blend
    make, op, suffix = FORMATS[fmt]
    data, targets = make(ODD_VALUES[value])
    src = tmp_path / f"in{suffix}"
    src.write_bytes(data)
    assert getattr(bpy.ops.import_scene, op)(filepath=str(src)) == {"FINISHED"}
    if targets is None:
        assert all(np.isfinite(co).all() for co in _key_rows(bpy).values())
    else:
        _check_keys(bpy, targets)
    out = tmp_path / f"out{suffix}"
    assert getattr(bpy.ops.export_scene, op)(filepath=str(out)) == {"FINISHED"}
    assert out.read_bytes() == src.read_bytes()
