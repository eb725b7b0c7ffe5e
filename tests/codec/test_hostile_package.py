"""Hostile Urho3D/rbfx packages (issue 26, finding 14), built from our own writer:
overlapping files are refused before anything is copied, unpacked or hashed, and
the layout of empty files is kept in linear time (``tools/cost.py`` measures it)."""

from __future__ import annotations

import bisect
import struct

import pytest

from rigport.io_formats.codec import FormatError
from rigport.io_formats.urho3d import package

pytest.importorskip("lz4.block")

LAYOUTS = {
    "UPAK": (False, False),
    "ULZ4": (True, False),
    "RPAK": (False, True),
    "RLZ4": (True, True),
}


def _package(magic: str, entries: list[tuple[str, bytes]]) -> bytes:
    pkg = package.new_package(*LAYOUTS[magic])
    pkg.entries = [package.Entry(name, data) for name, data in entries]
    return package.write(pkg)


def _offset_fields(data: bytes, count: int) -> list[int]:
    """Where each directory row's offset is (rows: name, NUL, offset, size, checksum)."""
    rbfx = data[:4] in (package.RPAK, package.RLZ4)
    pos = struct.unpack_from("<Q", data, 16)[0] if rbfx else 12
    out = []
    for _ in range(count):
        pos = data.index(b"\0", pos) + 1
        out.append(pos)
        pos += 12
    return out


@pytest.mark.parametrize("magic", LAYOUTS)
def test_overlaps_are_refused_before_any_file_is_copied_or_hashed(magic, monkeypatch):
    """Every entry claims the same bytes (each one valid on its own, checksums and
    all): the package is refused before a single file is unpacked or hashed."""
    n = 200
    content = bytes(range(256)) * 64
    data = bytearray(_package(magic, [(f"f{i:03d}.bin", content) for i in range(n)]))
    fields = _offset_fields(bytes(data), n)
    first = struct.unpack_from("<I", data, fields[0])[0]
    for at in fields:
        struct.pack_into("<I", data, at, first)
    calls = {"sdbm": 0, "unpack": 0}
    sdbm, read_blocks = package.sdbm, package._read_blocks

    def counted_sdbm(*args):
        calls["sdbm"] += 1
        return sdbm(*args)

    def counted_blocks(*args):
        calls["unpack"] += 1
        return read_blocks(*args)

    monkeypatch.setattr(package, "sdbm", counted_sdbm)
    monkeypatch.setattr(package, "_read_blocks", counted_blocks)
    with pytest.raises(FormatError, match="overlaps the file before it") as err:
        package.read(bytes(data))
    assert err.value.offset == first
    assert calls == {"sdbm": 0, "unpack": 0}


@pytest.mark.parametrize("magic", ["ULZ4", "RLZ4"])
def test_a_bad_block_header_in_an_overlapping_file_is_refused(magic):
    content = bytes(range(256)) * 200
    data = bytearray(_package(magic, [("a.bin", content), ("b.bin", content)]))
    fields = _offset_fields(bytes(data), 2)
    a = struct.unpack_from("<I", data, fields[0])[0]
    struct.pack_into("<H", data, a, 0)  # a's first block: unpacked size 0
    struct.pack_into("<I", data, fields[1], a + 4)
    with pytest.raises(FormatError, match="empty LZ4 block") as err:
        package.read(bytes(data))
    assert err.value.offset == a


def _with_empty_files(magic: str, n: int) -> bytes:
    """``n`` files, every other one empty, and empty ones at both ends."""
    entries = [("first.txt", b"")]
    for i in range(n):
        entries.append((f"d{i:04d}.bin", f"file {i} ".encode() * (1 + i % 5) if i % 2 else b""))
    entries.append(("last.txt", b""))
    return _package(magic, entries)


@pytest.mark.parametrize("magic", LAYOUTS)
def test_empty_files_keep_their_place(magic):
    data = _with_empty_files(magic, 301)
    pkg = package.read(data)
    assert package.write(pkg) == data
    ends = sorted(len(e.stored) + e.offset for e in pkg.entries if e.stored)
    for e in pkg.entries:
        if not e.stored:
            assert e.anchor == sum(1 for end in ends if end <= e.offset)
            assert e.anchor == bisect.bisect_right(ends, e.offset)
    # A replaced file moves the data after it; the empty files follow their anchors.
    pkg.put("d0001.bin", b"longer content " * 40)
    again = package.read(package.write(pkg))
    assert again.get("d0001.bin") == b"longer content " * 40
    assert [e.name for e in again.entries] == [e.name for e in pkg.entries]
    assert [e.anchor for e in again.entries] == [e.anchor for e in pkg.entries]
