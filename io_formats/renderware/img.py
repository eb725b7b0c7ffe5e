"""GTA IMG archives: version 1 (``.dir`` + ``.img``, GTA III and Vice City) and
version 2 (``VER2``, San Andreas).

Both store members in 2048-byte sectors. A directory entry is 32 bytes: the
member's first sector, its length in sectors and a 24-byte NUL-padded name.
Version 1 keeps the entries in a separate ``.dir`` file (offset and size are
uint32); version 2 starts the ``.img`` with ``VER2``, the entry count and the
entries (offset uint32, streaming size uint16, size in archive uint16, which
San Andreas leaves 0).

The archive is kept as its bytes plus the parsed directory, so an unchanged
archive writes back byte for byte. Putting a member overwrites it in place when
it fits its sectors and appends it otherwise; in version 2, members that the
growing directory would overlap move to the end. Names match without case,
as the games match them.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass, field

from ..codec import FormatError, read_file, write_atomic
from ..codec.files import write_atomic_files

SECTOR = 2048
ENTRY = struct.Struct("<IHH24s")
ENTRY_V1 = struct.Struct("<II24s")
NAME = 24
MAGIC_V2 = b"VER2"


@dataclass
class ImgEntry:
    name_raw: bytes
    offset: int  # sectors
    size: int  # sectors
    archive_size: int = 0  # version 2's second size word

    @property
    def name(self) -> str:
        return self.name_raw.split(b"\0", 1)[0].decode("latin-1")


@dataclass
class ImgArchive:
    version: int  # 1 or 2
    entries: list[ImgEntry] = field(default_factory=list)
    body: bytearray = field(default_factory=bytearray)  # the .img file's bytes
    dir_trailing: bytes = b""  # version 1: .dir bytes after the last whole entry
    #: The first entry of each name without case: members are looked up by name
    #: once each, so a linear search would make an archive quadratic. Entries are
    #: added through :meth:`put`, which keeps it.
    by_name: dict[str, ImgEntry] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.by_name = {}
        for e in self.entries:
            self.by_name.setdefault(e.name.lower(), e)

    def names(self) -> list[str]:
        return [e.name for e in self.entries]

    def entry(self, name: str) -> ImgEntry | None:
        return self.by_name.get(name.lower())

    def read(self, name: str) -> bytes | None:
        """A member's bytes (its whole sectors: files are zero-padded in there)."""
        e = self.entry(name)
        if e is None:
            return None
        return bytes(self.body[e.offset * SECTOR : (e.offset + e.size) * SECTOR])

    def put(self, name: str, data: bytes) -> None:
        """Replace (or add) the member ``name``."""
        sectors = -(-len(data) // SECTOR)
        e = self.entry(name)
        if e is None:
            raw = name.encode("latin-1", "replace")
            if len(raw) >= NAME or not raw:
                raise FormatError(f"an IMG member name has 1 to {NAME - 1} characters: {name!r}")
            e = ImgEntry(raw + b"\0" * (NAME - len(raw)), 0, 0)
            self.entries.append(e)
            self.by_name.setdefault(e.name.lower(), e)
            self._make_room()
            e.offset = self._end()
        elif sectors > e.size:
            e.size = 0
            e.offset = self._end()
        e.size = sectors
        self._store(e.offset, data, sectors)

    def _end(self) -> int:
        head = self._directory_sectors()
        return max([head] + [e.offset + e.size for e in self.entries])

    def _directory_sectors(self) -> int:
        if self.version == 1:
            return 0
        return -(-(8 + ENTRY.size * len(self.entries)) // SECTOR)

    def _make_room(self) -> None:
        """Version 2: move members the directory now overlaps to the end."""
        head = self._directory_sectors()
        for e in sorted(self.entries, key=lambda x: x.offset):
            if e.size and e.offset < head:
                data = self.body[e.offset * SECTOR : (e.offset + e.size) * SECTOR]
                e.offset = self._end()
                self._store(e.offset, bytes(data), e.size)

    def _store(self, offset: int, data: bytes, sectors: int) -> None:
        end = (offset + sectors) * SECTOR
        if len(self.body) < end:
            self.body += b"\0" * (end - len(self.body))
        self.body[offset * SECTOR : end] = data + b"\0" * (sectors * SECTOR - len(data))


def _check(entries: list[ImgEntry], size: int, first: int, where: str) -> None:
    """Every member lies inside the archive (the last may end in a short sector)."""
    limit = -(-size // SECTOR)
    for i, e in enumerate(entries):
        if (e.size and e.offset < first) or e.offset + e.size > limit:
            raise FormatError(
                f"{where}: member {i} {e.name!r} spans sectors {e.offset}..{e.offset + e.size}, "
                f"the archive has {limit} sectors"
                + (f" after a {first}-sector directory" if first else ""),
                8 + 32 * i if first else 32 * i,
            )


def read_v2(data: bytes) -> ImgArchive:
    if data[:4] != MAGIC_V2:
        raise FormatError(f"not an IMG version 2 archive: expected 'VER2', found {data[:4]!r}", 0)
    if len(data) < 8:
        raise FormatError("the IMG header is cut short", 4)
    count = struct.unpack_from("<I", data, 4)[0]
    if 8 + count * ENTRY.size > len(data):
        raise FormatError(
            f"entry count {count} needs {8 + count * ENTRY.size} bytes, "
            f"the archive has {len(data)}",
            4,
        )
    entries = [
        ImgEntry(name, off, size, asize)
        for off, size, asize, name in ENTRY.iter_unpack(data[8 : 8 + count * ENTRY.size])
    ]
    a = ImgArchive(2, entries, bytearray(data))
    _check(entries, len(data), a._directory_sectors() if entries else 0, "IMG")
    return a


def read_directory(data: bytes) -> tuple[list[ImgEntry], bytes]:
    """A version 1 ``.dir``: its entries and the bytes after the last whole one."""
    n = len(data) // ENTRY_V1.size
    entries = [
        ImgEntry(name, off, size) for off, size, name in ENTRY_V1.iter_unpack(data[: n * 32])
    ]
    return entries, data[n * 32 :]


def write_directory(a: ImgArchive) -> bytes:
    out = b"".join(ENTRY_V1.pack(e.offset, e.size, e.name_raw) for e in a.entries)
    return out + a.dir_trailing


def read_v1(directory: bytes, body: bytes) -> ImgArchive:
    entries, trailing = read_directory(directory)
    _check(entries, len(body), 0, "IMG directory")
    return ImgArchive(1, entries, bytearray(body), trailing)


def write_v2(a: ImgArchive) -> bytes:
    head = MAGIC_V2 + struct.pack("<I", len(a.entries))
    head += b"".join(ENTRY.pack(e.offset, e.size, e.archive_size, e.name_raw) for e in a.entries)
    body = bytearray(a.body)
    if len(body) < len(head):
        body += b"\0" * (len(head) - len(body))
    body[: len(head)] = head
    return bytes(body)


# -- the registry's view: an .img file alone, a .dir file alone ----------------


def read_image(data: bytes) -> ImgArchive:
    """An ``.img`` file: version 2 with its directory, or a version 1 body (whose
    directory is the ``.dir`` beside it: see :func:`open_archive`)."""
    if data[:4] == MAGIC_V2:
        return read_v2(data)
    return ImgArchive(1, [], bytearray(data))


def write_image(a: ImgArchive) -> bytes:
    return write_v2(a) if a.version == 2 else bytes(a.body)


def read_dir_file(data: bytes) -> ImgArchive:
    entries, trailing = read_directory(data)
    return ImgArchive(1, entries, bytearray(), trailing)


# -- archives on disk ------------------------------------------------------------


def directory_path(path: str) -> str | None:
    """The ``.dir`` beside a version 1 ``.img`` (any case), if there is one."""
    folder = os.path.dirname(os.path.abspath(path))
    stem = os.path.splitext(os.path.basename(path))[0].lower()
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return None
    for n in names:
        if n.lower() == stem + ".dir":
            return os.path.join(folder, n)
    return None


def open_archive(path: str) -> ImgArchive:
    data = read_file(path, "IMG archive")
    try:
        if data[:4] == MAGIC_V2:
            return read_v2(data)
        dir_path = directory_path(path)
        if dir_path is None:
            raise FormatError(
                "not a version 2 archive (no 'VER2') and no .dir file of the same name beside it"
            )
        return read_v1(read_file(dir_path, "IMG directory"), data)
    except FormatError as err:
        raise (err if err.path else err.with_path(path)) from None


def save_archive(path: str, a: ImgArchive) -> None:
    """Write the archive atomically; version 1's ``.img`` and ``.dir`` as one pair
    (both complete before either replaces the old one, and neither replaced when
    the other cannot be: ``write_atomic_files``)."""
    if a.version == 2:
        write_atomic(path, lambda: write_v2(a), "IMG archive")
        return
    dir_path = directory_path(path) or os.path.splitext(path)[0] + ".dir"
    write_atomic_files(
        [
            (path, bytes(a.body), "IMG archive"),
            (dir_path, lambda: write_directory(a), "IMG directory"),
        ]
    )


def new_archive(version: int = 2) -> ImgArchive:
    if version not in (1, 2):
        raise ValueError(f"IMG version {version} (1 or 2)")
    a = ImgArchive(version)
    if version == 2:
        a.body = bytearray(SECTOR)
    return a


KINDS = {".dff": "model", ".ifp": "animations", ".txd": "textures", ".anm": "animation"}


def kind_of(name: str) -> str:
    """What a member is, for listings."""
    return KINDS.get(os.path.splitext(name)[1].lower(), "other")
