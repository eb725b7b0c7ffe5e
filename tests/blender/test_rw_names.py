"""A fresh RenderWare import names its objects after the file's frames, as DragonFF
does, with no ".001": a frame holding one atomic is that atomic's mesh object (the
object and its mesh named after the frame), the others are empties, the armature
takes the name of the frame holding the HAnim hierarchy. The export still writes
the file's frames, atomics and hierarchy: unedited round trips are byte-identical,
in the new layout and in the old one (an empty per frame, the mesh under it)."""

from __future__ import annotations

import re

import numpy as np
import pytest

from rigport.io_formats.renderware import dff
from rigport.io_formats.renderware.clump_export import ExportClump, ExportMesh, export_clump
from rigport.io_formats.renderware.clump_import import FrameNode, MaterialInfo
from rigport.samples import renderware as samples
from rigport.tests.clients import dragonff_import

SUFFIX = re.compile(r"\.\d{3}$")


def gta_car() -> dff.DffFile:
    """A car as GTA's vehicle files are laid out: a root frame, dummies (frames
    without atomics, one with an empty name), parts each on a frame of their own,
    a wheel on its dummy, and a door frame holding its intact and damaged atomics."""
    names = [
        ("car", -1, False),
        ("chassis_dummy", 0, False),
        ("chassis", 1, True),
        ("chassis_vlo", 1, True),
        ("wheel_lf_dummy", 0, True),
        ("door_lf_dummy", 0, False),
        ("", 0, False),  # a dummy with an empty name, as some tools write
    ]
    frames, meshes = [], []
    mats = [MaterialInfo("paint", (200, 20, 20, 255), "body")]
    for i, (name, parent, holds) in enumerate(names):
        m = np.eye(4)
        m[:3, 3] = (0.3 * i, 0.1 * (i % 3), 0.05 * i)
        frames.append(FrameNode(name, parent, m))
        if holds:
            meshes.append(_part(name, 4 + i, i, mats))
    meshes += [_part(n, 5, 5, mats) for n in ("door_lf_hi_ok", "door_lf_hi_dam")]
    out, _ = export_clump(ExportClump(frames, meshes), "SA", "ALL")
    return out


def _part(name: str, rings: int, frame: int, mats) -> ExportMesh:
    mesh = samples.ped_mesh(samples.ped_skeleton(2), rings, 6, 1, True, 0)
    mesh.skin = None
    mesh.name = name
    return ExportMesh(mesh, frame, mats)


SOURCES = {
    "ped": lambda: samples.skinned_ped("SA", n_bones=6, rings=4),
    "gta_ped": lambda: samples.gta_ped("SA"),
    "car": gta_car,
    "static": lambda: samples.static_clump("SA"),
}


def _write(tmp_path, name: str, data: bytes) -> str:
    path = tmp_path / name
    path.write_bytes(data)
    return str(path)


def _frame_names(f: dff.DffFile) -> list[str | None]:
    """Each frame's name in the file (None: no name plugin)."""
    from rigport.io_formats.renderware.frames import FrameName

    fl = f.clump.frame_list
    out = []
    for i in range(len(fl)):
        p = fl.extensions[i].find(FrameName)
        out.append(None if p is None else p.raw.split(b"\0", 1)[0].decode())
    return out


def _import(bpy, path: str) -> dict:
    assert bpy.ops.import_scene.rw_dff(filepath=path) == {"FINISHED"}
    return {o.name: o for o in bpy.data.objects}


def _export(bpy, tmp_path, name: str) -> bytes:
    out = tmp_path / name
    assert bpy.ops.export_scene.rw_dff(filepath=str(out)) == {"FINISHED"}
    return out.read_bytes()


def _check_names(objects: dict, f: dff.DffFile) -> None:
    """No ".001"; every frame outside the HAnim hierarchy is the object of its name,
    a mesh named after it (object and data) when it holds exactly one atomic."""
    assert not [n for n in objects if SUFFIX.search(n)]
    clump = f.clump
    names = _frame_names(f)
    held = np.bincount([a.frame for a in clump.atomics], minlength=len(names))
    bones = {i for i in range(len(names)) if clump.frame_list.hanim(i) is not None}
    for i, name in enumerate(names):
        if i in bones or not name:
            continue
        obj = objects[name]
        assert obj["_rw_frame_index"] == i
        if held[i] == 1:
            assert obj.type == "MESH" and obj.data.name == name
        else:
            assert obj.type == "EMPTY"


@pytest.mark.parametrize("name", list(SOURCES))
def test_sample_objects_take_the_frame_names(blank_blend, tmp_path, name):
    bpy = blank_blend
    src = SOURCES[name]()
    data = dff.write(src)
    objects = _import(bpy, _write(tmp_path, f"{name}.dff", data))
    _check_names(objects, src)
    assert _export(bpy, tmp_path, "out.dff") == data


def test_car_names_and_empty_frame_name(blank_blend, tmp_path):
    """The car's parts are its frames' meshes; the door's two atomics hang from its
    empty by their own names; the frame with an empty name shows a readable one and
    is written back empty."""
    bpy = blank_blend
    data = dff.write(gta_car())
    objects = _import(bpy, _write(tmp_path, "car.dff", data))
    types = {n: o.type for n, o in objects.items()}
    assert types == {
        "car": "EMPTY",
        "chassis_dummy": "EMPTY",
        "chassis": "MESH",
        "chassis_vlo": "MESH",
        "wheel_lf_dummy": "MESH",
        "door_lf_dummy": "EMPTY",
        "door_lf_dummy_3": "MESH",
        "door_lf_dummy_4": "MESH",
        "car_frame6": "EMPTY",
    }
    assert objects["chassis"].parent == objects["chassis_dummy"]
    assert objects["door_lf_dummy_4"].parent == objects["door_lf_dummy"]
    unnamed = objects["car_frame6"]  # the file's empty name kept hidden
    assert "rw_name" not in unnamed and unnamed["_rw_name_raw"] == ""
    assert _frame_names(dff.read(_export(bpy, tmp_path, "out.dff")))[6] == ""


@pytest.mark.parametrize("name", ["clump.dff", "teapot.dff"])
def test_corpus_objects_take_the_frame_names(blank_blend, corpus_dir, tmp_path, name):
    bpy = blank_blend
    path = corpus_dir / "renderware" / name
    objects = _import(bpy, str(path))
    clump = dff.read(path.read_bytes()).clump
    stem = path.stem
    assert not [n for n in objects if SUFFIX.search(n)]
    for k, atomic in enumerate(clump.atomics):  # unnamed frames: <file>, <file>_frame<i>
        want = stem if atomic.frame == 0 else f"{stem}_frame{atomic.frame}"
        obj = objects[want]
        assert obj.type == "MESH" and obj.data.name == want and obj["_rw_atomic_index"] == k
    assert _export(bpy, tmp_path, name) == path.read_bytes()


def _to_old_layout(bpy) -> None:
    """What RigPort's earlier import made: an empty per frame holding the frame's
    values, its atomic's mesh under it (a fresh import's mesh frames undone)."""
    from rigport.operators.renderware.extract import FRAME_KEYS, SCENE_KEYS

    for obj in [o for o in bpy.data.objects if o.type == "MESH" and "_rw_frame_index" in o]:
        empty = bpy.data.objects.new(obj.name + "_frame", None)
        bpy.context.collection.objects.link(empty)
        for key in list(obj.keys()):
            if key.lstrip("_") in FRAME_KEYS | set(SCENE_KEYS):
                empty[key] = obj[key]
                del obj[key]
        empty.parent = obj.parent
        empty.parent_type, empty.parent_bone = obj.parent_type, obj.parent_bone
        empty.matrix_world = obj.matrix_world.copy()
        for child in list(obj.children):
            world = child.matrix_world.copy()
            child.parent = empty
            child.matrix_world = world
        world = obj.matrix_world.copy()
        obj.parent = empty
        obj.parent_type = "OBJECT"
        obj.matrix_world = world
        name = obj.name
        obj.name = name + "_atomic"
        empty.name = name


@pytest.mark.parametrize("name", ["static", "car"])
def test_old_layout_exports_the_same(blank_blend, tmp_path, name):
    """A .blend saved with the earlier layout (frame empties, meshes under them)."""
    bpy = blank_blend
    data = dff.write(SOURCES[name]())
    _import(bpy, _write(tmp_path, f"{name}.dff", data))
    _to_old_layout(bpy)
    bpy.context.view_layer.update()
    assert not [o for o in bpy.data.objects if o.type == "MESH" and "_rw_frame_index" in o]
    assert _export(bpy, tmp_path, "out.dff") == data


def test_a_copied_mesh_frame_is_one_more_atomic(blank_blend, tmp_path):
    """Shift+D on a mesh frame copies its frame values: the copy is an atomic, not
    a second frame of the same index."""
    bpy = blank_blend
    src = samples.static_clump("SA")
    objects = _import(bpy, _write(tmp_path, "static.dff", dff.write(src)))
    part = objects["part1"]
    twin = part.copy()
    twin.data = part.data.copy()
    bpy.context.collection.objects.link(twin)
    out = dff.read(_export(bpy, tmp_path, "out.dff")).clump
    assert len(out.frame_list) == len(src.clump.frame_list)
    assert len(out.atomics) == len(src.clump.atomics) + 1


@pytest.mark.parametrize("name", ["ped", "gta_ped", "car", "static"])
def test_dragonff_names_the_same_objects(blank_blend, tmp_path, name):
    """DragonFF's objects named after the file's frames (its frame objects and its
    armature) are ours, of the same type. (It names a frame without a name
    "Object", and a frame's second atomic "mesh".)"""
    bpy = blank_blend
    src = SOURCES[name]()
    path = _write(tmp_path, f"{name}.dff", dff.write(src))
    theirs = dragonff_import(path)["objects"]
    ours = _import(bpy, path)
    named = set(_frame_names(src)) - {None, ""}
    frames = [n for n in theirs if n in named]
    assert len(frames) == len([o for o in ours.values() if o.name in named])
    for n in frames:
        assert n in ours, f"DragonFF's {n!r} ({theirs[n]['type']}) is not ours"
        assert ours[n].type == theirs[n]["type"], n
