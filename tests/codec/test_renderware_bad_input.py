"""Damaged, truncated and hostile DFF files: a FormatError with an offset, nothing else.

Whatever still parses must be written back byte for byte and must import into
the neutral scene or fail with a FormatError.
"""

from __future__ import annotations

import functools
import os
import struct
from pathlib import Path

import numpy as np
import pytest

from rigport.io_formats.codec import FormatError
from rigport.io_formats.renderware import chunks, clump_import, dff
from rigport.samples import renderware as samples

CORPUS = Path(
    os.environ.get(
        "RIGPORT_CORPUS", Path(__file__).resolve().parents[2].parent / "shared" / "corpus"
    )
)


@functools.cache
def small() -> dict[str, bytes]:
    return {
        "ped_III": dff.write(
            samples.skinned_ped("III", n_bones=6, rings=4, segments=3, prelit=True, morphs=1)
        ),
        "ped_VC_full": dff.write(
            samples.skinned_ped(
                "VC",
                n_bones=6,
                rings=4,
                segments=3,
                uv_sets=2,
                split=True,
                strips=True,
                unknown=True,
            )
        ),
        "static_SA": dff.write(samples.static_clump("SA", atomics=2)),
    }


def files() -> dict[str, bytes]:
    out = dict(small())
    if (CORPUS / "renderware").is_dir():
        out["teapot"] = (CORPUS / "renderware" / "teapot.dff").read_bytes()
    return out


def read_or_error(data: bytes) -> None:
    """The contract: a FormatError with an offset, or a lossless parse that imports
    (or fails to import with a FormatError)."""
    try:
        f = dff.read(data)
    except FormatError as err:
        assert type(err) is FormatError and err.offset is not None, err
        return
    assert dff.write(f) == data
    try:
        for clump in f.clumps:
            clump_import.import_clump(clump, "x")
    except FormatError:
        pass


@pytest.mark.parametrize("name", list(small()) + ["teapot"])
def test_truncated_files(name):
    data = files().get(name)
    if data is None:
        pytest.skip("corpus not present")
    step = max(1, len(data) // 400)
    for cut in range(0, len(data) - 1, step):
        read_or_error(data[:cut])


@pytest.mark.parametrize("name", list(small()) + ["teapot"])
def test_random_damage(name):
    data = files().get(name)
    if data is None:
        pytest.skip("corpus not present")
    rng = np.random.default_rng(len(data))
    for _ in range(300):
        b = bytearray(data)
        for at in rng.integers(0, len(b), rng.integers(1, 4)):
            b[at] = int(rng.integers(0, 256))
        read_or_error(bytes(b))
    for _ in range(200):  # damage aimed at counts and sizes: 32-bit words
        b = bytearray(data)
        at = int(rng.integers(0, len(b) // 4)) * 4
        struct.pack_into("<I", b, at, int(rng.choice([0, 1, 0xFF, 0xFFFF, 0x7FFFFFFF, 0xFFFFFFFF])))
        read_or_error(bytes(b))


def patched(b: bytes, offset: int, value: int, fmt: str = "<I") -> bytes:
    out = bytearray(b)
    struct.pack_into(fmt, out, offset, value)
    return bytes(out)


def error_of(data: bytes) -> FormatError:
    with pytest.raises(FormatError) as info:
        dff.read(data)
    assert info.value.offset is not None
    return info.value


def find_chunk(data: bytes, kind: int, nth: int = 0) -> int:
    """Offset of the nth chunk header of a type, walking the tree independently."""
    found = []

    def walk(p: int, end: int) -> None:
        while p + 12 <= end:
            t, size, _ = struct.unpack_from("<III", data, p)
            if t == kind:
                found.append(p)
            if t in (0x10, 0x0E, 0x0F, 0x1A, 0x08, 0x07, 0x06, 0x14, 0x03):
                walk(p + 12, p + 12 + size)
            p += 12 + size

    walk(0, len(data))
    return found[nth]


def test_chunk_size_beyond_the_file():
    data = small()["static_SA"]
    err = error_of(patched(data, 4, len(data)))
    assert err.offset == 0 and "says" in err.message


def test_no_clump_and_trailing_garbage():
    assert "no clump" in error_of(chunks.chunk_bytes(0x2B, 0x1803FFFF, b"")).message
    data = small()["static_SA"]
    assert "after the last chunk" in error_of(data + b"\0\0\x01").message
    assert dff.write(dff.read(data + bytes(8))) == data + bytes(8)


def test_triangle_beyond_the_vertices():
    data = small()["static_SA"]
    geo = find_chunk(data, chunks.GEOMETRY)
    nt, nv = struct.unpack_from("<ii", data, geo + 28)
    flags = struct.unpack_from("<I", data, geo + 24)[0]
    n_uv = (flags >> 16) & 0xFF
    tri = geo + 24 + 16 + 4 * nv + 8 * nv * n_uv  # prelit colours, then the UV sets
    err = error_of(patched(data, tri, nv + 5, "<H"))
    assert err.offset == tri and "vertex" in err.message


def test_huge_counts_are_refused_before_allocating():
    data = small()["ped_III"]
    geo = find_chunk(data, chunks.GEOMETRY)
    for field in (28, 32, 36):  # triangles, vertices, morph targets
        err = error_of(patched(data, geo + field, 0x7FFFFFFF))
        assert "remain" in err.message or "negative" in err.message
    frames = find_chunk(data, chunks.FRAME_LIST)
    assert "frame count" in error_of(patched(data, frames + 24, 0x10000000)).message


def test_frame_parent_out_of_range_and_cycle():
    data = small()["static_SA"]
    frames = find_chunk(data, chunks.FRAME_LIST)
    first = frames + 28  # struct header + count
    err = error_of(patched(data, first + 56 + 48, 9, "<i"))
    assert "parent 9" in err.message and err.offset == first + 56 + 48
    cyc = patched(patched(data, first + 48, 1, "<i"), first + 56 + 48, 2, "<i")
    assert "cycle" in error_of(cyc).message


def test_skin_bone_index_and_size():
    data = small()["ped_VC_full"]
    skin = find_chunk(data, chunks.SKIN_PLG) + 12
    used = data[skin + 1]
    err = error_of(patched(data, skin + 4 + used, 77, "<B"))
    assert "bone 77" in err.message and err.offset == skin + 4 + used
    assert "at most 4" in error_of(patched(data, skin + 2, 9, "<B")).message
    # the old layout's size with a bone count that does not fit
    old = small()["ped_III"]
    s_old = find_chunk(old, chunks.SKIN_PLG) + 12
    err = error_of(patched(old, s_old, 7, "<B"))
    assert "Skin PLG" in err.message


def test_material_and_bin_mesh_counts():
    data = small()["static_SA"]
    ml = find_chunk(data, chunks.MATERIAL_LIST)
    assert "refers to slot" in error_of(patched(data, ml + 28, 5, "<i")).message
    bm = find_chunk(data, chunks.BIN_MESH_PLG)
    assert "remain" in error_of(patched(data, bm + 20, 1000)).message


def test_atomic_references():
    data = small()["static_SA"]
    atomic = find_chunk(data, chunks.ATOMIC)
    err = error_of(patched(data, atomic + 24, 50, "<i"))
    assert "atomic frame 50" in err.message and err.offset == atomic + 24
    assert "atomic geometry" in error_of(patched(data, atomic + 28, 9, "<i")).message
    clump = find_chunk(data, chunks.CLUMP)
    assert "atomics" in error_of(patched(data, clump + 24, 7)).message


def test_native_geometry_is_refused_at_import_with_a_clear_message():
    data = small()["static_SA"]
    geo = find_chunk(data, chunks.GEOMETRY)
    native = patched(data, geo + 24, struct.unpack_from("<I", data, geo + 24)[0] | 0x01000000)
    f = dff.read(native)  # the codec keeps native geometry raw
    assert f.clump.geometries()[0].native and dff.write(f) == native
    with pytest.raises(FormatError, match="platform-native geometry"):
        clump_import.import_clump(f.clump, "x")


def test_import_checks_material_ids_and_hierarchy():
    data = small()["static_SA"]
    geo = find_chunk(data, chunks.GEOMETRY)
    nv = struct.unpack_from("<i", data, geo + 32)[0]
    flags = struct.unpack_from("<I", data, geo + 24)[0]
    tri = geo + 24 + 16 + 4 * nv + 8 * nv * ((flags >> 16) & 0xFF)
    bm = find_chunk(data, chunks.BIN_MESH_PLG)
    bad = patched(patched(data, tri + 4, 40, "<H"), bm + 28, 40)  # material 40 of 2
    with pytest.raises(FormatError, match="material 40"):
        clump_import.import_clump(dff.read(bad).clump, "x")
    ped = small()["ped_III"]
    hanim = find_chunk(ped, chunks.HANIM_PLG) + 12  # the first one holds the hierarchy
    n = struct.unpack_from("<i", ped, hanim + 8)[0]
    last_id = hanim + 20 + 12 * (n - 1)
    with pytest.raises(FormatError, match="node [0-9]+ has ID 999, which no frame carries"):
        clump_import.import_clump(dff.read(patched(ped, last_id, 999)).clump, "x")


SNAN = struct.pack("<I", 0x7F800001)
SENTINEL = 1234.5678  # a float32 value no sample file holds by chance


@pytest.mark.parametrize("component", [0, 1, 2])
def test_signalling_nan_in_material_surface_survives(component):
    """Ambient, specular and diffuse are float32 fields: a signalling NaN in one of them
    must come back with its exact bits (a Python float would make it quiet)."""
    f = samples.static_clump("SA", atomics=1)
    material = f.clumps[0].geometries()[0].material_list.materials[0]
    surface = [1.0, 1.0, 1.0]
    surface[component] = SENTINEL
    material.surface = tuple(surface)
    data = dff.write(f)
    mark = struct.pack("<f", SENTINEL)
    assert data.count(mark) == 1
    data = data.replace(mark, SNAN)
    assert dff.write(dff.read(data)) == data
    clump_import.import_dff(dff.read(data), "snan")  # the import keeps plain floats


# ------------------------------------------------------------------ refusals name their element
def _ped():
    return dff.read(small()["ped_III"])


def _import_error(f) -> str:
    with pytest.raises(FormatError) as info:
        clump_import.import_dff(f, "x")
    assert type(info.value) is FormatError
    return str(info.value)


def test_singular_inverse_bind_matrix_names_the_bone():
    f = _ped()
    skin = f.clumps[0].geometries()[0].skin
    skin.matrices[3] = 0.0
    message = _import_error(f)
    assert "geometry 0" in message and "bone 3 (" in message and "singular" in message


def test_bin_mesh_index_names_geometry_and_split():
    f = dff.read(small()["static_SA"])
    geo = f.clumps[0].geometries()[1]
    geo.triangles = geo.triangles[:0]  # the Bin Mesh alone gives the faces
    mat, ix = geo.bin_mesh.meshes[-1]
    ix = ix.copy()
    ix[1] = 60000
    geo.bin_mesh.meshes[-1] = (mat, ix)
    split = len(geo.bin_mesh.meshes) - 1
    message = _import_error(f)
    assert f"geometry 1: bin mesh split {split} has index 60000" in message


def test_triangle_material_names_geometry_and_triangle():
    f = dff.read(small()["static_SA"])
    geo = f.clumps[0].geometries()[0]
    geo.extension.items = [i for i in geo.extension.items if i is not geo.bin_mesh]
    geo.tri_materials = geo.tri_materials.copy()
    geo.tri_materials[5] = 7
    assert "geometry 0, triangle 5: material 7 of 2" in _import_error(f)


def test_frame_cycle_names_a_bone():
    from rigport.io_formats.transforms import parent_first_order

    with pytest.raises(ValueError, match=r"cycle: bone 1 \(parent 2\) and 1 more"):
        parent_first_order(np.array([-1, 2, 1]))
