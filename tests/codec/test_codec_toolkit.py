"""The shared byte-level toolkit: Reader, Writer, FormatError and quantisation."""

from __future__ import annotations

import math
import struct

import numpy as np
import pytest

from rigport.io_formats.codec import FormatError, Reader, Writer
from rigport.io_formats.codec import quantize as q

SCALARS = [
    ("u8", "<B", [0, 1, 127, 128, 255]),
    ("i8", "<b", [-128, -1, 0, 1, 127]),
    ("u16", "<H", [0, 1, 0x7FFF, 0x8000, 0xFFFF]),
    ("i16", "<h", [-32768, -1, 0, 32767]),
    ("u32", "<I", [0, 1, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF]),
    ("i32", "<i", [-(2**31), -1, 0, 2**31 - 1]),
    ("u64", "<Q", [0, 1, 2**63, 2**64 - 1]),
    ("i64", "<q", [-(2**63), -1, 0, 2**63 - 1]),
    ("f32", "<f", [0.0, -0.0, 1.5, -2.25, 3.4028234663852886e38, 1.401298464324817e-45, math.inf]),
    ("f64", "<d", [0.0, -0.0, math.pi, -1e300, 5e-324, -math.inf]),
]


@pytest.mark.parametrize(("method", "fmt", "values"), SCALARS, ids=[s[0] for s in SCALARS])
def test_scalar_round_trip(method, fmt, values):
    w = Writer()
    for v in values:
        getattr(w, method)(v)
    data = w.getvalue()
    assert data == b"".join(struct.pack(fmt, v) for v in values)  # little-endian layout
    r = Reader(data)
    back = [getattr(r, method)() for _ in values]
    assert r.at_end() and r.remaining == 0
    for v, b in zip(values, back, strict=True):
        assert b == v and math.copysign(1, b) == math.copysign(1, v)


@pytest.mark.parametrize(("method", "fmt", "values"), SCALARS, ids=[s[0] for s in SCALARS])
def test_scalar_short_read_names_offset(method, fmt, values):
    size = struct.calcsize(fmt)
    r = Reader(b"\0" * 3 + b"\0" * (size - 1))
    r.pos = 3
    with pytest.raises(FormatError) as info:
        getattr(r, method)()
    assert type(info.value) is FormatError
    assert info.value.offset == 3
    assert "offset 3 (0x3)" in str(info.value)
    assert r.pos == 3  # nothing consumed


def test_f32_nan_and_bool():
    w = Writer()
    w.f32(math.nan)
    w.bool8(True)
    w.bool8(False)
    r = Reader(w.getvalue())
    assert math.isnan(r.f32())
    assert r.bool8() is True and r.bool8() is False
    assert Reader(b"\x02").bool8() is True


def test_bytes_rest_and_inputs_of_every_kind():
    for data in (b"abcdef", bytearray(b"abcdef"), memoryview(b"abcdef")):
        r = Reader(data)
        assert r.bytes(2) == b"ab"
        assert r.rest() == b"cdef"
        assert r.at_end()
    with pytest.raises(FormatError):
        Reader(b"abc").bytes(4)
    with pytest.raises(FormatError):
        Reader(b"abc").bytes(-1)


def test_floats():
    w = Writer()
    w.floats([1.0, 2.5, -3.0])
    r = Reader(w.getvalue())
    assert r.floats(3) == (1.0, 2.5, -3.0)
    with pytest.raises(FormatError):
        Reader(w.getvalue()).floats(4)


@pytest.mark.parametrize("dtype", ["<u1", "<i2", "<u2", "<i4", "<u4", "<f4", "<f8", "<i8"])
def test_array_round_trip(dtype):
    rng = np.random.default_rng(1)
    arr = (rng.random((5, 3)) * 100).astype(dtype)
    w = Writer()
    w.u8(7)
    w.array(arr, dtype)
    data = w.getvalue()
    assert data[1:] == arr.astype(np.dtype(dtype).newbyteorder("<")).tobytes()
    r = Reader(data)
    r.u8()
    back = r.array(dtype, (5, 3))
    assert back.shape == (5, 3) and np.array_equal(back, arr)
    assert back.dtype.isnative and back.flags.writeable and back.flags.c_contiguous
    back[0, 0] = 0  # a copy: the source bytes are untouched
    assert Reader(data, 1).array(dtype, (5, 3))[0, 0] == arr[0, 0]


def test_array_structured_and_big_endian_source_written_little_endian():
    w = Writer()
    w.array(np.array([1, 2], ">u4"), "<u4")
    assert w.getvalue() == b"\1\0\0\0\2\0\0\0"
    dt = np.dtype([("i", "<u4"), ("p", "<f4", (3,))])
    rec = np.zeros(2, dt)
    rec["i"] = [3, 4]
    rec["p"] = [[1, 2, 3], [4, 5, 6]]
    w = Writer()
    w.array(rec, dt)
    back = Reader(w.getvalue()).array(dt, 2)
    assert back.tobytes() == rec.tobytes()


def test_array_refuses_short_data_with_offset():
    r = Reader(b"\0" * 10, 2)
    with pytest.raises(FormatError) as info:
        r.array("<u4", 3, "weights")
    assert info.value.offset == 2
    assert "weights" in info.value.message
    with pytest.raises(FormatError):
        Reader(b"\0" * 10).array("<u4", (2, -1))


def test_cstrings():
    w = Writer()
    w.cstring("Bip01 L Hand")
    w.cstring("")
    w.cstring("Кость ✓")
    r = Reader(w.getvalue())
    assert [r.cstring(), r.cstring(), r.cstring()] == ["Bip01 L Hand", "", "Кость ✓"]
    assert r.at_end()


@pytest.mark.parametrize(
    "raw",
    [b"\xff\xfe bone", b"caf\xe9", b"\xc3", b"ok \xed\xa0\x80 surrogate", bytes(range(1, 256))],
)
def test_cstring_non_utf8_bytes_survive(raw):
    r = Reader(raw + b"\0tail")
    text = r.cstring()
    assert r.pos == len(raw) + 1
    w = Writer()
    w.cstring(text)
    assert w.getvalue() == raw + b"\0"
    assert Reader(raw + b"\0").cstring_raw() == raw
    assert Reader(raw + b"\0").cstring("latin-1") == raw.decode("latin-1")


def test_cstring_errors():
    with pytest.raises(FormatError) as info:
        Reader(b"abc\0def", 4).cstring()
    assert info.value.offset == 4 and "NUL" in info.value.message
    # the NUL must be inside the reader's window
    with pytest.raises(FormatError):
        Reader(b"abc\0", 0, 3).cstring()
    with pytest.raises(ValueError):
        Writer().cstring("a\0b")


@pytest.mark.parametrize(
    ("value", "encoded"),
    [
        (0, b"\x00"),
        (1, b"\x01"),
        (127, b"\x7f"),
        (128, b"\x80\x01"),
        (300, b"\xac\x02"),
        (16383, b"\xff\x7f"),
        (16384, b"\x80\x80\x01"),
        (2**31 - 1, b"\xff\xff\xff\xff\x07"),
    ],
)
def test_uleb7(value, encoded):
    w = Writer()
    w.uleb7(value)
    assert w.getvalue() == encoded
    r = Reader(encoded)
    assert r.uleb7() == value and r.at_end()


def test_uleb7_errors():
    with pytest.raises(FormatError) as info:
        Reader(b"\x01\x80\x80\x80\x80\x80\x01", 1).uleb7()
    assert info.value.offset == 1
    with pytest.raises(FormatError):
        Reader(b"\x80\x80").uleb7()  # truncated
    with pytest.raises(ValueError):
        Writer().uleb7(-1)


@pytest.mark.parametrize(
    ("value", "encoded"),
    [
        (0, b"\x00"),
        (1, b"\x01"),
        (63, b"\x3f"),
        (64, b"\x80\x01"),
        (1156, b"\x84\x12"),
        (-1, b"\x41"),
        (-63, b"\x7f"),
        (-64, b"\xc0\x01"),
        (-1156, b"\xc4\x12"),
        (2**31 - 1, None),
        (-(2**31), None),
        (2**62, None),
    ],
)
def test_compact_int(value, encoded):
    w = Writer()
    w.compact_int(value)
    data = w.getvalue()
    if encoded is not None:
        assert data == encoded
    if -63 <= value <= 63:
        assert len(data) == 1
    r = Reader(data + b"\x55")
    assert r.compact_int() == value
    assert r.pos == len(data)


def test_compact_int_one_byte_range():
    for v in range(64):
        w = Writer()
        w.compact_int(v)
        assert w.getvalue() == bytes([v])


def test_compact_int_errors():
    with pytest.raises(FormatError):
        Reader(b"\x80").compact_int()  # says more follows, nothing does
    with pytest.raises(FormatError) as info:
        Reader(b"\x00" + b"\xff" * 20, 1).compact_int()  # never ends
    assert info.value.offset == 1


def test_count_refuses_lying_counts():
    r = Reader(b"\0" * 20, 4)
    assert r.count(4, 4, "bone") == 4
    assert r.count(0, 1000, "bone") == 0
    for n, size in ((5, 4), (17, 1), (2**31 - 1, 94), (2**32 - 1, 4), (2**64, 1)):
        with pytest.raises(FormatError) as info:
            r.count(n, size, "bone")
        assert info.value.offset == 4
        assert "bone" in info.value.message and str(n) in info.value.message
    with pytest.raises(FormatError):
        r.count(-1, 4, "bone")
    assert r.pos == 4  # count() reads nothing


def test_need_sub_and_expect():
    r = Reader(b"HEAD" + bytes(range(10)))
    r.expect(b"HEAD")
    sub = r.sub(4, "chunk")
    assert r.pos == 8 and (sub.pos, sub.end) == (4, 8)
    assert sub.bytes(4) == bytes(range(4))
    with pytest.raises(FormatError) as info:
        sub.u8()  # the parent still has bytes, the sub-reader does not
    assert info.value.offset == 8
    with pytest.raises(FormatError):
        r.sub(7)
    with pytest.raises(FormatError) as info:
        Reader(b"NOPE....").expect(b"HEAD", "file magic")
    assert info.value.offset == 0 and "file magic" in info.value.message
    with pytest.raises(FormatError):
        Reader(b"").need(1)
    with pytest.raises(FormatError):
        Reader(b"abc").need(-1)


def test_format_error_text():
    err = FormatError("expected 4 bytes", 1156)
    assert err.offset == 1156
    assert str(err) == "offset 1156 (0x484): expected 4 bytes"
    assert isinstance(err, ValueError)
    assert str(err.with_path("a/b.mdl")) == "a/b.mdl: offset 1156 (0x484): expected 4 bytes"
    assert err.args == (str(err),)
    assert str(FormatError("no offset")) == "no offset"
    assert str(FormatError("at start", 0)) == "offset 0 (0x0): at start"
    assert Reader(b"abc", 2).error("boom").offset == 2


def test_writer_position_and_patch():
    w = Writer()
    w.u32(0)
    w.cstring("x")
    assert w.pos == 6
    w.patch_u32(0, 0xDEADBEEF)
    assert w.getvalue() == b"\xef\xbe\xad\xdex\0"
    w.bytes(memoryview(b"zz"))
    assert w.getvalue().endswith(b"zz")


# --------------------------------------------------------------------------
# quantisation
# --------------------------------------------------------------------------
@pytest.mark.parametrize("total", [1, 3, 255, 256, 65535])
def test_normalize_weights_to_sum(total):
    rng = np.random.default_rng(total)
    w = rng.random((1000, 4)) * (rng.random((1000, 4)) > 0.3)
    w[:5] = 0  # rows with no weight stay zero
    w[5] = [1, 1, 1, 0]
    out = q.normalize_weights_to_sum(w, total)
    assert out.dtype.kind == "i" and out.shape == w.shape
    live = w.sum(axis=1) > 0
    assert not live[:5].any() and live.sum() > 900
    assert np.array_equal(out.sum(axis=1), np.where(live, total, 0))
    assert np.all(out >= 0)
    assert np.all(out[w == 0] == 0)
    ideal = w[live] * total / w[live].sum(axis=1, keepdims=True)
    assert np.abs(out[live] - ideal).max() < 1.0  # largest remainder: within one step


def test_normalize_weights_ties_and_exact():
    assert q.normalize_weights_to_sum(np.array([[1.0, 1, 1]]), 255).tolist() == [[85, 85, 85]]
    assert q.normalize_weights_to_sum(np.array([[1.0, 1, 1]]), 256).sum() == 256
    assert q.normalize_weights_to_sum(np.array([[0.25, 0.75, 0, 0]]), 100).tolist() == [
        [25, 75, 0, 0]
    ]


@pytest.mark.parametrize("bits", [8, 16])
def test_unorm_round_trip(bits):
    top = (1 << bits) - 1
    x = np.linspace(0, 1, 1001)
    back = q.dequantize_unorm(q.quantize_unorm(x, bits), bits)
    assert np.abs(back - x).max() <= 0.5 / top + 1e-12
    assert q.quantize_unorm(np.array([-0.5, 0, 1, 2]), bits).tolist() == [0, 0, top, top]
    qs = np.arange(top + 1)
    assert np.array_equal(q.quantize_unorm(q.dequantize_unorm(qs, bits), bits), qs)


@pytest.mark.parametrize("bits", [8, 16])
def test_snorm_round_trip(bits):
    top = (1 << (bits - 1)) - 1
    x = np.linspace(-1, 1, 1001)
    back = q.dequantize_snorm(q.quantize_snorm(x, bits), bits)
    assert np.abs(back - x).max() <= 0.5 / top + 1e-12
    assert q.quantize_snorm(np.array([-2, -1, 0, 1, 2]), bits).tolist() == [-top, -top, 0, top, top]
    assert q.dequantize_snorm(np.array([32767]), 16)[0] == 1.0  # Unigine: short / 32767


def test_box_quantisation():
    lo = np.array([-1.0, 0.0, 5.0])
    size = np.array([2.0, 10.0, 0.0])  # a zero-size axis is allowed
    x = np.array([[-1.0, 0.0, 5.0], [1.0, 10.0, 5.0], [0.3, 2.5, 5.0]])
    qv = q.quantize_box(x, lo, size)
    assert qv[0].tolist() == [0, 0, 0] and qv[1].tolist() == [65535, 65535, 0]
    back = q.dequantize_box(qv, lo, size)
    assert np.abs(back - x).max() <= (size.max() / 65535) / 2 + 1e-12
    assert np.array_equal(q.dequantize_box(np.array([0, 65535]), 2.0, 3.0), [2.0, 5.0])
