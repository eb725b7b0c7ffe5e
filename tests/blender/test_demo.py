"""``make demo`` (demo/run_demo.py) in a child process, as the Makefile runs it:
the table with each format's round-trip verdict, the contact sheet of posed
characters with their skeletons, and a loud failure when a step fails."""

from __future__ import annotations

import os
import re
import struct
import subprocess
import sys

import numpy as np

from rigport.tests.support import ROOT

DEMO = ROOT / "demo" / "run_demo.py"
FORMATS = ("Urho3D", "Unigine", "RenderWare", "MRTK", "BonesPro", "glTF")
HEADER = ["format", "files", "import", "export", "check", "seconds", "verdict"]
#: A verdict: every file byte-identical, or the largest posed distance measured.
VERDICT = re.compile(
    r"byte-identical|(?:\d+ of \d+ files byte-identical; )?largest difference (\S+) \((\w+)"
)
#: Round trips our writers' files make exactly (the table says which are not).
EXACT = {"RenderWare", "MRTK"}


def _run(out, env=None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(DEMO), str(out)],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )


def _rows(stdout: str) -> dict[str, list[str]]:
    lines = stdout.splitlines()
    assert lines[0].split() == HEADER
    return {ln.split()[0]: ln.split(maxsplit=6) for ln in lines[1 : 1 + len(FORMATS)]}


def _sheet(bpy, path) -> np.ndarray:
    """The contact sheet's RGB pixels, top row first."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert (width, height) == (1200, 600)  # 3 x 2 tiles of 400 x 300
    img = bpy.data.images.load(str(path))
    try:
        px = np.empty(width * height * 4, np.float32)
        img.pixels.foreach_get(px)
    finally:
        bpy.data.images.remove(img)
    return px.reshape(height, width, 4)[::-1, :, :3]


def test_demo_table_verdicts_and_contact_sheet(tmp_path, blank_blend, corpus_dir):
    proc = _run(tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    rows = _rows(proc.stdout)
    assert tuple(rows) == FORMATS
    assert rows["Urho3D"][1] == "Jack.mdl,Jack_Walk.ani"  # the corpus's character
    assert rows["glTF"][1] == "Jack.glb,Jack.mdl,Jack_Walk.ani"
    for fmt, row in rows.items():
        assert row[2:5] == ["ok", "ok", "ok"], row
        found = VERDICT.match(row[6])
        assert found, row
        if fmt in EXACT:
            assert row[6] == "byte-identical", row
        elif found.group(1) is not None:
            # posed vertices within a hundredth of a millimetre of the source's
            assert float(found.group(1)) < 1e-5 and found.group(2) == "vertices", row
    assert "FAIL" not in proc.stdout
    last = proc.stdout.splitlines()[-1]
    assert "6 of 6 formats passed" in last and "(6 tiles, " in last
    seconds = float(re.search(r"in ([\d.]+) s$", last).group(1))
    assert seconds < 120, last
    px = _sheet(blank_blend, tmp_path / "contact_sheet.png")
    background = px[0, 0]
    for i, fmt in enumerate(FORMATS):
        r, c = divmod(i, 3)
        tile = px[r * 300 : (r + 1) * 300, c * 400 : (c + 1) * 400]
        differs = np.any(np.abs(tile - background) > 0.05, axis=-1).mean()
        assert differs > 0.01, (fmt, differs)
        # the skeleton: orange pixels (the body is grey, the background blue-grey)
        orange = ((tile[..., 0] - tile[..., 2]) > 0.3).mean()
        assert orange > 0.0005, (fmt, orange)


def test_demo_without_corpus_fails_loudly(tmp_path):
    """Without the corpus the Urho3D character comes from our writer; a step that
    fails (here: reading back BonesPro's export) prints a FAIL line and the demo
    exits 1, the other formats still run."""
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(
        "import sys\n"
        "def _refuse(event, args):\n"
        "    if event == 'open' and str(args[0]).endswith('export/bonespro/rig.txt'):\n"
        "        raise PermissionError('refused by the test')\n"
        "sys.addaudithook(_refuse)\n"
    )
    empty = tmp_path / "no_corpus"
    empty.mkdir()
    env = {**os.environ, "PYTHONPATH": str(hook), "RIGPORT_CORPUS": str(empty)}
    proc = _run(tmp_path / "out", env=env)
    assert proc.returncode == 1, proc.stdout
    assert "FAIL BonesPro: check: " in proc.stdout
    rows = _rows(proc.stdout)
    assert rows["BonesPro"][4] == "FAIL"
    assert rows["Urho3D"][1] == "character.mdl,character_Walk.ani"
    assert rows["Urho3D"][2:5] == ["ok", "ok", "ok"]
    bridge = VERDICT.match(rows["glTF"][6])
    assert bridge and float(bridge.group(1)) < 1e-5, rows["glTF"]
    assert "5 of 6 formats passed" in proc.stdout.splitlines()[-1]
