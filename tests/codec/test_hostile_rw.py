"""Hostile RenderWare files (issue 26, findings 2, 3 and 15), built from our own writers:
every one is read or refused with a FormatError that says where, never another error."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from rigport.io_formats.codec import FormatError
from rigport.io_formats.renderware import anim_convert, ifp, ifp_samples, img, txd
from rigport.io_formats.renderware.chunks import EXTENSION, STRUCT, TARGETS

# -- finding 2: an ANPK whose declared size is smaller than its content ---------


def _anpk(animations: int = 3, quirks: bool = False) -> bytes:
    return ifp.write(ifp_samples.walk_package("VC", animations=animations, quirks=quirks))


@pytest.mark.parametrize("quirks", [False, True])
def test_anpk_size_smaller_than_its_content_is_refused_with_the_offset(quirks):
    data = bytearray(_anpk(quirks=quirks))
    declared = struct.unpack_from("<I", data, 4)[0]
    struct.pack_into("<I", data, 4, 40)  # the INFO section and a little more
    with pytest.raises(FormatError) as err:
        ifp.read(bytes(data))
    assert err.value.offset is not None
    assert "the ANPK header at offset 4 gives the package 40 bytes" in str(err.value)
    assert declared > 40


@pytest.mark.parametrize("quirks", [False, True])
def test_every_declared_anpk_size_reads_and_packs_or_is_refused(quirks):
    """Whatever the package size says, the reader refuses with a FormatError or every
    animation can be kept with its action (``pack_source``): never a struct.error."""
    good = _anpk(animations=2, quirks=quirks)
    declared = struct.unpack_from("<I", good, 4)[0]
    read = refused = 0
    for size in [*range(0, declared + 8, 97), declared - 1, declared, declared + 1]:
        data = bytearray(good)
        struct.pack_into("<I", data, 4, size)
        try:
            f = ifp.read(bytes(data))
        except FormatError as exc:
            assert exc.offset is not None
            refused += 1
            continue
        read += 1
        assert ifp.write(f) == bytes(data)
        for a in f.animations:
            one = anim_convert.unpack_source(anim_convert.pack_source(f, a))
            assert [b.name for b in one.animations] == [a.name]
    assert read and refused


def test_a_negative_size_is_refused_by_the_writer():
    f = ifp.read(_anpk(animations=1))
    f.size_delta = -(10**6)
    with pytest.raises(FormatError, match="would declare"):
        ifp.write(f)
    f = ifp.read(_anpk(animations=1))
    f.animations[0].size_delta = -(10**6)
    with pytest.raises(FormatError, match="DGAN"):
        ifp.write(f)


# -- finding 3: a raster whose format disagrees with its depth ------------------

_STAMP = TARGETS["SA"][2]


def _dictionary(raster_format: int, d3d_format: int, depth: int, level: bytes, w=8, h=8) -> bytes:
    """A one-texture Direct3D 9 dictionary with one level of ``level``'s bytes."""
    head = struct.pack(
        "<II32s32sIIHHBBBB", txd.D3D9, 0x1106, b"t", b"", raster_format, d3d_format, w, h, depth,
        1, 4, 0,
    )  # fmt: skip
    palette = b""
    if raster_format & txd.PAL8:
        palette = bytes(1024)
    elif raster_format & txd.PAL4:
        palette = bytes(128)
    payload = head + palette + struct.pack("<I", len(level)) + level
    native = txd._chunk(STRUCT, _STAMP, payload) + txd._chunk(EXTENSION, _STAMP, b"")
    body = txd._chunk(STRUCT, _STAMP, struct.pack("<HH", 1, 2))
    body += txd._chunk(txd.TEXTURE_NATIVE, _STAMP, native) + txd._chunk(EXTENSION, _STAMP, b"")
    return txd._chunk(txd.TEXTURE_DICTIONARY, _STAMP, body)


@pytest.mark.parametrize(
    ("pixel", "depth", "size"),
    [(txd.C8888, 8, 64), (txd.C565, 0, 0), (txd.C565, 0, 64), (txd.C1555, 8, 64)],
)
def test_format_that_disagrees_with_its_depth_is_refused(pixel, depth, size):
    """8888 at depth 8, 565 at depth 0: the reader or the decoder says so; the
    decoder never reads more bytes than the reader checked."""
    data = _dictionary(pixel << 8, 0, depth, bytes(size))
    try:
        tex = txd.read(data).textures()[0]
    except FormatError as exc:
        assert exc.offset is not None and "needs" in str(exc)
        return
    with pytest.raises(FormatError, match="not supported"):
        txd.decode(tex)


def test_every_format_depth_and_size_decodes_or_is_refused():
    decoded = 0
    for raster in range(16):
        for extra in (0, txd.PAL8, txd.PAL4):
            for depth in (0, 4, 8, 16, 24, 32, 255):
                for size in (0, 31, 32, 64, 128, 255, 256, 1024):
                    level = (bytes(range(256)) * 4)[:size]
                    data = _dictionary(raster << 8 | extra, 0, depth, level)
                    try:
                        tex = txd.read(data).textures()[0]
                        px = txd.decode(tex)
                    except FormatError:
                        continue
                    assert px.shape == (8, 8, 4) and px.dtype == np.uint8
                    decoded += 1
    assert decoded


def test_d3d9_formats_by_code_decode_or_are_refused():
    for code in (*txd.D3DFMT, 0, 99):
        for depth in (0, 8, 16, 32):
            for size in (0, 64, 128, 256):
                data = _dictionary(0, code, depth, bytes(size))
                try:
                    px = txd.decode(txd.read(data).textures()[0])
                except FormatError:
                    continue
                assert px.shape == (8, 8, 4)


# -- finding 15: IMG members by name --------------------------------------------


def _archive(n: int) -> bytes:
    """A version 2 archive of ``n`` one-sector members, the directory written by hand
    (``put`` would move members as the directory grows)."""
    head = -(-(8 + 32 * n) // img.SECTOR)
    entries = b"".join(
        img.ENTRY.pack(head + i, 1, 0, f"m{i:05d}.dff".encode().ljust(img.NAME, b"\0"))
        for i in range(n)
    )
    data = bytearray(img.MAGIC_V2 + struct.pack("<I", n) + entries)
    data += bytes(head * img.SECTOR - len(data))
    for i in range(n):
        data += f"member {i}".encode().ljust(img.SECTOR, b"\0")
    return bytes(data)


def test_members_are_found_without_case_and_duplicates_give_the_first():
    data = bytearray(_archive(3))
    struct.pack_into("24s", data, 8 + 32 * 2 + 8, b"M00000.DFF".ljust(24, b"\0"))
    a = img.read_v2(bytes(data))
    assert a.read("m00000.dff").startswith(b"member 0\0")
    assert a.read("M00001.Dff").startswith(b"member 1\0")
    assert a.entry("nothing.dff") is None
    a.put("new.txd", b"fresh")
    assert a.read("NEW.TXD").startswith(b"fresh\0")
    assert a.entry("m00000.dff") is a.entries[0]


def test_looking_up_every_member_is_linear(monkeypatch):
    """Reading every member of an archive by name (as the importer does) looks at
    each entry's name a bounded number of times, not once per lookup."""
    n = 2000
    a = img.read_v2(_archive(n))
    calls = 0
    name = img.ImgEntry.name

    def counted(self):
        nonlocal calls
        calls += 1
        return name.fget(self)

    monkeypatch.setattr(img.ImgEntry, "name", property(counted))
    for member in [f"m{i:05d}.dff" for i in range(n)]:
        assert a.read(member) is not None
    assert calls <= 2 * n
