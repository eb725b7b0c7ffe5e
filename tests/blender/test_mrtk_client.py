"""MRTK's own C# serializer (MRTK 2.x, under mono) against what RigPort writes.

Files MRTK writes (``write-sample``, ``write-markers``) are imported into
Blender and exported with default options; MRTK then loads both and says
they hold identical keyframes and markers (``compare``). Every layout the
exporter offers as readable by MRTK is loaded by MRTK's reader. The tests skip
with the reason when mono or the serializer's sources are missing.
"""

from __future__ import annotations

import numpy as np
import pytest

from rigport.io_formats.mrtk import recording as R
from rigport.samples import mrtk as samples
from rigport.tests.clients import run_mrtk

FPS = 60


def _mrtk(*args, version: str = "11") -> str:
    res = run_mrtk(*args, version=version)
    assert res.returncode == 0, f"MRTK {args[0]} failed ({res.returncode}):\n{res.stdout}"
    return res.stdout


def _import(bpy, path) -> None:
    bpy.context.scene.render.fps = FPS
    bpy.context.scene.render.fps_base = 1.0
    assert bpy.ops.import_anim.mrtk_input(filepath=str(path)) == {"FINISHED"}


def _export(bpy, path, **options) -> None:
    assert bpy.ops.export_anim.mrtk_input(filepath=str(path), **options) == {"FINISHED"}


def _through_blender(bpy, tmp_path, src, **options):
    _import(bpy, src)
    out = tmp_path / f"{src.stem}-out.bin"
    _export(bpy, out, **options)
    return out


@pytest.mark.parametrize("version", ["11", "10"])
@pytest.mark.parametrize("seed", [1, 7])
def test_mrtk_sample_comes_back_as_mrtk_wrote_it(blank_blend, tmp_path, version, seed) -> None:
    """Every key kind MRTK writes, wrap modes Once and Default, a 155-byte marker name."""
    bpy = blank_blend
    src = tmp_path / f"sample{version}-{seed}.bin"
    _mrtk("write-sample", src, seed, version=version)
    out = _through_blender(bpy, tmp_path, src)
    report = _mrtk("compare", src, out, version=version)
    assert "RESULT: MRTK reads identical keyframes" in report, report
    assert out.read_bytes() == src.read_bytes()


def test_long_marker_names_survive(blank_blend, tmp_path) -> None:
    bpy = blank_blend
    names = ["a" * 63, "b" * 64, "ü" * 40, "long " * 30, "short"]
    src = tmp_path / "markers.bin"
    _mrtk("write-markers", src, *names)
    out = _through_blender(bpy, tmp_path, src)
    report = _mrtk("compare", src, out)
    assert "RESULT: MRTK reads identical keyframes" in report, report
    assert [m.name for m in R.read(out.read_bytes()).markers] == names


def _key_count(rec: R.Recording) -> int:
    return sum(len(c.keys) for _, c in [*rec.float_curves(), *rec.bool_curves()])


@pytest.mark.parametrize(
    "version,layout",
    [((1, 1), R.SIMPLE), ((1, 0), R.FULL)],
    ids=["v11_simple", "v10"],
)
def test_mrtk_reads_the_default_export(blank_blend, tmp_path, version, layout) -> None:
    """Our recordings in MRTK's layouts, imported and exported with defaults: MRTK loads
    them with every key and marker, and the file is the original, byte for byte."""
    bpy = blank_blend
    rec = samples.sample_recording(version, layout, keys=10)
    src = tmp_path / "ours.bin"
    src.write_bytes(R.write(rec))
    out = _through_blender(bpy, tmp_path, src)
    assert out.read_bytes() == src.read_bytes()
    info = _mrtk("info", out, version="10" if version == (1, 0) else "11")
    assert f"keys={_key_count(rec)} markers={len(rec.markers)}" in info, info


def test_recording_made_in_blender_exports_what_mrtk_reads(blank_blend, tmp_path) -> None:
    """Objects with no import behind them (picked by name): the default is 1.1 (MRTK)."""
    bpy = blank_blend
    rec = samples.sample_recording((1, 1), R.FULL, hands=False, gaze=False, keys=8)
    src = tmp_path / "ours.bin"
    src.write_bytes(R.write(rec))
    _import(bpy, src)
    cam = next(o for o in bpy.data.objects if o.get("_mrtk_role") == "camera")
    for coll in bpy.data.collections:
        del coll["_mrtk_meta"]
    out = tmp_path / "made.bin"
    _export(bpy, out, camera_object=cam.name)
    back = R.read(out.read_bytes())
    assert back.version == (1, 1) and back.layout == R.SIMPLE
    info = _mrtk("info", out)
    assert f"keys={_key_count(back)}" in info, info


@pytest.mark.parametrize("choice", ["V11_SIMPLE", "V10"])
def test_mrtk_reads_every_readable_layout(blank_blend, tmp_path, choice) -> None:
    bpy = blank_blend
    src = tmp_path / "sample.bin"
    _mrtk("write-sample", src, 3)
    out = _through_blender(bpy, tmp_path, src, version=choice)
    harness = "10" if choice == "V10" else "11"
    info = _mrtk("info", out, version=harness)
    assert "MRTK loaded" in info
    ours = R.read(out.read_bytes())
    assert ours.version == ((1, 0) if choice == "V10" else (1, 1))
    # MRTK's 1.1 file's keys are straight segments: 1.0's full keys hold them exactly
    a = R.read(src.read_bytes())
    for (name, c), (_, d) in zip(a.float_curves(), ours.float_curves(), strict=False):
        assert np.array_equal(c.keys["time"], d.keys["time"]), name
        assert np.array_equal(c.keys["value"], d.keys["value"]), name


@pytest.mark.parametrize("how", ["chosen", "as imported"])
def test_full_keyframe_export_warns_that_mrtk_cannot_read_it(blank_blend, tmp_path, how) -> None:
    """The documented 1.1 layout stays an option (and the default for a file that came in
    it); MRTK 2.x's reader fails on it, as the option's label and the warning say."""
    bpy = blank_blend
    src = tmp_path / "sample.bin"
    if how == "chosen":
        _mrtk("write-sample", src, 2)
    else:
        src.write_bytes(R.write(samples.sample_recording((1, 1), R.FULL, keys=6)))
    _import(bpy, src)
    out = tmp_path / "full.bin"
    options = {"version": "V11_FULL"} if how == "chosen" else {}
    from rigport.operators.mrtk.build import recording_meta
    from rigport.operators.mrtk.exporter import RecordingExportOptions, write_recording
    from rigport.operators.mrtk.extract import recording_collections, roles_in

    coll = recording_collections(bpy.context.scene)[0]
    chosen = RecordingExportOptions(**options)
    warnings = write_recording(
        bpy.context, str(out), roles_in(coll), recording_meta(coll), chosen
    ).warnings
    assert any("MRTK 2.x cannot read" in w for w in warnings), warnings
    assert R.read(out.read_bytes()).layout == R.FULL
    res = run_mrtk("info", out)
    assert res.returncode != 0 and "OutOfMemoryException" in res.stdout
    items = bpy.ops.export_anim.mrtk_input.get_rna_type().properties["version"].enum_items
    assert "not MRTK" in items["V11_FULL"].name


def test_mrtk_recorder_file_comes_back_byte_for_byte(blank_blend, tmp_path) -> None:
    """A 1.0 recording MRTK writes of linear recorder keys (one minute at 60 Hz): the same
    bytes on every Blender version, and MRTK reads identical keyframes."""
    bpy = blank_blend
    src = tmp_path / "long10.bin"
    _mrtk("write-long", src, 60, 60, version="10")
    out = _through_blender(bpy, tmp_path, src)
    assert out.read_bytes() == src.read_bytes()
    report = _mrtk("compare", src, out, version="10")
    assert "RESULT: MRTK reads identical keyframes" in report, report
