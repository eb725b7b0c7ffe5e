"""RenderWare DFF codec: byte round trips, section contents, neutral round trips."""

from __future__ import annotations

import functools
import struct

import numpy as np
import pytest

from rigport.io_formats.renderware import chunks, clump_export, clump_import, dff
from rigport.io_formats.renderware.frames import (
    HANIM_POP,
    HANIM_PUSH,
    FrameName,
    hanim_flags,
    hanim_parents,
)
from rigport.io_formats.renderware.geometry import strip_triangles
from rigport.io_formats.renderware.skin import DEADDEAD
from rigport.samples import renderware as samples


@functools.cache
def generated() -> dict[str, bytes]:
    return {
        "ped_III": dff.write(samples.skinned_ped("III")),
        "ped_VC": dff.write(samples.skinned_ped("VC")),
        "ped_SA": dff.write(samples.skinned_ped("SA")),
        "ped_SA_split": dff.write(samples.skinned_ped("SA", split=True)),
        "ped_VC_full": dff.write(
            samples.skinned_ped(
                "VC", uv_sets=2, prelit=True, morphs=2, split=True, strips=True, unknown=True
            )
        ),
        "ped_III_full": dff.write(
            samples.skinned_ped("III", uv_sets=8, prelit=True, morphs=1, strips=True, unknown=True)
        ),
        "static_SA": dff.write(samples.static_clump("SA")),
        "static_III": dff.write(samples.static_clump("III", atomics=4, uv_sets=1)),
    }


GENERATED = list(generated())


def test_version_stamps_decode_as_measured():
    table = {
        0x1803FFFF: 0x36003,
        0x1003FFFF: 0x34003,
        0x0C02FFFF: 0x33002,
        0x0800FFFF: 0x32000,
        0x0401FFFF: 0x31001,
        0x1400FFFF: 0x35000,
        0x1C02FFFF: 0x37002,
        0x00000310: 0x31000,
    }
    for stamp, version in table.items():
        assert chunks.version_of(stamp) == version
        if stamp >> 16:
            assert chunks.stamp_of(version, stamp & 0xFFFF) == stamp
    assert chunks.version_text(0x36003) == "3.6.0.3"
    for _, version, stamp in chunks.TARGETS.values():
        assert chunks.stamp_of(version) == stamp


@pytest.mark.parametrize("name", ["clump.dff", "teapot.dff"])
def test_corpus_round_trip_is_byte_identical(corpus_dir, name):
    data = (corpus_dir / "renderware" / name).read_bytes()
    assert dff.write(dff.read(data)) == data


def test_corpus_contents(corpus_dir):
    clump = dff.read((corpus_dir / "renderware" / "clump.dff").read_bytes()).clump
    assert clump.version == 0x37002
    assert len(clump.frame_list) == 11 and len(clump.atomics) == 11
    geos = clump.geometries()
    assert [g.num_vertices for g in geos][:3] == [116, 107, 107 - 69]
    assert [len(g.triangles) for g in geos][:3] == [128, 107, 48]
    assert all(len(g.uvs) == 1 and g.bin_mesh is not None for g in geos)
    assert [a.frame for a in clump.atomics][:3] == [10, 1, 5]
    assert clump.frame_list.frames["parent"].tolist() == [-1, 0, 0, 0, 3, 2, 2, 2, 7, 6, 1]
    teapot = dff.read((corpus_dir / "renderware" / "teapot.dff").read_bytes()).clump
    g = teapot.geometries()[0]
    assert (teapot.version, g.num_vertices, len(g.triangles)) == (0x35000, 684, 1024)
    # every Bin Mesh index is a triangle-list index of the same geometry
    for geo in geos + [g]:
        total = sum(len(ix) for _, ix in geo.bin_mesh.meshes)
        assert total == 3 * len(geo.triangles)


@pytest.mark.parametrize("name", GENERATED)
def test_generated_round_trip_is_byte_identical(name):
    data = generated()[name]
    assert dff.write(dff.read(data)) == data


def _skin_chunk(data: bytes) -> tuple[int, int]:
    """Offset and size of the Skin PLG chunk, found by walking the bytes independently."""
    at = data.find(struct.pack("<I", chunks.SKIN_PLG))
    while at >= 0:
        size, stamp = struct.unpack_from("<II", data, at + 4)
        if chunks.version_of(stamp) >= 0x30000 and at + 12 + size <= len(data):
            return at + 12, size
        at = data.find(struct.pack("<I", chunks.SKIN_PLG), at + 1)
    raise AssertionError("no Skin PLG")


@pytest.mark.parametrize("target", ["III", "VC", "SA"])
def test_skin_layout_follows_the_version(target):
    data = generated()[f"ped_{target}"]
    geo = dff.read(data).clump.geometries()[0]
    skin = geo.skin
    start, size = _skin_chunk(data)
    nv, nb = geo.num_vertices, 32
    assert data[start] == nb
    if target == "III":
        assert skin.old_layout and skin.split is None
        assert data[start + 1] == 0 and data[start + 2] == 0  # no used bones, no max weights
        assert size == 4 + 20 * nv + 68 * nb
        first_filler = start + 4 + 20 * nv
        assert struct.unpack_from("<I", data, first_filler)[0] == DEADDEAD
        assert (skin.fillers == DEADDEAD).all()
    else:
        assert not skin.old_layout and skin.split.is_zero()
        used = data[start + 1]
        assert used == len(skin.used_bones) > 0 and data[start + 2] == 4
        assert size == 4 + used + 20 * nv + 64 * nb + 12
    assert skin.matrices.shape == (nb, 4, 4)
    assert np.all(skin.matrices[:, :, 3] == 0)  # fourth column zero, as the games' files
    w = skin.weights
    assert np.all(np.diff(w, axis=1) <= 0)  # sorted by weight
    np.testing.assert_allclose(w.sum(axis=1), 1.0, atol=1e-6)


def test_split_data_is_read_kept_and_written():
    data = generated()["ped_VC_full"]
    skin = dff.read(data).clump.geometries()[0].skin
    s = skin.split
    assert (s.bone_limit, s.num_meshes, s.num_rle) == (16, 2, 3)
    assert s.remap.tolist() == list(range(31, -1, -1))
    assert s.meshes.tolist() == [[0, 2], [2, 1]]
    assert s.rle.tolist() == [[0, 16], [16, 16], [0, 1]]
    start, size = _skin_chunk(data)
    assert data[start + size - 6 : start + size] == bytes([0, 16, 16, 16, 0, 1])


def test_hanim_hierarchy_flags():
    ped = dff.read(generated()["ped_SA"]).clump
    fl = ped.frame_list
    h = fl.hanim(1)
    assert h.nodes is not None and len(h.nodes) == 32
    parents = hanim_parents(h.nodes["flags"])
    skeleton = samples.ped_skeleton(32)
    assert parents.tolist() == skeleton.parents.tolist()
    assert (h.nodes["flags"] & HANIM_PUSH).any() and (h.nodes["flags"] & HANIM_POP).any()
    assert h.nodes["id"].tolist() == [e["rw_bone_id"] for e in skeleton.extras]
    # every bone frame carries its ID, and the HAnim chunk comes before the frame name
    for i in range(1, 33):
        kinds = [type(it).__name__ for it in fl.extensions[i].items]
        assert kinds[:2] == ["HAnimPLG", "FrameName"]
    # a small tree: root(0) -> a(1) -> a1(2); root -> b(3)
    flags = hanim_flags(np.array([-1, 0, 1, 0]))
    assert flags.tolist() == [0, HANIM_PUSH, HANIM_POP, HANIM_POP]
    with pytest.raises(ValueError):
        hanim_flags(np.array([-1, 0, 0, 1]))  # 3 resumes the branch of 1 after 2 started


def test_triangle_strips_and_prelit_and_uv_sets():
    geo = dff.read(generated()["ped_VC_full"]).clump.geometries()[0]
    assert geo.bin_mesh.strips and geo.flags & 1
    assert len(geo.uvs) == 2 and geo.colors is not None and len(geo.morph_targets) == 3
    geo8 = dff.read(generated()["ped_III_full"]).clump.geometries()[0]
    assert len(geo8.uvs) == 8 and geo8.surface == (1.0, 1.0, 1.0)
    assert strip_triangles(np.array([0, 1, 2, 3, 3, 4])).tolist() == [[0, 1, 2], [2, 1, 3]]


def test_unknown_chunks_are_kept_in_place():
    f = dff.read(generated()["ped_VC_full"])
    assert isinstance(f.chunks[0], chunks.RawChunk) and f.chunks[0].type == 0x2B
    assert f.trailing == bytes(20)
    geo = f.clump.geometries()[0]
    kinds = [getattr(i, "type", type(i).__name__) for i in geo.extension.items]
    assert kinds == ["BinMesh", samples.UNKNOWN_PLUGIN + 2, "Skin"]


def _neutral_round_trip(data: bytes, target: str):
    f = dff.read(data)
    imp = clump_import.import_clump(f.clump, "x")
    out, warnings = clump_export.export_clump(clump_export.from_imported(imp), target)
    return f, imp, dff.read(dff.write(out)), warnings


@pytest.mark.parametrize("name", ["clump.dff", "teapot.dff"])
def test_corpus_import_export_without_blender_is_byte_identical(corpus_dir, name):
    """Import to the neutral scene and export at the imported version: the same bytes
    (normals as stored, the file's Bin Mesh order, frame matrices and flags kept)."""
    data = (corpus_dir / "renderware" / name).read_bytes()
    f = dff.read(data)
    imp = clump_import.import_clump(f.clump, "x")
    out, warnings = clump_export.export_clump(clump_export.from_imported(imp), f.clump.stamp)
    assert warnings == []
    assert dff.write(out) == data
    # at another version only the stamps differ
    sa, _ = clump_export.export_clump(clump_export.from_imported(imp), "SA")
    stamp = struct.pack("<I", f.clump.stamp)
    assert dff.write(sa) == data.replace(stamp, struct.pack("<I", chunks.TARGETS["SA"][2]))


@pytest.mark.parametrize("target", ["III", "VC", "SA"])
def test_skinned_ped_neutral_round_trip(target):
    split = target != "III"
    data = dff.write(
        samples.skinned_ped(target, uv_sets=2, prelit=True, morphs=2, split=split, unknown=True)
    )
    f, imp, g, warnings = _neutral_round_trip(data, target)
    assert warnings == []
    assert imp.scene.extras["rw_version"] == chunks.TARGETS[target][1]
    a, b = f.clump.geometries()[0], g.clump.geometries()[0]
    assert a.num_vertices == b.num_vertices
    np.testing.assert_array_equal(a.triangles, b.triangles)
    np.testing.assert_array_equal(a.colors, b.colors)
    for ua, ub in zip(a.uvs, b.uvs, strict=True):
        np.testing.assert_allclose(ua, ub, atol=1e-6)
    for ma, mb in zip(a.morph_targets, b.morph_targets, strict=True):
        np.testing.assert_allclose(ma.positions, mb.positions, atol=1e-6)
    np.testing.assert_array_equal(a.skin.indices, b.skin.indices)
    np.testing.assert_allclose(a.skin.weights, b.skin.weights, atol=1e-7)
    np.testing.assert_allclose(a.skin.matrices, b.skin.matrices, atol=1e-6)
    assert a.skin.old_layout == b.skin.old_layout
    if split:
        assert b.skin.split.to_json() == a.skin.split.to_json()
    ra = [(i.type, i.payload) for i in a.extension.items if isinstance(i, chunks.RawChunk)]
    rb = [(i.type, i.payload) for i in b.extension.items if isinstance(i, chunks.RawChunk)]
    assert ra == rb
    np.testing.assert_allclose(
        f.clump.frame_list.frames["position"], g.clump.frame_list.frames["position"], atol=1e-6
    )


def test_changed_mesh_zeroes_split_data():
    data = dff.write(samples.skinned_ped("SA", split=True))
    imp = clump_import.import_clump(dff.read(data).clump, "x")
    mesh = imp.scene.meshes[0]
    keep = len(mesh.face_starts) - 2
    mesh.corner_verts = mesh.corner_verts[: keep * 3]
    mesh.face_starts = mesh.face_starts[:keep]
    mesh.face_materials = mesh.face_materials[:keep]
    mesh.normals = mesh.normals[: keep * 3]
    mesh.uv_sets[0].uv = mesh.uv_sets[0].uv[: keep * 3]
    out, warnings = clump_export.export_clump(clump_export.from_imported(imp), "SA")
    assert out.clump.geometries()[0].skin.split.is_zero()
    assert any("split data zeroed" in w for w in warnings)


def test_export_sorts_limits_and_normalises_weights():
    data = dff.write(samples.skinned_ped("SA", n_bones=8, rings=5, segments=4))
    imp = clump_import.import_clump(dff.read(data).clump, "x")
    skin = imp.scene.meshes[0].skin
    rng = np.random.default_rng(3)
    nv = len(skin.joints)
    skin.joints = rng.integers(0, 8, (nv, 6)).astype(np.int32)
    skin.weights = rng.random((nv, 6)).astype(np.float32) * 3
    out, _ = clump_export.export_clump(clump_export.from_imported(imp), "SA")
    s = out.clump.geometries()[0].skin
    assert np.all(np.diff(s.weights, axis=1) <= 0)
    np.testing.assert_allclose(s.weights.sum(axis=1), 1.0, atol=1e-6)
    used = np.unique(s.indices[s.weights > 0])
    assert s.used_bones.tolist() == used.tolist() and s.max_weights == 4


def test_several_atomics_and_morph_targets():
    f = dff.read(generated()["static_SA"])
    clump = f.clump
    assert len(clump.atomics) == 3 and [a.frame for a in clump.atomics] == [1, 2, 3]
    imp = clump_import.import_clump(clump, "s")
    assert [m.name for m in imp.scene.meshes] == ["part0", "part1", "part2"]
    assert len(imp.scene.meshes[0].morphs) == 1 and len(imp.scene.meshes[0].uv_sets) == 2
    assert imp.scene.skeleton is None


@pytest.mark.parametrize("target", ["III", "VC", "SA"])
def test_unknown_chunks_come_back_in_place_without_blender(target):
    """Unknown plugins in every extension, a chunk before the clump and padding:
    the neutral round trip at the same version gives the same bytes."""
    src = samples.skinned_ped(target, uv_sets=2, prelit=True, morphs=1, strips=True, unknown=True)
    data = dff.write(src)
    imports = clump_import.import_dff(dff.read(data), "ped")
    out, warnings = clump_export.export_clump(clump_export.from_imported(imports[0]), target)
    assert warnings == []
    assert dff.write(out) == data


def test_skin_layout_by_size_with_used_bones_and_three_bones():
    """The old layout with a used-bone list, and 3 bones where both layouts fit the size."""
    for target, bones in (("III", 3), ("SA", 3), ("III", 5)):
        f = samples.skinned_ped(target, n_bones=bones, rings=4, segments=3)
        skin = f.clump.geometries()[0].skin
        if target == "III":
            skin.used_bones = np.arange(bones, dtype=np.uint8)  # some writers keep the list
        data = dff.write(f)
        back = dff.read(data).clump.geometries()[0].skin
        assert back.old_layout == (target == "III")
        assert back.used_bones.tolist() == skin.used_bones.tolist()
        assert dff.write(dff.read(data)) == data


def test_atomic_on_the_root_bone_without_blender():
    src = samples.skinned_ped("SA", n_bones=12, root_frame=False, unknown=True)
    data = dff.write(src)
    imp = clump_import.import_dff(dff.read(data), "ped")[0]
    assert imp.skin_frame == 0 and imp.frames[0].bone == 0 and imp.warnings == []
    out, warnings = clump_export.export_clump(clump_export.from_imported(imp), "SA")
    assert warnings == [] and dff.write(out) == data


def test_mesh_over_65535_vertices_becomes_several_atomics():
    skeleton = samples.ped_skeleton(8)
    mesh = samples.ped_mesh(skeleton, 100, 700, 1, True, 1)
    assert len(mesh.positions) == 70_100
    frames = [clump_import.FrameNode("root", -1, np.eye(4))]
    for i, name in enumerate(skeleton.names):
        p = int(skeleton.parents[i])
        frames.append(clump_import.FrameNode(name, 0 if p < 0 else p + 1, np.eye(4), bone=i))
    data = clump_export.ExportClump(frames, [clump_export.ExportMesh(mesh, 0)], skeleton)
    out, warnings = clump_export.export_clump(data, "SA", morph_targets="ALL")
    assert any("written as 2 atomics" in w for w in warnings)
    out = dff.read(dff.write(out))
    geos = out.clump.geometries()
    assert len(geos) == len(out.clump.atomics) == 2
    assert all(g.num_vertices <= 0xFFFF for g in geos)
    assert sum(len(g.triangles) for g in geos) == len(mesh.face_starts)
    got = np.concatenate([g.morph_targets[0].positions[g.triangles] for g in geos])
    want = mesh.positions[mesh.corner_verts.reshape(-1, 3)]
    np.testing.assert_array_equal(got, want)
    got = np.concatenate([g.morph_targets[1].positions[g.triangles] for g in geos])
    np.testing.assert_allclose(
        got, want + mesh.morphs[0].position_offsets[mesh.corner_verts.reshape(-1, 3)], atol=1e-6
    )
    w = np.concatenate([g.skin.weights[g.triangles] for g in geos])
    np.testing.assert_allclose(w, mesh.skin.weights[mesh.corner_verts.reshape(-1, 3)], atol=1e-7)


def test_frame_names_as_stored_come_back():
    """Duplicate names, a NUL-padded name and bytes that are not UTF-8."""
    f = samples.static_clump("SA", atomics=3)
    fl = f.clump.frame_list
    fl.extensions[1].find(FrameName).raw = b"part\xe9"
    fl.extensions[2].find(FrameName).raw = b"dup"
    fl.extensions[3].find(FrameName).raw = b"dup\0\0\0"
    data = dff.write(f)
    imp = clump_import.import_clump(dff.read(data).clump, "x")
    assert [fr.name for fr in imp.frames] == ["root", "part\ufffd", "dup", "dup.001"]
    out, _ = clump_export.export_clump(clump_export.from_imported(imp), f.clump.stamp)
    assert dff.write(out) == data


def test_lights_in_a_clump_are_kept_in_place():
    f = samples.static_clump("SA", atomics=2)
    clump = f.clump
    light = [
        chunks.RawChunk(chunks.STRUCT, clump.stamp, struct.pack("<i", 1)),  # the light's frame
        chunks.RawChunk(0x12, clump.stamp, bytes(range(24))),
    ]
    clump.items[-1:-1] = light  # after the atomics, before the extension
    clump.counts = [2, 1, 0]
    data = dff.write(f)
    back = dff.read(data)
    assert back.clump.counts == [2, 1, 0] and dff.write(back) == data
    imp = clump_import.import_clump(back.clump, "x")
    assert any("kept as they are" in w for w in imp.warnings)
    out, _ = clump_export.export_clump(clump_export.from_imported(imp), "SA")
    assert dff.write(out) == data
