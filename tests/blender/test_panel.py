"""The RigPort panel and kept data out of sight: the report text per format (and
after an edit), draw() through a recording layout, Forget Kept Data, no long
visible custom properties after an import, and blend files with the old visible
key names still exporting the same bytes."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from rigport.io_formats.bonespro import animation as banim
from rigport.io_formats.bonespro import structure
from rigport.io_formats.mrtk import recording
from rigport.io_formats.renderware import dff, ifp
from rigport.io_formats.unigine import anim as ganim
from rigport.io_formats.unigine import mesh as gmesh
from rigport.io_formats.urho3d import mdl
from rigport.samples import bonespro as bsamples
from rigport.samples import mrtk as msamples
from rigport.samples import renderware as rsamples
from rigport.samples import renderware_ifp as ifp_samples
from rigport.samples import unigine as gsamples
from rigport.samples import urho3d as usamples


def _write(path, data: bytes) -> str:
    path.write_bytes(data)
    return str(path)


def _unigine_mesh():
    return gsamples.skinned_mesh(n_bones=5, rings=6, n_frames=4)


def _import_urho(bpy, tmp_path):
    m = usamples.skinned_model(n_bones=5, grid=(16, 8), morphs=2)
    path = _write(tmp_path / "model.mdl", mdl.write(m))
    assert bpy.ops.import_scene.urho3d_mdl(filepath=path) == {"FINISHED"}
    return path


def _import_unigine(bpy, tmp_path):
    m = _unigine_mesh()
    path = _write(tmp_path / "model.mesh", gmesh.write(m))
    assert bpy.ops.import_scene.unigine_mesh(filepath=path) == {"FINISHED"}
    anim_path = _write(tmp_path / "take.anim", ganim.write(gsamples.anim_file(m)))
    assert bpy.ops.import_anim.unigine_anim(filepath=anim_path) == {"FINISHED"}
    return path


def _import_renderware(bpy, tmp_path):
    path = _write(tmp_path / "ped.dff", dff.write(rsamples.skinned_ped("SA", n_bones=32, rings=6)))
    assert bpy.ops.import_scene.rw_dff(filepath=path) == {"FINISHED"}
    anims = _write(tmp_path / "ped.ifp", ifp.write(ifp_samples.walk_package("SA")))
    assert bpy.ops.import_anim.gta_ifp(filepath=anims) == {"FINISHED"}
    return path


def _import_mrtk(bpy, tmp_path):
    rec = msamples.sample_recording(keys=6, seed=0)
    path = _write(tmp_path / "take.bin", recording.write(rec))
    assert bpy.ops.import_anim.mrtk_input(filepath=path) == {"FINISHED"}
    return path


def _import_bonespro(bpy, tmp_path):
    s = bsamples.structure(n_vertices=24, seed=0)
    path = _write(tmp_path / "rig.txt", structure.write(s))
    assert bpy.ops.import_scene.bonespro_structure(filepath=path) == {"FINISHED"}
    anim = _write(tmp_path / "anim.txt", banim.write(bsamples.animation(s)))
    assert bpy.ops.import_anim.bonespro_anim(filepath=anim) == {"FINISHED"}
    return path


IMPORTS = {
    "urho3d": _import_urho,
    "unigine": _import_unigine,
    "renderware": _import_renderware,
    "mrtk": _import_mrtk,
    "bonespro": _import_bonespro,
}

#: (export operator, extension) of the file each import above starts from.
EXPORTS = {
    "urho3d": ("export_scene.urho3d_mdl", ".mdl"),
    "unigine": ("export_scene.unigine_mesh", ".mesh"),
    "renderware": ("export_scene.rw_dff", ".dff"),
    "mrtk": ("export_anim.mrtk_input", ".bin"),
    "bonespro": ("export_scene.bonespro_structure", ".txt"),
}


def _holders(bpy):
    for coll in (
        bpy.data.objects,
        bpy.data.meshes,
        bpy.data.armatures,
        bpy.data.actions,
        bpy.data.materials,
        bpy.data.collections,
        bpy.data.images,
    ):
        for item in coll:
            yield item
            if isinstance(item, bpy.types.Armature):
                yield from item.bones


def _object(bpy, kind: str, prefix: str = ""):
    return next(o for o in bpy.data.objects if o.type == kind and o.name.startswith(prefix))


def _export(bpy, fmt: str, out) -> bytes:
    op, _ = EXPORTS[fmt]
    group, name = op.split(".")
    assert getattr(getattr(bpy.ops, group), name)(filepath=str(out)) == {"FINISHED"}
    return out.read_bytes()


# ------------------------------------------------------------------ out of sight
@pytest.mark.parametrize("fmt", sorted(IMPORTS))
def test_no_long_visible_property_after_import(blank_blend, tmp_path, fmt):
    """What an import keeps is under hidden names: no visible custom property
    holds more than 256 characters, and no codec key Blender hides is visible."""
    from rigport.operators.blender import kept_keys

    bpy = blank_blend
    IMPORTS[fmt](bpy, tmp_path)
    hidden = 0
    for holder in _holders(bpy):
        for key in holder.keys():
            if key.startswith("_"):
                hidden += 1
                continue
            assert key not in kept_keys.LEGACY, f"{holder!r}: {key} is kept data, shown"
            assert len(str(holder[key])) <= 256, f"{holder!r}: visible {key} is long"
    assert hidden > 0


def test_long_renderware_geometry_is_hidden(blank_blend, corpus_dir):
    """The issue's example: ``rw_geometry`` (thousands of characters) is hidden."""
    bpy = blank_blend
    assert bpy.ops.import_scene.rw_dff(filepath=str(corpus_dir / "renderware/clump.dff")) == {
        "FINISHED"
    }
    meshes = [o for o in bpy.data.objects if o.type == "MESH"]
    assert meshes and all("_rw_geometry" in o and "rw_geometry" not in o for o in meshes)
    for holder in _holders(bpy):
        for key in holder.keys():
            assert key.startswith("_") or len(str(holder[key])) <= 256


def _to_old_names(holder) -> int:
    """Put ``holder``'s kept data back under the visible names an earlier RigPort wrote."""
    from rigport.operators.blender import kept_keys

    old_of = {new: old for old, new in kept_keys.LEGACY.items()}
    moved = 0
    for key in [k for k in holder.keys() if k in old_of]:
        value = holder[key]
        value = value.to_dict() if hasattr(value, "to_dict") else value
        value = value.to_list() if hasattr(value, "to_list") else value
        del holder[key]
        holder[old_of[key]] = value
        moved += 1
    return moved


@pytest.mark.parametrize("fmt", sorted(IMPORTS))
def test_blend_saved_with_old_key_names_exports_the_same(blank_blend, tmp_path, fmt):
    """A blend file whose kept data has the old visible names (as an earlier RigPort
    saved it) exports byte for byte what the same import exports today; loading
    it moves the data to the hidden names."""
    bpy = blank_blend
    IMPORTS[fmt](bpy, tmp_path)
    ext = EXPORTS[fmt][1]
    want = _export(bpy, fmt, tmp_path / f"now{ext}")
    moved = sum(_to_old_names(h) for h in list(_holders(bpy)))
    assert moved > 0
    blend = tmp_path / "old.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(blend))
    bpy.ops.wm.open_mainfile(filepath=str(blend))
    from rigport.operators.blender import kept_keys

    for holder in _holders(bpy):
        assert not [k for k in holder.keys() if k in kept_keys.LEGACY], holder
    got = _export(bpy, fmt, tmp_path / f"old{ext}")
    assert got == want


def test_old_names_read_without_reload(blank_blend, tmp_path):
    """``read_prop`` and the extras readers find kept data under the old visible
    names too (data appended from an old file is not migrated on load)."""
    from rigport.operators.blender.extract import read_extras, read_prop

    bpy = blank_blend
    _import_urho(bpy, tmp_path)
    mesh = _object(bpy, "MESH")
    layout = read_prop(mesh, "urho_layout")
    _to_old_names(mesh)
    assert "urho_layout" in mesh and "_urho_layout" not in mesh
    assert read_prop(mesh, "urho_layout") == layout
    assert read_extras(mesh)["urho_layout"] == layout


# ------------------------------------------------------------------ the report
def _lines(obj) -> list[str]:
    from rigport.ui.report import report_kept

    return report_kept(obj)


def _delete_vertices(bpy, obj, count: int) -> None:
    import bmesh

    bm = bmesh.new()
    bm.from_mesh(obj.data)
    bm.verts.ensure_lookup_table()
    bmesh.ops.delete(bm, geom=list(bm.verts[:count]), context="VERTS")
    bm.to_mesh(obj.data)
    bm.free()


def test_report_urho3d_corpus_and_edit(blank_blend, corpus_dir):
    bpy = blank_blend
    assert bpy.ops.import_scene.urho3d_mdl(filepath=str(corpus_dir / "urho3d/Jack.mdl")) == {
        "FINISHED"
    }
    mesh = next(o for o in bpy.data.objects if o.type == "MESH" and o.get("urho_lod") == 0)
    nv = len(mesh.data.vertices)
    assert nv == 4640
    lines = _lines(mesh)
    assert "Source: Urho3D model (UMDL), LOD 0" in lines
    assert (
        "Kept: original buffers (1 vertex buffer, 1 index buffer, 2 geometries), "
        "valid while the vertex count is 4,640"
    ) in lines
    assert "Kept: the file's normals (custom normals)" in lines
    assert not [line for line in lines if line.startswith("Export:")]
    lod5 = next(o for o in bpy.data.objects if o.type == "MESH" and o.get("urho_lod") == 5)
    assert "Kept: faces the guard left out: 1" in _lines(lod5)
    arm = _object(bpy, "ARMATURE")
    arm_lines = _lines(arm)
    assert "Source: Urho3D model, 7 LODs in the file" in arm_lines
    assert any(x.startswith("Kept: engine bind pose of 67 bones") for x in arm_lines)

    _delete_vertices(bpy, mesh, 2)
    after = _lines(mesh)
    assert "Export: vertex order and buffers will be rebuilt" in after
    edited = next(x for x in after if x.startswith("Export: the mesh was edited"))
    assert f"vertices 4,640 -> {len(mesh.data.vertices):,}" in edited
    _delete_vertices(bpy, lod5, 1)
    assert "Export: the faces and values the import guard kept will be dropped" in _lines(lod5)


def test_report_unigine_and_rest_edit(blank_blend, tmp_path):
    bpy = blank_blend
    _import_unigine(bpy, tmp_path)
    mesh = _object(bpy, "MESH")
    assert "Source: Unigine mesh (ms11), 2 surfaces" in _lines(mesh)
    arm = _object(bpy, "ARMATURE")
    lines = _lines(arm)
    assert "Source: Unigine mesh skeleton" in lines
    assert "Kept: embedded animations: 2 actions" in lines
    assert "Kept: bind scales Blender cannot hold: 5 bones" in lines
    assert not [x for x in lines if x.startswith("Export:")]
    bpy.context.view_layer.objects.active = arm
    bpy.ops.object.mode_set(mode="EDIT")
    arm.data.edit_bones[1].head.x += 0.5
    bpy.ops.object.mode_set(mode="OBJECT")
    assert any(
        x.startswith("Export: rest pose edited on 1 bone: their bind transforms will be rebuilt")
        for x in _lines(arm)
    )


def test_report_renderware_and_edit(blank_blend, tmp_path):
    bpy = blank_blend
    _import_renderware(bpy, tmp_path)
    arm = _object(bpy, "ARMATURE")
    assert "Source: RenderWare clump, version 3.6.0.3" in _lines(arm)
    mesh = _object(bpy, "MESH")
    lines = _lines(mesh)
    assert "Source: RenderWare atomic, geometry version 3.6.0.3" in lines
    assert "Kept: skin layout (bone limits, used bones)" in lines
    rebuilt = (
        "Export: the mesh's faces changed: the next export rebuilds the Bin Mesh, "
        "spheres and split data from Blender's mesh"
    )
    assert rebuilt not in lines
    _delete_vertices(bpy, mesh, 1)
    assert rebuilt in _lines(mesh)


def test_report_mrtk(blank_blend, tmp_path):
    bpy = blank_blend
    _import_mrtk(bpy, tmp_path)
    cam = next(o for o in bpy.data.objects if o.get("_mrtk_role") == "camera")
    lines = _lines(cam)
    coll = cam.users_collection[0].name
    assert f"Source: MRTK input recording 1.1, full curves, recording collection {coll!r}" in lines
    assert "Source: MRTK role: camera" in lines
    assert "Kept: recording settings (axes BLENDER, 24 fps), 4 markers" in lines
    assert any(x.startswith("Kept: the file's curves for 7 channels") for x in lines)


def test_report_bonespro(blank_blend, tmp_path):
    bpy = blank_blend
    _import_bonespro(bpy, tmp_path)
    lines = _lines(_object(bpy, "ARMATURE"))
    assert "Source: BonesPro structure" in lines
    assert "Source: BonesPro animation (Bones, Absolute, Matrix), 5 frames" in lines
    assert "Kept: bind scales Blender cannot hold: 6 bones" in lines


def test_report_import_transform(blank_blend, tmp_path):
    from rigport.operators.conventions import place_roots

    bpy = blank_blend
    _import_urho(bpy, tmp_path)
    arm = _object(bpy, "ARMATURE")
    matrix = np.diag([0.01, 0.01, 0.01, 1.0])
    place_roots([arm], matrix)
    assert "Kept: import transform: scale 0.01" in _lines(arm)


def test_report_of_a_blender_object_is_empty(blank_blend):
    bpy = blank_blend
    bpy.ops.mesh.primitive_cube_add()
    assert _lines(bpy.context.active_object) == []


# ------------------------------------------------------------------ draw()
def _check_icon(icon: str) -> None:
    import bpy

    icons = bpy.types.UILayout.bl_rna.functions["label"].parameters["icon"].enum_items
    assert icon in icons.keys(), f"{icon} is no Blender icon"


class RecordingLayout:
    """A stand-in for ``UILayout`` that records what draw() puts in it (and
    refuses icons Blender does not have, as the real one does)."""

    def __init__(self, calls: list | None = None) -> None:
        self.calls = [] if calls is None else calls

    def label(self, text: str = "", icon: str = "NONE") -> None:
        _check_icon(icon)
        self.calls.append(("label", text, icon))

    def operator(self, idname: str, text: str = "", icon: str = "NONE"):
        _check_icon(icon)
        group, name = idname.split(".")
        import bpy

        assert hasattr(getattr(bpy.ops, group), name), f"no operator {idname}"
        self.calls.append(("operator", idname, icon))
        return SimpleNamespace()

    def box(self) -> RecordingLayout:
        self.calls.append(("box",))
        return RecordingLayout(self.calls)

    def column(self, align: bool = False) -> RecordingLayout:
        return RecordingLayout(self.calls)


@pytest.mark.parametrize("panel_name", ["OBJECT_PT_rigport", "DATA_PT_rigport_armature"])
def test_panel_draw_records_the_report(blank_blend, tmp_path, panel_name):
    from rigport.ui import panel
    from rigport.ui.report import describe

    bpy = blank_blend
    _import_unigine(bpy, tmp_path)
    arm = _object(bpy, "ARMATURE")
    cls = getattr(panel, panel_name)
    context = SimpleNamespace(object=arm)
    assert cls.poll(context)
    layout = RecordingLayout()
    cls.draw(SimpleNamespace(layout=layout), context)
    labels = [c[1] for c in layout.calls if c[0] == "label"]
    report = describe(arm)
    assert labels == [
        "Source",
        *report.source,
        "Kept for the round trip",
        *report.kept,
    ]
    assert ("operator", "object.rigport_forget_kept", "TRASH") in layout.calls
    assert layout.calls.count(("box",)) == 2
    # a mesh is not an armature: the armature data panel does not show for it
    assert (
        panel.DATA_PT_rigport_armature.poll(SimpleNamespace(object=_object(bpy, "MESH"))) is False
    )


def test_panel_draw_for_an_object_without_kept_data(blank_blend):
    from rigport.ui import panel

    bpy = blank_blend
    bpy.ops.mesh.primitive_cube_add()
    layout = RecordingLayout()
    panel.OBJECT_PT_rigport.draw(
        SimpleNamespace(layout=layout), SimpleNamespace(object=bpy.context.active_object)
    )
    assert layout.calls == [("label", "Nothing kept: export builds from Blender's data", "INFO")]


def test_panels_are_registered(blank_blend):
    bpy = blank_blend
    assert hasattr(bpy.types, "OBJECT_PT_rigport")
    assert hasattr(bpy.types, "DATA_PT_rigport_armature")
    assert hasattr(bpy.ops.object, "rigport_forget_kept")


# ------------------------------------------------------------------ forget
def test_forget_asks_first(blank_blend):
    """Forget Kept Data confirms before it runs (the operator's invoke)."""
    from rigport.ui import panel

    asked = []

    def invoke_confirm(op, event, **kw):
        asked.append(kw)
        return {"RUNNING_MODAL"}

    context = SimpleNamespace(window_manager=SimpleNamespace(invoke_confirm=invoke_confirm))
    result = panel.OBJECT_OT_rigport_forget_kept.invoke(SimpleNamespace(), context, None)
    assert result == {"RUNNING_MODAL"}
    assert asked and asked[0]["confirm_text"] == "Forget"
    assert "UNDO" in panel.OBJECT_OT_rigport_forget_kept.bl_options


def test_forget_kept_data_gives_a_clean_rebuild(blank_blend, corpus_dir, tmp_path):
    """With kept data the Box comes back byte for byte (the file's UMDL layout and
    buffers); forgotten, export rebuilds from Blender's data (RigPort's own UMD2
    layout, the vertices welded anew), and the model has the same triangles."""
    from rigport.operators.blender import kept_keys

    bpy = blank_blend
    src = corpus_dir / "urho3d/Box.mdl"
    assert bpy.ops.import_scene.urho3d_mdl(filepath=str(src)) == {"FINISHED"}
    assert _export(bpy, "urho3d", tmp_path / "kept.mdl") == src.read_bytes()
    for obj in bpy.data.objects:
        obj.select_set(True)
    assert bpy.ops.object.rigport_forget_kept() == {"FINISHED"}
    for holder in _holders(bpy):
        assert not [k for k in holder.keys() if kept_keys.is_kept(k)], holder
    mesh = _object(bpy, "MESH")
    assert _lines(mesh) == ["Kept: the file's normals (custom normals)"]
    out = _export(bpy, "urho3d", tmp_path / "rebuilt.mdl")
    assert out != src.read_bytes()
    a, b = mdl.read(src.read_bytes()), mdl.read(out)
    assert a.magic == b"UMDL" and b.magic == b"UMD2"

    def triangles(m):
        vb = m.vertex_buffers[0]
        tris = m.index_buffers[0].indices.reshape(-1, 3)
        pos = np.round(vb.data["position0"][tris], 5).reshape(-1, 9)
        return sorted(map(tuple, pos.tolist()))

    assert triangles(a) == triangles(b)


def test_forget_kept_data_is_undone_by_undo(blank_blend, corpus_dir, tmp_path):
    """Forget Kept Data is undoable: Undo brings every kept property back (nothing lives
    outside Blender's data), and the Box exports byte for byte again. The bpy module
    pushes no undo step after an operator; the test pushes it, as Blender's window
    manager does after every operator with UNDO in its options."""
    from rigport.operators.blender import kept_keys

    bpy = blank_blend
    src = corpus_dir / "urho3d/Box.mdl"
    assert bpy.ops.import_scene.urho3d_mdl(filepath=str(src)) == {"FINISHED"}
    bpy.ops.ed.undo_push(message="imported")

    def kept() -> int:
        return sum(kept_keys.is_kept(k) for h in _holders(bpy) for k in h.keys())

    before = kept()
    assert before > 0
    for obj in bpy.data.objects:
        obj.select_set(True)
    assert bpy.ops.object.rigport_forget_kept() == {"FINISHED"}
    assert kept() == 0
    bpy.ops.ed.undo_push(message="Forget Kept Data")
    assert bpy.ops.ed.undo() == {"FINISHED"}
    assert kept() == before
    assert _export(bpy, "urho3d", tmp_path / "again.mdl") == src.read_bytes()


def test_forget_keeps_identity_and_mrtk_still_exports(blank_blend, tmp_path):
    """Forgetting a recording's kept curves keeps each object's role: export still
    finds every joint and rebuilds the curves from Blender's F-curves, at the
    same key times and values."""
    bpy = blank_blend
    path = _import_mrtk(bpy, tmp_path)
    for obj in bpy.data.objects:
        obj.select_set(True)
    assert bpy.ops.object.rigport_forget_kept() == {"FINISHED"}
    assert all("_mrtk_curves" not in a and "_mrtk_wraps" not in a for a in bpy.data.actions)
    assert sum("_mrtk_role" in o for o in bpy.data.objects) > 50
    out = _export(bpy, "mrtk", tmp_path / "out.bin")
    with open(path, "rb") as f:
        a = recording.read(f.read())
    b = recording.read(out)
    assert (b.major, b.minor, b.layout) == (a.major, a.minor, a.layout)
    assert len(b.camera) == len(a.camera) == 7
    for ca, cb in zip(a.camera, b.camera, strict=True):
        np.testing.assert_allclose(cb.keys["time"], ca.keys["time"], atol=1e-5)
        np.testing.assert_allclose(cb.keys["value"], ca.keys["value"], atol=1e-5)
