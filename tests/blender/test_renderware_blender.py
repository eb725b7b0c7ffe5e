"""RenderWare DFF import/export in Blender: counts, round trips, bad input."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from rigport.io_formats.renderware import chunks, dff
from rigport.io_formats.renderware.frames import hanim_parents
from rigport.samples import renderware as samples
from rigport.tests.support import ODD_VALUES


def _write(path, f: dff.DffFile) -> str:
    path.write_bytes(dff.write(f))
    return str(path)


def _native(data: bytes) -> bytes:
    """The file with its first geometry marked platform-native (found by walking chunks)."""
    p = 12  # inside the clump
    while struct.unpack_from("<I", data, p)[0] != chunks.GEOMETRY_LIST:
        p += 12 + struct.unpack_from("<I", data, p + 4)[0]
    p += 12
    p += 12 + struct.unpack_from("<I", data, p + 4)[0]  # the list's struct
    assert struct.unpack_from("<I", data, p)[0] == chunks.GEOMETRY
    out = bytearray(data)
    flags = struct.unpack_from("<I", data, p + 24)[0]
    struct.pack_into("<I", out, p + 24, flags | 0x01000000)
    return bytes(out)


def _counts(bpy) -> dict:
    return {
        k: len(getattr(bpy.data, k))
        for k in ("objects", "meshes", "armatures", "materials", "images", "actions")
    }


@pytest.mark.parametrize("name", ["clump.dff", "teapot.dff"])
def test_corpus_import_counts(blank_blend, corpus_dir, name):
    bpy = blank_blend
    path = corpus_dir / "renderware" / name
    clump = dff.read(path.read_bytes()).clump
    assert bpy.ops.import_scene.rw_dff(filepath=str(path)) == {"FINISHED"}
    frames = [o for o in bpy.data.objects if "_rw_frame_index" in o]
    meshes = sorted(
        (o for o in bpy.data.objects if o.type == "MESH"), key=lambda o: o["_rw_atomic_index"]
    )
    assert len(frames) == len(clump.frame_list) and len(meshes) == len(clump.atomics)
    by_index = {o["_rw_frame_index"]: o for o in frames}
    parents = clump.frame_list.frames["parent"].tolist()
    for i, p in enumerate(parents):
        assert (by_index[i].parent is None) if p < 0 else (by_index[i].parent == by_index[p])
    for obj, atomic in zip(meshes, clump.atomics, strict=True):
        geo = clump.atomic_geometry(atomic)
        me = obj.data
        assert obj == by_index[atomic.frame]  # a frame holding one atomic is its mesh
        assert obj.name == me.name == by_index[atomic.frame].name
        assert len(me.vertices) == geo.num_vertices
        assert len(me.polygons) == len(geo.triangles)
        assert len(me.uv_layers) == len(geo.uvs)
        assert len(obj.material_slots) == len(geo.material_list.slots)
        pos = np.empty(len(me.vertices) * 3, np.float32)
        me.attributes["position"].data.foreach_get("vector", pos)
        np.testing.assert_array_equal(pos.reshape(-1, 3), geo.morph_targets[0].positions)
        for slot, mat in zip(obj.material_slots, geo.material_list.slot_materials(), strict=True):
            nodes = [n for n in slot.material.node_tree.nodes if n.type == "TEX_IMAGE"]
            if mat.texture is not None:
                assert [n.name for n in nodes] == [mat.texture.name.text]
            assert list(slot.material["rw_color"]) == list(mat.color)
        world = np.array(obj.matrix_world)
        frames = clump.frame_list.frames
        i, m = atomic.frame, np.eye(4)
        while i >= 0:
            f = np.eye(4)
            f[:3, :3] = frames["rotation"][i].T
            f[:3, 3] = frames["position"][i]
            m = f @ m
            i = int(frames["parent"][i])
        np.testing.assert_allclose(world, m, atol=1e-5)


@pytest.mark.parametrize("name", ["clump.dff", "teapot.dff"])
def test_corpus_blender_round_trip_is_byte_identical(blank_blend, corpus_dir, tmp_path, name):
    bpy = blank_blend
    path = corpus_dir / "renderware" / name
    data = path.read_bytes()
    bpy.ops.import_scene.rw_dff(filepath=str(path))
    out = tmp_path / name
    assert bpy.ops.export_scene.rw_dff(filepath=str(out)) == {"FINISHED"}
    assert out.read_bytes() == data
    assert bpy.ops.export_scene.rw_dff(filepath=str(out), target="VC") == {"FINISHED"}
    b = dff.read(out.read_bytes())
    assert b.clump.version == 0x34003
    for ga, gb in zip(dff.read(data).clump.geometries(), b.clump.geometries(), strict=True):
        np.testing.assert_array_equal(ga.triangles, gb.triangles)
        np.testing.assert_array_equal(ga.morph_targets[0].positions, gb.morph_targets[0].positions)


def _assert_same_ped(a: dff.DffFile, b: dff.DffFile, split: bool) -> None:
    ca, cb = a.clump, b.clump
    fa, fb = ca.frame_list, cb.frame_list
    assert [fa.name(i) for i in range(len(fa))] == [fb.name(i) for i in range(len(fb))]
    np.testing.assert_array_equal(fa.frames["parent"], fb.frames["parent"])
    np.testing.assert_allclose(fa.frames["rotation"], fb.frames["rotation"], atol=1e-5)
    np.testing.assert_allclose(fa.frames["position"], fb.frames["position"], atol=1e-5)
    ha, hb = fa.hanim(1), fb.hanim(1)
    np.testing.assert_array_equal(ha.nodes, hb.nodes)
    for i in range(1, len(fa)):
        assert fb.hanim(i).node_id == fa.hanim(i).node_id
        kinds = [type(x).__name__ for x in fb.extensions[i].items]
        assert kinds.index("HAnimPLG") < kinds.index("FrameName")
    ga, gb = ca.geometries()[0], cb.geometries()[0]
    assert ga.num_vertices == gb.num_vertices
    np.testing.assert_array_equal(ga.triangles, gb.triangles)
    np.testing.assert_array_equal(ga.tri_materials, gb.tri_materials)
    np.testing.assert_allclose(ga.morph_targets[0].normals, gb.morph_targets[0].normals, atol=1e-6)
    for ma, mb in zip(ga.morph_targets, gb.morph_targets, strict=True):
        np.testing.assert_allclose(ma.positions, mb.positions, atol=1e-5)
        np.testing.assert_allclose(ma.sphere, mb.sphere, atol=1e-5)
    for ua, ub in zip(ga.uvs, gb.uvs, strict=True):
        np.testing.assert_allclose(ua, ub, atol=1e-6)
    if ga.colors is not None:
        np.testing.assert_array_equal(ga.colors, gb.colors)
    sa, sb = ga.skin, gb.skin
    assert sa.old_layout == sb.old_layout
    np.testing.assert_array_equal(sa.indices, sb.indices)
    np.testing.assert_allclose(sa.weights, sb.weights, atol=1e-6)
    np.testing.assert_allclose(sa.matrices, sb.matrices, atol=1e-5)
    np.testing.assert_array_equal(sa.used_bones, sb.used_bones)
    assert sa.max_weights == sb.max_weights
    if split:
        assert sb.split.to_json() == sa.split.to_json() and not sb.split.is_zero()

    def layout(ext):
        return [
            (c.type, c.payload) if isinstance(c, chunks.RawChunk) else type(c) for c in ext.items
        ]

    assert [layout(e) for e in fa.extensions] == [layout(e) for e in fb.extensions]
    assert layout(ga.extension) == layout(gb.extension)
    assert layout(ca.atomics[0].extension) == layout(cb.atomics[0].extension)
    assert [c.to_bytes() for c in a.chunks[:-1]] == [c.to_bytes() for c in b.chunks[:-1]]
    assert a.trailing == b.trailing
    mats_a = ga.material_list.slot_materials()
    mats_b = gb.material_list.slot_materials()
    assert [m.color for m in mats_a] == [m.color for m in mats_b]
    assert [m.texture and m.texture.name.text for m in mats_a] == [
        m.texture and m.texture.name.text for m in mats_b
    ]


@pytest.mark.parametrize("target", ["III", "VC", "SA"])
def test_skinned_ped_round_trip(blank_blend, tmp_path, target):
    bpy = blank_blend
    split = target != "III"
    src = samples.skinned_ped(target, uv_sets=2, prelit=True, morphs=2, split=split, unknown=True)
    path = _write(tmp_path / "ped.dff", src)
    assert bpy.ops.import_scene.rw_dff(filepath=path) == {"FINISHED"}
    arm = next(o for o in bpy.data.objects if o.type == "ARMATURE")
    obj = next(o for o in bpy.data.objects if o.type == "MESH")
    assert len(arm.data.bones) == 32 and arm.parent.name == "ped"
    assert [b.name for b in arm.data.bones] == samples.ped_skeleton(32).names
    assert arm.data.bones["Bone05"]["rw_bone_id"] == 16
    assert len(obj.vertex_groups) == 32 and len(obj.data.uv_layers) == 2
    assert "prelit" in obj.data.color_attributes
    assert [k.name for k in obj.data.shape_keys.key_blocks] == ["Basis", "morph1", "morph2"]
    out = tmp_path / "out.dff"
    assert bpy.ops.export_scene.rw_dff(filepath=str(out)) == {"FINISHED"}
    back = dff.read(out.read_bytes())
    assert back.clump.stamp == chunks.TARGETS[target][2]
    _assert_same_ped(src, back, split)
    assert out.read_bytes() == dff.write(src)  # nothing changed: the same bytes
    # and the written file imports again to the same Blender data
    bpy.ops.wm.read_factory_settings(use_empty=True)
    assert bpy.ops.import_scene.rw_dff(filepath=str(out)) == {"FINISHED"}
    out2 = tmp_path / "out2.dff"
    assert bpy.ops.export_scene.rw_dff(filepath=str(out2)) == {"FINISHED"}
    assert out2.read_bytes() == out.read_bytes()


@pytest.mark.parametrize(("source", "target"), [("SA", "III"), ("III", "VC"), ("VC", "SA")])
def test_export_to_another_version_uses_its_skin_layout(blank_blend, tmp_path, source, target):
    bpy = blank_blend
    src = samples.skinned_ped(source)
    bpy.ops.import_scene.rw_dff(filepath=_write(tmp_path / "ped.dff", src))
    out = tmp_path / "out.dff"
    assert bpy.ops.export_scene.rw_dff(filepath=str(out), target=target) == {"FINISHED"}
    data = out.read_bytes()
    back = dff.read(data)
    skin = back.clump.geometries()[0].skin
    assert skin.old_layout == (target == "III")
    assert back.clump.version == chunks.TARGETS[target][1]
    a = src.clump.geometries()[0].skin
    np.testing.assert_allclose(a.weights, skin.weights, atol=1e-6)
    np.testing.assert_allclose(a.matrices, skin.matrices, atol=1e-5)
    assert back.clump.geometries()[0].surface == ((1.0, 1.0, 1.0) if target == "III" else None)


def test_several_meshes_share_one_armature(blank_blend, tmp_path):
    bpy = blank_blend
    bpy.ops.import_scene.rw_dff(filepath=_write(tmp_path / "ped.dff", samples.skinned_ped("SA")))
    obj = next(o for o in bpy.data.objects if o.type == "MESH")
    twin = obj.copy()
    twin.data = obj.data.copy()
    twin.name = "ped_twin"
    bpy.context.collection.objects.link(twin)
    out = tmp_path / "two.dff"
    assert bpy.ops.export_scene.rw_dff(filepath=str(out)) == {"FINISHED"}
    clump = dff.read(out.read_bytes()).clump
    assert len(clump.atomics) == 2 and {a.frame for a in clump.atomics} == {0}
    assert len(clump.frame_list) == 33
    s0, s1 = (g.skin for g in clump.geometries())
    np.testing.assert_array_equal(s0.indices, s1.indices)
    np.testing.assert_allclose(s0.matrices, s1.matrices)
    parents = hanim_parents(clump.frame_list.hanim(1).nodes["flags"])
    assert parents.tolist() == samples.ped_skeleton(32).parents.tolist()


def test_new_scene_exports_a_ped(blank_blend, tmp_path):
    """A mesh and armature made in Blender (no RenderWare properties) become a clump
    with a root frame, bone frames with HAnim IDs and a skin."""
    bpy = blank_blend
    bpy.ops.import_scene.rw_dff(filepath=_write(tmp_path / "ped.dff", samples.skinned_ped("SA")))
    for obj in list(bpy.data.objects):
        for key in [k for k in obj.keys() if k.startswith(("rw_", "_rw_"))]:
            del obj[key]
        if obj.type == "ARMATURE":
            for bone in obj.data.bones:
                for key in [k for k in bone.keys() if k.startswith(("rw_", "_rw_"))]:
                    del bone[key]
        if obj.type == "EMPTY":
            bpy.data.objects.remove(obj)
    out = tmp_path / "new.dff"
    assert bpy.ops.export_scene.rw_dff(filepath=str(out)) == {"FINISHED"}
    clump = dff.read(out.read_bytes()).clump
    assert clump.version == 0x36003 and len(clump.frame_list) == 33
    h = clump.frame_list.hanim(1)
    assert len(h.nodes) == 32 and len(set(h.nodes["id"].tolist())) == 32
    skin = clump.geometries()[0].skin
    assert skin.num_bones == 32 and skin.max_weights == 4 and skin.split.is_zero()


def test_images_beside_the_file_are_loaded(blank_blend, tmp_path):
    bpy = blank_blend
    img = bpy.data.images.new("ped_skin", 2, 2)
    img.filepath_raw = str(tmp_path / "PED_SKIN.png")
    img.file_format = "PNG"
    img.save()
    bpy.data.images.remove(img)
    bpy.ops.import_scene.rw_dff(filepath=_write(tmp_path / "ped.dff", samples.skinned_ped("SA")))
    mat = bpy.data.materials["ped_skin"]
    node = next(n for n in mat.node_tree.nodes if n.type == "TEX_IMAGE")
    assert node.name == "ped_skin" and node.image is not None
    assert node.image.filepath.lower().endswith("ped_skin.png")


def test_bad_files_leave_nothing_behind(blank_blend, tmp_path):
    bpy = blank_blend
    good = _write(tmp_path / "good.dff", samples.skinned_ped("SA", n_bones=6, rings=4))
    data = (tmp_path / "good.dff").read_bytes()
    (tmp_path / "short.dff").write_bytes(data[: len(data) // 2])
    before = _counts(bpy)
    with pytest.raises(RuntimeError, match="short.dff: offset 0"):
        bpy.ops.import_scene.rw_dff(
            directory=str(tmp_path), files=[{"name": "good.dff"}, {"name": "short.dff"}]
        )
    assert _counts(bpy) == before
    # a file that parses but cannot be imported: native geometry, after a good one
    (tmp_path / "native.dff").write_bytes(_native(data))
    with pytest.raises(RuntimeError, match="platform-native"):
        bpy.ops.import_scene.rw_dff(
            directory=str(tmp_path), files=[{"name": "good.dff"}, {"name": "native.dff"}]
        )
    assert _counts(bpy) == before
    assert bpy.ops.import_scene.rw_dff(filepath=good) == {"FINISHED"}


def test_native_geometry_error_names_the_problem(rigport_registered, blank_blend, tmp_path):
    from rigport.io_formats.codec import FormatError
    from rigport.operators.renderware.clump_importer import ClumpImportOptions, import_clump_file

    data = dff.write(samples.static_clump("SA", atomics=1))
    path = tmp_path / "ps2.dff"
    path.write_bytes(_native(data))
    with pytest.raises(FormatError, match="platform-native geometry .* not supported"):
        import_clump_file(blank_blend.context, str(path), ClumpImportOptions(use_transform=False))


def test_inverse_binds_that_disagree_are_reported(rigport_registered, blank_blend, tmp_path):
    from rigport.operators.renderware.clump_importer import ClumpImportOptions, import_clump_file

    src = samples.skinned_ped("SA", n_bones=6, rings=4)
    skin = src.clump.geometries()[0].skin
    skin.matrices[3, 3, :3] += 0.5  # bone 3 moved in the skin only
    path = _write(tmp_path / "off.dff", src)
    built = import_clump_file(blank_blend.context, path, ClumpImportOptions(use_transform=False))
    warnings = built.warnings
    assert any("disagree with the frame hierarchy for 1 bone " in w for w in warnings)
    inv_bind = skin.matrices[3].T.astype(np.float64)
    inv_bind[3] = (0, 0, 0, 1)
    bind = np.linalg.inv(inv_bind)  # the armature follows the skin's matrices
    np.testing.assert_allclose(built.armature.data.bones[3].head_local, bind[:3, 3], atol=1e-5)


@pytest.mark.parametrize("target", ["VC", "SA"])
def test_atomic_on_the_root_bone_round_trip(blank_blend, tmp_path, target):
    """Frames that are all bones, the skinned atomic hanging from the root bone."""
    bpy = blank_blend
    src = samples.skinned_ped(target, n_bones=12, root_frame=False, split=True)
    assert src.clump.atomics[0].frame == 0 and src.clump.frame_list.hanim(0).nodes is not None
    bpy.ops.import_scene.rw_dff(filepath=_write(tmp_path / "ped.dff", src))
    assert not [o for o in bpy.data.objects if o.type == "EMPTY"]
    out = tmp_path / "out.dff"
    assert bpy.ops.export_scene.rw_dff(filepath=str(out)) == {"FINISHED"}
    assert out.read_bytes() == dff.write(src)


def test_armature_moved_off_its_frame_moves_the_root_bone(blank_blend, tmp_path):
    bpy = blank_blend
    src = samples.skinned_ped("SA", n_bones=6, rings=4)
    bpy.ops.import_scene.rw_dff(filepath=_write(tmp_path / "ped.dff", src))
    arm = next(o for o in bpy.data.objects if o.type == "ARMATURE")
    arm.location = (1.0, 2.0, 3.0)
    out = tmp_path / "out.dff"
    assert bpy.ops.export_scene.rw_dff(filepath=str(out)) == {"FINISHED"}
    a, b = src.clump.frame_list.frames, dff.read(out.read_bytes()).clump.frame_list.frames
    np.testing.assert_allclose(b["position"][1], a["position"][1] + (1, 2, 3), atol=1e-5)
    np.testing.assert_allclose(b["position"][2:], a["position"][2:], atol=1e-6)


def test_second_import_with_taken_names_exports_the_same_bytes(blank_blend, tmp_path):
    bpy = blank_blend
    src = samples.skinned_ped("SA", n_bones=6, rings=4)
    path = _write(tmp_path / "ped.dff", src)
    bpy.ops.import_scene.rw_dff(filepath=path)
    first = set(bpy.data.objects)
    bpy.ops.import_scene.rw_dff(filepath=path)
    second = [o for o in bpy.data.objects if o not in first]
    assert [o.name != "ped" for o in second if "_rw_frame_index" in o] == [True]
    bpy.ops.object.select_all(action="DESELECT")
    for o in second:
        o.select_set(True)
    out = tmp_path / "second.dff"
    assert bpy.ops.export_scene.rw_dff(filepath=str(out), use_selection=True) == {"FINISHED"}
    assert out.read_bytes() == dff.write(src)


# -- values Blender's vertex groups, custom normals and UV maps cannot hold ----------


def _odd_ped(target: str, bits: int) -> dff.DffFile:
    """A ped whose vertex 9 holds ``bits`` in a weight, both UV parts and (when not
    finite: bpy 4.2's custom normals cannot hold a finite normal far from its face's)
    a normal's x."""
    f = samples.skinned_ped(target, n_bones=8, rings=6, segments=6)
    geo = f.clump.geometries()[0]
    geo.skin.weights[9:10, 1:2].view(np.uint32)[...] = bits
    geo.uvs[0][9:10].view(np.uint32)[...] = bits
    if not np.isfinite(np.uint32(bits).view(np.float32)):
        geo.morph_targets[0].normals[9:10, 0:1].view(np.uint32)[...] = bits
    return f


@pytest.mark.parametrize("target", ["III", "SA"])
@pytest.mark.parametrize("value", list(ODD_VALUES))
def test_odd_values_written_back_unedited(blank_blend, tmp_path, value, target):
    """A weight, normal or UV Blender cannot hold as the file has it: the unedited
    export writes the file back byte for byte (the weight's whole row and bones from
    what the import kept; the vertex not split by a NaN unequal to itself; a V whose
    flip quiets a signalling NaN from the kept UVs)."""
    src = _odd_ped(target, ODD_VALUES[value])
    bpy = blank_blend
    assert bpy.ops.import_scene.rw_dff(filepath=_write(tmp_path / "ped.dff", src)) == {"FINISHED"}
    out = tmp_path / "out.dff"
    assert bpy.ops.export_scene.rw_dff(filepath=str(out)) == {"FINISHED"}
    assert out.read_bytes() == dff.write(src)


def test_odd_weight_follows_a_weight_edit(blank_blend, tmp_path):
    """Once the weights are edited, the vertex's row is Blender's, normalised."""
    src = _odd_ped("SA", ODD_VALUES["quiet NaN"])
    bpy = blank_blend
    bpy.ops.import_scene.rw_dff(filepath=_write(tmp_path / "ped.dff", src))
    obj = next(o for o in bpy.data.objects if o.type == "MESH")
    obj.vertex_groups[0].add([0], 0.5, "REPLACE")
    out = tmp_path / "out.dff"
    assert bpy.ops.export_scene.rw_dff(filepath=str(out)) == {"FINISHED"}
    w = dff.read(out.read_bytes()).clump.geometries()[0].skin.weights[9]
    assert np.isfinite(w).all() and abs(float(w.sum()) - 1.0) < 1e-6
