"""Bounds-checked little-endian readers: over bytes, and over an open file.

Every read checks the bytes that remain first, and every count that sizes an
allocation goes through :meth:`Reader.count`, so a lying header can never make
a codec allocate more than the file could hold.
"""

from __future__ import annotations

import io
import struct
from typing import BinaryIO

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

    def _window(self, size: int, what: str) -> tuple[bytes, int]:
        """The ``size`` bytes at ``pos`` (checked to be there) as a buffer and the
        offset they start at in it; ``pos`` does not move."""
        self.need(size, what)
        return self.data, self.pos

    # -- scalars ---------------------------------------------------------------
    def _unpack(self, st: struct.Struct, what: str):
        buf, at = self._window(st.size, what)
        self.pos += st.size
        return st.unpack_from(buf, at)[0]

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
        buf, at = self._window(4, "float32")
        self.pos += 4
        return np.frombuffer(buf, "<f4", 1, at)[0]

    def f64(self) -> float:
        return self._unpack(_F64, "float64")

    def bool8(self) -> bool:
        return self.u8() != 0

    def bytes(self, n: int) -> bytes:
        buf, at = self._window(n, "bytes")
        self.pos += n
        return buf[at : at + n]

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
        buf, at = self._window(size, what)
        arr = np.frombuffer(buf, dtype=dt, count=n, offset=at)
        self.pos += size
        return arr.astype(dt.newbyteorder("="), copy=True).reshape(shape)

    def floats(self, n: int, what: str = "floats") -> tuple[float, ...]:
        buf, at = self._window(4 * n, what)
        self.pos += 4 * n
        return struct.unpack_from(f"<{n}f", buf, at)

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


class FileReader(Reader):
    """A :class:`Reader` over an open binary file that reads only the bytes asked
    for, where they are: a codec walks a large file's structure without holding
    it, and reads its bulk arrays later with :meth:`array_at`, one at a time.

    Offsets are the file's own. A file that another program shortens after it
    was opened gives a FormatError when a read comes up short, never a crash.
    """

    def __init__(self, fh: BinaryIO, pos: int = 0, end: int | None = None):
        self.fh = fh
        self.data = b""
        self.pos = pos
        self.end = fh.seek(0, io.SEEK_END) if end is None else end

    def _read_at(self, offset: int, size: int, what: str) -> bytes:
        try:
            self.fh.seek(offset)
            out = self.fh.read(size)
        except OSError as exc:
            raise FormatError(f"cannot read {what}: {exc.strerror or exc}", offset) from exc
        if len(out) != size:
            raise self._shortened(offset, size, len(out), what)
        return out

    def _shortened(self, offset: int, size: int, got: int, what: str) -> FormatError:
        return FormatError(
            f"expected {size} bytes of {what}, but the file ends after {got}: it changed "
            "while it was read",
            offset,
        )

    def _window(self, size: int, what: str) -> tuple[bytes, int]:
        self.need(size, what)
        return self._read_at(self.pos, size, what), 0

    def sub(self, size: int, what: str = "block") -> FileReader:
        self.need(size, what)
        sub = FileReader(self.fh, self.pos, self.pos + size)
        self.pos += size
        return sub

    def cstring_raw(self) -> bytes:
        start = self.pos
        parts = []
        while self.pos < self.end:
            chunk = self._read_at(self.pos, min(256, self.end - self.pos), "string")
            nul = chunk.find(b"\0")
            if nul >= 0:
                parts.append(chunk[:nul])
                self.pos += nul + 1
                return b"".join(parts)
            parts.append(chunk)
            self.pos += len(chunk)
        self.pos = start
        raise self.error("unterminated string: no NUL before the end", start)

    def array_at(self, offset: int, dtype: np.dtype, n: int, what: str = "array") -> np.ndarray:
        """``n`` items of ``dtype`` at ``offset`` (within this reader's end), read
        straight into a new array."""
        size = n * dtype.itemsize
        if n < 0 or offset < 0 or offset + size > self.end:
            raise FormatError(f"{what} of {size} bytes lies beyond the end", offset)
        out = np.empty(n, dtype)
        view = memoryview(out.view(np.uint8))
        got = 0
        try:
            self.fh.seek(offset)
            while got < size:
                step = self.fh.readinto(view[got:])
                if not step:
                    raise self._shortened(offset, size, got, what)
                got += step
        except OSError as exc:
            raise FormatError(f"cannot read {what}: {exc.strerror or exc}", offset) from exc
        return out
