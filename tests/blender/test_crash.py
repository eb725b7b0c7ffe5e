"""The crash test: files valid to the codecs but nasty to Blender (``tests/nasty.py``)
are imported, each in a child process holding a scene with objects in it.

A signal (a crash), a hang over 60 s, or an exception other than a FormatError
(an error report that is not a refusal, or a Python exception through the
operator) fails the test; so does a refused import that changes the scene
(objects, meshes, actions, materials, collections, selection, active object).
One child per format family imports all its files; when one crashes or hangs,
the files after it run in a fresh child, so each failure is pinned on its file.
Counts per family are printed (and appended as JSON lines to the file named by
``RIGPORT_CRASH_REPORT``, when set).
"""

from __future__ import annotations

import json
import os
import selectors
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rigport.tests import nasty

ROOT = Path(__file__).resolve().parents[2]
CHILD = ROOT / "tests" / "crash_child.py"
HANG = 60.0  # seconds one file may take
ANIMATIONS = {"urho3d_ani", "unigine_anim", "mrtk_bin", "bonespro_anim"}

#: The model each family's animations go onto (a valid file of the same family).
HOSTS = {
    "urho3d": ("host.mdl", "import_scene.urho3d_mdl", lambda: nasty.mdl.write(nasty.urho3d_host())),
    "unigine": (
        "host.mesh",
        "import_scene.unigine_mesh",
        lambda: nasty.ug_mesh.write(nasty.unigine_host()),
    ),
    "bonespro": (
        "host.txt",
        "import_scene.bonespro_structure",
        lambda: nasty.bp_structure.write(nasty.bonespro_host()),
    ),
}


def _run_child(jobs: dict, folder: Path) -> tuple[dict[str, dict], str | None, str, str]:
    """Run one child on ``jobs``: results by name, the file that was running when it
    crashed or hung (None when it ended normally), how it ended, and its output."""
    jobs_path = folder / "jobs.json"
    jobs_path.write_text(json.dumps(jobs))
    proc = subprocess.Popen(
        [sys.executable, str(CHILD), str(ROOT), str(jobs_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        bufsize=1,
    )
    results: dict[str, dict] = {}
    running: str | None = None
    last = time.monotonic()
    log: list[str] = []
    how = "ended"
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    setup_limit = HANG * 2  # registering and the host model
    while True:
        limit = HANG if running is not None else setup_limit
        if not sel.select(timeout=max(0.0, limit - (time.monotonic() - last))):
            proc.kill()
            proc.wait()
            how = "hung"
            break
        line = proc.stdout.readline()
        if not line:
            break
        log.append(line)
        if line.startswith("START "):
            running = line[6:].strip()
            last = time.monotonic()
        elif line.startswith("RESULT "):
            r = json.loads(line[7:])
            results[r["name"]] = r
            running = None
            last = time.monotonic()
    code = proc.wait()
    sel.close()
    if how != "hung":
        if code < 0:
            how = f"signal {-code}"
        elif code != 0:
            how = f"exit status {code}"
        elif running is not None:
            how = "ended during a file"
    crashed = running if how != "ended" else None
    if how != "ended" and crashed is None and len(results) < len(jobs["files"]):
        crashed = "(set-up)"
    return results, crashed, how, "".join(log[-60:])


@pytest.mark.urho3d_engine(skip=True)  # nasty models break the engine's rules on purpose
@pytest.mark.parametrize("family", sorted(nasty.FAMILIES))
def test_nasty_files_do_not_crash_blender(family, tmp_path, rigport):
    cases = nasty.FAMILIES[family]()
    host = None
    if family in HOSTS:
        name, operator, make = HOSTS[family]
        (tmp_path / name).write_bytes(make())
        host = {"operator": operator, "path": str(tmp_path / name)}
    files = []
    for case in cases:
        path = tmp_path / case.filename
        path.write_bytes(case.make())
        files.append(
            {
                "name": case.name,
                "path": str(path),
                "operator": nasty.IMPORTERS[case.kind],
                "animation": case.kind in ANIMATIONS,
            }
        )
    results: dict[str, dict] = {}
    failures: dict[str, str] = {}
    remaining = files
    while remaining:
        got, crashed, how, log = _run_child({"host": host, "files": remaining}, tmp_path)
        results.update(got)
        if crashed is None:
            break
        if crashed == "(set-up)":
            pytest.fail(f"the {family} child failed before its first file ({how}):\n{log}")
        failures[crashed] = f"{how}:\n{log}"
        done = set(results) | {crashed}
        remaining = [f for f in remaining if f["name"] not in done]
    by_name = {c.name: c for c in cases}
    for name, r in results.items():
        if r["outcome"] in ("bug", "exception"):
            failures[name] = f"{r['outcome']}: {r['message']}"
        elif r["outcome"] == "refused" and not r["scene_kept"]:
            failures[name] = f"refused, but the scene changed: {r['changed']}"
        elif r["seconds"] > HANG:
            failures[name] = f"took {r['seconds']:.0f} s"
    counts = {
        "family": family,
        "blender": _blender_version(),
        "files": len(cases),
        "imported": sum(r["outcome"] == "imported" for r in results.values()),
        "refused": sum(r["outcome"] == "refused" for r in results.values()),
        "crashed": sum(1 for f in failures.values() if f.startswith(("signal", "hung", "exit"))),
        "failed": len(failures),
    }
    print("crash test counts:", json.dumps(counts))
    for name, r in sorted(results.items()):
        print(f"  {name}: {r['outcome']} {r['message'][:200]}")
    report = os.environ.get("RIGPORT_CRASH_REPORT")
    if report:
        with open(report, "a") as fh:
            fh.write(json.dumps(counts) + "\n")
    expected = {n for n in failures if by_name[n].xfail}
    unexpected = {n: failures[n] for n in failures if n not in expected}
    assert not unexpected, "\n\n".join(f"{n}: {m}" for n, m in unexpected.items())
    for name in expected:
        pytest.xfail(f"{name}: {by_name[name].xfail}")


def _blender_version() -> str:
    import bpy

    return bpy.app.version_string
