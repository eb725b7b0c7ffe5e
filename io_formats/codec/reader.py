"""Bounds-checked little-endian reader over bytes.

Every read checks the bytes that remain first, and every count that sizes an
allocation goes through :meth:`Reader.count`, so a lying header can never make
a codec allocate more than the file could hold.
"""

from __future__ import annotations

import struct

import numpy as np

from .errors import FormatError

_U8 = struct.Struct("<B")
_I8 = struct.Struct("<b")
_U16 = struct.Struct("<H")
_I16 = struct.Struct("<h")
_U32 = struct.Struct("<I")
_I32 = struct.Struct("<i")
_U64 = struct.Struct("<Q")
_I64 = struct.Struct("<q")
_F32 = struct.Struct("<f")
_F64 = struct.Struct("<d")


class Reader:
    """Sequential reader; ``pos`` is the offset of the next byte."""

    def __init__(self, data: bytes | bytearray | memoryview, pos: int = 0, end: int | None = None):
        self.data = data if isinstance(data, bytes) else bytes(data)
        self.pos = pos
        self.end = len(data) if end is None else end

    # -- positioning ---------------------------------------------------------
    @property
    def remaining(self) -> int:
        return self.end - self.pos

    def at_end(self) -> bool:
        return self.pos >= self.end

    def error(self, message: str, offset: int | None = None) -> FormatError:
        return FormatError(message, self.pos if offset is None else offset)

    def need(self, size: int, what: str = "data") -> None:
        """Fail unless ``size`` more bytes are there."""
        if size < 0 or size > self.end - self.pos:
            raise self.error(
                f"expected {size} bytes of {what}, but only {self.end - self.pos} remain"
            )

    def count(self, n: int, item_size: int, what: str) -> int:
        """Check that ``n`` items of at least ``item_size`` bytes can still follow."""
        if n < 0:
            raise self.error(f"negative {what} count {n}")
        if item_size > 0 and n * item_size > self.end - self.pos:
            raise self.error(
                f"{what} count {n} needs {n * item_size} bytes, only {self.end - self.pos} remain"
            )
        return n

    def sub(self, size: int, what: str = "block") -> Reader:
        """A reader over the next ``size`` bytes; this reader skips them."""
        self.need(size, what)
        sub = Reader(self.data, self.pos, self.pos + size)
        self.pos += size
        return sub

    def expect(self, magic: bytes, what: str = "magic") -> None:
        start = self.pos
        got = self.bytes(len(magic))
        if got != magic:
            raise self.error(f"bad {what}: expected {magic!r}, found {got!r}", start)

    # -- scalars ---------------------------------------------------------------
    def _unpack(self, st: struct.Struct, what: str):
        self.need(st.size, what)
        value = st.unpack_from(self.data, self.pos)[0]
        self.pos += st.size
        return value

    def u8(self) -> int:
        return self._unpack(_U8, "uint8")

    def i8(self) -> int:
        return self._unpack(_I8, "int8")

    def u16(self) -> int:
        return self._unpack(_U16, "uint16")

    def i16(self) -> int:
        return self._unpack(_I16, "int16")

    def u32(self) -> int:
        return self._unpack(_U32, "uint32")

    def i32(self) -> int:
        return self._unpack(_I32, "int32")

    def u64(self) -> int:
        return self._unpack(_U64, "uint64")

    def i64(self) -> int:
        return self._unpack(_I64, "int64")

    def f32(self) -> float:
        return self._unpack(_F32, "float32")

    def f32_exact(self) -> np.float32:
        """A float32 as a numpy scalar with its exact bits: a Python float would turn a
        signalling NaN quiet (:meth:`Writer.f32` writes the scalar back unchanged)."""
        self.need(4, "float32")
        value = np.frombuffer(self.data, "<f4", 1, self.pos)[0]
        self.pos += 4
        return value

    def f64(self) -> float:
        return self._unpack(_F64, "float64")

    def bool8(self) -> bool:
        return self.u8() != 0

    def bytes(self, n: int) -> bytes:
        self.need(n, "bytes")
        out = self.data[self.pos : self.pos + n]
        self.pos += n
        return out

    def rest(self) -> bytes:
        return self.bytes(self.end - self.pos)

    # -- arrays ----------------------------------------------------------------
    def array(self, dtype: np.dtype | str, shape: int | tuple[int, ...], what: str = "array"):
        """Read a little-endian numpy array (a copy, native byte order)."""
        dt = np.dtype(dtype).newbyteorder("<")
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        n = int(np.prod(shape, dtype=np.int64))
        if n < 0:
            raise self.error(f"negative {what} size")
        size = n * dt.itemsize
        self.need(size, what)
        arr = np.frombuffer(self.data, dtype=dt, count=n, offset=self.pos)
        self.pos += size
        return arr.astype(dt.newbyteorder("="), copy=True).reshape(shape)

    def floats(self, n: int, what: str = "floats") -> tuple[float, ...]:
        self.need(4 * n, what)
        out = struct.unpack_from(f"<{n}f", self.data, self.pos)
        self.pos += 4 * n
        return out

    # -- strings and variable-length integers ----------------------------------
    def cstring(self, encoding: str = "utf-8") -> str:
        """A NUL-terminated string (the NUL is consumed).

        Bytes that are not valid in ``encoding`` survive as surrogate escapes, so
        :meth:`Writer.cstring` writes them back unchanged.
        """
        return self.cstring_raw().decode(encoding, "surrogateescape")

    def cstring_raw(self) -> bytes:
        """A NUL-terminated string as raw bytes (the NUL is consumed)."""
        start = self.pos
        nul = self.data.find(b"\0", self.pos, self.end)
        if nul < 0:
            raise self.error("unterminated string: no NUL before the end", start)
        out = self.data[self.pos : nul]
        self.pos = nul + 1
        return out

    def uleb7(self) -> int:
        """.NET 7-bit encoded unsigned integer (low groups first, bit 7 = more)."""
        start = self.pos
        value = 0
        for shift in range(0, 35, 7):
            byte = self.u8()
            value |= (byte & 0x7F) << shift
            if not byte & 0x80:
                return value
        raise self.error("7-bit encoded integer longer than 5 bytes", start)

    def compact_int(self) -> int:
        """Signed compact integer: first byte has more-bit 7, sign bit 6, 6 value bits;
        later bytes have more-bit 7 and 7 value bits."""
        start = self.pos
        first = self.u8()
        value = first & 0x3F
        shift = 6
        more = first & 0x80
        while more:
            if shift > 62:
                raise self.error("compact integer too long", start)
            byte = self.u8()
            value |= (byte & 0x7F) << shift
            shift += 7
            more = byte & 0x80
        return -value if first & 0x40 else value
