"""``batch.py`` with BonesPro files: both are .txt, told apart by their content."""

from __future__ import annotations

import json

import numpy as np

from rigport.io_formats.bonespro import animation as A
from rigport.io_formats.bonespro import convert, structure
from rigport.samples import bonespro as samples
from rigport.tests.support import run_batch


def _files(tmp_path):
    s = samples.structure(n_vertices=20, seed=2)
    rig = tmp_path / "rig.txt"
    rig.write_bytes(structure.write(s))
    bones = tmp_path / "walk.txt"
    bones.write_bytes(A.write(samples.animation(s, A.BONES, A.RELATIVE, A.MATRIX, n_frames=3)))
    mesh = tmp_path / "mesh.txt"
    mesh.write_bytes(A.write(samples.animation(s, A.MESH_ABSOLUTE, n_frames=3, quoted=True)))
    return s, rig, bones, mesh


def test_check_and_inspect(tmp_path):
    s, rig, bones, mesh = _files(tmp_path)
    proc = run_batch("check", rig, bones, mesh)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    proc = run_batch("inspect", rig, bones)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc[0]["format"] == "bonespro.structure" and doc[1]["format"] == "bonespro.animation"
    notes = tmp_path / "notes.txt"
    notes.write_text("not an export\n")
    proc = run_batch("check", notes)
    assert proc.returncode != 0 and "neither BonesPro Structure nor" in proc.stdout + proc.stderr


def test_roundtrips(tmp_path):
    s, rig, bones, mesh = _files(tmp_path)
    out = tmp_path / "out_rig.txt"
    proc = run_batch("roundtrip", rig, out)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    got = structure.read(out.read_bytes())
    np.testing.assert_allclose(got.bone_transforms, s.bone_transforms, atol=1e-5)
    np.testing.assert_allclose(got.positions, s.positions, atol=1e-5)
    for src, name in ((bones, "out_walk.txt"), (mesh, "out_mesh.txt")):
        out = tmp_path / name
        proc = run_batch("roundtrip", src, out, "--model", rig)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        want, got = A.read(src.read_bytes()), A.read(out.read_bytes())
        assert convert.header(got) == convert.header(want)
        if want.mode == A.BONES:
            np.testing.assert_allclose(
                convert.bone_worlds(got, s.parents)[0],
                convert.bone_worlds(want, s.parents)[0],
                atol=1e-5,
            )
        else:
            np.testing.assert_allclose(got.positions, want.positions, atol=1e-5)
