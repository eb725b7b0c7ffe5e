"""``make demo`` (demo/run_demo.py) in a child process, as the Makefile runs it:
the table, the contact sheet, and a loud failure when a step fails."""

from __future__ import annotations

import os
import struct
import subprocess
import sys

import numpy as np

from rigport.tests.support import ROOT

DEMO = ROOT / "demo" / "run_demo.py"
FORMATS = ("Urho3D", "Unigine", "RenderWare", "MRTK", "BonesPro")


def _run(out, env=None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(DEMO), str(out)],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )


def test_demo_table_and_contact_sheet(tmp_path, blank_blend):
    proc = _run(tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    lines = proc.stdout.splitlines()
    assert lines[0].split() == ["format", "file", "import", "export", "check", "seconds", "detail"]
    rows = {ln.split()[0]: ln.split() for ln in lines[1:6]}
    assert tuple(rows) == FORMATS
    for row in rows.values():
        assert row[2:5] == ["ok", "ok", "ok"], row
    assert "FAIL" not in proc.stdout
    assert "5 of 5 formats passed" in lines[-1]
    sheet = tmp_path / "contact_sheet.png"
    data = sheet.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert (width, height) == (1200, 600)  # 3 x 2 tiles of 400 x 300
    # Every tile shows something: more than the flat background.
    bpy = blank_blend
    img = bpy.data.images.load(str(sheet))
    try:
        px = np.empty(width * height * 4, np.float32)
        img.pixels.foreach_get(px)
    finally:
        bpy.data.images.remove(img)
    px = px.reshape(height, width, 4)[::-1, :, :3]  # top row first
    background = px[0, 0]
    for i in range(len(FORMATS)):
        r, c = divmod(i, 3)
        tile = px[r * 300 : (r + 1) * 300, c * 400 : (c + 1) * 400]
        differs = np.any(np.abs(tile - background) > 0.05, axis=-1).mean()
        assert differs > 0.002, (FORMATS[i], differs)


def test_demo_fails_loudly(tmp_path):
    """A step that fails (here: reading back BonesPro's export) prints a FAIL line
    and the demo exits 1; the other formats still run."""
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(
        "import sys\n"
        "def _refuse(event, args):\n"
        "    if event == 'open' and str(args[0]).endswith('export/bonespro_0000.txt'):\n"
        "        raise PermissionError('refused by the test')\n"
        "sys.addaudithook(_refuse)\n"
    )
    proc = _run(tmp_path / "out", env={**os.environ, "PYTHONPATH": str(hook)})
    assert proc.returncode == 1, proc.stdout
    assert "FAIL BonesPro: check: " in proc.stdout
    row = next(ln.split() for ln in proc.stdout.splitlines() if ln.startswith("BonesPro"))
    assert row[4] == "FAIL"
    assert "4 of 5 formats passed" in proc.stdout.splitlines()[-1]
