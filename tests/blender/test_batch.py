"""``batch.py`` Blender commands, run as subprocesses with this interpreter's bpy."""

from __future__ import annotations

from rigport.io_formats.urho3d import ani, mdl
from rigport.tests.support import run_batch


def test_roundtrip_box(corpus_dir, tmp_path):
    out = tmp_path / "out.mdl"
    proc = run_batch("roundtrip", corpus_dir / "urho3d" / "Box.mdl", out)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "[1/1]" in proc.stdout and ": ok (" in proc.stdout
    src = mdl.read((corpus_dir / "urho3d" / "Box.mdl").read_bytes())
    got = mdl.read(out.read_bytes())
    assert [vb.count for vb in got.vertex_buffers] == [vb.count for vb in src.vertex_buffers]


def test_roundtrip_animation(corpus_dir, tmp_path):
    out = tmp_path / "walk.ani"
    proc = run_batch(
        "roundtrip",
        corpus_dir / "urho3d" / "Jack_Walk.ani",
        out,
        "--model",
        corpus_dir / "urho3d" / "Jack.mdl",
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    src = ani.read((corpus_dir / "urho3d" / "Jack_Walk.ani").read_bytes())
    got = ani.read(out.read_bytes())
    assert [t.name for t in got.tracks] == [t.name for t in src.tracks]


def test_import_save(corpus_dir, tmp_path):
    out = tmp_path / "out.blend"
    u = corpus_dir / "urho3d"
    # the animation is given first: models are imported before animations
    proc = run_batch("import", u / "Jack_Walk.ani", u / "Jack.mdl", "--save", out)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert out.is_file() and out.stat().st_size > 0
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("[")]
    assert lines[0].startswith(f"[1/2] {u / 'Jack.mdl'}: ok (")
    assert "action" in lines[1]


def test_bad_file(corpus_dir, tmp_path):
    bad = tmp_path / "bad.mdl"
    bad.write_bytes((corpus_dir / "urho3d" / "Jack.mdl").read_bytes()[:500])
    out = tmp_path / "out.blend"
    proc = run_batch("import", bad, "--save", out)
    assert proc.returncode == 1
    assert "offset" in proc.stdout + proc.stderr
    assert not out.exists()
    proc = run_batch("roundtrip", bad, tmp_path / "x.mdl")
    assert proc.returncode == 1 and "offset" in proc.stderr


def test_keep_going_import(corpus_dir, tmp_path):
    bad = tmp_path / "bad.mdl"
    bad.write_bytes(b"UMDL\xff\xff\xff\xff")
    proc = run_batch("--keep-going", "import", bad, corpus_dir / "urho3d" / "Box.mdl")
    assert proc.returncode == 1
    assert "[2/2]" in proc.stdout and ": ok (" in proc.stdout


def test_usage(corpus_dir, tmp_path):
    proc = run_batch("roundtrip", corpus_dir / "urho3d" / "Box.mdl", tmp_path / "x.ani")
    assert proc.returncode == 2
    proc = run_batch("convert", corpus_dir / "urho3d" / "Box.mdl", tmp_path / "x.ani")
    assert proc.returncode == 2 and "cannot be written" in proc.stderr
    proc = run_batch("roundtrip", corpus_dir / "urho3d" / "Jack_Walk.ani", tmp_path / "x.ani")
    assert proc.returncode == 2 and "--model" in proc.stderr
