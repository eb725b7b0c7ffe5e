"""MRTK input recordings: lossless byte round trips, layout detection and bad input.

There are no real recordings in the corpus: every file here is built by our
own writer (samples/mrtk.py) from the specification, plus a few
assembled byte by byte with struct so the reader is not only checked against
its own writer.
"""

from __future__ import annotations

import itertools
import struct
import time
import tracemalloc

import numpy as np
import pytest

from rigport.io_formats import registry
from rigport.io_formats.codec import FormatError
from rigport.io_formats.mrtk import recording as R
from rigport.io_formats.mrtk.formats import summarize
from rigport.samples import mrtk as samples

HEADER_11 = struct.pack("<Qii", R.MAGIC, 1, 1)


def _all_cases() -> dict[str, bytes]:
    cases = {
        "v10": R.write(samples.sample_recording((1, 0))),
        "v11_full": R.write(samples.sample_recording((1, 1), R.FULL)),
        "v11_simple": R.write(samples.sample_recording((1, 1), R.SIMPLE)),
        "v11_full_empty_curves": R.write(samples.sample_recording(layout=R.FULL, keys=0)),
        "v11_no_markers": R.write(samples.sample_recording(markers=0)),
        "v10_single_keys": R.write(samples.sample_recording((1, 0), keys=1)),
    }
    for layout in (R.FULL, R.SIMPLE):
        for flags in itertools.product((False, True), repeat=3):
            rec = samples.sample_recording((1, 1), layout, *flags, keys=5, seed=sum(flags))
            cases[f"v11_{layout}_{''.join('1' if f else '0' for f in flags)}"] = R.write(rec)
    return cases


CASES = _all_cases()


@pytest.mark.parametrize("name", sorted(CASES))
def test_byte_round_trip(name: str) -> None:
    data = CASES[name]
    rec = R.read(data)
    assert R.write(rec) == data
    assert R.read(R.write(rec)) == rec


@pytest.mark.parametrize("layout", [R.FULL, R.SIMPLE])
def test_layout_is_detected_from_the_whole_file(layout: str) -> None:
    rec = samples.sample_recording((1, 1), layout)
    back = R.read(R.write(rec))
    assert back.layout == layout
    assert back == rec
    dtype = R.FULL_KEY if layout == R.FULL else R.SIMPLE_KEY
    assert all(c.keys.dtype == dtype for _, c in back.float_curves())
    assert all(c.keys.dtype == R.SIMPLE_KEY for _, c in back.bool_curves())


def test_generated_content_covers_every_case() -> None:
    rec = R.read(CASES["v11_full"])
    keys = np.concatenate([c.keys for _, c in rec.float_curves()])
    assert set(np.unique(keys["weighted_mode"])) == {0, 1, 2, 3}
    assert np.isinf(keys["out_tangent"]).any() and np.isinf(keys["in_tangent"]).any()
    assert (keys["in_tangent"] != keys["out_tangent"]).any()  # broken tangents
    wraps = {w for _, c in rec.float_curves() for w in (c.pre_wrap, c.post_wrap)}
    assert wraps == set(R.WRAP_MODES)
    empty = [n for n, c in rec.float_curves() if not len(c.keys)]
    assert len(empty) == 2 * 3 * 7  # joints None, ThumbDistalJoint, PinkyTip on both hands
    assert any(ord(ch) > 127 for m in rec.markers for ch in m.name)
    assert len(list(rec.float_curves())) == 7 + 2 * 27 * 7 + 6


def test_hand_assembled_file_reads_field_by_field() -> None:
    """A 1.1 full file written with struct, independent of our writer."""
    key = struct.pack("<ffffffi", 0.5, 2.0, 1.5, -np.inf, 0.25, 0.75, 3)
    body = bytearray(HEADER_11 + bytes([0, 1, 1]))  # no camera, hands, gaze
    for _ in range(4):  # hand state bool curves: one key (time, value)
        body += struct.pack("<iii", 8, 8, 1) + struct.pack("<ff", 0.25, 1.0)
    for _ in range(2 * 27 * 7):
        body += struct.pack("<iii", 2, 4, 1) + key
    for _ in range(6):
        body += struct.pack("<iii", 0, 1, 0)
    name = "Взгляд".encode()
    body += struct.pack("<i", 1) + struct.pack("<f", 1.25) + bytes([len(name)]) + name
    data = bytes(body)
    rec = R.read(data)
    assert (rec.major, rec.minor, rec.layout) == (1, 1, R.FULL)
    assert rec.camera is None and rec.hands is not None and rec.gaze is not None
    c = rec.hands.left[3][4]
    assert (c.pre_wrap, c.post_wrap) == (2, 4)
    k = c.keys[0]
    assert (k["time"], k["value"], k["in_tangent"], k["out_tangent"]) == (0.5, 2.0, 1.5, -np.inf)
    assert (k["in_weight"], k["out_weight"], k["weighted_mode"]) == (0.25, 0.75, 3)
    assert rec.hands.pinch_right.keys.tolist() == [(0.25, 1.0)]
    assert rec.gaze[5].keys.size == 0 and rec.gaze[5].post_wrap == 1
    assert rec.markers == [R.Marker(1.25, "Взгляд")]
    assert R.write(rec) == data


def test_simple_layout_by_hand() -> None:
    data = (
        HEADER_11
        + bytes([1, 0, 0])
        + b"".join(
            struct.pack("<iii", 8, 8, 2) + struct.pack("<ffff", 0, 1, 1, 3) for _ in range(7)
        )
        + struct.pack("<i", 0)
    )
    rec = R.read(data)
    assert rec.layout == R.SIMPLE
    assert rec.camera[6].keys.tolist() == [(0.0, 1.0), (1.0, 3.0)]
    assert R.write(rec) == data


def test_long_marker_name_and_invalid_utf8_survive() -> None:
    rec = samples.sample_recording(keys=2)
    rec.markers = [
        R.Marker(0.5, "x" * 300),
        R.Marker(1.0, b"bad \xff\xfe name".decode("utf-8", "surrogateescape")),
    ]
    data = R.write(rec)
    assert R.write(R.read(data)) == data
    assert b"\xac\x02" + b"x" * 300 in data  # 7-bit length 300


def test_summary_and_registry() -> None:
    fmt = registry.format_of("take.bin", CASES["v11_simple"][:64])
    assert fmt.key == "mrtk.input"
    s = summarize(R.read(CASES["v11_simple"]))
    assert s["version"] == "1.1" and s["layout"] == "simple" and s["eye_gaze"]
    assert s["float_curves"] == 7 + 2 * 27 * 7 + 6 and s["empty_curves"] == 42


# --------------------------------------------------------------------------
# bad input


def _error(data: bytes) -> FormatError:
    with pytest.raises(FormatError) as info:
        R.read(data)
    return info.value


def test_not_a_recording() -> None:
    err = _error(b"BINARYBLOB" + bytes(40))
    assert err.offset == 0 and "not an MRTK input animation recording" in err.message
    assert _error(b"\xc6\x42").offset == 0


@pytest.mark.parametrize("version", [(1, 2), (2, 0), (7, 1)])
def test_newer_versions_are_a_clear_error(version) -> None:
    err = _error(struct.pack("<Qii", R.MAGIC, *version) + bytes(3) + struct.pack("<i", 0))
    assert err.offset == 8 and "newer than 1.1" in err.message


def test_unknown_old_version() -> None:
    err = _error(struct.pack("<Qii", R.MAGIC, 0, 9))
    assert err.offset == 8 and "supported: 1.0 and 1.1" in err.message


def test_bad_fields_name_their_offset() -> None:
    data = bytearray(CASES["v11_full_111"])
    bad = bytearray(data)
    bad[16] = 2  # camera flag
    err = _error(bytes(bad))
    assert "presence flag" in err.message and err.offset == 16
    bad = bytearray(data)
    struct.pack_into("<i", bad, 19, 3)  # camera position x pre-wrap: not a WrapMode
    assert "wrap mode 3" in _error(bytes(bad)).message
    bad = bytearray(data)
    struct.pack_into("<i", bad, 19 + 12 + 24, 9)  # first key's weighted mode
    err = _error(bytes(bad))
    # both layouts fail: the message gives each one's reason and offset
    assert "weighted mode 9 of key 0" in err.message and f"offset {19 + 12 + 24}" in err.message
    bad = bytearray(data)
    struct.pack_into("<i", bad, 19 + 12 + 28 + 24, -1)  # second key's: negative
    err = _error(bytes(bad))
    assert "weighted mode -1 of key 1" in err.message and err.offset == 19 + 12 + 52
    bad = bytearray(data)
    n = struct.unpack_from("<i", bad, 19 + 8)[0]
    for i in range(n):  # every key of the curve the same bad mode: the first is named
        struct.pack_into("<i", bad, 19 + 12 + 28 * i + 24, 5)
    err = _error(bytes(bad))
    assert f"offset {19 + 12 + 24}: weighted mode 5 of key 0" in err.message
    err = _error(bytes(data) + b"\0")
    assert "after the marker list" in err.message and err.offset == len(data)


def test_huge_counts_fail_before_allocating() -> None:
    data = bytearray(CASES["v11_full_111"])
    struct.pack_into("<i", data, 19 + 8, 0x7FFFFFF0)
    tracemalloc.start()
    t0 = time.perf_counter()
    err = _error(bytes(data))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert "keyframe count" in err.message and err.offset == 19 + 12
    assert peak < 4 * len(data) + 1_000_000 and time.perf_counter() - t0 < 1.0
    struct.pack_into("<i", data, 19 + 8, -1)
    assert "negative keyframe count" in _error(bytes(data)).message


def test_marker_name_past_the_end() -> None:
    rec = samples.sample_recording(keys=2, markers=1)
    data = R.write(rec)
    name_len_at = len(data) - len(rec.markers[0].name.encode()) - 1
    bad = bytearray(data)
    bad[name_len_at] = 0x7F
    err = _error(bytes(bad))
    assert "marker name" in err.message or "marker" in err.message


@pytest.mark.parametrize("name", ["v10", "v11_full", "v11_simple"])
def test_every_truncation_is_a_format_error(name: str) -> None:
    data = CASES[name]
    cuts = sorted(set(range(0, 64)) | set(range(64, len(data), max(1, len(data) // 400))))
    for n in cuts:
        with pytest.raises(FormatError):
            R.read(data[:n])


@pytest.mark.parametrize("name", ["v10", "v11_full", "v11_simple"])
def test_random_damage_is_an_error_or_a_lossless_file(name: str) -> None:
    data = CASES[name]
    rng = np.random.default_rng(11)
    errors = 0
    for _ in range(400):
        bad = bytearray(data)
        for at in rng.integers(0, len(bad), rng.integers(1, 4)):
            bad[at] = int(rng.integers(0, 256))
        try:
            rec = R.read(bytes(bad))
        except FormatError as err:
            assert err.offset is not None and 0 <= err.offset <= len(bad)
            errors += 1
            continue
        assert R.write(rec) == bytes(bad)
    assert errors > 0


def test_writer_refuses_impossible_recordings() -> None:
    rec = samples.sample_recording((1, 0), keys=2)
    rec.gaze = [R.Curve.empty()] * 6
    with pytest.raises(ValueError):
        R.write(rec)
    rec = samples.sample_recording((1, 1), R.SIMPLE, keys=2)
    rec.layout = R.FULL
    with pytest.raises(ValueError):
        R.write(rec)
