"""``batch.py`` with RenderWare clumps, run as subprocesses with this interpreter's bpy."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from rigport.io_formats.renderware import dff, samples

ROOT = Path(__file__).resolve().parents[2]
BATCH = ROOT / "batch.py"


def run_batch(*args) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(BATCH), *map(str, args)], capture_output=True, text=True, timeout=300
    )


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
