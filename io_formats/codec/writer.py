"""Little-endian writer into a growing bytearray: the mirror of :class:`Reader`."""

from __future__ import annotations

import struct

import numpy as np


class Writer:
    def __init__(self) -> None:
        self.buf = bytearray()

    @property
    def pos(self) -> int:
        return len(self.buf)

    def getvalue(self) -> bytes:
        return bytes(self.buf)

    def _pack(self, fmt: str, value) -> None:
        self.buf += struct.pack(fmt, value)

    def u8(self, v: int) -> None:
        self._pack("<B", v)

    def i8(self, v: int) -> None:
        self._pack("<b", v)

    def u16(self, v: int) -> None:
        self._pack("<H", v)

    def i16(self, v: int) -> None:
        self._pack("<h", v)

    def u32(self, v: int) -> None:
        self._pack("<I", v)

    def i32(self, v: int) -> None:
        self._pack("<i", v)

    def u64(self, v: int) -> None:
        self._pack("<Q", v)

    def i64(self, v: int) -> None:
        self._pack("<q", v)

    def f32(self, v: float) -> None:
        if isinstance(v, np.float32):  # its exact bits (a signalling NaN stays one)
            self.buf += np.array(v, "<f4").tobytes()
        else:
            self._pack("<f", v)

    def f64(self, v: float) -> None:
        self._pack("<d", v)

    def bool8(self, v: bool) -> None:
        self.u8(1 if v else 0)

    def bytes(self, b: bytes | bytearray | memoryview) -> None:
        self.buf += b

    def floats(self, values) -> None:
        values = list(values)
        self.buf += struct.pack(f"<{len(values)}f", *values)

    def array(self, arr, dtype: np.dtype | str) -> None:
        """Write ``arr`` as little-endian ``dtype`` (C order)."""
        dt = np.dtype(dtype).newbyteorder("<")
        self.buf += np.ascontiguousarray(arr, dtype=dt).tobytes()

    def patch_u32(self, offset: int, v: int) -> None:
        struct.pack_into("<I", self.buf, offset, v)

    def cstring(self, s: str | bytes, encoding: str = "utf-8") -> None:
        raw = s if isinstance(s, bytes | bytearray) else s.encode(encoding, "surrogateescape")
        if b"\0" in raw:
            raise ValueError(f"string {s!r} contains a NUL byte")
        self.buf += raw + b"\0"

    def uleb7(self, v: int) -> None:
        if v < 0:
            raise ValueError("7-bit encoded integers are unsigned")
        while True:
            byte = v & 0x7F
            v >>= 7
            if v:
                self.u8(byte | 0x80)
            else:
                self.u8(byte)
                return

    def compact_int(self, v: int) -> None:
        mag = -v if v < 0 else v
        first = (mag & 0x3F) | (0x40 if v < 0 else 0)
        mag >>= 6
        if mag:
            first |= 0x80
        self.u8(first)
        while mag:
            byte = mag & 0x7F
            mag >>= 7
            self.u8(byte | (0x80 if mag else 0))
