"""``batch.py check/inspect/pack`` on packages and on files inside them (codec only)."""

from __future__ import annotations

import json

import pytest

from rigport.io_formats.urho3d import package
from rigport.samples import rbfx as rbfx_samples
from rigport.tests.support import run_batch

pytest.importorskip("lz4.block")

READABLE = [n for n, _ in rbfx_samples.package_files() if not n.startswith("Data/")]


@pytest.mark.parametrize("layout", [(False, False), (True, False), (False, True), (True, True)])
def test_check_walks_the_whole_package(tmp_path, layout):
    pak = tmp_path / "p.pak"
    pak.write_bytes(rbfx_samples.sample_package(*layout))
    proc = run_batch("check", pak)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    *lines, summary = proc.stdout.splitlines()
    n = 1 + len(READABLE)
    assert len(lines) == n and summary.startswith(f"{n} ok, 0 failed, 0 skipped in ")
    assert lines[0].startswith(f"[1/{n}] {pak}: lossless ({pak.stat().st_size} bytes)")
    for i, name in enumerate(READABLE, 2):
        assert lines[i - 1].startswith(f"[{i}/{n}] {pak}:{name}: lossless (")


def test_check_reports_a_damaged_member_with_its_offset(tmp_path):
    pkg = package.read(rbfx_samples.sample_package(True))
    model = pkg.get("Models/Tentacle.mdl")
    pkg.put("Models/Tentacle.mdl", model[:300])
    pak = tmp_path / "bad.pak"
    pak.write_bytes(package.write(pkg))
    proc = run_batch("--keep-going", "check", pak)
    assert proc.returncode == 1
    bad = [line for line in proc.stdout.splitlines() if "Tentacle.mdl" in line]
    assert len(bad) == 1 and "error at offset" in bad[0], proc.stdout
    assert proc.stdout.count("lossless") == len(READABLE)  # the package and the other files


def test_check_damaged_package(tmp_path):
    data = bytearray(rbfx_samples.sample_package(True))
    data[9] ^= 1
    pak = tmp_path / "bad.pak"
    pak.write_bytes(bytes(data))
    proc = run_batch("check", pak)
    assert proc.returncode == 1
    assert "error at offset 8: package checksum" in proc.stdout
    assert proc.stderr.startswith(f"error: {pak}: offset 8")


def test_inspect_package_and_member(tmp_path):
    pak = tmp_path / "p.pak"
    pak.write_bytes(rbfx_samples.sample_package(True))
    proc = run_batch("inspect", pak, f"{pak}:Models/Tentacle.mdl", f"{pak}:Shaders/LitSolid.vs3")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc[0]["format"] == "urho3d.pak" and doc[0]["magic"] == "ULZ4"
    rows = {r["name"]: r for r in doc[0]["files"]}
    assert rows["Data/Big.bin"]["size"] == 100_000 and rows["Data/Big.bin"]["blocks"] == 4
    assert rows["Data/Empty.txt"]["size"] == 0
    assert rows[rbfx_samples.NON_ASCII_NAME]["kind"] == "model"
    assert doc[1]["magic"] == "UMD3" and doc[1]["version"] == 2
    assert doc[1]["morph_weights"] == [0.25, 0.75]
    assert doc[2]["model"] == 3 and doc[2]["type"] == "vertex"
    assert [p["name"] for p in doc[2]["parameters"]] == [
        "ModelViewProj",
        "SkinMatrices",
        "AmbientColor",
    ]


@pytest.mark.parametrize("flags", [(), ("--lz4",), ("--rbfx",), ("--lz4", "--rbfx")])
def test_pack_folder(tmp_path, flags):
    src = tmp_path / "src"
    for name, data in rbfx_samples.package_files():
        path = src / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    out = tmp_path / "out.pak"
    # pack is codec only: a bpy that fails on import must not matter
    (tmp_path / "fake").mkdir()
    (tmp_path / "fake" / "bpy.py").write_text("raise ImportError('no bpy here')\n")
    env = {"PYTHONPATH": str(tmp_path / "fake"), "PATH": "/usr/bin:/bin"}
    proc = run_batch("pack", src, out, *flags, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    pkg = package.read(out.read_bytes())
    magic = {(): b"UPAK", ("--lz4",): b"ULZ4", ("--rbfx",): b"RPAK"}.get(flags, b"RLZ4")
    assert pkg.magic == magic
    for name, data in rbfx_samples.package_files():
        assert pkg.get(name) == data
    assert f"wrote {out}: {magic.decode()}, 7 files" in proc.stdout


def test_pack_usage_errors(tmp_path):
    assert run_batch("pack", tmp_path / "missing", tmp_path / "o.pak").returncode == 2
    assert run_batch("pack", tmp_path, tmp_path / "o.zip").returncode == 2
