"""Line records: straight curves keep only the key times Blender cannot give back."""

from __future__ import annotations

import struct
from dataclasses import replace

import numpy as np
import pytest

from rigport.io_formats.mrtk import convert as C
from rigport.io_formats.mrtk import keys as K
from rigport.io_formats.mrtk import line_records as L
from rigport.io_formats.mrtk import recording as R
from rigport.io_formats.mrtk.key_checks import constant_fields
from rigport.samples import mrtk as samples

FPS = 60.0


def _blender(plan: C.ImportPlan, fps: float = FPS) -> dict:
    """What an import leaves in Blender: each curve's keys and its stored record."""
    out = {}
    for item in plan.curves:
        co, hl, hr, interp = item.frames(fps)
        hl = co.copy() if hl is None else hl
        hr = co.copy() if hr is None else hr
        out[(item.target, item.data_path, item.index)] = C.BlenderCurve(
            co, hl, hr, interp, item.cycle_before, item.cycle_after, item.stored(co, fps)
        )
    return out


def _export(curves: dict, plan: C.ImportPlan, version=(1, 0), layout=R.FULL, markers=()):
    opts = C.ExportOptions(*version, layout, True, FPS)
    rec, _ = C.export_recording(curves, set(plan.roles), list(markers), opts)
    return rec


def _recorder(minutes: float = 0.1) -> R.Recording:
    return samples.recorder_recording(minutes=minutes)


def test_recorder_and_simple_curves_get_line_records_byte_exact() -> None:
    """Every curve with keys of MRTK's recorder file and of a 1.1 simple file is stored
    as a line record; its frame times miss some file times, kept by index; the export gives the
    file back byte for byte."""
    for rec, version, layout in (
        (_recorder(), (1, 0), R.FULL),
        (samples.sample_recording((1, 1), R.SIMPLE, keys=30), (1, 1), R.SIMPLE),
    ):
        data = R.write(rec)
        plan = C.import_recording(R.read(data))
        curves = _blender(plan)
        assert all(bc.record[:1] == L.TAG for bc in curves.values() if len(bc.co))
        assert R.write(_export(curves, plan, version, layout, rec.markers)) == data
    made = _blender(C.import_recording(_recorder())).values()
    kept = [L.unpack_line_record(bc.record) for bc in made]
    assert sum(len(r.index) for r in kept) > 0  # the game-loop times need some kept


def test_line_record_holds_a_few_bytes_per_kept_time() -> None:
    rec = _recorder()
    plan = C.import_recording(rec)
    item = plan.curves[0]
    co = item.frames(FPS)[0]
    data = item.stored(co, FPS)
    line = L.unpack_line_record(data)
    assert line is not None and line.count == len(item.source.keys)
    assert len(data) == 1 + 13 + 20 + 4 + 8 * len(line.index)
    assert len(line.index) < 0.2 * line.count
    t = item.source.keys["time"]
    back = (co[:, 0].astype(np.float64) / FPS).astype(np.float32)
    assert np.array_equal(np.flatnonzero(back != t), line.index)
    assert np.array_equal(line.times, t[line.index])


def test_curves_that_are_not_lines_keep_their_file_record() -> None:
    """Bezier keys, tangents that vary, values Blender would not give back: C/F records."""
    full = samples.sample_recording((1, 1), R.FULL, keys=12)
    plan = C.import_recording(full)
    assert all(
        item.stored(item.frames(FPS)[0], FPS)[:1] != L.TAG
        for item in plan.curves
        if item.source.keys.dtype == R.FULL_KEY and len(item.source.keys)
    )
    keys = _recorder().camera[3].keys.copy()
    keys["in_tangent"][5] = 0.25  # still straight (weights 0), but not one constant
    assert L.pack_line_record(R.Curve(8, 8, keys), *_frames(keys), constant_fields(keys)) is None
    keys = _recorder().camera[3].keys.copy()
    keys["value"].view("<i4")[3] = 0x7F800001  # a signalling NaN: float64 would quiet it
    with np.errstate(invalid="ignore"):
        co = _frames(keys, -1.0)[0]
    assert L.pack_line_record(R.Curve(8, 8, keys), co, FPS, -1.0, constant_fields(keys)) is None
    # the import's own negated values: a NaN among them is compared back too
    args = (R.Curve(8, 8, keys), co, FPS, -1.0, constant_fields(keys))
    assert L.pack_line_record(*args, copied=True) is None
    keys["value"][3] = -0.0  # no NaN: negated twice, every value comes back
    co = _frames(keys, -1.0)[0]
    args = (R.Curve(8, 8, keys), co, FPS, -1.0, constant_fields(keys))
    assert L.pack_line_record(*args, copied=True) == L.pack_line_record(*args) is not None


def _frames(keys: np.ndarray, sign: float = 1.0):
    co = K.unity_to_keyframes(keys, FPS, sign)[0]
    return co, FPS, sign


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_straight_edits_are_written_as_the_same_kind_of_keys(sign: float) -> None:
    """Moving and deleting keys of a straight curve: every key stays a recorder key, the
    untouched ones exactly as in the file (by index, or by frame once keys are gone)."""
    keys = _recorder().camera[0].keys
    c = R.Curve(8, 8, keys)
    co = K.unity_to_keyframes(keys, FPS, sign)[0]
    line = L.unpack_line_record(L.pack_line_record(c, co, FPS, sign, constant_fields(keys)))
    assert line is not None
    moved = co.copy()
    moved[10] += (0.25, 0.5)
    out = line.keys_for(moved, FPS, sign, R.FULL_KEY)
    same = np.ones(len(keys), bool)
    same[10] = False
    assert out[same].tobytes() == keys[same].tobytes()
    assert out["time"][10] == np.float32((moved[10, 0].astype(np.float64)) / FPS)
    assert out["value"][10] == np.float32(moved[10, 1].astype(np.float64) * sign)
    assert out["weighted_mode"][10] == 3 and not out["in_weight"][10]
    gone = np.delete(co, [0, 7, 8], axis=0)
    out = line.keys_for(gone, FPS, sign, R.FULL_KEY)
    assert out.tobytes() == np.delete(keys, [0, 7, 8]).tobytes()


def test_a_bezier_edit_rebuilds_with_the_file_times() -> None:
    rec = _recorder()
    data = R.write(rec)
    plan = C.import_recording(R.read(data))
    curves = _blender(plan)
    key = ("camera", "location", 0)
    bc = curves[key]
    interp = bc.interpolation.copy()
    interp[20] = K.BEZIER
    curves[key] = C.BlenderCurve(
        bc.co, bc.co - (1.0, 0.0), bc.co + (1.0, 0.0), interp, record=bc.record
    )
    back = _export(curves, plan)
    a, b = rec.camera[0].keys, back.camera[0].keys
    assert np.array_equal(a["time"], b["time"]) and np.array_equal(a["value"], b["value"])
    # rebuilt from Blender's keys: the Bezier key's sides carry its handles' one-frame reach
    assert b["out_weight"][20] != a["out_weight"][20]
    for other in range(1, 7):
        assert rec.camera[other] == back.camera[other]


def test_damaged_line_records_are_ignored() -> None:
    keys = _recorder().camera[0].keys
    data = L.pack_line_record(R.Curve(8, 8, keys), *_frames(keys), constant_fields(keys))
    assert data is not None and L.unpack_line_record(data) is not None
    head = 1 + 13
    n = struct.unpack_from("<I", data, head + 20)[0]
    bad_index = bytearray(data)
    struct.pack_into("<I", bad_index, head + 24, len(keys))  # past the last key
    bad_order = bytearray(data)
    if n > 1:
        struct.pack_into("<I", bad_order, head + 28, 0)  # indices must increase
    for bad in (data[:-1], data + b"\0", data[:10], bytes(bad_index), bytes(bad_order)):
        assert L.unpack_line_record(bad) is None
    bad_kind = bytearray(data)
    bad_kind[13] = 2
    assert L.unpack_line_record(bytes(bad_kind)) is None
    # an export whose record is damaged rebuilds the curve from Blender's keys
    plan = C.import_recording(R.read(R.write(_recorder())))
    curves = _blender(plan)
    key = ("camera", "location", 0)
    curves[key] = replace(curves[key], record=data[:-1])
    back = _export(curves, plan)
    assert len(back.camera[0].keys) == len(keys)


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda: (_recorder(), (1, 0), R.FULL), id="recorder"),
        pytest.param(
            lambda: (samples.sample_recording((1, 1), R.SIMPLE, keys=30), (1, 1), R.SIMPLE),
            id="simple",
        ),
    ],
)
def test_keys_later_write_the_same_bytes(make) -> None:
    """With ``keys_later`` the straight curves' keys are made while the file is written
    (callable chunks, each the bytes of one curve's keys); the file is the same, byte
    for byte, whether joined by ``write`` or taken chunk by chunk."""
    rec, version, layout = make()
    data = R.write(rec)
    plan = C.import_recording(R.read(data))
    curves = _blender(plan)
    opts = C.ExportOptions(*version, layout, True, FPS, keys_later=True)
    later, _ = C.export_recording(curves, set(plan.roles), list(rec.markers), opts)
    every = [c for _, c in [*later.float_curves(), *later.bool_curves()]]
    lazy = [c for c in every if isinstance(c.keys, R.KeysLater)]
    assert len(lazy) == sum(len(bc.co) > 0 for bc in curves.values()) > 0
    parts = R.write_parts(later)
    assert sum(callable(p) for p in parts) == len(lazy)
    assert b"".join(bytes(p() if callable(p) else p) for p in parts) == data
    assert R.write(later) == data


def test_keys_later_made_other_than_promised_are_refused() -> None:
    """Keys made late that are not the promised count (or dtype) stop the write."""
    good = np.zeros(3, R.FULL_KEY)
    assert len(R.KeysLater(3, R.FULL_KEY, lambda: good).keys()) == 3
    with pytest.raises(ValueError, match="made late"):
        R.KeysLater(4, R.FULL_KEY, lambda: good).keys()
    with pytest.raises(ValueError, match="made late"):
        R.KeysLater(3, R.SIMPLE_KEY, lambda: good).keys()
