"""``batch.py`` on whole libraries: folders, --jobs, --shard, --report, the summary,
outputs that cannot be written, a closed pipe, no bpy. Subprocesses with this
interpreter's bpy, on files our writers build."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rigport.demo import sample_library
from rigport.tests.support import BATCH, run_batch


@pytest.fixture(scope="module")
def library(tmp_path_factory) -> Path:
    """Ten files, two of each format, in one subfolder per format, plus a .txt that
    is no BonesPro export (skipped) and a file of unknown extension (ignored)."""
    lib = tmp_path_factory.mktemp("lib")
    sample_library.write_library(lib, 10)
    (lib / "bonespro" / "notes.txt").write_text("not an export\n")
    (lib / "readme.md").write_text("ignored\n")
    return lib


def _files(lib: Path) -> list[Path]:
    return sorted(
        p for p in lib.rglob("*") if p.suffix in {".mdl", ".mesh", ".dff", ".bin", ".txt"}
    )


def _progress(stdout: str) -> list[str]:
    return [ln for ln in stdout.splitlines() if ln.startswith("[")]


def test_folder_walk_needs_recursive(library):
    proc = run_batch("check", library, "--jobs", "1")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip().endswith("files/s") or "0 ok, 0 failed, 0 skipped" in proc.stdout
    assert _progress(proc.stdout) == []  # only subfolders: nothing without --recursive
    proc = run_batch("check", library, "--recursive", "--jobs", "1")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = _progress(proc.stdout)
    assert len(lines) == 11
    want = sorted(str(p) for p in _files(library))
    assert [ln.split("] ", 1)[1].split(": ", 1)[0] for ln in lines] == want  # sorted, in order
    assert "notes.txt: skipped (the content is neither BonesPro" in proc.stdout
    assert proc.stdout.splitlines()[-1].startswith("10 ok, 0 failed, 1 skipped in ")
    assert "eta " in lines[0] and "eta " not in lines[-1]


def test_roundtrip_library_in_parallel_with_report(library, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    report = tmp_path / "report.json"
    proc = run_batch("roundtrip", library, out, "-r", "--jobs", "2", "--report", report)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.splitlines()[-1].startswith("10 ok, 0 failed, 1 skipped in ")
    doc = json.loads(report.read_text())
    assert doc["command"] == "roundtrip" and doc["jobs"] == 2 and doc["bpy"]
    assert doc["totals"] == {"ok": 10, "failed": 0, "skipped": 1, "not run": 0}
    files = doc["files"]
    assert [f["item"] for f in files] == sorted(str(p) for p in _files(library))
    for f in files:
        if f["status"] == "skipped":
            assert f["item"].endswith("notes.txt")
            continue
        src = Path(f["item"])
        dst = out / src.relative_to(library)
        assert f["output"] == str(dst) and dst.is_file()
        assert f["seconds"] > 0 and f["counts"]["bytes_written"] == dst.stat().st_size
        assert f["counts"]["objects"] >= 1
        # the exported file parses, and holds what the source holds
        check = run_batch("check", dst, "--jobs", "1")
        assert check.returncode == 0, check.stdout
    urho = next(f for f in files if f["item"].endswith(".mdl"))
    assert urho["counts"]["bones"] >= 4 and urho["counts"]["vertices"] > 0


def test_shards_cover_the_list_once(library, tmp_path):
    seen = []
    for k in (1, 2, 3):
        report = tmp_path / f"r{k}.json"
        proc = run_batch("inspect", library, "-r", "--shard", f"{k}/3", "--report", report)
        assert proc.returncode == 0, proc.stderr
        doc = json.loads(report.read_text())
        assert doc["shard"] == f"{k}/3"
        items = [f["item"] for f in doc["files"]]
        assert len(items) in (3, 4)
        seen += items
        summaries = json.loads(proc.stdout)  # inspect: the JSON document alone on stdout
        assert [s["file"] for s in summaries] == [
            f["item"] for f in doc["files"] if f["status"] == "ok"
        ]
    assert sorted(seen) == sorted(str(p) for p in _files(library))
    assert run_batch("check", library, "--shard", "4/3").returncode == 2
    assert run_batch("check", library, "--shard", "x").returncode == 2


def test_keep_going_summary_and_exit_codes(library, tmp_path):
    lib = tmp_path / "lib"
    lib.mkdir()
    for p in sorted((library / "urho3d").iterdir())[:2]:
        (lib / p.name).write_bytes(p.read_bytes())
    (lib / "broken.mdl").write_bytes(b"UMDL\xff\xff\xff\xff")
    (lib / "notes.txt").write_text("hello\n")
    proc = run_batch("--keep-going", "check", lib, "--jobs", "2")
    assert proc.returncode == 1
    assert proc.stdout.splitlines()[-1].startswith("2 ok, 1 failed, 1 skipped in ")
    assert "broken.mdl: error at offset" in proc.stdout
    proc = run_batch("check", lib, "--jobs", "1")
    assert proc.returncode == 1
    assert "1 failed" in proc.stdout and "not run (stopped at the first failure" in proc.stdout
    assert "broken.mdl" in proc.stderr
    (lib / "broken.mdl").unlink()
    assert run_batch("check", lib).returncode == 0  # a skipped file is no failure
    assert run_batch("check", lib / "notes.txt").returncode == 1  # named: it must be read
    assert run_batch("check", lib, "--jobs", "0").returncode == 2
    assert run_batch("import", lib, "--shard", "1/2").returncode == 2


def test_outputs_that_cannot_be_written_name_the_output(library, tmp_path):
    src = sorted((library / "urho3d").iterdir())[0]
    missing = tmp_path / "no" / "such" / "folder"
    for args in (
        ("roundtrip", src, missing / "x.mdl"),
        ("roundtrip", library, missing, "-r"),
        ("convert", library, missing, "-r", "--to", ".dff"),
        ("import", src, "--save", missing / "x.blend"),
        ("check", src, "--report", missing / "r.json"),
    ):
        proc = run_batch(*args)
        assert proc.returncode == 2, (args, proc.stdout, proc.stderr)
        assert str(missing) in proc.stderr and "does not exist" in proc.stderr
        assert str(src) not in proc.stderr and proc.stdout == ""
    proc = run_batch("roundtrip", library, "/proc", "-r")  # exists, cannot be written
    assert proc.returncode == 2 and "/proc: cannot write in the output folder" in proc.stderr
    proc = run_batch("roundtrip", library, tmp_path / "file", "-r")
    assert proc.returncode == 2  # several inputs need a folder
    proc = run_batch("convert", library, tmp_path, "-r")
    assert proc.returncode == 2 and "--to" in proc.stderr


def test_convert_library_by_kind(library, tmp_path):
    """--to per kind: models to .dff; MRTK recordings (no model, no animation) skipped.
    Two folders: each keeps its name below OUT."""
    proc = run_batch("convert", library / "urho3d", library / "mrtk", tmp_path, "--to", ".dff")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*.*")) == [
        "urho3d/urho3d_0000.dff",
        "urho3d/urho3d_0001.dff",
    ]
    assert proc.stdout.count("skipped (no --to extension for MRTK Input Animation files)") == 2


def test_closed_pipe_ends_quietly(library):
    """``batch.py ... | head``: no traceback, the shell's status for a closed pipe (141).
    ``head -c 0`` exits at once, so the first progress line meets a closed pipe."""
    for cmd in ("check", "inspect"):
        script = (
            f"{sys.executable} {BATCH} {cmd} {library} -r --jobs 1 | head -c 0; "
            "echo ${PIPESTATUS[0]}"
        )
        proc = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=120)
        assert proc.stdout.strip() == "141", (cmd, proc.stdout, proc.stderr)
        assert "Traceback" not in proc.stderr and "BrokenPipe" not in proc.stderr, proc.stderr


def test_without_bpy_one_sentence(tmp_path, library):
    """A Python without bpy: the Blender commands say how to run them; check works."""
    (tmp_path / "bpy.py").write_text("raise ImportError('no bpy here')\n")
    src = sorted((library / "urho3d").iterdir())[0]
    hidden = tmp_path / "site"
    hidden.mkdir()
    # A plain interpreter: the same Python, without this environment's site-packages
    # (where bpy is), but with numpy found through a path of its own.
    import numpy

    numpy_dir = Path(numpy.__file__).parent.parent
    (hidden / "numpy").symlink_to(numpy_dir / "numpy")
    env = {"PYTHONPATH": str(hidden), "PATH": "/usr/bin:/bin"}
    base = [sys.executable, "-S", str(BATCH)]
    proc = subprocess.run(
        [*base, "roundtrip", str(src), str(tmp_path / "x.mdl")],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert (
        "bpy" in proc.stderr and "blender -b --python-exit-code 1 --python batch.py" in proc.stderr
    )
    proc = subprocess.run(
        [*base, "check", str(src)], capture_output=True, text=True, env=env, timeout=60
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_worker_crash_fails_one_file(library, tmp_path):
    """A worker that dies (as Blender does on a segmentation fault) fails the file it
    was on; a new worker takes the rest."""
    lib = tmp_path / "lib"
    lib.mkdir()
    for p in sorted((library / "renderware").iterdir()):
        (lib / p.name).write_bytes(p.read_bytes())
    (lib / "crash.dff").write_bytes((lib / "renderware_0000.dff").read_bytes())
    out = tmp_path / "out"
    out.mkdir()
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(
        "import os, signal, sys\n"
        "def _crash(event, args):\n"
        "    if event == 'open' and str(args[0]).endswith('crash.dff'):\n"
        "        os.kill(os.getpid(), signal.SIGSEGV)\n"
        "if '--worker' in sys.argv:\n"
        "    sys.addaudithook(_crash)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(hook)}
    report = tmp_path / "r.json"
    proc = run_batch(
        "--keep-going", "roundtrip", lib, out, "--jobs", "2", "--report", report, env=env
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "crash.dff: error: the worker process was killed by SIGSEGV" in proc.stdout
    doc = json.loads(report.read_text())
    assert doc["totals"] == {"ok": 2, "failed": 1, "skipped": 0, "not run": 0}


def test_import_folder_into_one_scene(library, tmp_path):
    """import takes a folder too: its files go into one scene, saved as one .blend."""
    saved = tmp_path / "all.blend"
    proc = run_batch("import", library / "urho3d", library / "renderware", "--save", saved)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = _progress(proc.stdout)
    assert len(lines) == 4 and all(": ok (" in ln for ln in lines)
    assert saved.is_file() and f"saved {saved}" in proc.stdout
    assert proc.stdout.splitlines()[-1].startswith("4 ok, 0 failed, 0 skipped in ")
    assert run_batch("import", library, "--jobs", "2").returncode == 2  # one scene, one process


def test_runs_leave_no_blender_session_folder(library, tmp_path):
    """A run ends with os._exit (the bpy module can crash in the interpreter's exit),
    which skips Blender's own removal of its session folder: batch.py removes it, in
    the run and in each --jobs worker."""
    temp = tmp_path / "temp"
    temp.mkdir()
    env = dict(os.environ, TMPDIR=str(temp))
    probe = subprocess.run(  # where this bpy puts its session folder (then removed)
        [
            sys.executable,
            "-c",
            "import bpy, os, shutil, sys; sys.stdout.write(bpy.app.tempdir); sys.stdout.flush(); "
            "shutil.rmtree(bpy.app.tempdir); os._exit(0)",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert probe.stdout.startswith(str(temp / "blender_")), probe.stdout + probe.stderr
    out = tmp_path / "out"
    out.mkdir()
    proc = run_batch("roundtrip", library / "mrtk", out, "--jobs", "2", env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert len(list(out.iterdir())) == 2
    assert sorted(p.name for p in temp.iterdir() if p.name.startswith("blender_")) == []
