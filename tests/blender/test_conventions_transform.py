"""Axes and scale options (``operators/conventions.py``) on registered operators:
``option_matrix`` against ``axis_conversion``, the import transform on the roots
(``place_roots``/``recorded_transform``), and what an export bakes
(``file_matrix``), which default options make exactly the identity."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from rigport.io_formats import global_transform

#: What the probe operators computed, for the tests to read.
FOUND: dict = {}

#: The engine axes of the probes (Urho3D's and Unity's files are Y-up).
ENGINE = ("Z", "Y")


@pytest.fixture(scope="module")
def probes(rigport_registered):
    """An importer and an exporter with the axes options of a Y-up engine, and an
    exporter of a format whose axes are Blender's. ``execute`` records
    ``option_matrix`` and, for the active object, ``file_matrix``."""
    import bpy

    from rigport.operators import conventions

    def execute(self, context):
        FOUND["option"] = conventions.option_matrix(self)
        root = context.view_layer.objects.active
        if root is not None and hasattr(self, "use_transform_as_imported"):
            FOUND["file"] = conventions.file_matrix(self, root, np.array(root.matrix_world))
        return {"FINISHED"}

    @conventions.transform_options(*ENGINE)
    class IMPORT_SCENE_OT_rigport_axes_probe(bpy.types.Operator):
        bl_idname = "import_scene.rigport_axes_probe"
        bl_label = "Axes Probe"

    @conventions.transform_options(*ENGINE, export=True)
    class EXPORT_SCENE_OT_rigport_axes_probe(bpy.types.Operator):
        bl_idname = "export_scene.rigport_axes_probe"
        bl_label = "Axes Probe"

    @conventions.transform_options("Y", "Z", export=True)
    class EXPORT_SCENE_OT_rigport_scale_probe(bpy.types.Operator):
        bl_idname = "export_scene.rigport_scale_probe"
        bl_label = "Scale Probe"

    classes = (
        IMPORT_SCENE_OT_rigport_axes_probe,
        EXPORT_SCENE_OT_rigport_axes_probe,
        EXPORT_SCENE_OT_rigport_scale_probe,
    )
    for cls in classes:
        cls.execute = execute
        bpy.utils.register_class(cls)
    yield bpy.ops
    for cls in reversed(classes):
        bpy.utils.unregister_class(cls)


def _run(op, **kw) -> dict:
    FOUND.clear()
    assert op(**kw) == {"FINISHED"}
    return dict(FOUND)


def _conversion(forward, up, to_forward="Y", to_up="Z") -> np.ndarray:
    from bpy_extras.io_utils import axis_conversion

    return np.array(
        axis_conversion(from_forward=forward, from_up=up, to_forward=to_forward, to_up=to_up)
    )


def test_options_and_defaults(blank_blend, probes):
    from rigport.tests.blender.fake_layout import operator_properties

    imp = operator_properties(blank_blend.types.IMPORT_SCENE_OT_rigport_axes_probe)
    exp = operator_properties(blank_blend.types.EXPORT_SCENE_OT_rigport_axes_probe)
    scale = operator_properties(blank_blend.types.EXPORT_SCENE_OT_rigport_scale_probe)
    assert (imp["axis_forward"].default, imp["axis_up"].default) == ENGINE
    assert imp["global_scale"].default == 1.0 and "use_transform_as_imported" not in imp
    assert exp["use_transform_as_imported"].default is True
    assert exp["use_transform_as_imported"].name == "As Imported"
    assert (scale["axis_forward"].default, scale["axis_up"].default) == ("Y", "Z")
    for props in (imp, exp, scale):
        assert all(p.description for p in props.values())


def test_default_options_are_the_identity(blank_blend, probes):
    assert global_transform.is_identity(_run(probes.import_scene.rigport_axes_probe)["option"])
    assert global_transform.is_identity(_run(probes.export_scene.rigport_axes_probe)["option"])
    assert global_transform.is_identity(_run(probes.export_scene.rigport_scale_probe)["option"])


def test_other_axes_are_axis_conversion_relative_to_the_engine(blank_blend, probes):
    """For a file whose real axes are (f, u) instead of the engine's (F, U), the
    codec's conversion E (engine to Blender) is followed by E @ C @ E^T, where C
    is ``axis_conversion`` from (f, u) to (F, U): the relative conversion, in
    Blender's space."""
    engine = _conversion(*ENGINE)
    axes = ["X", "Y", "Z", "-X", "-Y", "-Z"]
    pairs = [(f, u) for f, u in itertools.product(axes, axes) if f[-1] != u[-1]]
    assert len(pairs) == 24
    for forward, up in pairs:
        m = _run(probes.import_scene.rigport_axes_probe, axis_forward=forward, axis_up=up)["option"]
        expected = engine @ _conversion(forward, up, *ENGINE) @ engine.T
        assert np.allclose(m[:3, :3], expected, atol=1e-12), (forward, up)
        assert np.allclose(m[:3, :3] @ m[:3, :3].T, np.eye(3)) and np.linalg.det(m[:3, :3]) > 0
        assert np.array_equal(m[3], [0, 0, 0, 1]) and np.array_equal(m[:3, 3], [0, 0, 0])


def test_scale_means_blender_units_on_import_and_file_units_on_export(blank_blend, probes):
    imp = _run(probes.import_scene.rigport_axes_probe, global_scale=0.01)["option"]
    assert np.allclose(imp, np.diag([0.01, 0.01, 0.01, 1]))  # Blender = 0.01 x file
    exp = _run(
        probes.export_scene.rigport_axes_probe, global_scale=2.0, use_transform_as_imported=False
    )
    assert np.allclose(exp["option"], np.diag([0.5, 0.5, 0.5, 1]))
    assert "file" not in exp  # no active object
    bpy = blank_blend
    obj = bpy.data.objects.new("Root", bpy.data.meshes.new("Root"))
    bpy.context.scene.collection.objects.link(obj)
    bpy.context.view_layer.objects.active = obj
    for op in (probes.export_scene.rigport_axes_probe, probes.export_scene.rigport_scale_probe):
        baked = _run(op, global_scale=2.0)["file"]  # file = 2 x Blender
        assert np.allclose(baked, np.diag([2, 2, 2, 1])), op


def test_place_roots_records_the_import_transform(blank_blend):
    bpy = blank_blend
    from mathutils import Matrix

    from rigport.operators.conventions import IMPORT_TRANSFORM, place_roots, recorded_transform

    scene = bpy.context.scene
    rig = bpy.data.objects.new("Rig", bpy.data.armatures.new("Rig"))
    child = bpy.data.objects.new("Skin", bpy.data.meshes.new("Skin"))
    lone = bpy.data.objects.new("Prop", bpy.data.meshes.new("Prop"))
    for o in (rig, child, lone):
        scene.collection.objects.link(o)
    child.parent = rig
    lone.location = (1, 2, 3)
    bpy.context.view_layer.update()
    matrix = np.eye(4)
    matrix[:3, :3] = 0.01 * _conversion("-Z", "Y")
    lone_before = np.array(lone.matrix_world)
    place_roots([rig, child, lone], matrix)
    bpy.context.view_layer.update()
    assert np.allclose(np.array(rig.matrix_world), matrix, atol=1e-7)
    assert np.allclose(np.array(child.matrix_world), matrix, atol=1e-7)  # through its parent
    assert np.allclose(np.array(lone.matrix_world), matrix @ lone_before, atol=1e-7)
    assert IMPORT_TRANSFORM not in child
    for root in (rig, lone):
        assert np.array_equal(recorded_transform(root), matrix)  # float64, exactly
    assert recorded_transform(child) is None and recorded_transform(None) is None
    rig[IMPORT_TRANSFORM] = [1.0, 2.0, 3.0]
    assert recorded_transform(rig) is None
    rig[IMPORT_TRANSFORM] = [float("nan")] * 16
    assert recorded_transform(rig) is None
    # the identity moves nothing, and is recorded
    other = bpy.data.objects.new("Other", None)
    scene.collection.objects.link(other)
    other.matrix_world = Matrix.Translation((4, 5, 6))
    place_roots([other], np.eye(4))
    assert np.array_equal(np.array(other.matrix_world)[:3, 3], [4, 5, 6])
    assert np.array_equal(recorded_transform(other), np.eye(4))


@pytest.mark.parametrize(
    "forward, up, scale", [("Z", "Y", 0.01), ("X", "Z", 1.0), ("-Y", "X", 2.5), ("Y", "-X", 100)]
)
def test_as_imported_cancels_the_import_exactly(blank_blend, probes, forward, up, scale):
    """An import with other axes and scale, then an export with default options:
    exactly the identity (nothing is baked, the file comes back bit for bit); with
    As Imported off, the export's own (default) options bake the root's transform."""
    bpy = blank_blend
    from rigport.operators.conventions import place_roots

    matrix = _run(
        probes.import_scene.rigport_axes_probe, axis_forward=forward, axis_up=up, global_scale=scale
    )["option"]
    assert not global_transform.is_identity(matrix)
    rig = bpy.data.objects.new("Rig", bpy.data.armatures.new("Rig"))
    bpy.context.scene.collection.objects.link(rig)
    place_roots([rig], matrix)
    bpy.context.view_layer.update()
    bpy.context.view_layer.objects.active = rig
    baked = _run(probes.export_scene.rigport_axes_probe)["file"]
    assert global_transform.is_identity(baked)
    off = _run(probes.export_scene.rigport_axes_probe, use_transform_as_imported=False)["file"]
    assert np.allclose(off, np.array(rig.matrix_world))
    # the same options on export as on import, instead of As Imported: the identity
    # too (the export's scale is the inverse meaning: file units per Blender unit)
    same = _run(
        probes.export_scene.rigport_axes_probe,
        use_transform_as_imported=False,
        axis_forward=forward,
        axis_up=up,
        global_scale=1.0 / scale,
    )["file"]
    assert global_transform.is_identity(same)
    # the artist moved the rig after the import: the move is written
    rig.location.x += 1.0
    bpy.context.view_layer.update()
    moved = _run(probes.export_scene.rigport_axes_probe)["file"]
    expected = np.linalg.inv(matrix) @ np.array(rig.matrix_world)
    assert np.allclose(moved, expected, atol=1e-6) and not global_transform.is_identity(moved)
