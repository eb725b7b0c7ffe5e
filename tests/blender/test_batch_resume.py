"""``batch.py`` killed midway, then ``--resume``: the report is written as the run
goes (a journal beside it), SIGTERM and SIGINT stop the workers and write the
report, and a rerun with ``--resume`` does only what is left or changed. The
kill waits for the journal to list files done (polled, not slept)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rigport.demo import sample_library
from rigport.tests.support import BATCH, run_batch

COUNT = 30
DONE_BEFORE_KILL = 3


@pytest.fixture(scope="module")
def library(tmp_path_factory) -> Path:
    lib = tmp_path_factory.mktemp("lib")
    sample_library.write_library(lib, COUNT)
    return lib


def _copy(library: Path, tmp_path: Path) -> tuple[Path, Path]:
    lib, out = tmp_path / "lib", tmp_path / "out"
    shutil.copytree(library, lib)
    out.mkdir()
    return lib, out


def _journal_files(journal: Path) -> list[dict]:
    """The file lines of the journal, up to its last complete line."""
    lines = journal.read_text().split("\n")[:-1]
    docs = [json.loads(line) for line in lines]
    assert "run" in docs[0]
    return docs[1:]


def _start(tmp_path: Path, *args: object) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, str(BATCH), *map(str, args)],
        stdout=(tmp_path / "stdout").open("w"),
        stderr=(tmp_path / "stderr").open("w"),
        text=True,
    )


def _wait_for_done(proc: subprocess.Popen, journal: Path, n: int, timeout: float = 240) -> None:
    """Until the journal lists ``n`` files (the run must still be going then)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        assert proc.poll() is None, "the run ended before it could be interrupted"
        if journal.exists() and len(_journal_files(journal)) >= n:
            return
        time.sleep(0.05)
    proc.kill()
    pytest.fail(f"{journal} did not list {n} files in {timeout} s")


def _children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry))
    return found


def _wait_gone(pids: list[int], timeout: float = 120) -> None:
    """Until the processes have ended (a zombie has)."""
    end = time.monotonic() + timeout
    for pid in pids:
        while time.monotonic() < end:
            try:
                state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
            except OSError:
                break
            if state in ("Z", "X"):
                break
            time.sleep(0.05)
        else:
            pytest.fail(f"process {pid} still running")


def _no_temporary_files(out: Path) -> None:
    assert [p for p in out.rglob("*") if p.name.startswith(".")] == []


def _interrupted(tmp_path: Path, library: Path, sig: signal.Signals) -> tuple[Path, Path, dict]:
    """Roundtrip a copy of the library with --jobs 2, stopped by ``sig`` once the
    journal lists some files: (lib, out, the report)."""
    lib, out = _copy(library, tmp_path)
    report = tmp_path / "R.json"
    proc = _start(tmp_path, "roundtrip", lib, out, "-r", "--jobs", "2", "--report", report)
    _wait_for_done(proc, Path(f"{report}.journal"), DONE_BEFORE_KILL)
    proc.send_signal(sig)
    assert proc.wait(120) == 128 + sig.value
    stderr = (tmp_path / "stderr").read_text()
    doc = json.loads(report.read_text())
    done = doc["totals"]["ok"]
    assert f"interrupted by {sig.name}: {done} of {COUNT} files done" in stderr
    assert f"--resume {report} goes on" in stderr
    assert not Path(f"{report}.journal").exists()  # the report holds it all
    assert doc["interrupted"] == sig.name
    assert done >= DONE_BEFORE_KILL and doc["totals"]["failed"] == 0
    assert done + doc["totals"]["not run"] == COUNT and len(doc["files"]) == COUNT
    for f in doc["files"]:
        if f["status"] == "ok":  # a file done is complete, as its fingerprint says
            data = Path(f["output"]).read_bytes()
            assert len(data) == f["fingerprints"]["output"]["size"] == f["counts"]["bytes_written"]
        else:
            assert f["status"] == "not run" and f["detail"] == "interrupted"
    _no_temporary_files(out)
    return lib, out, doc


def _resume(tmp_path: Path, lib: Path, out: Path) -> tuple[subprocess.CompletedProcess, dict]:
    report = tmp_path / "R.json"
    proc = run_batch("roundtrip", lib, out, "-r", "--jobs", "2", "--resume", report)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    doc = json.loads(report.read_text())
    assert doc["totals"] == {"ok": COUNT, "failed": 0, "skipped": 0, "not run": 0}
    assert doc["interrupted"] is None
    assert not Path(f"{report}.journal").exists()
    _no_temporary_files(out)
    return proc, doc


def _redone(proc: subprocess.CompletedProcess) -> set[str]:
    """The files the run's progress lines name."""
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("[")]
    return {ln.split("] ", 1)[1].split(": ", 1)[0] for ln in lines}


def test_sigterm_then_resume_does_the_rest(library, tmp_path):
    lib, out, before = _interrupted(tmp_path, library, signal.SIGTERM)
    done = {f["item"] for f in before["files"] if f["status"] == "ok"}
    mtimes = {
        f["item"]: Path(f["output"]).stat().st_mtime_ns
        for f in before["files"]
        if f["status"] == "ok"
    }
    proc, after = _resume(tmp_path, lib, out)
    assert f"{len(done)} of {COUNT} files done before and unchanged" in proc.stdout
    assert proc.stdout.splitlines()[-1].startswith(f"{COUNT} ok ({len(done)} done before), ")
    everything = {f["item"] for f in after["files"]}
    assert _redone(proc) == everything - done  # only the rest
    for f in after["files"]:
        assert f["resumed"] == (f["item"] in done)
        if f["resumed"]:  # carried over as recorded, the output left alone
            assert Path(f["output"]).stat().st_mtime_ns == mtimes[f["item"]]


def test_sigint_then_changed_input_and_output_are_redone(library, tmp_path):
    lib, out, before = _interrupted(tmp_path, library, signal.SIGINT)
    done = [f for f in before["files"] if f["status"] == "ok"]
    changed_input, changed_output = done[0], done[1]
    src = Path(changed_input["item"])
    sibling = sorted(p for p in src.parent.iterdir() if p != src)[0]
    src.write_bytes(sibling.read_bytes())  # a different file of the same format
    Path(changed_output["output"]).unlink()
    proc, after = _resume(tmp_path, lib, out)
    redone = _redone(proc)
    assert changed_input["item"] in redone and changed_output["item"] in redone
    assert redone.isdisjoint(f["item"] for f in done[2:])
    assert f"{len(done) - 2} of {COUNT} files done before" in proc.stdout
    assert Path(changed_output["output"]).is_file()


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="finds the workers in /proc")
def test_sigkill_leaves_a_journal_to_resume_from(library, tmp_path):
    lib, out = _copy(library, tmp_path)
    report = tmp_path / "R.json"
    journal = Path(f"{report}.journal")
    proc = _start(tmp_path, "roundtrip", lib, out, "-r", "--jobs", "2", "--report", report)
    _wait_for_done(proc, journal, DONE_BEFORE_KILL)
    workers = _children(proc.pid)
    proc.kill()
    assert proc.wait(60) == -signal.SIGKILL
    _wait_gone(workers)  # a worker finishes the file it is on, then ends
    assert not report.exists()
    files = _journal_files(journal)  # every complete line is a whole record
    assert len(files) >= DONE_BEFORE_KILL and all(f["status"] == "ok" for f in files)
    for f in files:
        assert Path(f["output"]).stat().st_size == f["fingerprints"]["output"]["size"]
    _no_temporary_files(out)
    proc, after = _resume(tmp_path, lib, out)
    recorded = {f["item"] for f in files}
    assert f"{len(recorded)} of {COUNT} files done before" in proc.stdout
    assert _redone(proc) == {f["item"] for f in after["files"]} - recorded


def test_resume_needs_a_report_of_the_same_command(library, tmp_path):
    report = tmp_path / "R.json"
    proc = run_batch("check", library, "-r", "--jobs", "1", "--report", report)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert json.loads(report.read_text())["totals"]["ok"] == COUNT
    again = run_batch("check", library, "-r", "--jobs", "1", "--resume", report)
    assert again.returncode == 0, again.stdout + again.stderr
    assert f"{COUNT} of {COUNT} files done before and unchanged" in again.stdout
    assert _redone(again) == set()
    out = tmp_path / "out"
    out.mkdir()
    wrong = run_batch("roundtrip", library, out, "-r", "--resume", report)
    assert wrong.returncode == 2 and "a report of check, not roundtrip" in wrong.stderr
    missing = run_batch("check", library, "-r", "--resume", tmp_path / "none.json")
    assert missing.returncode == 2 and "none.json: cannot read it" in missing.stderr
    assert run_batch("pack", library, tmp_path / "x.pak", "--resume", report).returncode == 2


def test_a_journal_cut_short_counts_up_to_its_last_whole_line(library, tmp_path):
    """What SIGKILL can leave in the middle of a write: the line cut short is
    ignored, the lines before it are carried over."""
    report = tmp_path / "R.json"
    proc = run_batch("check", library, "-r", "--jobs", "1", "--report", report)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    doc = json.loads(report.read_text())
    run = {k: doc[k] for k in ("command", "arguments", "jobs", "shard")}
    lines = [json.dumps({"run": run})] + [json.dumps(f) for f in doc["files"][:11]]
    journal = Path(f"{report}.journal")
    journal.write_text("\n".join(lines[:-1]) + "\n" + lines[-1][: len(lines[-1]) // 2])
    again = run_batch("check", library, "-r", "--jobs", "1", "--resume", report)
    assert again.returncode == 0, again.stdout + again.stderr
    assert f"10 of {COUNT} files done before and unchanged" in again.stdout
    assert _redone(again) == {f["item"] for f in doc["files"][10:]}
    assert json.loads(report.read_text())["totals"]["ok"] == COUNT and not journal.exists()
