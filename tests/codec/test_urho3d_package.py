"""Urho3D and rbfx packages (UPAK, ULZ4, RPAK, RLZ4): lossless codec, checksums, bad input."""

from __future__ import annotations

import functools
import struct

import numpy as np
import pytest

from rigport.io_formats.codec import FormatError
from rigport.io_formats.urho3d import package
from rigport.samples import rbfx as rbfx_samples

lz4_block = pytest.importorskip("lz4.block")

LAYOUTS = {
    "UPAK": (False, False),
    "ULZ4": (True, False),
    "RPAK": (False, True),
    "RLZ4": (True, True),
}


@functools.cache
def sample(magic: str) -> bytes:
    return rbfx_samples.sample_package(*LAYOUTS[magic])


def sdbm_reference(data: bytes, h: int = 0) -> int:
    for c in data:
        h = (c + (h << 6) + (h << 16) - h) & 0xFFFFFFFF
    return h


def expect_error(data: bytes) -> FormatError:
    with pytest.raises(FormatError) as info:
        package.read(data)
    assert info.value.offset is not None, str(info.value)
    return info.value


def test_corpus_package_round_trip(corpus_dir):
    data = (corpus_dir / "rbfx" / "PackageTest.pak").read_bytes()
    pkg = package.read(data)
    assert pkg.magic == b"UPAK" and pkg.size_trailer
    assert pkg.names() == ["AutoloadPackageTest.xml"]
    assert pkg.get("AutoloadPackageTest.xml") == b"<AutoloadRootFile/>"
    assert struct.unpack_from("<I", data, 8)[0] == sdbm_reference(b"<AutoloadRootFile/>")
    assert package.write(pkg) == data


@pytest.mark.parametrize("size", [0, 1, 7, 4095, 100_001, (1 << 20) + 3])
def test_sdbm_matches_the_byte_by_byte_definition(size):
    data = np.random.default_rng(size).integers(0, 256, size, dtype=np.uint8).tobytes()
    assert package.sdbm(data) == sdbm_reference(data)
    assert package.sdbm(data[size // 2 :], package.sdbm(data[: size // 2])) == sdbm_reference(data)


@pytest.mark.parametrize("magic", LAYOUTS)
def test_generated_package_round_trip(magic):
    data = sample(magic)
    pkg = package.read(data)
    assert pkg.magic == magic.encode()
    assert package.write(pkg) == data
    files = dict(rbfx_samples.package_files())
    assert pkg.names() == list(files)
    for e in pkg.entries:
        assert e.data == files[e.name]
    assert pkg.find(rbfx_samples.NON_ASCII_NAME).data == files[rbfx_samples.NON_ASCII_NAME]
    assert pkg.get("Data/Empty.txt") == b""
    assert pkg.find("models\\tentacle.MDL") is pkg.entries[0]  # the engine's Windows fallback


@pytest.mark.parametrize("magic", ["ULZ4", "RLZ4"])
def test_compressed_blocks_are_at_most_32k_and_plain_lz4(magic):
    data = sample(magic)
    pkg = package.read(data)
    big = pkg.find("Data/Big.bin")
    assert len(big.data) > 3 * package.BLOCK_SIZE and big.blocks == 4
    pos, out = 0, b""
    while pos < len(big.stored):
        unpacked, packed = struct.unpack_from("<HH", big.stored, pos)
        assert unpacked <= package.BLOCK_SIZE
        out += lz4_block.decompress(
            big.stored[pos + 4 : pos + 4 + packed], uncompressed_size=unpacked
        )
        pos += 4 + packed
    assert out == big.data
    assert len(big.stored) < len(big.data) // 2
    assert pkg.find("Data/Empty.txt").stored == b""


def test_layout_facts():
    upak = sample("UPAK")
    count, checksum = struct.unpack_from("<II", upak, 4)
    files = rbfx_samples.package_files()
    assert count == len(files)
    total = 0
    for _, data in files:
        total = sdbm_reference(data, total)
    assert checksum == total
    assert struct.unpack_from("<I", upak, len(upak) - 4)[0] == len(upak)
    rpak = sample("RPAK")
    version, list_offset = struct.unpack_from("<IQ", rpak, 12)
    assert version == 0
    assert rpak[list_offset : list_offset + len(files[0][0])] == files[0][0].encode()
    assert rpak[24 : 24 + len(files[0][1])] == files[0][1]  # data right after the header


def test_put_replaces_in_place_and_recompresses():
    pkg = package.read(sample("ULZ4"))
    pkg.put("Data/Empty.txt", b"now with content" * 3000)
    pkg.put("New/Added.bin", b"added")
    again = package.read(package.write(pkg))
    assert again.get("Data/Empty.txt") == b"now with content" * 3000
    assert again.get("New/Added.bin") == b"added"
    assert again.names()[-1] == "New/Added.bin"
    assert again.get("Data/Big.bin") == rbfx_samples.big_file()


def test_gaps_between_files_are_kept():
    pkg = package.new_package()
    pkg.entries = [package.Entry("a", b"AAAA"), package.Entry("b", b"BBBB")]
    data = bytearray(package.write(pkg))
    # move b's data 3 bytes further and put padding before it
    b_row = data.index(b"b\0") + 2
    b_offset = struct.unpack_from("<I", data, b_row)[0]
    data[b_offset:b_offset] = b"\xee\xee\xee"
    struct.pack_into("<I", data, b_row, b_offset + 3)
    struct.pack_into("<I", data, len(data) - 4, len(data))
    pkg2 = package.read(bytes(data))
    assert pkg2.get("b") == b"BBBB" and pkg2.gaps == {1: b"\xee\xee\xee"}
    assert package.write(pkg2) == bytes(data)


def test_pack_directory(tmp_path):
    for name, data in rbfx_samples.package_files():
        path = tmp_path / "src" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    pkg = package.pack_directory(str(tmp_path / "src"), compressed=True)
    assert pkg.magic == b"ULZ4"
    assert sorted(pkg.names()) == sorted(n for n, _ in rbfx_samples.package_files())
    assert pkg.names()[:2] == ["Data/Big.bin", "Data/Empty.txt"]  # folders sorted, then files
    back = package.read(package.write(pkg))
    for name, data in rbfx_samples.package_files():
        assert back.get(name) == data


# --------------------------------------------------------------------------
# bad input


def _row(data: bytes, name: str) -> int:
    """Offset of the uint32 offset field of entry ``name``."""
    return data.index(name.encode() + b"\0") + len(name.encode()) + 1


@pytest.mark.parametrize("magic", LAYOUTS)
def test_every_truncation_is_a_format_error(magic):
    data = sample(magic)
    # Urho3D's package size at the end is optional: cutting into it leaves a package
    # without one (below); every cut before it must fail.
    end = len(data) - 4 if magic.startswith("U") else len(data)
    cuts = sorted({*range(0, 64), *range(64, end, 997), end - 1})
    for n in cuts:
        with pytest.raises(FormatError):
            package.read(data[:n])


@pytest.mark.parametrize("magic", ["UPAK", "ULZ4"])
def test_package_without_size_trailer(magic):
    data = sample(magic)
    for cut in (4, 3, 1):
        pkg = package.read(data[:-cut])
        assert not pkg.size_trailer and len(pkg.tail) == 4 - cut
        assert package.write(pkg) == data[:-cut]


@pytest.mark.parametrize("magic", LAYOUTS)
def test_corrupted_file_checksum(magic):
    data = bytearray(sample(magic))
    at = _row(data, "Data/Big.bin") + 8
    data[at] ^= 1
    err = expect_error(bytes(data))
    assert err.offset == at and "checksum" in err.message


@pytest.mark.parametrize("magic", LAYOUTS)
def test_corrupted_package_checksum(magic):
    data = bytearray(sample(magic))
    data[9] ^= 0x40
    err = expect_error(bytes(data))
    assert err.offset == 8 and "package checksum" in err.message


@pytest.mark.parametrize("magic", LAYOUTS)
def test_corrupted_content_is_caught(magic):
    data = bytearray(sample(magic))
    pkg = package.read(bytes(data))
    e = pkg.find("Data/Big.bin")
    data[e.offset + 5000] ^= 0x55
    err = expect_error(bytes(data))
    assert "Big.bin" in err.message


@pytest.mark.parametrize("magic", ["ULZ4", "RLZ4"])
@pytest.mark.parametrize("delta", [-1, 1, 2000, 0x7FFF])
def test_block_packed_size_that_lies(magic, delta):
    data = bytearray(sample(magic))
    e = package.read(bytes(data)).find("Data/Big.bin")
    packed = struct.unpack_from("<H", data, e.offset + 2)[0]
    struct.pack_into("<H", data, e.offset + 2, (packed + delta) & 0xFFFF)
    err = expect_error(bytes(data))
    assert "Big.bin" in err.message


@pytest.mark.parametrize("magic", ["ULZ4", "RLZ4"])
def test_block_unpacked_size_that_lies(magic):
    data = bytearray(sample(magic))
    e = package.read(bytes(data)).find("Data/Big.bin")
    struct.pack_into("<H", data, e.offset, 40000)
    err = expect_error(bytes(data))
    assert err.offset == e.offset


@pytest.mark.parametrize("magic", LAYOUTS)
def test_entry_pointing_outside_the_file(magic):
    data = bytearray(sample(magic))
    at = _row(data, "Models/Tentacle.mdl")
    struct.pack_into("<I", data, at, len(data) + 100)
    err = expect_error(bytes(data))
    assert err.offset == at and "outside" in err.message


def test_entry_size_that_lies():
    data = bytearray(sample("UPAK"))
    at = _row(data, "Data/Big.bin") + 4
    struct.pack_into("<I", data, at, 10_000_000)
    err = expect_error(bytes(data))
    assert err.offset == at


def test_huge_file_count():
    data = bytearray(sample("UPAK"))
    struct.pack_into("<I", data, 4, 0xFFFFFFF0)
    assert "count" in expect_error(bytes(data)).message


def test_rbfx_list_offset_outside():
    data = bytearray(sample("RPAK"))
    struct.pack_into("<Q", data, 16, len(data) + 1)
    assert expect_error(bytes(data)).offset == 16


def test_overlapping_files_are_rejected():
    pkg = package.new_package()
    pkg.entries = [package.Entry("a", b"AAAAAAAA"), package.Entry("b", b"BBBBBBBB")]
    data = bytearray(package.write(pkg))
    a_off = struct.unpack_from("<I", data, _row(data, "a"))[0]
    struct.pack_into("<I", data, _row(data, "b"), a_off + 4)
    struct.pack_into("<I", data, _row(data, "b") + 8, package.sdbm(b"AAAABBBB"))
    # b's new content is 'AAAA' + 'BBBB'; the package checksum must agree too
    total = package.sdbm(b"AAAABBBB", package.sdbm(b"AAAAAAAA"))
    struct.pack_into("<I", data, 8, total)
    assert "overlap" in expect_error(bytes(data)).message


def test_bad_magic():
    assert expect_error(b"UPAC" + bytes(20)).offset == 0
    assert expect_error(b"UP").offset == 0


@pytest.mark.parametrize("magic", LAYOUTS)
def test_random_damage_is_a_format_error_or_lossless(magic):
    data = sample(magic)
    rng = np.random.default_rng(11)
    for _ in range(300):
        damaged = bytearray(data)
        for at in rng.integers(0, len(data), rng.integers(1, 4)):
            damaged[at] = rng.integers(0, 256)
        try:
            pkg = package.read(bytes(damaged))
        except FormatError:
            continue
        assert package.write(pkg) == bytes(damaged)


@pytest.mark.parametrize("magic", LAYOUTS)
def test_empty_file_follows_a_replaced_file(magic):
    pkg = package.read(sample(magic))
    model = pkg.get("Models/Tentacle.mdl")
    pkg.put("Models/Tentacle.mdl", model[:300])
    pkg.put("Data/Big.bin", b"small now")
    again = package.read(package.write(pkg))
    assert again.get("Data/Empty.txt") == b""
    assert again.get("Data/Big.bin") == b"small now"
    empty = again.find("Data/Empty.txt")
    big = again.find("Data/Big.bin")
    assert empty.offset == big.offset + len(big.stored)  # right after the file before it


def test_find_takes_the_first_exact_name_then_any_case():
    """``find`` answers as a pass over the entries in order would: the first
    exact name (either separator), else the first case-insensitive one; after
    an entry is renamed in place, by its new name and not its old one, and
    before any later entry of that name."""
    pkg = package.new_package()
    for name in ("Models/A.mdl", "models/a.MDL", "Models\\B.mdl", "Models/A.mdl", "c.ani"):
        pkg.entries.append(package.Entry(name, name.encode()))
    assert pkg.find("Models/A.mdl") is pkg.entries[0]
    assert pkg.find("models/a.MDL") is pkg.entries[1]
    assert pkg.find("MODELS/a.mdl") is pkg.entries[0]
    assert pkg.find("Models/B.mdl") is pkg.entries[2]
    assert pkg.find("models\\b.MDL") is pkg.entries[2]
    assert pkg.find("Models/Z.mdl") is None
    pkg.entries[4].name = "d.ani"
    assert pkg.find("c.ani") is None and pkg.find("D.ANI") is pkg.entries[4]
    pkg.entries[1].name = "Models/B.mdl"  # renamed to a later entry's name: the first wins
    assert pkg.find("models\\b.mdl") is pkg.entries[1]
    pkg.entries[0].name = "x.mdl"
    assert pkg.find("Models/A.mdl") is pkg.entries[3]
    assert pkg.put("new/e.ani", b"e") is pkg.find("NEW/E.ANI") is pkg.entries[5]
    # a thousand names found with one pass over the entries, not one per name
    many = package.new_package()
    for i in range(1000):
        many.put(f"Animations/W{i:04d}.ani", bytes([i % 256]))

    class Counted(list):
        passes = 0

        def __iter__(self):
            Counted.passes += 1
            return super().__iter__()

    many.entries = Counted(many.entries)
    for i in range(1000):
        assert many.find(f"animations/w{i:04d}.ANI").data == bytes([i % 256])
    assert Counted.passes == 1
