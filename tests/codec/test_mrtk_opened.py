"""MRTK recordings read from an open file (``recording.opened``): the structure at once,
each curve's keys when the import reaches it. What they give is what :func:`read` of
the same bytes gives, and a file that changes underneath gives a FormatError."""

from __future__ import annotations

import os
import struct
import threading

import numpy as np
import pytest

from rigport.io_formats.codec import FileReader, FormatError, Reader
from rigport.io_formats.mrtk import convert
from rigport.io_formats.mrtk import line_records as L
from rigport.io_formats.mrtk import recording as R
from rigport.samples import mrtk as samples

CASES = {
    "v10": lambda: samples.sample_recording((1, 0)),
    "v11_full": lambda: samples.sample_recording((1, 1), R.FULL),
    "v11_simple": lambda: samples.sample_recording((1, 1), R.SIMPLE),
    "v11_empty_curves": lambda: samples.sample_recording(keys=0),
    "v10_single_keys": lambda: samples.sample_recording((1, 0), keys=1),
    "recorder": lambda: samples.recorder_recording(0.05, 60.0),
    "recorder_nudged": lambda: _nudged(samples.recorder_recording(0.05, 60.0)),
}


def _nudged(rec: R.Recording, curve: int = 2) -> R.Recording:
    """``rec`` with every fifth time of a camera curve one float32 step later (the import
    plan takes camera curve 2 right after curve 0, which is keyed alike)."""
    t = rec.camera[curve].keys["time"]
    t[5:-1:5] = np.nextafter(t[5:-1:5], np.float32(np.inf))
    return rec


def _curves(rec: R.Recording) -> list[R.Curve]:
    return [c for _, c in rec.float_curves()] + [c for _, c in rec.bool_curves()]


@pytest.mark.parametrize("case", sorted(CASES))
def test_opened_gives_what_read_gives(tmp_path, case) -> None:
    data = R.write(CASES[case]())
    path = tmp_path / "take.bin"
    path.write_bytes(data)
    eager = R.read(data)
    with R.opened(str(path)) as rec:
        assert (rec.version, rec.layout, rec.markers) == (
            eager.version,
            eager.layout,
            eager.markers,
        )
        lazy = _curves(rec)
        assert all(isinstance(c.keys, R.KeysLater) for c in lazy)
        assert R.write(rec) == data  # written back from the file, curve by curve
        for mine, theirs in zip(lazy, _curves(eager), strict=True):
            got = mine.loaded()
            assert got.keys.tobytes() == theirs.keys.tobytes()
            assert (got.offset, got.ordered, got.constant) == (
                theirs.offset,
                theirs.ordered,
                theirs.constant,
            )
            assert got.times.tobytes() == np.ascontiguousarray(theirs.keys["time"]).tobytes()


@pytest.mark.parametrize("case", ["v10", "v11_full", "v11_simple", "recorder", "recorder_nudged"])
def test_streamed_plan_keeps_the_same_bytes(tmp_path, case) -> None:
    """Keys converted from the contiguous times of a loaded curve are the bits the
    eager path gives, and so are the records an export rebuilds the file from."""
    data = R.write(CASES[case]())
    path = tmp_path / "take.bin"
    path.write_bytes(data)
    eager = convert.import_recording(R.read(data))
    with R.opened(str(path)) as rec:
        plan = convert.import_recording(rec)
        for fps in (60.0, 29.97):
            for planned, ref in zip(plan.curves, eager.curves, strict=True):
                c = plan.loaded(planned)
                co, hl, hr, interp = c.frames(fps)
                co2, hl2, hr2, interp2 = ref.frames(fps)
                assert co.tobytes() == co2.tobytes() and interp.tobytes() == interp2.tobytes()
                assert (hl is None) == (hl2 is None)
                stored = c.stored(co, fps, copied=True, kept=plan.kept)
                assert stored == ref.stored(co2, fps, copied=True)
    assert plan.warnings == eager.warnings


def test_curves_keyed_alike_share_their_times(tmp_path) -> None:
    """A curve keyed at the times of the one loaded before it shares its times array and
    order check; one a float32 step apart in some keys has its own, and its line record
    keeps its own times."""
    path = tmp_path / "take.bin"
    path.write_bytes(R.write(_nudged(samples.recorder_recording(0.05, 60.0))))
    eager = R.read(path.read_bytes())
    with R.opened(str(path)) as rec:
        loading = R.Loading()
        first = rec.camera[0].loaded(loading)
        alike = rec.camera[1].loaded(loading)
        nudged = rec.camera[2].loaded(loading)
    assert loading.last is nudged
    assert alike.times is first.times and alike.ordered
    assert nudged.times is not alike.times
    assert nudged.times.tobytes() == np.ascontiguousarray(eager.camera[2].keys["time"]).tobytes()
    assert (nudged.ordered, nudged.constant) == (eager.camera[2].ordered, eager.camera[2].constant)
    kept = L.KeptTimes()
    assert kept(first.times, 60.0) is kept(alike.times, 60.0)  # found once
    assert kept(nudged.times, 60.0) == L.kept_times(nudged.times, 60.0)
    assert kept(nudged.times, 60.0) != kept(first.times, 60.0)  # the test bites
    assert kept(first.times, 29.97) == L.kept_times(first.times, 29.97)


def test_a_curve_keyed_alike_with_one_field_apart_is_checked_whole(tmp_path) -> None:
    """The curve after one whose times the tail buffer holds: the same times, but one
    key's out weight apart. It shares the times and its constant fields are found
    as the eager read finds them."""
    rec = samples.recorder_recording(0.05, 60.0)
    rec.camera[1].keys["out_weight"][20] = 0.5
    path = tmp_path / "take.bin"
    path.write_bytes(R.write(rec))
    eager = R.read(path.read_bytes())
    with R.opened(str(path)) as opened:
        loading = R.Loading()
        first = opened.camera[0].loaded(loading)
        assert loading.tails.holds(first.times)
        apart = opened.camera[1].loaded(loading)
        after = opened.camera[2].loaded(loading)
    assert apart.times is first.times and after.times is first.times
    for got, want in zip((first, apart, after), eager.camera, strict=False):
        assert (got.ordered, got.constant) == (want.ordered, want.constant)
    assert "out_weight" not in apart.constant and "out_weight" in after.constant


def test_times_are_shared_only_with_a_curve_in_order() -> None:
    keys = samples.recorder_recording(0.01, 60.0).camera[0].keys
    like = R.Curve(8, 8, keys, ordered=False, times=np.ascontiguousarray(keys["time"]))
    later = R.Curve(8, 8, R.KeysLater(len(keys), keys.dtype, keys.copy), offset=100)
    loading = R.Loading()
    loading.last = like
    got = later.loaded(loading)
    assert got.times is not like.times and got.ordered
    short = R.Curve(8, 8, R.KeysLater(len(keys) - 1, keys.dtype, lambda: keys[:-1].copy()))
    assert short.loaded(loading).times is not got.times


def test_recorder_keys_give_line_records(tmp_path) -> None:
    """MRTK's recorder keys stay line records (not whole file curves) when streamed."""
    path = tmp_path / "take.bin"
    path.write_bytes(R.write(CASES["recorder"]()))
    with R.opened(str(path)) as rec:
        plan = convert.import_recording(rec)
        for planned in plan.curves:
            c = plan.loaded(planned)
            co = c.frames(60.0)[0]
            assert c.stored(co, 60.0, copied=True)[:1] == b"L"


def test_a_file_shortened_after_it_was_opened(tmp_path) -> None:
    data = R.write(samples.sample_recording((1, 0), keys=40))
    path = tmp_path / "take.bin"
    path.write_bytes(data)
    with R.opened(str(path)) as rec:
        os.truncate(path, len(data) // 2)
        curves = _curves(rec)
        curves[0].loaded()  # still there
        with pytest.raises(FormatError, match="the file ends after .*changed while it was read"):
            for c in curves:
                c.loaded()


def test_bad_keys_are_found_when_loaded(tmp_path) -> None:
    """A weighted mode out of range is the same error, at the same offset, when the
    curve is loaded as when :func:`read` reads the whole file."""
    data = bytearray(R.write(samples.sample_recording((1, 0), keys=6)))
    first = 8 + 8 + 12  # magic, version, the first curve's wraps and count
    struct.pack_into("<i", data, first + 2 * 28 + 24, 7)  # its third key's mode
    path = tmp_path / "take.bin"
    path.write_bytes(bytes(data))
    with pytest.raises(FormatError) as eager:
        R.read(bytes(data))
    with R.opened(str(path)) as rec:
        with pytest.raises(FormatError) as lazy:
            rec.camera[0].loaded()
    assert lazy.value.message == eager.value.message == "weighted mode 7 of key 2 is not 0..3"
    assert lazy.value.offset == eager.value.offset == first + 2 * 28 + 24


def test_unordered_times_are_found_when_loaded(tmp_path) -> None:
    rec = samples.sample_recording((1, 1), R.SIMPLE, keys=5)
    rec.gaze[4].keys["time"][2] = np.nan
    path = tmp_path / "take.bin"
    path.write_bytes(R.write(rec))
    with R.opened(str(path)) as opened:
        plan = convert.import_recording(opened)  # the structure is fine
        with pytest.raises(FormatError, match="gaze curve 4: key 2 time nan is not finite"):
            for c in plan.curves:
                plan.loaded(c)


def test_structure_errors_come_at_once(tmp_path) -> None:
    data = R.write(samples.sample_recording((1, 0), keys=4))
    path = tmp_path / "take.bin"
    path.write_bytes(data + b"\0")
    with pytest.raises(FormatError, match="after the marker list") as err:
        with R.opened(str(path)):
            pass
    assert err.value.offset == len(data)


def test_a_missing_file_is_named(tmp_path) -> None:
    path = tmp_path / "gone.bin"
    with pytest.raises(FormatError, match="cannot read file") as err:
        with R.opened(str(path)):
            pass
    assert err.value.path == str(path)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_a_pipe_is_read_whole(tmp_path) -> None:
    data = R.write(samples.sample_recording((1, 1), R.SIMPLE, keys=5))
    pipe = tmp_path / "take.bin"
    os.mkfifo(pipe)
    writer = threading.Thread(target=pipe.write_bytes, args=(data,))
    writer.start()
    try:
        with R.opened(str(pipe)) as rec:
            assert all(isinstance(c.keys, np.ndarray) for c in _curves(rec))
            assert R.write(rec) == data
    finally:
        writer.join(5)


def test_file_reader_reads_what_reader_reads(tmp_path) -> None:
    data = struct.pack("<BhIqfd", 7, -3, 40000, -(2**40), 1.5, 2.25) + b"name\0tail\x85\x01"
    path = tmp_path / "bytes.bin"
    path.write_bytes(data)
    with open(path, "rb") as fh:
        for r in (Reader(data), FileReader(fh)):
            assert (r.u8(), r.i16(), r.u32(), r.i64(), r.f32(), r.f64()) == (
                7,
                -3,
                40000,
                -(2**40),
                1.5,
                2.25,
            )
            assert r.cstring() == "name"
            sub = r.sub(4, "tail")
            assert (sub.bytes(4), sub.remaining, r.pos) == (b"tail", 0, len(data) - 2)
            assert (r.uleb7(), r.at_end()) == (133, True)
            with pytest.raises(FormatError, match="expected 1 bytes"):
                r.u8()


def test_file_reader_arrays_and_short_reads(tmp_path) -> None:
    keys = np.arange(12, dtype="<f4")
    path = tmp_path / "keys.bin"
    path.write_bytes(b"head" + keys.tobytes())
    with open(path, "rb") as fh:
        r = FileReader(fh)
        assert r.array_at(4, np.dtype("<f4"), 12).tobytes() == keys.tobytes()
        assert len(r.array_at(4, np.dtype("<f4"), 0)) == 0
        with pytest.raises(FormatError, match="lies beyond the end") as err:
            r.array_at(8, np.dtype("<f4"), 12)
        assert err.value.offset == 8
        os.truncate(path, 20)
        with pytest.raises(FormatError, match="48 bytes of keys, but the file ends after 16"):
            r.array_at(4, np.dtype("<f4"), 12, "keys")
        with pytest.raises(FormatError, match="changed while it was read"):
            r.pos = 30
            r.u32()


def test_file_reader_strings(tmp_path) -> None:
    """C strings longer than one read, and one the file ends in."""
    path = tmp_path / "names.bin"
    path.write_bytes(b"x" * 300 + b"\0" + b"open")
    with open(path, "rb") as fh:
        r = FileReader(fh)
        assert r.cstring_raw() == b"x" * 300 and r.pos == 301
        with pytest.raises(FormatError, match="unterminated string") as err:
            r.cstring_raw()
        assert err.value.offset == r.pos == 301
