"""``batch.py`` on Unigine files: check, inspect, roundtrip, bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from rigport.io_formats.unigine import anim, mesh
from rigport.samples import unigine as samples
from rigport.samples import unigine_compare as compare

BATCH = Path(__file__).resolve().parents[2] / "batch.py"


def run_batch(*args) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(BATCH), *map(str, args)], capture_output=True, text=True, timeout=300
    )


def _files(tmp_path: Path) -> tuple[Path, Path]:
    m = samples.skinned_mesh(n_frames=5)
    mp, ap = tmp_path / "hero.mesh", tmp_path / "hero.anim"
    mp.write_bytes(mesh.write(m))
    ap.write_bytes(anim.write(samples.anim_file(m, 15, n_frames=5)))
    return mp, ap


def test_check_and_inspect(tmp_path):
    mp, ap = _files(tmp_path)
    proc = run_batch("check", mp, ap)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    proc = run_batch("inspect", mp)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert '"surface_1"' in proc.stdout and '"clip_1"' in proc.stdout


def test_roundtrip_mesh_and_anim(tmp_path):
    mp, ap = _files(tmp_path)
    out = tmp_path / "out.mesh"
    proc = run_batch("roundtrip", mp, out)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert compare.mesh_differences(mesh.read(mp.read_bytes()), mesh.read(out.read_bytes())) == []
    out = tmp_path / "out.anim"
    proc = run_batch("roundtrip", ap, out, "--model", mp)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert compare.anim_differences(anim.read(ap.read_bytes()), anim.read(out.read_bytes())) == []


def test_bad_file_keep_going(tmp_path):
    mp, _ = _files(tmp_path)
    bad = tmp_path / "old.mesh"
    bad.write_bytes(b"ms10" + mp.read_bytes()[4:])
    proc = run_batch("--keep-going", "check", bad, mp)
    assert proc.returncode == 1
    assert "unsupported version 'ms10'" in proc.stdout + proc.stderr
    assert json.dumps(str(mp))[1:-1] in proc.stdout
