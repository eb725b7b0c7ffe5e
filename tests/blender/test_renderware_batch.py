"""``batch.py`` with RenderWare clumps, run as subprocesses with this interpreter's bpy."""

from __future__ import annotations

import json

from rigport.io_formats.renderware import dff
from rigport.samples import renderware as samples
from rigport.tests.support import run_batch


def test_roundtrip_skinned_ped(tmp_path):
    src = tmp_path / "ped.dff"
    src.write_bytes(dff.write(samples.skinned_ped("VC", n_bones=8, rings=6, split=True)))
    out = tmp_path / "out.dff"
    proc = run_batch("roundtrip", src, out)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "[1/1]" in proc.stdout and ": ok (" in proc.stdout
    a, b = dff.read(src.read_bytes()).clump, dff.read(out.read_bytes()).clump
    assert b.version == a.version == 0x34003
    assert b.geometries()[0].skin.split.to_json() == a.geometries()[0].skin.split.to_json()


def test_check_inspect_and_bad_file(tmp_path):
    good = tmp_path / "static.dff"
    good.write_bytes(dff.write(samples.static_clump("III", atomics=2)))
    bad = tmp_path / "bad.dff"
    bad.write_bytes(good.read_bytes()[:100])
    proc = run_batch("inspect", good)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    summary = json.loads(proc.stdout[proc.stdout.index("{") :])
    text = json.dumps(summary)
    assert '"version": "3.3.0.2"' in text and '"atomics": [[1, 0], [2, 1]]' in text
    proc = run_batch("check", good, bad, "--keep-going")
    assert proc.returncode != 0
    assert "bad.dff" in proc.stdout + proc.stderr and "offset" in proc.stdout + proc.stderr


def test_corpus_roundtrip_through_batch_is_byte_identical(corpus_dir, tmp_path):
    """batch.py calls the import and export functions directly (no operator in
    between): the world matrices must still be current when the frames are written."""
    for name in ("clump.dff", "teapot.dff"):
        src = corpus_dir / "renderware" / name
        out = tmp_path / name
        proc = run_batch("roundtrip", src, out)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert out.read_bytes() == src.read_bytes(), name
