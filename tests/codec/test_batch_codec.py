"""``batch.py check`` and ``inspect``: codec only, run as a subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from rigport.tests.support import BATCH, run_batch


def truncated(corpus_dir: Path, tmp_path: Path) -> Path:
    bad = tmp_path / "Jack_truncated.mdl"
    bad.write_bytes((corpus_dir / "urho3d" / "Jack.mdl").read_bytes()[:500])
    return bad


def test_check_corpus_lossless(corpus_dir):
    files = sorted((corpus_dir / "urho3d").glob("*.mdl")) + sorted(
        (corpus_dir / "urho3d").glob("*.ani")
    )
    proc = run_batch("check", *files)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    *lines, summary = proc.stdout.splitlines()
    assert len(lines) == len(files)
    assert summary.startswith(f"{len(files)} ok, 0 failed, 0 skipped in ")
    for i, (line, f) in enumerate(zip(lines, files, strict=True), 1):
        assert line.startswith(f"[{i}/{len(files)}] {f}: lossless ({f.stat().st_size} bytes)")


def test_check_never_imports_bpy(corpus_dir, tmp_path):
    # A fake bpy that fails on import: check and inspect must not touch it.
    (tmp_path / "bpy.py").write_text("raise ImportError('bpy must not be imported')\n")
    box = corpus_dir / "urho3d" / "Box.mdl"
    for cmd in ("check", "inspect"):
        proc = subprocess.run(
            [sys.executable, str(BATCH), cmd, str(box)],
            capture_output=True,
            text=True,
            timeout=120,
            env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"},
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr


def test_check_truncated_stops_with_offset(corpus_dir, tmp_path):
    bad = truncated(corpus_dir, tmp_path)
    box = corpus_dir / "urho3d" / "Box.mdl"
    proc = run_batch("check", bad, box)
    assert proc.returncode == 1
    assert f"{bad}: error at offset 24" in proc.stdout
    assert "offset 24" in proc.stderr and str(bad) in proc.stderr
    assert str(box) not in proc.stdout  # stopped at the first failure


def test_check_keep_going(corpus_dir, tmp_path):
    bad = truncated(corpus_dir, tmp_path)
    box = corpus_dir / "urho3d" / "Box.mdl"
    walk = corpus_dir / "urho3d" / "Jack_Walk.ani"
    proc = run_batch("--keep-going", "check", box, bad, walk)
    assert proc.returncode == 1
    *lines, summary = proc.stdout.splitlines()
    assert len(lines) == 3 and summary.startswith("2 ok, 1 failed, 0 skipped in ")
    assert "lossless" in lines[0] and "error at offset" in lines[1] and "lossless" in lines[2]


def test_check_differs(tmp_path, corpus_dir):
    # A valid file whose bytes the writer would not reproduce does not exist in the
    # corpus; a trailing byte is rejected by the reader with its offset instead.
    data = (corpus_dir / "urho3d" / "Jack_Walk.ani").read_bytes() + b"\0"
    bad = tmp_path / "trailing.ani"
    bad.write_bytes(data)
    proc = run_batch("check", bad)
    assert proc.returncode == 1
    assert "offset" in proc.stdout


def test_usage_errors(tmp_path):
    assert run_batch("check", tmp_path / "x.obj").returncode == 2
    assert "unknown extension" in run_batch("check", tmp_path / "x.obj").stderr
    assert run_batch("frobnicate").returncode == 2
    assert run_batch().returncode == 2


def test_missing_file(tmp_path):
    proc = run_batch("check", tmp_path / "missing.mdl")
    assert proc.returncode == 1
    assert "cannot read file" in proc.stderr


def test_inspect_model(corpus_dir):
    proc = run_batch("inspect", corpus_dir / "urho3d" / "Jack.mdl")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["magic"] == "UMDL"
    assert doc["vertex_buffers"][0]["vertices"] == 4640
    assert doc["vertex_buffers"][0]["elements"][0] == "position0"
    assert doc["index_buffers"][0]["index_size"] == 2
    lods = doc["geometries"][0]["lods"]
    assert lods[0]["distance"] == 0 and lods[0]["primitive"] == 0
    assert len(lods[0]["draw_range"]) == 2
    assert doc["geometries"][0]["bone_mapping"] > 0
    assert doc["bones"][0]["parent"] is None
    assert all(b["parent"] is not None for b in doc["bones"][1:])
    assert len(doc["bbox"]) == 2


def test_inspect_animation(corpus_dir):
    proc = run_batch("inspect", corpus_dir / "urho3d" / "Jack_Walk.ani")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["name"] == "Walk" and doc["length"] > 0
    assert doc["tracks"][0] == {"name": "Bip01", "mask": 3, "keys": 32}


def test_inspect_bad_file(corpus_dir, tmp_path):
    proc = run_batch("inspect", truncated(corpus_dir, tmp_path))
    assert proc.returncode == 1
    assert "offset 24" in proc.stderr
    assert proc.stdout == ""
