"""MRTK conversions keep Bezier keys where the layout holds them and sample only the rest.

The 1.1 layout MRTK writes and reads (time and value per key, straight
segments) cannot hold a Bezier segment: the export samples it at the
recording's own rate (its keys' median step, at least the frame rate), keeps
only every 2**k-th sample where the lines stay within the tolerance, and says
how many keys it wrote and how far the lines are from the curves. MRTK's own
serializer (under mono) reads every converted file, and its evaluation of the
source's and the converted file's curves (``eval``, Unity's key semantics)
agrees within that reported distance. The 1.0 and 1.1 full layouts hold
Bezier keys: they are written as the file had them.
"""

from __future__ import annotations

import re
import struct

import numpy as np
import pytest

from rigport.io_formats.mrtk import recording as R
from rigport.samples import mrtk as samples
from rigport.tests.clients import run_mrtk
from rigport.tests.support import run_batch

FPS = 60


def _mrtk(*args, version: str = "11") -> str:
    res = run_mrtk(*args, version=version)
    assert res.returncode == 0, f"MRTK {args[0]} failed ({res.returncode}):\n{res.stdout}"
    return res.stdout


def _convert(bpy, src, out, version: str):
    """Import ``src`` at 60 fps and write it in ``version``: the export's Result."""
    from rigport.operators.mrtk.build import recording_meta
    from rigport.operators.mrtk.exporter import RecordingExportOptions, write_recording
    from rigport.operators.mrtk.extract import recording_collections, roles_in

    bpy.context.scene.render.fps = FPS
    bpy.context.scene.render.fps_base = 1.0
    assert bpy.ops.import_anim.mrtk_input(filepath=str(src)) == {"FINISHED"}
    coll = recording_collections(bpy.context.scene)[0]
    options = RecordingExportOptions(version=version)
    return write_recording(bpy.context, str(out), roles_in(coll), recording_meta(coll), options)


def _keys(rec: R.Recording) -> int:
    return sum(len(c.keys) for _, c in [*rec.float_curves(), *rec.bool_curves()])


def _written(summary: str) -> tuple[int, float]:
    """(keys written, largest distance) from the export's sentence."""
    keys = re.match(r"([\d,]+) keys written", summary)
    assert keys, summary
    far = re.search(r"at most ([\d.e+-]+) from the curves", summary)
    return int(keys.group(1).replace(",", "")), float(far.group(1)) if far else 0.0


def _string(data: bytes, at: int) -> tuple[str, int]:
    """A .NET BinaryWriter string (7-bit encoded length, UTF-8) at ``at``."""
    n = shift = 0
    while True:
        b = data[at]
        at += 1
        n |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            break
    return data[at : at + n].decode(), at + n


def _evaluated(path, version: str, tmp_path, samples_: int = 2000) -> dict[str, np.ndarray]:
    """MRTK's ``eval``: per curve, (time, value) at ``samples_ + 1`` uniform times over its
    keys (the first rows), then at its keys and between them."""
    out = tmp_path / f"{path.stem}.eval"
    _mrtk("eval", path, out, samples_, version=version)
    data = out.read_bytes()
    at, curves = 0, {}
    while at < len(data):
        name, at = _string(data, at)
        _pre, _post, n = struct.unpack_from("<iii", data, at)
        at += 12
        rows = np.frombuffer(data, [("t", "<f8"), ("v", "<f8"), ("out", "?")], n, at)
        at += n * rows.dtype.itemsize
        curves[name] = rows[~rows["out"]]
    return curves


def test_bezier_recording_converted_to_mrtk_11_is_sampled_at_its_rate(
    blank_blend, tmp_path
) -> None:
    """MRTK's own 1.0 sample (weighted and unweighted Bezier keys, steps): what the
    conversion wrote is what it says, MRTK reads it, and the curves agree."""
    bpy = blank_blend
    src = tmp_path / "sample10.bin"
    _mrtk("write-sample", src, 3, version="10")
    out = tmp_path / "sample11.bin"
    done = _convert(bpy, src, out, "V11_SIMPLE")
    a, b = R.read(src.read_bytes()), R.read(out.read_bytes())
    assert b.version == (1, 1) and b.layout == R.SIMPLE
    written, far = _written(done.summary)
    assert written == _keys(b)
    assert "sampled at 60 per second" in done.summary, done.summary
    # sampled every 1e-4 s this was 85 times the keys (259,424 of 3,058)
    assert _keys(b) < 12 * _keys(a), (_keys(a), _keys(b))
    assert f"keys={_keys(b)}" in _mrtk("info", out)
    # the keys themselves are exact; every sample is at most one a frame
    for (name, c), (_, d) in zip(a.float_curves(), b.float_curves(), strict=True):
        assert np.isin(c.keys["time"], d.keys["time"]).all(), name
        kept = np.isin(d.keys["time"], c.keys["time"])
        assert np.array_equal(d.keys["value"][kept], c.keys["value"]), name
    source, converted = _evaluated(src, "10", tmp_path), _evaluated(out, "11", tmp_path)
    assert source.keys() == converted.keys()
    worst = 0.0
    for name, rows in source.items():
        uniform = rows[:2001]
        assert np.array_equal(uniform["t"], converted[name]["t"][:2001]), name
        # skip the float32 step before a hold's end, where a line cannot follow a step
        t = converted[name]["t"][2001:]
        near = np.min(np.abs(uniform["t"][:, None] - t[None, :]), axis=1) < 1e-6
        diff = np.abs(uniform["v"] - converted[name]["v"][:2001])[~near]
        worst = max(worst, float(diff.max(initial=0.0)))
    assert 0.0 < worst <= 1.1 * far + 1e-5, (worst, far)


def test_recording_at_60_hz_converts_without_a_sample(blank_blend, tmp_path) -> None:
    """Smooth Bezier keys one a frame (as a recorder takes them): the 1.1 file MRTK reads
    has the same keys, and the lines are within the default tolerance of the curves."""
    bpy = blank_blend
    rec = samples.long_recording(minutes=0.1, rate=60.0, layout=R.FULL)
    src = tmp_path / "smooth.bin"
    src.write_bytes(R.write(rec))
    out = tmp_path / "smooth11.bin"
    done = _convert(bpy, src, out, "V11_SIMPLE")
    back = R.read(out.read_bytes())
    written, far = _written(done.summary)
    assert written == _keys(back) == _keys(rec)
    assert far <= 1e-4, done.summary
    for (name, c), (_, d) in zip(rec.float_curves(), back.float_curves(), strict=True):
        assert np.array_equal(c.keys["time"], d.keys["time"]), name
        assert np.array_equal(c.keys["value"], d.keys["value"]), name
    assert f"keys={_keys(back)}" in _mrtk("info", out)


@pytest.mark.parametrize("version", ["V10", "V11_FULL"])
def test_full_layouts_keep_the_bezier_keys(blank_blend, tmp_path, version) -> None:
    bpy = blank_blend
    src = tmp_path / "sample10.bin"
    _mrtk("write-sample", src, 3, version="10")
    out = tmp_path / "full.bin"
    done = _convert(bpy, src, out, version)
    a, b = R.read(src.read_bytes()), R.read(out.read_bytes())
    assert _written(done.summary) == (_keys(a), 0.0)
    assert "sampled" not in done.summary
    for (name, c), (_, d) in zip(a.float_curves(), b.float_curves(), strict=True):
        assert c.keys.tobytes() == d.keys.tobytes(), name
    if version == "V10":
        assert out.read_bytes() == src.read_bytes()


def test_batch_convert_names_the_version_and_counts_the_keys(tmp_path) -> None:
    src = tmp_path / "sample10.bin"
    _mrtk("write-sample", src, 3, version="10")
    out = tmp_path / "sample11.bin"
    res = run_batch("convert", src, out, "--mrtk-version", "V11_SIMPLE", "--jobs", "1")
    assert res.returncode == 0, res.stdout + res.stderr
    back = R.read(out.read_bytes())
    assert (back.version, back.layout) == ((1, 1), R.SIMPLE)
    assert f"{_keys(back):,} keys written" in res.stdout, res.stdout
    assert "Bezier segments sampled at" in res.stdout
    assert f"keys={_keys(back)}" in _mrtk("info", out)
