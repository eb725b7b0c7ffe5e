"""Unigine operators follow Blender's import/export conventions (issue 14 items 1-3):
options drawn once with tooltips, Collection Exporter scope, Apply Modifiers, axes
and scale with "As Imported", frame rate and scene timing, Reuse Materials, the
imported objects selected, and every action out (embedded, or one .anim each)."""

from __future__ import annotations

import re
import types

import numpy as np
import pytest

from rigport.io_formats.unigine import anim, mesh
from rigport.samples import unigine as samples
from rigport.samples import unigine_compare as compare

OPERATORS = (
    "import_scene.unigine_mesh",
    "export_scene.unigine_mesh",
    "import_anim.unigine_anim",
    "export_anim.unigine_anim",
)
#: Drawn by Blender itself: the file browser (filepath) and the Collection
#: Exporters panel (collection).
NOT_IN_DRAW = {"rna_type", "filepath", "collection"}


def _op(bpy, idname: str):
    group, name = idname.split(".")
    return getattr(getattr(bpy.ops, group), name)


def _write(path, data: bytes) -> str:
    path.write_bytes(data)
    return str(path)


class Layout:
    """Records what ``draw()`` puts in a layout, with no window."""

    def __init__(self, log: list[str]):
        self.log = log
        self.active = self.enabled = True
        self.use_property_split = self.use_property_decorate = False

    def prop(self, data, name: str, **kw) -> None:
        self.log.append(name)

    def label(self, **kw) -> None:
        pass

    def row(self, **kw):
        return Layout(self.log)

    column = box = split = row

    def panel(self, idname: str, default_closed: bool = False):
        return Layout(self.log), Layout(self.log)

    def template_list(self, *args, **kw) -> None:
        pass


def _drawn(bpy, idname: str, **values) -> tuple[list[str], object]:
    """The properties ``draw()`` of operator ``idname`` draws, with its defaults
    (and ``values``), and the operator's RNA."""
    rna = _op(bpy, idname).get_rna_type()
    cls = getattr(bpy.types, rna.identifier)
    log: list[str] = []
    defaults = {p.identifier: getattr(p, "default", None) for p in rna.properties}

    class Fake:
        layout = Layout(log)

        def __getattr__(self, name):
            if name in values:
                return values[name]
            if name in defaults:
                return defaults[name]
            attr = getattr(cls, name)
            return types.MethodType(attr, self) if callable(attr) else attr

    Fake.__name__ = cls.__name__
    cls.draw(Fake(), bpy.context)
    return log, rna


@pytest.mark.parametrize("idname", OPERATORS)
def test_every_option_drawn_once_with_a_tooltip(blank_blend, idname):
    bpy = blank_blend
    log, rna = _drawn(bpy, idname)
    visible = [p for p in rna.properties if not p.is_hidden and p.identifier not in NOT_IN_DRAW]
    assert visible
    for p in visible:
        assert p.description, f"{idname}.{p.identifier} has no tooltip"
        assert log.count(p.identifier) == 1, (p.identifier, log)
        if p.type == "ENUM" and p.identifier not in ("axis_forward", "axis_up"):  # bpy_extras
            for item in p.enum_items:
                assert re.fullmatch(r"[A-Z0-9_]+", item.identifier), item.identifier
                assert "As imported" not in item.name
    assert sorted(log) == sorted(p.identifier for p in visible)


def test_collection_exporter_draws_no_include_panel(blank_blend):
    log, _ = _drawn(blank_blend, "export_scene.unigine_mesh", collection="X")
    assert "use_selection" not in log and "apply_modifiers" in log


def test_import_selects_what_it_made_root_active(blank_blend, tmp_path):
    bpy = blank_blend
    bpy.ops.mesh.primitive_cube_add()
    cube = bpy.context.active_object
    src = _write(tmp_path / "c.mesh", mesh.write(samples.skinned_mesh()))
    assert bpy.ops.import_scene.unigine_mesh(filepath=src) == {"FINISHED"}
    arm = bpy.data.objects["c"] if bpy.data.objects["c"].type == "ARMATURE" else None
    arm = next(o for o in bpy.data.objects if o.type == "ARMATURE")
    assert bpy.context.view_layer.objects.active == arm
    assert not cube.select_get()
    assert {o.name for o in bpy.context.selected_objects} == {
        o.name for o in bpy.data.objects if o is not cube
    }


def test_reuse_materials(blank_blend, tmp_path):
    bpy = blank_blend
    src = _write(tmp_path / "c.mesh", mesh.write(samples.static_mesh()))
    mine = bpy.data.materials.new("static_0")
    assert bpy.ops.import_scene.unigine_mesh(filepath=src) == {"FINISHED"}
    obj = bpy.context.view_layer.objects.active
    assert obj.material_slots[0].material != mine  # default: new materials
    assert bpy.ops.import_scene.unigine_mesh(filepath=src, reuse_materials=True) == {"FINISHED"}
    obj = bpy.context.view_layer.objects.active
    assert obj.material_slots[0].material == mine


# -- what an export takes ---------------------------------------------------------


def _cube(bpy, name: str, location=(0.0, 0.0, 0.0)):
    bpy.ops.mesh.primitive_cube_add(location=location)
    obj = bpy.context.active_object
    obj.name = name
    obj.data.materials.append(bpy.data.materials.new(name))
    return obj


def test_collection_exporter_writes_only_its_collection(blank_blend, tmp_path):
    bpy = blank_blend
    _cube(bpy, "outside")
    inside = _cube(bpy, "inside", (3.0, 0.0, 0.0))
    coll = bpy.data.collections.new("X")
    bpy.context.scene.collection.children.link(coll)
    bpy.context.scene.collection.objects.unlink(inside)
    coll.objects.link(inside)
    out = tmp_path / "x.mesh"
    assert bpy.ops.export_scene.unigine_mesh(filepath=str(out), collection="X") == {"FINISHED"}
    assert [s.name for s in mesh.read(out.read_bytes()).surfaces] == ["inside"]
    assert bpy.ops.export_scene.unigine_mesh(filepath=str(out)) == {"FINISHED"}
    assert [s.name for s in mesh.read(out.read_bytes()).surfaces] == ["inside", "outside"]
    with pytest.raises(RuntimeError, match="'Y' does not exist"):
        bpy.ops.export_scene.unigine_mesh(filepath=str(out), collection="Y")


def test_collection_exporter_anim_takes_the_collections_armature(blank_blend, tmp_path):
    bpy = blank_blend
    m = samples.skinned_mesh(animations=0)
    a = samples.anim_file(m, 15, n_frames=5, clips=1)
    for name in ("one", "two"):
        bpy.ops.import_scene.unigine_mesh(filepath=_write(tmp_path / f"{name}.mesh", mesh.write(m)))
        bpy.ops.import_anim.unigine_anim(filepath=_write(tmp_path / "a.anim", anim.write(a)))
    one, two = (o for o in bpy.data.objects if o.type == "ARMATURE")
    coll = bpy.data.collections.new("X")
    bpy.context.scene.collection.children.link(coll)
    bpy.context.scene.collection.objects.unlink(one)
    coll.objects.link(one)
    bpy.context.view_layer.objects.active = two
    out = tmp_path / "x.anim"
    assert bpy.ops.export_anim.unigine_anim(filepath=str(out), collection="X") == {"FINISHED"}
    written = anim.read(out.read_bytes())
    assert compare.anim_differences(a, written) == []
    # the scene's two armatures without an active one: a sentence, no file
    bpy.context.view_layer.objects.active = None
    with pytest.raises(RuntimeError, match="2 armatures"):
        bpy.ops.export_anim.unigine_anim(filepath=str(tmp_path / "y.anim"))


def test_apply_modifiers(blank_blend, tmp_path):
    bpy = blank_blend
    obj = _cube(bpy, "box")
    obj.modifiers.new("Bevel", "BEVEL").width = 0.1
    out = tmp_path / "box.mesh"
    assert bpy.ops.export_scene.unigine_mesh(filepath=str(out)) == {"FINISHED"}
    bevelled = mesh.read(out.read_bytes()).surfaces[0]
    assert bpy.ops.export_scene.unigine_mesh(filepath=str(out), apply_modifiers=False) == {
        "FINISHED"
    }
    plain = mesh.read(out.read_bytes()).surfaces[0]
    assert plain.n_coords == 8 and bevelled.n_coords > 8
    assert len(bevelled.tris) > len(plain.tris)
    assert "box" in bpy.data.objects and len(bpy.data.objects) == 1  # the copy is gone


def _default_export(bpy, tmp_path, data: bytes) -> bytes:
    """What the default options write for ``data`` (the samples list a vertex's
    influences in their own order, the exporter strongest first, and embedded
    keys pick up float noise in pose space), in a blend file of its own."""
    src = _write(tmp_path / "sample.mesh", data)
    bpy.ops.import_scene.unigine_mesh(filepath=src)
    out = tmp_path / "default.mesh"
    assert bpy.ops.export_scene.unigine_mesh(filepath=str(out)) == {"FINISHED"}
    assert compare.mesh_differences(mesh.read(data), mesh.read(out.read_bytes())) == []
    bpy.ops.wm.read_factory_settings(use_empty=True)
    return out.read_bytes()


def test_armature_modifier_alone_is_byte_identical(blank_blend, tmp_path):
    """A skinned mesh with only its Armature modifier: the default export (Apply
    Modifiers on) writes the bytes it writes with the option off, and a file
    RigPort wrote (no embedded animations) comes back byte for byte."""
    bpy = blank_blend
    data = mesh.write(samples.skinned_mesh(animations=0))
    original = _default_export(bpy, tmp_path, data)
    bpy.ops.import_scene.unigine_mesh(filepath=_write(tmp_path / "c.mesh", original))
    assert [m.type for o in bpy.data.objects for m in o.modifiers] == ["ARMATURE"]
    a, b = tmp_path / "a.mesh", tmp_path / "b.mesh"
    assert bpy.ops.export_scene.unigine_mesh(filepath=str(a)) == {"FINISHED"}
    assert bpy.ops.export_scene.unigine_mesh(filepath=str(b), apply_modifiers=False) == {"FINISHED"}
    assert a.read_bytes() == b.read_bytes() == original


# -- axes and scale ---------------------------------------------------------------


@pytest.mark.parametrize(
    "options",
    [
        {"global_scale": 0.01},
        {"axis_forward": "-X", "axis_up": "Y"},
        {"global_scale": 2.5, "axis_forward": "Z", "axis_up": "-Y"},
    ],
    ids=["scale", "axes", "both"],
)
@pytest.mark.parametrize("build", [samples.skinned_mesh, samples.static_mesh])
def test_import_options_export_as_imported(blank_blend, tmp_path, options, build):
    """Imported with other axes and scale (on the root objects), exported with the
    default options: the bytes a default import writes, the file's data."""
    bpy = blank_blend
    original = mesh.write(build())
    expected = _default_export(bpy, tmp_path, original)
    src = _write(tmp_path / "c.mesh", original)
    assert bpy.ops.import_scene.unigine_mesh(filepath=src, **options) == {"FINISHED"}
    root = bpy.context.view_layer.objects.active
    scale = options.get("global_scale", 1.0)
    assert np.allclose(np.linalg.det(np.array(root.matrix_world)[:3, :3]), scale**3, rtol=1e-5)
    out = tmp_path / "out.mesh"
    assert bpy.ops.export_scene.unigine_mesh(filepath=str(out)) == {"FINISHED"}
    assert out.read_bytes() == expected
    # "As Imported" off: the Blender-space data, scaled and turned
    assert bpy.ops.export_scene.unigine_mesh(
        filepath=str(out), use_transform_as_imported=False
    ) == {"FINISHED"}
    moved = mesh.read(out.read_bytes())
    assert compare.mesh_differences(mesh.read(original), moved) != []
    a = mesh.read(original).surfaces[0].targets[0].positions
    b = moved.surfaces[0].targets[0].positions
    assert np.allclose(np.linalg.norm(b, axis=1), scale * np.linalg.norm(a, axis=1), rtol=1e-5)


def test_anim_of_a_scaled_import_exports_as_imported(blank_blend, tmp_path):
    """The rig imported at scale 0.01 and turned: its .anim exports to the file's
    data with the default options, and scaled by 100 without As Imported."""
    bpy = blank_blend
    m = samples.skinned_mesh(animations=0)
    options = {"global_scale": 0.01, "axis_forward": "X", "axis_up": "Z"}
    bpy.ops.import_scene.unigine_mesh(
        filepath=_write(tmp_path / "c.mesh", mesh.write(m)), **options
    )
    a = samples.anim_file(m, 127, n_frames=6)
    assert bpy.ops.import_anim.unigine_anim(
        filepath=_write(tmp_path / "a.anim", anim.write(a))
    ) == {"FINISHED"}
    out = tmp_path / "out.anim"
    assert bpy.ops.export_anim.unigine_anim(filepath=str(out)) == {"FINISHED"}
    assert compare.anim_differences(a, anim.read(out.read_bytes())) == []
    assert bpy.ops.export_anim.unigine_anim(filepath=str(out), use_transform_as_imported=False) == {
        "FINISHED"
    }
    b = anim.read(out.read_bytes())
    assert np.allclose(
        np.linalg.norm(b.bind[:, :3], axis=1),
        0.01 * np.linalg.norm(a.bind[:, :3], axis=1),
        atol=1e-7,
    )


def test_export_scale_multiplies_positions(blank_blend, tmp_path):
    bpy = blank_blend
    m = samples.skinned_mesh(n_frames=5)
    src = _write(tmp_path / "c.mesh", mesh.write(m))
    bpy.ops.import_scene.unigine_mesh(filepath=src)
    out = tmp_path / "out.mesh"
    assert bpy.ops.export_scene.unigine_mesh(
        filepath=str(out), use_transform_as_imported=False, global_scale=2.0
    ) == {"FINISHED"}
    b = mesh.read(out.read_bytes())
    for sa, sb in zip(m.surfaces, b.surfaces, strict=True):
        for ta, tb in zip(sa.targets, sb.targets, strict=True):
            assert np.allclose(tb.positions, 2.0 * ta.positions, rtol=1e-6, atol=1e-6)
        assert np.array_equal(sa.targets[0].tangents, sb.targets[0].tangents)
    assert np.allclose(b.bind[:, :3], 2.0 * m.bind[:, :3], atol=1e-5)  # bone offsets
    assert np.allclose(b.bind[:, 3:], m.bind[:, 3:], atol=1e-6)  # rotations and bind scales
    for x, y in zip(m.animations, b.animations, strict=True):
        assert np.allclose(y.frames.translation, 2.0 * x.frames.translation, atol=1e-5)
    # the same for the .anim exporter
    bpy.ops.import_anim.unigine_anim(
        filepath=_write(tmp_path / "a.anim", anim.write(samples.anim_file(m, 127, 6)))
    )
    out = tmp_path / "out.anim"
    assert bpy.ops.export_anim.unigine_anim(
        filepath=str(out), use_transform_as_imported=False, global_scale=2.0
    ) == {"FINISHED"}
    a, b = anim.read((tmp_path / "a.anim").read_bytes()), anim.read(out.read_bytes())
    assert np.allclose(b.bind[:, :3], 2.0 * a.bind[:, :3], atol=1e-5)
    for x, y in zip(a.animations, b.animations, strict=True):
        assert np.allclose(y.translation_min, 2.0 * x.translation_min, atol=1e-5)
        assert np.allclose(y.translation_size, 2.0 * x.translation_size, atol=1e-5)


def test_export_axes_turn_positions_and_kept_tangents(blank_blend, tmp_path):
    """Forward -Y: the file is turned half round Z; the file's tangent quaternions
    turn with it (their normals follow), the bitangent signs stay."""
    bpy = blank_blend
    from rigport.io_formats.unigine.mesh_import import tangent_normals

    m = samples.static_mesh()
    bpy.ops.import_scene.unigine_mesh(filepath=_write(tmp_path / "c.mesh", mesh.write(m)))
    out = tmp_path / "out.mesh"
    assert bpy.ops.export_scene.unigine_mesh(
        filepath=str(out), use_transform_as_imported=False, axis_forward="-Y"
    ) == {"FINISHED"}
    b = mesh.read(out.read_bytes())
    turn = np.diag([-1.0, -1.0, 1.0])
    for sa, sb in zip(m.surfaces, b.surfaces, strict=True):
        assert np.allclose(sb.targets[0].positions, sa.targets[0].positions @ turn, atol=1e-6)
        qa, qb = sa.targets[0].tangents, sb.targets[0].tangents
        assert len(qa) == len(qb)
        na, nb = tangent_normals(qa), tangent_normals(qb)
        assert np.allclose(nb, na @ turn, atol=1e-3)
        assert np.array_equal(qa[:, 3] < 0, qb[:, 3] < 0)


def test_moved_armature_is_honoured(blank_blend, tmp_path):
    """A rig made in Blender (no import record) moved by its object: the file has
    the rig where the scene shows it, skeleton and mesh alike."""
    bpy = blank_blend
    m = samples.skinned_mesh(animations=0)
    src = _write(tmp_path / "c.mesh", mesh.write(m))
    bpy.ops.import_scene.unigine_mesh(filepath=src)
    arm = bpy.context.view_layer.objects.active
    del arm["_rigport_import_transform"]
    arm.location = (1.0, 2.0, 3.0)
    out = tmp_path / "out.mesh"
    assert bpy.ops.export_scene.unigine_mesh(filepath=str(out)) == {"FINISHED"}
    b = mesh.read(out.read_bytes())
    shift = np.array([1.0, 2.0, 3.0], np.float32)
    assert np.allclose(
        b.surfaces[0].targets[0].positions, m.surfaces[0].targets[0].positions + shift, atol=1e-5
    )
    roots = [i for i, bone in enumerate(m.bones) if bone.parent < 0]
    assert np.allclose(b.bind[roots, :3], m.bind[roots, :3] + shift, atol=1e-5)


# -- frame rate -------------------------------------------------------------------


def test_custom_frame_rate_moves_keys_and_round_trips(blank_blend, tmp_path):
    bpy = blank_blend
    m = samples.skinned_mesh(n_frames=12)
    src = _write(tmp_path / "c.mesh", mesh.write(m))
    assert bpy.ops.import_scene.unigine_mesh(filepath=src, frame_rate="CUSTOM") == {"FINISHED"}
    assert tuple(bpy.data.actions["clip_0"].frame_range) == (0.0, 11.0)  # one to one
    bpy.ops.wm.read_factory_settings(use_empty=True)
    assert bpy.ops.import_scene.unigine_mesh(filepath=src, frame_rate="CUSTOM", fps=15.0) == {
        "FINISHED"
    }
    assert tuple(bpy.data.actions["clip_0"].frame_range) == (0.0, 5.5)  # 15 / 30
    assert bpy.context.scene.render.fps == 24  # the mesh importer leaves the scene alone
    out = tmp_path / "out.mesh"
    assert bpy.ops.export_scene.unigine_mesh(filepath=str(out)) == {"FINISHED"}
    assert compare.mesh_differences(m, mesh.read(out.read_bytes())) == []
    bpy.ops.wm.read_factory_settings(use_empty=True)
    bpy.context.scene.render.fps = 60
    assert bpy.ops.import_scene.unigine_mesh(filepath=src) == {"FINISHED"}  # the scene's
    assert tuple(bpy.data.actions["clip_0"].frame_range) == (0.0, 22.0)
    assert bpy.ops.export_scene.unigine_mesh(filepath=str(out)) == {"FINISHED"}
    assert compare.mesh_differences(m, mesh.read(out.read_bytes())) == []


def test_anim_import_sets_scene_timing(blank_blend, tmp_path):
    bpy = blank_blend
    m = samples.skinned_mesh(animations=0)
    bpy.ops.import_scene.unigine_mesh(filepath=_write(tmp_path / "c.mesh", mesh.write(m)))
    path = _write(tmp_path / "a.anim", anim.write(samples.anim_file(m, 15, n_frames=9)))
    scene = bpy.context.scene
    assert bpy.ops.import_anim.unigine_anim(filepath=path, frame_rate="CUSTOM") == {"FINISHED"}
    assert (scene.render.fps, scene.render.fps_base) == (30, 1.0)
    assert (scene.frame_start, scene.frame_end) == (0, 8)
    assert bpy.ops.import_anim.unigine_anim(filepath=path, frame_rate="CUSTOM", fps=60.0) == {
        "FINISHED"
    }
    assert (scene.render.fps, scene.frame_start, scene.frame_end) == (60, 0, 16)
    scene.frame_end = 100
    assert bpy.ops.import_anim.unigine_anim(filepath=path, set_scene_timing=False) == {"FINISHED"}
    assert (scene.render.fps, scene.frame_end) == (60, 100)


def test_export_frame_rate_for_blender_actions(blank_blend, tmp_path):
    """An action keyed in Blender (no import rate) at frames 0..8: Custom 30 writes
    9 file frames, Custom 15 half as many seconds' worth of frames twice as dense."""
    bpy = blank_blend
    m = samples.skinned_mesh(animations=0)
    bpy.ops.import_scene.unigine_mesh(filepath=_write(tmp_path / "c.mesh", mesh.write(m)))
    arm = bpy.context.view_layer.objects.active
    from rigport.operators.blender import compat

    action = bpy.data.actions.new("wave")
    compat.assign_action(arm, action)
    pb = arm.pose.bones[0]
    for frame in (0, 8):
        pb.location = (0.0, frame * 0.1, 0.0)
        pb.keyframe_insert("location", frame=frame)
    out = tmp_path / "w.anim"
    custom = {"filepath": str(out), "frame_rate": "CUSTOM"}
    assert bpy.ops.export_anim.unigine_anim(**custom) == {"FINISHED"}
    assert anim.read(out.read_bytes()).animations[0].frames.n_frames == 9
    assert bpy.ops.export_anim.unigine_anim(**custom, fps=15.0) == {"FINISHED"}
    assert anim.read(out.read_bytes()).animations[0].frames.n_frames == 17


# -- animations out ---------------------------------------------------------------


def _three_actions(bpy, tmp_path):
    """A character with its 2 embedded clips and a third action made in Blender
    (a copy of clip_0 with its root moved), not stashed."""
    m = samples.skinned_mesh(n_frames=6)
    bpy.ops.import_scene.unigine_mesh(filepath=_write(tmp_path / "c.mesh", mesh.write(m)))
    arm = bpy.context.view_layer.objects.active
    walk = bpy.data.actions["clip_0"].copy()
    walk.name = "walk"
    for key in [k for k in walk.keys() if k.lstrip("_").startswith("unigine_")]:
        del walk[key]
    walk.use_fake_user = True
    return m, arm, walk


def test_mesh_export_embeds_all_actions_or_nla_tracks(blank_blend, tmp_path):
    bpy = blank_blend
    m, arm, walk = _three_actions(bpy, tmp_path)
    out = tmp_path / "out.mesh"
    assert bpy.ops.export_scene.unigine_mesh(filepath=str(out)) == {"FINISHED"}
    assert [a.name for a in mesh.read(out.read_bytes()).animations] == ["clip_0", "clip_1"]
    assert bpy.ops.export_scene.unigine_mesh(filepath=str(out), export_animations="ACTIONS") == {
        "FINISHED"
    }
    written = mesh.read(out.read_bytes())
    assert [a.name for a in written.animations] == ["clip_0", "clip_1", "walk"]
    by_name = {a.name: a for a in written.animations}
    walk_rot = by_name["walk"].frames.rotation  # bones in skeleton order: no file order kept
    clip_0 = m.animations[0]
    assert np.array_equal(walk_rot[:, clip_0.bones], clip_0.frames.rotation)
    assert np.array_equal(by_name["clip_1"].frames.rotation, m.animations[1].frames.rotation)
    track = arm.animation_data.nla_tracks.new()
    track.name = "Run"
    track.strips.new("run", 0, walk)
    assert bpy.ops.export_scene.unigine_mesh(filepath=str(out), export_animations="NLA") == {
        "FINISHED"
    }
    assert [a.name for a in mesh.read(out.read_bytes()).animations] == ["clip_0", "clip_1", "Run"]
    assert bpy.ops.export_scene.unigine_mesh(filepath=str(out), export_animations="ACTIVE") == {
        "FINISHED"
    }
    assert [a.name for a in mesh.read(out.read_bytes()).animations] == ["clip_1"]
    assert bpy.ops.export_scene.unigine_mesh(filepath=str(out), export_animations="NONE") == {
        "FINISHED"
    }
    assert mesh.read(out.read_bytes()).animations == []


def test_anim_export_one_file_per_action(blank_blend, tmp_path):
    bpy = blank_blend
    m = samples.skinned_mesh(animations=0)
    bpy.ops.import_scene.unigine_mesh(filepath=_write(tmp_path / "c.mesh", mesh.write(m)))
    a = samples.anim_file(m, 127, n_frames=6, clips=3)
    bpy.ops.import_anim.unigine_anim(filepath=_write(tmp_path / "a.anim", anim.write(a)))
    out = tmp_path / "out" / "hero.anim"
    out.parent.mkdir()
    assert bpy.ops.export_anim.unigine_anim(filepath=str(out)) == {"FINISHED"}
    assert compare.anim_differences(a, anim.read(out.read_bytes())) == []  # As Imported
    out.unlink()
    assert bpy.ops.export_anim.unigine_anim(filepath=str(out), export_animations="ACTIONS") == {
        "FINISHED"
    }
    names = sorted(p.name for p in out.parent.iterdir())
    assert names == ["hero_take_0.anim", "hero_take_1.anim", "hero_take_2.anim"]
    for k, clip in enumerate(a.animations):
        one = anim.AnimFile(a.bounds, a.bones, a.bind, [clip])
        written = anim.read((out.parent / f"hero_take_{k}.anim").read_bytes())
        assert compare.anim_differences(one, written) == []
    for p in out.parent.iterdir():
        p.unlink()
    assert bpy.ops.export_anim.unigine_anim(
        filepath=str(out), export_animations="NLA", use_action_names=True
    ) == {"FINISHED"}
    # the stash tracks keep_actions made are named after their actions
    assert sorted(p.name for p in out.parent.iterdir()) == [
        "take_0.anim",
        "take_1.anim",
        "take_2.anim",
    ]


def test_clashing_action_file_names_are_refused(blank_blend, tmp_path):
    """Two actions whose files would differ only in letter case: a refusal naming
    both, and no file written (once numbered ``_2``)."""
    bpy = blank_blend
    m = samples.skinned_mesh(animations=0)
    bpy.ops.import_scene.unigine_mesh(filepath=_write(tmp_path / "c.mesh", mesh.write(m)))
    a = samples.anim_file(m, 127, n_frames=6, clips=2)
    bpy.ops.import_anim.unigine_anim(filepath=_write(tmp_path / "a.anim", anim.write(a)))
    bpy.data.actions["take_1"].name = "TAKE 0"
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(RuntimeError, match="'TAKE 0' and 'take_0' would both be written"):
        bpy.ops.export_anim.unigine_anim(
            filepath=str(out / "hero.anim"), export_animations="ACTIONS"
        )
    assert list(out.iterdir()) == []


def test_no_action_for_a_choice_is_a_sentence(blank_blend, tmp_path):
    bpy = blank_blend
    m = samples.skinned_mesh(animations=0)
    bpy.ops.import_scene.unigine_mesh(filepath=_write(tmp_path / "c.mesh", mesh.write(m)))
    out = tmp_path / "x.anim"
    with pytest.raises(RuntimeError, match="no NLA track"):
        bpy.ops.export_anim.unigine_anim(filepath=str(out), export_animations="NLA")
    with pytest.raises(RuntimeError, match="no action animates"):
        bpy.ops.export_anim.unigine_anim(filepath=str(out), export_animations="ACTIONS")
    assert list(tmp_path.glob("*.anim")) == []
