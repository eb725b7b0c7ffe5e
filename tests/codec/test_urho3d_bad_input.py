"""Damaged, truncated and hostile Urho3D files must give a FormatError naming an offset.

Never an IndexError, struct.error, MemoryError or a bare ValueError, never a
huge allocation, and never a silently different file: whatever parses must be
written back byte for byte.
"""

from __future__ import annotations

import functools
import os
import struct
import time
import tracemalloc
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

from rigport.io_formats.codec import FormatError
from rigport.io_formats.urho3d import ani, mdl
from rigport.samples import urho3d as samples

CORPUS = Path(
    os.environ.get(
        "RIGPORT_CORPUS", Path(__file__).resolve().parents[2].parent / "shared" / "corpus"
    )
)
NO_CORPUS = f"real-file corpus not found at {CORPUS}"

# Bytes per vertex of each legacy mask bit, and of each UMD2 element type (from the spec).
LEGACY_SIZES = (12, 12, 4, 8, 8, 12, 12, 16, 16, 4, 16, 16, 16, 4)
TYPE_SIZES = (4, 4, 8, 12, 16, 4, 4)


# --------------------------------------------------------------------------
# the files under test
# --------------------------------------------------------------------------
@functools.cache
def generated() -> dict[str, bytes]:
    return {
        "gen/skinned_mapped.mdl": mdl.write(
            samples.skinned_model(n_bones=70, grid=(140, 4), uv_sets=1, color=False, lods=2)
        ),
        "gen/skinned_small.mdl": mdl.write(samples.skinned_model(n_bones=5, grid=(6, 3), morphs=3)),
        "gen/skinned_legacy.mdl": mdl.write(
            samples.skinned_model(n_bones=4, grid=(5, 3), legacy=True, centers=False, lods=2)
        ),
        "gen/all_elements.mdl": mdl.write(samples.all_elements_model()),
        "gen/legacy_all_bits.mdl": mdl.write(samples.legacy_all_bits_model()),
        "gen/walk.ani": ani.write(samples.walk_animation(samples.skinned_model(n_bones=6), 9)),
    }


def corpus_files() -> list[str]:
    if not CORPUS.is_dir():
        return []
    return sorted(
        f"{p.parent.name}/{p.name}" for ext in ("mdl", "ani") for p in CORPUS.glob(f"*/*.{ext}")
    )


def load(name: str) -> bytes:
    if name.startswith("gen/"):
        return generated()[name]
    if not CORPUS.is_dir():
        pytest.skip(NO_CORPUS)
    return (CORPUS / name).read_bytes()


GENERATED_NAMES = [
    "gen/skinned_mapped.mdl",
    "gen/skinned_small.mdl",
    "gen/skinned_legacy.mdl",
    "gen/all_elements.mdl",
    "gen/legacy_all_bits.mdl",
    "gen/walk.ani",
]
ALL_FILES = corpus_files() + GENERATED_NAMES
CORPUS_MDL = [
    "urho3d/Jack.mdl",
    "urho3d/Box.mdl",
    "rbfx/Plane.mdl",
    "urho3d/LinePrimitives_Basis.mdl",
]


def codec(name: str):
    return ani if name.endswith(".ani") else mdl


# --------------------------------------------------------------------------
# an independent walk over the bytes, following the specification text
# --------------------------------------------------------------------------
def walk_mdl(b: bytes) -> dict[str, list[int]]:
    """Offset of every field of an .mdl file, by name."""
    f: dict[str, list[int]] = defaultdict(list)
    legacy = b[:4] == b"UMDL"
    p = 4

    def u32(name: str) -> int:
        nonlocal p
        f[name].append(p)
        p += 4
        return struct.unpack_from("<I", b, p - 4)[0]

    def skip(name: str, size: int) -> None:
        nonlocal p
        if size:
            f[name].append(p)
        p += size

    def cstring(name: str) -> None:
        nonlocal p
        f[name].append(p)
        p = b.index(b"\0", p) + 1

    for _ in range(u32("vertex buffer count")):
        n = u32("vertex count")
        if legacy:
            mask = u32("legacy mask")
            size = sum(s for bit, s in enumerate(LEGACY_SIZES) if mask >> bit & 1)
        else:
            size = sum(TYPE_SIZES[u32("element") & 0xFF] for _ in range(u32("element count")))
        u32("morph start")
        u32("morph range count")
        skip("vertex data", n * size)
    for _ in range(u32("index buffer count")):
        n = u32("index count")
        skip("index data", n * u32("index size"))
    n_geometries = u32("geometry count")
    for _ in range(n_geometries):
        skip("bone mapping", 4 * u32("bone mapping count"))
        for _ in range(u32("LOD count")):
            skip("LOD distance", 4)
            for name in ("primitive type", "LOD vertex buffer", "LOD index buffer"):
                u32(name)
            u32("LOD index start")
            u32("LOD index count")
    for _ in range(u32("morph count")):
        cstring("morph name")
        for _ in range(u32("morph buffer count")):
            u32("morph vertex buffer")
            mask = u32("morph mask")
            per_vertex = 4 + 12 * sum(1 for bit in (0x1, 0x2, 0x80) if mask & bit)
            skip("morph vertices", per_vertex * u32("morph vertex count"))
    for _ in range(u32("bone count")):
        cstring("bone name")
        u32("bone parent")
        skip("bone transform", 88)
        collision = b[p]
        skip("collision mask", 1)
        skip("bone radius", 4 if collision & 1 else 0)
        skip("bone box", 24 if collision & 2 else 0)
    skip("bounding box", 24)
    if p < len(b):
        skip("geometry centres", 12 * n_geometries)
    assert p == len(b), f"walk ended at {p} of {len(b)}"
    return dict(f)


def walk_ani(b: bytes) -> dict[str, list[int]]:
    f: dict[str, list[int]] = defaultdict(list)
    p = 4
    f["animation name"].append(p)
    p = b.index(b"\0", p) + 1
    f["length"].append(p)
    f["track count"].append(p + 4)
    n_tracks = struct.unpack_from("<I", b, p + 4)[0]
    p += 8
    for _ in range(n_tracks):
        f["track name"].append(p)
        p = b.index(b"\0", p) + 1
        f["track mask"].append(p)
        mask = b[p]
        f["keyframe count"].append(p + 1)
        n = struct.unpack_from("<I", b, p + 1)[0]
        p += 5
        if n:
            f["keyframes"].append(p)
        p += n * (4 + 12 * (mask & 1) + 16 * (mask >> 1 & 1) + 12 * (mask >> 2 & 1))
    assert p == len(b), f"walk ended at {p} of {len(b)}"
    return dict(f)


def walk(name: str, b: bytes) -> dict[str, list[int]]:
    return walk_ani(b) if name.endswith(".ani") else walk_mdl(b)


def patched(b: bytes, offset: int, value: int, fmt: str = "<I") -> bytes:
    out = bytearray(b)
    struct.pack_into(fmt, out, offset, value)
    return bytes(out)


def expect_format_error(module, data: bytes) -> FormatError:
    with pytest.raises(FormatError) as info:
        module.read(data)
    err = info.value
    assert type(err) is FormatError
    assert err.offset is not None, f"no offset in {err}"
    assert 0 <= err.offset <= len(data), f"offset {err.offset} outside {len(data)} bytes: {err}"
    assert f"offset {err.offset}" in str(err)
    return err


# --------------------------------------------------------------------------
# the walk agrees with the codec
# --------------------------------------------------------------------------
@pytest.mark.parametrize("name", ALL_FILES)
def test_spec_walk_reaches_the_end(name):
    b = load(name)
    fields = walk(name, b)
    obj = codec(name).read(b)
    if name.endswith(".ani"):
        assert len(fields.get("track name", [])) == len(obj.tracks)
    else:
        assert len(fields.get("vertex count", [])) == len(obj.vertex_buffers)
        assert len(fields.get("bone parent", [])) == len(obj.bones)
        assert len(fields.get("LOD count", [])) == len(obj.geometries)
        assert ("geometry centres" in fields) == (obj.geometry_centers is not None)


# --------------------------------------------------------------------------
# truncation
# --------------------------------------------------------------------------
def truncation_points(name: str, b: bytes) -> list[int]:
    """Every length for small files; otherwise the header, the last 64 bytes, every
    field boundary (and one byte either side) and a stride through the rest."""
    n = len(b)
    if n <= 16384:
        return list(range(n))
    cuts = set(range(min(n, 512))) | set(range(n - 64, n))
    cuts |= set(range(0, n, max(1, n // 400)))
    for offsets in walk(name, b).values():
        for off in offsets[:200] + offsets[-50:]:
            cuts |= {off - 1, off, off + 1}
    return sorted(c for c in cuts if 0 <= c < n)


@pytest.mark.parametrize("name", ALL_FILES)
def test_truncated_file_gives_format_error(name):
    b = load(name)
    module = codec(name)
    fields = walk(name, b)
    # a model cut right after its bounding box is the older, valid layout
    valid_cut = fields["geometry centres"][0] if "geometry centres" in fields else None
    failures = []
    for cut in truncation_points(name, b):
        data = b[:cut]
        if cut == valid_cut:
            model = module.read(data)
            assert model.geometry_centers is None
            assert module.write(model) == data
            continue
        try:
            module.read(data)
        except FormatError as err:
            if err.offset is None or not 0 <= err.offset <= cut or type(err) is not FormatError:
                failures.append((cut, f"bad error: {err!r}"))
        except Exception as err:  # noqa: BLE001 - anything else is the bug being looked for
            failures.append((cut, repr(err)))
        else:
            failures.append((cut, "parsed without error"))
    assert not failures, f"{len(failures)} truncations misbehaved, first: {failures[:5]}"


@pytest.mark.parametrize("name", ALL_FILES)
def test_trailing_bytes_give_format_error(name):
    b = load(name)
    module = codec(name)
    for extra in (b"\0", b"\0" * 11, b"\0" * 13, b"JUNK" * 100):
        expect_format_error(module, b + extra)


# --------------------------------------------------------------------------
# magic
# --------------------------------------------------------------------------
@pytest.mark.parametrize(
    "data",
    [b"", b"U", b"UMD", b"XMDL" + b"\0" * 40, b"umdl" + b"\0" * 40, b"UANI" + b"\0" * 40],
    ids=["empty", "1 byte", "3 bytes", "XMDL", "lowercase", "animation magic"],
)
def test_bad_model_magic(data):
    err = expect_format_error(mdl, data)
    assert err.offset == 0
    assert "magic" in err.message


def test_unsupported_rbfx_versions_are_named():
    assert "UMD3" in expect_format_error(mdl, b"UMD3" + b"\0" * 40).message
    assert "UAN2" in expect_format_error(ani, b"UAN2" + b"\0" * 40).message


@pytest.mark.parametrize("data", [b"", b"UAN", b"UMDL" + b"\0" * 20, b"uani\0\0\0\0\0\0\0\0\0"])
def test_bad_animation_magic(data):
    assert expect_format_error(ani, data).offset == 0


# --------------------------------------------------------------------------
# counts far larger than the file
# --------------------------------------------------------------------------
COUNT_FIELDS = {
    ".mdl": [
        "vertex buffer count",
        "vertex count",
        "element count",
        "index buffer count",
        "index count",
        "geometry count",
        "bone mapping count",
        "LOD count",
        "morph count",
        "morph buffer count",
        "morph vertex count",
        "bone count",
    ],
    ".ani": ["track count", "keyframe count"],
}
HUGE_TARGETS = [
    "urho3d/Jack.mdl",
    "rbfx/Plane.mdl",
    "urho3d/Jack_Walk.ani",
    "gen/skinned_mapped.mdl",
    "gen/skinned_small.mdl",
    "gen/all_elements.mdl",
    "gen/legacy_all_bits.mdl",
    "gen/walk.ani",
]


def huge_cases():
    for name in HUGE_TARGETS:
        for field in COUNT_FIELDS[Path(name).suffix]:
            for value in (0x7FFFFFFF, 0xFFFFFFFF):
                yield pytest.param(name, field, value, id=f"{name}-{field}-{value:X}")


@pytest.mark.parametrize(("name", "field", "value"), list(huge_cases()))
def test_huge_count_is_refused_without_allocating(name, field, value):
    b = load(name)
    offsets = walk(name, b).get(field)
    if not offsets:
        pytest.skip(f"{name} has no {field}")
    module = codec(name)
    for offset in sorted({offsets[0], offsets[-1]}):
        data = patched(b, offset, value)
        tracemalloc.start()
        started = time.perf_counter()
        try:
            err = expect_format_error(module, data)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert time.perf_counter() - started < 2.0
        assert peak < 2 * len(b) + (8 << 20), f"{peak} bytes allocated for a {len(b)}-byte file"
        assert err.offset <= offset + 4 + 16 or "count" in err.message


# --------------------------------------------------------------------------
# indices out of range
# --------------------------------------------------------------------------
def model_and_fields(name):
    b = load(name)
    return b, mdl.read(b), walk_mdl(b)


@pytest.mark.parametrize("name", CORPUS_MDL + ["gen/all_elements.mdl", "gen/skinned_mapped.mdl"])
def test_index_beyond_vertex_count(name):
    b, model, fields = model_and_fields(name)
    lod = model.geometries[0].lods[0]
    ib = model.index_buffers[lod.index_buffer]
    n_vertices = model.vertex_buffers[lod.vertex_buffer].count
    at = fields["index data"][lod.index_buffer] + lod.index_start * ib.index_size
    fmt = "<H" if ib.index_size == 2 else "<I"
    # the last vertex is fine, one past it is not
    assert mdl.write(mdl.read(patched(b, at, n_vertices - 1, fmt))) == patched(
        b, at, n_vertices - 1, fmt
    )
    for bad in (n_vertices, (1 << (8 * ib.index_size)) - 1):
        if bad < 1 << (8 * ib.index_size):
            err = expect_format_error(mdl, patched(b, at, bad, fmt))
            assert "index" in err.message


def test_index_beyond_vertex_count_in_32_bit_buffer():
    b, model, fields = model_and_fields("gen/all_elements.mdl")
    (g,) = [
        g for g in model.geometries if model.index_buffers[g.lods[0].index_buffer].index_size == 4
    ]
    lod = g.lods[0]
    at = fields["index data"][lod.index_buffer] + 4 * (lod.index_start + lod.index_count - 1)
    count = model.vertex_buffers[lod.vertex_buffer].count
    assert count > 0xFFFF
    for bad in (count, 0xFFFFFFFF):
        expect_format_error(mdl, patched(b, at, bad))


@pytest.mark.parametrize("name", CORPUS_MDL + ["gen/all_elements.mdl", "gen/legacy_all_bits.mdl"])
@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("LOD vertex buffer", "n_vb"),
        ("LOD vertex buffer", 0xFFFFFFFF),
        ("LOD index buffer", "n_ib"),
        ("LOD index buffer", 0x7FFFFFFF),
        ("LOD index start", "n_idx"),
        ("LOD index start", 0xFFFFFFFF),
        ("LOD index count", "n_idx+1"),
        ("LOD index count", 0xFFFFFFFF),
        ("primitive type", 2),
        ("primitive type", 0xFFFFFFFF),
        ("index size", 3),
        ("index size", 0),
        ("index size", 8),
    ],
)
def test_lod_and_index_buffer_references(name, field, value):
    b, model, fields = model_and_fields(name)
    sizes = {
        "n_vb": len(model.vertex_buffers),
        "n_ib": len(model.index_buffers),
        "n_idx": len(model.index_buffers[model.geometries[0].lods[0].index_buffer].indices),
    }
    sizes["n_idx+1"] = sizes["n_idx"] + 1
    at = fields[field][0]
    err = expect_format_error(mdl, patched(b, at, sizes.get(value, value)))
    if field != "index size":
        lod_start = fields["LOD distance"][0]
        assert lod_start <= err.offset <= lod_start + 24, err


@pytest.mark.parametrize("name", CORPUS_MDL + ["gen/skinned_small.mdl", "gen/legacy_all_bits.mdl"])
def test_bone_parent_out_of_range(name):
    b, model, fields = model_and_fields(name)
    if not model.bones:
        pytest.skip(f"{name} has no bones")
    n = len(model.bones)
    at = fields["bone parent"][-1]
    ok = patched(b, at, n - 1)
    assert mdl.write(mdl.read(ok)) == ok
    for bad in (n, 0x7FFFFFFF, 0xFFFFFFFF):
        err = expect_format_error(mdl, patched(b, at, bad))
        assert err.offset == at, err


@pytest.mark.parametrize(
    "name", ["urho3d/Jack.mdl", "gen/skinned_mapped.mdl", "gen/all_elements.mdl"]
)
def test_bone_mapping_beyond_bone_count(name):
    b, model, fields = model_and_fields(name)
    at = fields["bone mapping"][0]
    n = len(model.bones)
    ok = patched(b, at, n - 1)
    assert mdl.write(mdl.read(ok)) == ok
    for bad in (n, 0xFFFFFFFF):
        err = expect_format_error(mdl, patched(b, at, bad))
        assert "bone mapping" in err.message
        assert at <= err.offset < at + 4 * 256, err


@pytest.mark.parametrize(
    "name", ["gen/skinned_small.mdl", "gen/all_elements.mdl", "gen/legacy_all_bits.mdl"]
)
def test_morph_references(name):
    b, model, fields = model_and_fields(name)
    n_vb = len(model.vertex_buffers)
    first = model.morphs[0].buffers[0]
    count = model.vertex_buffers[first.vertex_buffer].count
    for bad in (n_vb, 0xFFFFFFFF):
        expect_format_error(mdl, patched(b, fields["morph vertex buffer"][0], bad))
    # a morphed vertex index past the buffer
    for bad in (count, 0xFFFFFFFF):
        expect_format_error(mdl, patched(b, fields["morph vertices"][0], bad))
    # the morph range of a vertex buffer past its vertices
    vb = model.vertex_buffers[first.vertex_buffer]
    at_start = fields["morph start"][first.vertex_buffer]
    at_count = fields["morph range count"][first.vertex_buffer]
    expect_format_error(mdl, patched(b, at_count, count - vb.morph_start + 1))
    expect_format_error(mdl, patched(b, at_start, 0xFFFFFFFF))


@pytest.mark.parametrize(
    ("name", "value", "what"),
    [
        ("gen/legacy_all_bits.mdl", 0x4000, "unknown legacy bit"),
        ("gen/legacy_all_bits.mdl", 0xFFFFFFFF, "every bit"),
        ("gen/all_elements.mdl", 7, "element type 7"),
        ("gen/all_elements.mdl", 0x0900 | 3, "semantic 9"),
        ("gen/all_elements.mdl", 0x01000003, "bits 24-31 set"),
    ],
)
def test_unknown_vertex_elements(name, value, what):
    b, _, fields = model_and_fields(name)
    at = (fields.get("legacy mask") or fields["element"])[0]
    err = expect_format_error(mdl, patched(b, at, value))
    assert err.offset == at, what


def test_bad_track_mask():
    b = load("gen/walk.ani")
    at = walk_ani(b)["track mask"][0]
    for bad in (8, 0x80, 0xFF):
        assert expect_format_error(ani, patched(b, at, bad, "<B")).offset == at


def test_unterminated_names():
    expect_format_error(ani, b"UANI" + b"Walk" * 4)
    model = mdl.write(samples.legacy_all_bits_model())
    name_at = walk_mdl(model)["bone name"][-1]
    expect_format_error(mdl, model[:name_at] + b"X" * (len(model) - name_at))


def test_error_names_the_file():
    err = expect_format_error(mdl, b"NOPE")
    assert str(err.with_path("models/x.mdl")).startswith("models/x.mdl: offset 0")


# --------------------------------------------------------------------------
# random damage: either a FormatError, or a file that is written back unchanged
# --------------------------------------------------------------------------
def _only_quieted_nans(damaged: bytes, rewritten: bytes) -> bool:
    """A float32 signalling NaN read into a Python float comes back quiet (bit 22
    set): the one known way a scalar float field can differ. Accept only that."""
    if len(damaged) != len(rewritten):
        return False
    a = np.frombuffer(damaged, np.uint8)
    diff = np.nonzero(a != np.frombuffer(rewritten, np.uint8))[0]
    for i in diff:
        word = struct.unpack_from("<I", damaged, i - 2)[0] if i >= 2 else 0
        is_snan = (word & 0x7F800000) == 0x7F800000 and word & 0x7FFFFF and not word & 0x400000
        if not (is_snan and rewritten[i] == damaged[i] | 0x40):
            return False
    return True


@pytest.mark.urho3d_engine(skip=True)  # damaged files re-written byte for byte
@pytest.mark.parametrize("name", ALL_FILES)
def test_random_damage(name):
    b = load(name)
    module = codec(name)
    rng = np.random.default_rng(sum(name.encode()))
    fields = walk(name, b)
    # structural fields are where damage matters: aim half the hits there
    hot = np.array(sorted({o for v in fields.values() for o in v[:100]}))
    failures = []
    for trial in range(1000):
        data = bytearray(b)
        for _ in range(int(rng.integers(1, 4))):
            if trial % 2 and len(hot):
                at = int(hot[rng.integers(len(hot))]) + int(rng.integers(0, 4))
            else:
                at = int(rng.integers(0, len(b)))
            at = min(at, len(b) - 1)
            data[at] = int(rng.integers(0, 256)) if trial % 3 else data[at] ^ (1 << rng.integers(8))
        data = bytes(data)
        try:
            obj = module.read(data)
        except FormatError as err:
            if err.offset is None:
                failures.append((trial, f"no offset: {err}"))
            continue
        except Exception as err:  # noqa: BLE001 - anything else is the bug being looked for
            failures.append((trial, repr(err)))
            continue
        out = module.write(obj)
        if out != data and not _only_quieted_nans(data, out):
            failures.append((trial, "parsed, but was written back differently"))
    assert not failures, f"{len(failures)} damaged files misbehaved, first: {failures[:5]}"


def test_signalling_nan_lod_distance_survives():
    b = load("gen/legacy_all_bits.mdl")
    data = patched(b, walk_mdl(b)["LOD distance"][0], 0x7F800001)
    assert mdl.write(mdl.read(data)) == data


# --------------------------------------------------------------------------
# signalling NaNs in scalar fields, and repeated vertex elements
# --------------------------------------------------------------------------
SNAN = struct.pack("<I", 0x7F800001)
SENTINEL = 1234.5678  # a float32 value no sample file holds by chance


def with_snan(data: bytes) -> bytes:
    """``data`` with the one float32 SENTINEL replaced by a signalling NaN."""
    mark = struct.pack("<f", SENTINEL)
    assert data.count(mark) == 1
    return data.replace(mark, SNAN)


def _set_lod_distance(m):
    m.geometries[0].lods[-1].distance = SENTINEL


def _set_bone_radius(m):
    bone = m.bones[1]
    bone.collision_mask |= 1
    bone.radius = SENTINEL


def _set_morph_weight(m):
    m.morphs[0].weight = SENTINEL


@pytest.mark.parametrize("setter", [_set_lod_distance, _set_bone_radius, _set_morph_weight])
def test_signalling_nan_in_model_scalars_survives(setter):
    from rigport.samples import rbfx as rbfx_samples

    model = rbfx_samples.umd3_model()
    setter(model)
    data = with_snan(mdl.write(model))
    assert mdl.write(mdl.read(data)) == data


def _set_length(a):
    a.length = SENTINEL


def _set_track_weight(a):
    a.tracks[1].weight = SENTINEL


def _set_tension(a):
    a.variant_tracks[0].tension = SENTINEL


def _set_variant_weight(a):
    a.variant_tracks[1].weight = SENTINEL


def _set_string_key_time(a):
    track = a.variant_tracks[2]
    track.times = track.times.copy()  # the sample's tracks share one times array
    track.times[1] = SENTINEL


@pytest.mark.parametrize(
    "setter",
    [_set_length, _set_track_weight, _set_tension, _set_variant_weight, _set_string_key_time],
)
def test_signalling_nan_in_animation_scalars_survives(setter):
    from rigport.samples import rbfx as rbfx_samples

    anim = rbfx_samples.uan2_animation()
    setter(anim)
    data = with_snan(ani.write(anim))
    assert ani.write(ani.read(data)) == data


def _umd2_with_repeated_elements(n: int) -> bytes:
    """One vertex of ``n`` identical float texcoord elements (4 bytes each)."""
    texcoord_float = 1 | 4 << 8
    out = b"UMD2" + struct.pack("<II", 1, 1) + struct.pack("<I", n)
    out += struct.pack(f"<{n}I", *[texcoord_float] * n) + struct.pack("<II", 0, 0)
    out += struct.pack(f"<{n}f", *range(n))
    out += struct.pack("<IIII", 0, 0, 0, 0) + struct.pack("<6f", -1, -1, -1, 1, 1, 1)
    return out


def test_repeated_vertex_elements_read_in_linear_time():
    """3,000 repeated elements (a 24 KB file) once took cubic time in naming the fields;
    read, write and conversion must stay within a CPU-time budget (not wall time)."""
    from rigport.io_formats.urho3d import model_import
    from rigport.tools.mutate import run_one

    data = _umd2_with_repeated_elements(3000)

    def everything(b: bytes) -> None:
        model = mdl.read(b)
        assert mdl.write(model) == b
        assert len(model.vertex_buffers[0].data.dtype.names) == 3000
        model_import.import_model(model, "repeated")

    result = run_one(everything, data, cpu_limit=10.0)
    assert result.outcome == "parsed", result
