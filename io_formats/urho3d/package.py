"""Urho3D and rbfx resource packages (``.pak``): lossless read and write.

Four layouts:

* ``UPAK`` / ``ULZ4`` (Urho3D): magic, file count, package checksum, then the
  file list (name, offset, size, checksum), then the file data, then a uint32
  holding the package size (so a package appended to a program can be found
  from the end).
* ``RPAK`` / ``RLZ4`` (rbfx): magic, file count, package checksum, a uint32
  version and a uint64 offset of the file list, which follows the data.

``ULZ4``/``RLZ4`` store each file as blocks of at most 32 KiB: uint16 unpacked
size, uint16 packed size, an LZ4 block. Checksums are 32-bit SDBM hashes of
the unpacked bytes, per file and over all files in list order; they are
checked on read and computed on write.

Lossless: the stored (compressed) bytes of every file, any bytes between the
files and the position of empty files are kept, so ``write(read(b)) == b``.
A file whose content is replaced is compressed afresh with LZ4 HC, as the
engines' own package tools do.
"""

from __future__ import annotations

import bisect
import os
from dataclasses import dataclass, field

import numpy as np

from ..codec import FormatError, Reader, Writer
from ..codec.files import write_atomic

UPAK = b"UPAK"
ULZ4 = b"ULZ4"
RPAK = b"RPAK"
RLZ4 = b"RLZ4"
MAGICS = (UPAK, ULZ4, RPAK, RLZ4)
BLOCK_SIZE = 32768
SDBM_FACTOR = 65599  # h = c + (h << 6) + (h << 16) - h  ==  h * 65599 + c (mod 2**32)
_RBFX_HEADER = 24  # magic, count, checksum, version, uint64 list offset
_URHO_HEADER = 12
_MIN_ENTRY = 13  # an empty name's NUL and three uint32
_HASH_CHUNK = 1 << 20


def _lz4_block():
    try:
        import lz4.block
    except ImportError:  # the extension ships lz4 as a wheel; a bare checkout may lack it
        return None
    return lz4.block


def _require_lz4(what: str):
    block = _lz4_block()
    if block is None:
        raise FormatError(f"{what} needs the 'lz4' Python module, which is not installed")
    return block


_POWERS: list[np.ndarray] = []


def _powers() -> np.ndarray:
    """65599**k mod 2**32 for k = 0 .. _HASH_CHUNK - 1 (uint32 arithmetic wraps)."""
    if not _POWERS:
        p = np.full(_HASH_CHUNK, SDBM_FACTOR, np.uint32)
        p[0] = 1
        _POWERS.append(np.cumprod(p, dtype=np.uint32))
    return _POWERS[0]


def sdbm(data: bytes, h: int = 0) -> int:
    """The SDBM hash of ``data`` continuing from ``h`` (vectorised, exact mod 2**32)."""
    powers = _powers()
    view = np.frombuffer(data, np.uint8)
    with np.errstate(over="ignore"):
        for start in range(0, len(view), _HASH_CHUNK):
            chunk = view[start : start + _HASH_CHUNK].astype(np.uint32)
            n = len(chunk)
            part = int(np.sum(chunk * powers[:n][::-1], dtype=np.uint32))
            scale = int(powers[n - 1]) * SDBM_FACTOR
            h = (h * scale + part) & 0xFFFFFFFF
    return h


@dataclass
class Entry:
    """One file of a package.

    ``stored`` is the file's bytes as they lie in the package (the LZ4 blocks
    of a compressed package); ``None`` means "encode ``data`` afresh".
    ``offset`` is where the file lay when read. An empty file has no data, so
    its offset is kept as read while the package is unchanged, and otherwise
    follows ``anchor``: the number of non-empty files whose data came before it.
    """

    name: str
    data: bytes
    stored: bytes | None = None
    offset: int | None = None
    blocks: int = 0  # LZ4 blocks when read (for summaries)
    anchor: int | None = None

    def __setattr__(self, key: str, value: object) -> None:
        if key == "name":  # every naming, the first included, makes packages' indexes stale
            global _namings
            _namings += 1
        object.__setattr__(self, key, value)


# how many times any Entry's name was set: part of Package._lookup's key
_namings = 0


@dataclass
class Package:
    magic: bytes
    entries: list[Entry] = field(default_factory=list)
    version: int = 0  # rbfx only
    order: list[int] | None = None  # directory indices of the non-empty files in data order
    gaps: dict[int, bytes] = field(default_factory=dict)  # bytes before the k-th stored file
    tail: bytes = b""  # bytes after the last file's data (before the list or the size)
    size_trailer: bool = True  # the uint32 package size at the end (Urho3D writes it)
    # find()'s lookup, built for the entry list as it was (see _lookup)
    _index: tuple | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def compressed(self) -> bool:
        return self.magic in (ULZ4, RLZ4)

    @property
    def rbfx(self) -> bool:
        return self.magic in (RPAK, RLZ4)

    def names(self) -> list[str]:
        return [e.name for e in self.entries]

    def find(self, name: str) -> Entry | None:
        """The entry called ``name``; as the engine does on Windows, a case-insensitive
        match when there is no exact one. ``\\`` and ``/`` are the same separator."""
        want = name.replace("\\", "/")
        low = want.lower()
        exact, folded = self._lookup()
        hit = exact.get(want)
        if hit is not None and hit.name.replace("\\", "/") == want:
            return hit
        hit = folded.get(low)
        if hit is not None and want not in exact and hit.name.replace("\\", "/").lower() == low:
            return hit
        # not there, or the index is stale (an entry renamed): every entry, in order
        for e in self.entries:
            if e.name.replace("\\", "/") == want:
                return e
        for e in self.entries:
            if e.name.replace("\\", "/").lower() == low:
                return e
        return None

    def _lookup(self) -> tuple[dict[str, Entry], dict[str, Entry]]:
        """The first entry of each name, exact and case-folded: one dictionary
        look-up per ``find`` instead of a pass over every entry (a package of
        1,000 animations read its members in quadratic time). Built again when
        the entry list is another or has another length, or any entry was named
        since; :meth:`find` checks every answer's name and looks through the list
        when there is none (an entry put in the list's place of another)."""
        key = (id(self.entries), len(self.entries), _namings)
        if self._index is None or self._index[0] != key:
            exact: dict[str, Entry] = {}
            folded: dict[str, Entry] = {}
            for e in self.entries:
                norm = e.name.replace("\\", "/")
                exact.setdefault(norm, e)
                folded.setdefault(norm.lower(), e)
            self._index = (key, exact, folded)
        return self._index[1], self._index[2]

    def get(self, name: str) -> bytes:
        e = self.find(name)
        if e is None:
            raise FormatError(f"the package has no file {name!r}")
        return e.data

    def put(self, name: str, data: bytes) -> Entry:
        """Replace the content of ``name`` (kept in place) or append a new file."""
        e = self.find(name)
        if e is None:
            e = Entry(name, bytes(data))
            exact, folded = self._lookup()
            self.entries.append(e)
            norm = name.replace("\\", "/")
            exact.setdefault(norm, e)
            folded.setdefault(norm.lower(), e)
            self._index = ((id(self.entries), len(self.entries), _namings), exact, folded)
            if self.order is not None:
                self.order = None  # new files: lay the data out afresh, in list order
                self.gaps, self.tail = {}, b""
        else:
            e.data, e.stored = bytes(data), None
        return e

    def remove(self, name: str) -> None:
        e = self.find(name)
        if e is None:
            raise FormatError(f"the package has no file {name!r}")
        self.entries.remove(e)
        self.order, self.gaps, self.tail = None, {}, b""


def new_package(compressed: bool = False, rbfx: bool = False) -> Package:
    magic = (RLZ4 if compressed else RPAK) if rbfx else (ULZ4 if compressed else UPAK)
    return Package(magic, size_trailer=not rbfx)


# --------------------------------------------------------------------------
# Reading


_Row = tuple[str, int, int, int, int]  # name, offset, size, checksum, where the row's offset is
_Span = tuple[int, int, int]  # start, end of a file's stored bytes, its directory index


def read(data: bytes) -> Package:
    """Parse a whole package; checksums, blocks and offsets are all checked."""
    r = Reader(data)
    magic = r.bytes(4) if r.remaining >= 4 else r.rest()
    if magic not in MAGICS:
        raise FormatError(
            f"not an Urho3D package: magic {magic!r}, expected UPAK, ULZ4, RPAK or RLZ4", 0
        )
    pkg = Package(magic)
    count = r.u32()
    checksum_at = r.pos
    checksum = r.u32()
    if pkg.rbfx:
        rows, data_start, data_end = _read_rbfx_list(r, data, pkg, count)
    else:
        rows, data_start, data_end = _read_urho_list(r, data, pkg, count)
    spans = _read_entries(pkg, data, rows, data_start, data_end)
    total = 0
    for e in pkg.entries:
        total = sdbm(e.data, total)
    if total != checksum:
        raise FormatError(
            f"package checksum is 0x{checksum:08X}, the files hash to 0x{total:08X}", checksum_at
        )
    _keep_layout(pkg, data, spans, data_start, data_end)
    return pkg


def _read_rbfx_list(
    r: Reader, data: bytes, pkg: Package, count: int
) -> tuple[list[_Row], int, int]:
    """rbfx's file list, at the offset its header gives after the data; the data's span."""
    pkg.version = r.u32()
    list_at = r.pos
    list_offset = r.u64()
    if list_offset < _RBFX_HEADER or list_offset > len(data):
        raise r.error(f"file list offset {list_offset} outside the package", list_at)
    lr = Reader(data, list_offset)
    lr.count(count, _MIN_ENTRY, "package file")
    rows = _read_list(lr, count)
    after = lr.remaining
    pkg.size_trailer = after == 4 and lr.u32() == len(data)
    if after and not pkg.size_trailer:
        raise lr.error(f"{after} unexpected bytes after the file list")
    return rows, _RBFX_HEADER, list_offset


def _read_urho_list(
    r: Reader, data: bytes, pkg: Package, count: int
) -> tuple[list[_Row], int, int]:
    """Urho3D's file list, after the header; the data's span up to the optional size trailer."""
    r.count(count, _MIN_ENTRY, "package file")
    rows = _read_list(r, count)
    data_start = r.pos
    data_end = len(data)
    tail4 = data[-4:] if len(data) - data_start >= 4 else b""
    pkg.size_trailer = len(tail4) == 4 and int.from_bytes(tail4, "little") == len(data)
    if pkg.size_trailer:
        data_end -= 4
    return rows, data_start, data_end


def _read_entries(
    pkg: Package, data: bytes, rows: list[_Row], data_start: int, data_end: int
) -> list[_Span]:
    """Each file's content, checked against its checksum; the stored spans in data order.

    The stored extents are found first, in offset order, and overlapping files
    are refused before any content is copied, unpacked or hashed: every entry
    of a hostile package may claim the whole data."""
    for name, offset, size, _crc, row_at in rows:
        if size and not data_start <= offset < data_end or offset > data_end:
            raise FormatError(
                f"file {name!r} at offset {offset} points outside the package data "
                f"({data_start}..{data_end})",
                row_at,
            )
        if not pkg.compressed and offset + size > data_end:
            raise FormatError(
                f"file {name!r} ({size} bytes at offset {offset}) runs past the package "
                f"data, which ends at {data_end}",
                row_at + 4,
            )
    spans = _stored_spans(pkg, data, rows, data_start, data_end)
    for name, offset, size, crc, row_at in rows:
        if pkg.compressed:
            content, stored_end, blocks = _read_blocks(data, offset, size, data_end, name)
            stored = data[offset:stored_end]
        else:
            content = stored = data[offset : offset + size]
            blocks = 0
        got = sdbm(content)
        if got != crc:
            raise FormatError(
                f"checksum of {name!r} is 0x{crc:08X}, its content hashes to 0x{got:08X}",
                row_at + 8,
            )
        pkg.entries.append(Entry(name, content, stored, offset, blocks))
    return spans


def _stored_spans(
    pkg: Package, data: bytes, rows: list[_Row], data_start: int, data_end: int
) -> list[_Span]:
    """The non-empty files' stored extents in data order; a file that starts before
    the one before it ends is refused. Each extent is walked once (LZ4 block
    headers only): the walks that pass cover disjoint bytes."""
    spans: list[_Span] = []
    pos = data_start
    for offset, i in sorted((row[1], i) for i, row in enumerate(rows) if row[2]):
        name, _, size, _, _ = rows[i]
        if offset < pos:
            raise FormatError(
                f"file {name!r} at offset {offset} overlaps the file before it "
                f"(which ends at {pos}); overlapping files are not supported",
                offset,
            )
        if not pkg.compressed:
            pos = offset + size
        elif (end := _blocks_end(data, offset, size, data_end)) is not None:
            pos = end
        else:  # a bad block header: this raises the first error in block order
            _read_blocks(data, offset, size, data_end, name)
        spans.append((offset, pos, i))
    return spans


def _blocks_end(data: bytes, offset: int, size: int, data_end: int) -> int | None:
    """Where the LZ4 blocks of a file of ``size`` bytes at ``offset`` end, from their
    headers alone (None: a header :func:`_read_blocks` refuses)."""
    done = 0
    pos = offset
    while done < size:
        if pos + 4 > data_end:
            return None
        unpacked = int.from_bytes(data[pos : pos + 2], "little")
        packed = int.from_bytes(data[pos + 2 : pos + 4], "little")
        if not unpacked or not packed or unpacked > size - done or pos + 4 + packed > data_end:
            return None
        done += unpacked
        pos += 4 + packed
    return pos


def _read_list(r: Reader, count: int) -> list[_Row]:
    rows = []
    for _ in range(count):
        name = r.cstring()
        row_at = r.pos
        rows.append((name, r.u32(), r.u32(), r.u32(), row_at))
    return rows


def _read_blocks(
    data: bytes, offset: int, size: int, data_end: int, name: str
) -> tuple[bytes, int, int]:
    """Unpack the LZ4 blocks of one file: (content, end of its stored bytes, blocks)."""
    block = _require_lz4("an LZ4-compressed package") if size else None
    out = bytearray()
    pos = offset
    blocks = 0
    while len(out) < size:
        if pos + 4 > data_end:
            raise FormatError(
                f"file {name!r}: block header at {pos} runs past the package data "
                f"({len(out)} of {size} bytes unpacked)",
                pos,
            )
        unpacked = int.from_bytes(data[pos : pos + 2], "little")
        packed = int.from_bytes(data[pos + 2 : pos + 4], "little")
        if unpacked == 0 or packed == 0:
            raise FormatError(f"file {name!r}: empty LZ4 block ({unpacked}/{packed} bytes)", pos)
        if unpacked > size - len(out):
            raise FormatError(
                f"file {name!r}: block unpacks to {unpacked} bytes, only {size - len(out)} "
                "of the file remain",
                pos,
            )
        if pos + 4 + packed > data_end:
            raise FormatError(
                f"file {name!r}: block's packed size {packed} runs past the package data "
                f"(ends at {data_end})",
                pos + 2,
            )
        raw = data[pos + 4 : pos + 4 + packed]
        try:
            content = block.decompress(raw, uncompressed_size=unpacked)
        except Exception as exc:  # lz4.block.LZ4BlockError: corrupt input
            raise FormatError(f"file {name!r}: corrupt LZ4 block ({exc})", pos + 4) from None
        if len(content) != unpacked:
            raise FormatError(
                f"file {name!r}: block unpacked to {len(content)} bytes, its header says "
                f"{unpacked}",
                pos,
            )
        out += content
        pos += 4 + packed
        blocks += 1
    return bytes(out), pos, blocks


def _keep_layout(
    pkg: Package, data: bytes, spans: list[_Span], data_start: int, data_end: int
) -> None:
    """Record the data order and the bytes between files, so write() reproduces them
    (``spans`` in data order, not overlapping)."""
    pos = data_start
    for k, (start, end, _) in enumerate(spans):
        if start > pos:
            pkg.gaps[k] = data[pos:start]
        pos = end
    pkg.tail = data[pos:data_end]
    pkg.order = [i for _, _, i in spans]
    ends = [end for _, end, _ in spans]
    for e in pkg.entries:
        if not e.stored:
            e.anchor = bisect.bisect_right(ends, e.offset)


# --------------------------------------------------------------------------
# Writing


def compress(content: bytes) -> bytes:
    """``content`` as LZ4 HC blocks of at most 32 KiB, each with its two uint16 sizes."""
    if not content:
        return b""
    block = _require_lz4("writing an LZ4-compressed package")
    w = Writer()
    for start in range(0, len(content), BLOCK_SIZE):
        chunk = content[start : start + BLOCK_SIZE]
        packed = block.compress(chunk, mode="high_compression", compression=9, store_size=False)
        w.u16(len(chunk))
        w.u16(len(packed))
        w.bytes(packed)
    return w.getvalue()


def _stored(pkg: Package, e: Entry) -> bytes:
    if e.stored is not None:
        return e.stored
    return compress(e.data) if pkg.compressed else e.data


def write(pkg: Package) -> bytes:
    """Encode ``pkg``; ``write(read(b)) == b`` for every valid package."""
    if pkg.magic not in MAGICS:
        raise ValueError(f"cannot write package magic {pkg.magic!r}")
    stored = [_stored(pkg, e) for e in pkg.entries]
    start = _RBFX_HEADER if pkg.rbfx else _URHO_HEADER + _list_size(pkg)
    body, offsets = _data(pkg, stored, start)
    listing = Writer()
    total = 0
    for i, e in enumerate(pkg.entries):
        listing.cstring(e.name)
        listing.u32(offsets[i])
        listing.u32(len(e.data))
        listing.u32(sdbm(e.data))
        total = sdbm(e.data, total)
    w = Writer()
    w.bytes(pkg.magic)
    w.u32(len(pkg.entries))
    w.u32(total)
    if pkg.rbfx:
        w.u32(pkg.version)
        w.u64(start + len(body))
        w.bytes(body)
        w.bytes(listing.buf)
    else:
        w.bytes(listing.buf)
        w.bytes(body)
    if pkg.size_trailer:
        w.u32(w.pos + 4)
    return w.getvalue()


def _list_size(pkg: Package) -> int:
    """The size of the file list: each name, its NUL and three uint32."""
    listing = Writer()
    for e in pkg.entries:
        listing.cstring(e.name)
        listing.bytes(bytes(12))
    return len(listing.buf)


def _data(pkg: Package, stored: list[bytes], start: int) -> tuple[bytearray, list[int]]:
    """The files' data from ``start`` on, and each file's offset: in the order, with the
    gaps and tail, as read while they still fit the files, else in list order."""
    order = pkg.order
    if order is None or sorted(order) != [i for i, s in enumerate(stored) if s]:
        order = list(range(len(pkg.entries)))
        gaps, tail = {}, b""
    else:
        gaps, tail = pkg.gaps, pkg.tail
    body = bytearray()
    offsets: list[int | None] = [None] * len(pkg.entries)
    ends = [start]  # where the data of the first k stored files ends
    for i in order:
        if not stored[i]:
            offsets[i] = start + len(body)  # a fresh empty file: where its data would be
            continue
        body += gaps.get(len(ends) - 1, b"")
        offsets[i] = start + len(body)
        body += stored[i]
        ends.append(start + len(body))
    body += tail
    if order is pkg.order:  # the layout as read: empty files keep their place
        unchanged = all(e.stored is not None for e in pkg.entries)
        for i, e in enumerate(pkg.entries):
            if not stored[i] and e.offset is not None:
                offsets[i] = e.offset if unchanged else ends[min(e.anchor or 0, len(ends) - 1)]
    return body, offsets


# --------------------------------------------------------------------------
# Folders


def pack_directory(folder: str, compressed: bool = False, rbfx: bool = False) -> Package:
    """Every file under ``folder`` (sorted, ``/``-separated relative names)."""
    pkg = new_package(compressed, rbfx)
    paths = []
    for root, dirs, files in os.walk(folder):
        dirs.sort()
        paths += [os.path.join(root, f) for f in sorted(files)]
    for path in paths:
        name = os.path.relpath(path, folder).replace(os.sep, "/")
        with open(path, "rb") as fh:
            pkg.entries.append(Entry(name, fh.read()))
    return pkg


def update_file(path: str, name: str, data: bytes) -> None:
    """Put ``data`` into the existing package file ``path`` as ``name`` (replacing a
    file of that name, else appending one); the package is rewritten in one go."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except OSError as exc:
        raise FormatError(f"cannot read package: {exc.strerror or exc}", None, path) from exc
    try:
        pkg = read(raw)
    except FormatError as err:
        raise err.with_path(path) from None
    pkg.put(name, data)
    write_atomic(path, lambda: write(pkg), "package")
