"""A Blender material slot with no faces exports no Urho3D geometry (the engine
refuses a geometry with no LOD levels), and the export names the object and the
material it left out."""

from __future__ import annotations

import numpy as np

from rigport.io_formats.urho3d import engine_rules, mdl


def test_slot_without_faces_is_left_out_and_named(blank_blend, tmp_path):
    from rigport.operators.urho3d.model_exporter import ModelExportOptions, export_mdl

    bpy = blank_blend
    bpy.ops.mesh.primitive_cube_add(size=2.0)
    obj = bpy.context.active_object
    for name in ("Unused", "Skin", "Also unused"):
        obj.data.materials.append(bpy.data.materials.new(name))
    obj.data.polygons.foreach_set("material_index", np.full(6, 1, np.int32))
    path = tmp_path / "cube.mdl"
    result = export_mdl(bpy.context, str(path), [obj], ModelExportOptions())
    model = mdl.read(path.read_bytes())
    assert engine_rules.check(model) == []
    assert len(model.geometries) == 1
    assert model.geometries[0].lods[0].index_count == 36
    said = [m.text for m in result.messages if "left out" in m.text]
    assert said == [
        f"object {obj.name!r}, material {m!r}: no faces or edges use it, "
        "so it is left out of the model"
        for m in ("Unused", "Also unused")
    ]
