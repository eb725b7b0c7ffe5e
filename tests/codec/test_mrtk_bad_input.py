"""Hostile MRTK recordings: exact bits in scalar fields, FormatError for the rest."""

from __future__ import annotations

import json
import struct

from rigport.io_formats.mrtk import convert, recording
from rigport.io_formats.mrtk.formats import summarize
from rigport.samples import mrtk as samples

SNAN = struct.pack("<I", 0x7F800001)
SENTINEL = 1234.5678  # a float32 value no sample file holds by chance


def test_signalling_nan_marker_time_survives():
    """A marker time is a float32: a signalling NaN comes back with its exact bits, and
    the summary and the import plan still get plain floats."""
    rec = samples.sample_recording(keys=3, markers=3)
    rec.markers[1].time = SENTINEL
    data = recording.write(rec)
    mark = struct.pack("<f", SENTINEL)
    assert data.count(mark) == 1
    data = data.replace(mark, SNAN)
    back = recording.read(data)
    assert recording.write(back) == data
    json.dumps(summarize(back))
    plan = convert.import_recording(back, True)
    assert all(type(m.time) is float for m in plan.markers)
