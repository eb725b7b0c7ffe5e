"""A global transform baked into an exportable clump: the written clump is the
original moved by it, with frames, vertices, bounding spheres, bones and the
skin's inverse bind matrices agreeing."""

from __future__ import annotations

import numpy as np
import pytest

from rigport.io_formats.codec import FormatError
from rigport.io_formats.renderware import clump_export, clump_import, dff
from rigport.io_formats.renderware.clump_transform import bake_clump, move_roots
from rigport.io_formats.renderware.frames import frame_matrices
from rigport.io_formats.transforms import world_from_local
from rigport.samples import renderware as samples

SAMPLES = {
    "ped": lambda: samples.skinned_ped("SA", morphs=1),
    "ped_on_bone": lambda: samples.skinned_ped("SA", root_frame=False),
    "gta_ped": lambda: samples.gta_ped("SA"),
    "static": lambda: samples.static_clump("VC"),
    "prop": lambda: samples.gta_map_prop("SA"),
}


def _matrix(scale: float) -> np.ndarray:
    a = 0.7
    m = np.eye(4)
    m[:3, :3] = scale * np.array([[np.cos(a), -np.sin(a), 0], [np.sin(a), np.cos(a), 0], [0, 0, 1]])
    m[:3, 3] = (1.5, -2.0, 0.25)
    return m


def _worlds(clump) -> np.ndarray:
    frames = clump.frame_list.frames
    return world_from_local(frame_matrices(frames), frames["parent"].astype(np.int32))


def _export(name: str, change) -> tuple[dff.DffFile, dff.DffFile]:
    source = dff.read(dff.write(SAMPLES[name]()))
    data = clump_export.from_imported(clump_import.import_dff(source, name)[0])
    change(data)
    out, _ = clump_export.export_clump(data, data.extras.get("rw_stamp") or "SA")
    return source, dff.read(dff.write(out))


@pytest.mark.parametrize("name", list(SAMPLES))
@pytest.mark.parametrize("scale", [0.01, 1.0, 2.5])
def test_baked_clump_is_the_original_moved(name, scale):
    g = _matrix(scale)
    before, after = _export(name, lambda d: bake_clump(d, g))
    wa, wb = _worlds(before.clump), _worlds(after.clump)
    # every frame: rotated and moved with the transform, its own scale unchanged
    np.testing.assert_allclose(wb[:, :3, 3], wa[:, :3, 3] @ g[:3, :3].T + g[:3, 3], atol=1e-4)
    np.testing.assert_allclose(wb[:, :3, :3], (g[:3, :3] / scale) @ wa[:, :3, :3], atol=1e-5)
    for atomic_a, atomic_b in zip(before.clump.atomics, after.clump.atomics, strict=True):
        ga, gb = before.clump.atomic_geometry(atomic_a), after.clump.atomic_geometry(atomic_b)
        for ma, mb in zip(ga.morph_targets, gb.morph_targets, strict=True):
            pa = ma.positions @ wa[atomic_a.frame, :3, :3].T + wa[atomic_a.frame, :3, 3]
            pb = mb.positions @ wb[atomic_b.frame, :3, :3].T + wb[atomic_b.frame, :3, 3]
            np.testing.assert_allclose(pb, pa @ g[:3, :3].T + g[:3, 3], atol=1e-4)
            np.testing.assert_allclose(mb.sphere, ma.sphere * scale, rtol=1e-5, atol=1e-6)
        if ga.morph_targets[0].normals is not None:
            np.testing.assert_allclose(
                gb.morph_targets[0].normals, ga.morph_targets[0].normals, atol=1e-6
            )
        if ga.skin is not None:
            ia, ib = ga.skin.matrices[:, :3, :3], gb.skin.matrices[:, :3, :3]
            np.testing.assert_allclose(ib, ia, atol=1e-5)  # rotations kept
            np.testing.assert_allclose(
                gb.skin.matrices[:, 3, :3], ga.skin.matrices[:, 3, :3] * scale, atol=1e-4
            )


@pytest.mark.parametrize("name", list(SAMPLES))
def test_moving_the_roots_there_and_back_keeps_the_bytes(name):
    g = _matrix(0.01)

    def there_and_back(d):
        move_roots(d, g)
        move_roots(d, np.linalg.inv(g))

    before, after = _export(name, there_and_back)
    assert dff.write(after) == dff.write(before)


def test_a_mirror_is_refused():
    data = clump_export.from_imported(
        clump_import.import_dff(dff.read(dff.write(samples.static_clump())), "s")[0]
    )
    with pytest.raises(FormatError, match="axes and scale"):
        bake_clump(data, np.diag([-1.0, 1.0, 1.0, 1.0]))
