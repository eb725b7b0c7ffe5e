"""Triangle winding: faces come into Blender facing the way the file's normals
do, and a mesh made in Blender goes out wound as the format's engine draws
its front faces.

Every format here puts the front of a triangle (a, b, c) on the side the cross
product (b - a) x (c - a) of its own coordinates points to: Blender and Unigine
are right-handed with counter-clockwise front faces, Urho3D left-handed with
clockwise ones (the same side, counted in a mirrored frame). So a file's
geometric normals, computed from its positions, must agree with its vertex
normals and with the outward direction of a closed mesh.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rigport.io_formats.unigine import mesh as unigine_mesh
from rigport.io_formats.urho3d import mdl
from rigport.io_formats.urho3d.vertex_layout import SEM_NORMAL, SEM_POSITION, field_names
from rigport.samples import unigine as unigine_samples
from rigport.samples import urho3d as urho3d_samples
from rigport.tests.clients import dragonff_import

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus"
URHO3D_MODELS = sorted(
    str(p.relative_to(CORPUS))
    for pattern in ("urho3d/*.mdl", "urho3d/*/*.mdl", "rbfx/*.mdl")
    for p in CORPUS.glob(pattern)
    if not p.name.startswith("LinePrimitives")  # lines only: no faces to wind
) or ["urho3d/Box.mdl"]
RENDERWARE = ["renderware/teapot.dff", "renderware/clump.dff"]


def _agreement(bpy) -> tuple[int, int]:
    """(faces whose Blender normal agrees with the file's normals at their
    corners, faces counted) over every mesh object but Urho3D's LODs after 0
    (decimated: their vertices keep LOD 0's smooth normals, so a fifth of
    Mushroom's LOD 4 faces lean against them); degenerate faces (no normal to
    compare) are not counted."""
    agree = total = 0
    for obj in bpy.data.objects:
        if obj.type != "MESH" or not len(obj.data.polygons) or obj.get("urho_lod", 0) > 0:
            continue
        me = obj.data
        n_faces, n_loops = len(me.polygons), len(me.loops)
        face_normals = np.empty(3 * n_faces, np.float32)
        me.polygons.foreach_get("normal", face_normals)
        areas = np.empty(n_faces, np.float32)
        me.polygons.foreach_get("area", areas)
        corner = np.empty(3 * n_loops, np.float32)
        me.corner_normals.foreach_get("vector", corner)
        starts = np.empty(n_faces, np.int32)
        me.polygons.foreach_get("loop_start", starts)
        sizes = np.empty(n_faces, np.int32)
        me.polygons.foreach_get("loop_total", sizes)
        file_normals = np.add.reduceat(corner.reshape(-1, 3), starts, axis=0)
        dots = np.einsum("ij,ij->i", face_normals.reshape(-1, 3), file_normals)
        counted = (areas > 1e-12) & (np.linalg.norm(file_normals, axis=1) > 1e-6)
        agree += int((dots[counted] > 0).sum())
        total += int(counted.sum())
    return agree, total


def _assert_agrees(bpy, what: str) -> None:
    agree, total = _agreement(bpy)
    assert total > 0, what
    assert agree > 0.99 * total, f"{what}: {agree} of {total} faces agree with their normals"


def _front(positions: np.ndarray, corners: np.ndarray) -> np.ndarray:
    """Each triangle's front direction (b - a) x (c - a) and its centre."""
    p = positions[corners.reshape(-1, 3)].astype(np.float64)
    return np.cross(p[:, 1] - p[:, 0], p[:, 2] - p[:, 0]), p.mean(axis=1)


def _make(bpy, kind: str, scale=(1.0, 1.0, 1.0)):
    """A Blender-made cube (size 2 at the origin) or grid (facing +Z), triangulated
    as the exporters triangulate, with ``scale`` on the object."""
    bpy.ops.wm.read_factory_settings(use_empty=True)
    if kind == "cube":
        bpy.ops.mesh.primitive_cube_add(size=2.0)
    else:
        bpy.ops.mesh.primitive_grid_add(x_subdivisions=4, y_subdivisions=3, size=2.0)
    obj = bpy.context.active_object
    obj.scale = scale
    bpy.context.view_layer.update()
    return obj


def _outward(kind: str, centres: np.ndarray, up: np.ndarray) -> np.ndarray:
    """The way a triangle must face: away from the cube's centre, or ``up`` for the grid."""
    return centres if kind == "cube" else np.broadcast_to(up, centres.shape)


def _urho3d_triangles(model: mdl.Model) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(front, centre, mean vertex normal) of every triangle of LOD 0, in the file's axes."""
    fronts, centres, normals = [], [], []
    legacy = model.magic == b"UMDL"
    for geometry in model.geometries:
        d = geometry.lods[0]
        vb = model.vertex_buffers[d.vertex_buffer]
        names = dict(
            zip(
                ((e.semantic, e.index) for e in vb.elements),
                field_names(vb.elements, legacy),
                strict=True,
            )
        )
        idx = (
            model.index_buffers[d.index_buffer]
            .indices[d.index_start : d.index_start + d.index_count]
            .astype(np.int64)
        )
        front, centre = _front(vb.data[names[(SEM_POSITION, 0)]], idx)
        fronts.append(front)
        centres.append(centre)
        normals.append(vb.data[names[(SEM_NORMAL, 0)]][idx.reshape(-1, 3)].mean(axis=1))
    return np.concatenate(fronts), np.concatenate(centres), np.concatenate(normals)


# Import: faces agree with the file's normals.


@pytest.mark.parametrize("rel", URHO3D_MODELS)
def test_urho3d_corpus_faces_agree_with_normals(blank_blend, corpus_dir, rel):
    bpy = blank_blend
    assert bpy.ops.import_scene.urho3d_mdl(filepath=str(corpus_dir / rel)) == {"FINISHED"}
    _assert_agrees(bpy, rel)


def test_urho3d_sample_faces_agree_with_normals(blank_blend, tmp_path):
    bpy = blank_blend
    path = tmp_path / "skinned.mdl"
    path.write_bytes(mdl.write(urho3d_samples.skinned_model()))
    assert bpy.ops.import_scene.urho3d_mdl(filepath=str(path)) == {"FINISHED"}
    _assert_agrees(bpy, path.name)


def test_unigine_sample_faces_agree_with_normals(blank_blend, tmp_path):
    bpy = blank_blend
    for name, m in (
        ("static", unigine_samples.static_mesh()),
        ("skinned", unigine_samples.skinned_mesh()),
    ):
        bpy.ops.wm.read_factory_settings(use_empty=True)
        path = tmp_path / f"{name}.mesh"
        path.write_bytes(unigine_mesh.write(m))
        assert bpy.ops.import_scene.unigine_mesh(filepath=str(path)) == {"FINISHED"}
        _assert_agrees(bpy, path.name)


@pytest.mark.parametrize("rel", RENDERWARE)
def test_renderware_corpus_faces_agree_with_normals(blank_blend, corpus_dir, rel):
    bpy = blank_blend
    assert bpy.ops.import_scene.rw_dff(filepath=str(corpus_dir / rel)) == {"FINISHED"}
    _assert_agrees(bpy, rel)


# Export: a Blender-made mesh goes out with its fronts facing out.

SHAPES = [("cube", (1.0, 1.0, 1.0)), ("grid", (1.0, 1.0, 1.0))]
MIRRORED = ("cube", (-1.0, 1.0, 1.0))


@pytest.mark.parametrize("kind, scale", [*SHAPES, MIRRORED])
def test_urho3d_blender_mesh_exports_front_facing(blank_blend, tmp_path, kind, scale):
    """Urho3D's axes are Blender's with Y and Z swapped: the grid's up is the file's +Y.
    A mirrored object (negative scale), which Blender draws facing out, exports so too."""
    from rigport.operators.urho3d.model_exporter import ModelExportOptions, export_mdl

    bpy = blank_blend
    obj = _make(bpy, kind, scale)
    path = tmp_path / f"{kind}.mdl"
    export_mdl(bpy.context, str(path), [obj], ModelExportOptions())
    front, centre, normal = _urho3d_triangles(mdl.read(path.read_bytes()))
    assert len(front) == 12 if kind == "cube" else len(front) == 24
    outward = _outward(kind, centre, np.array([0.0, 1.0, 0.0]))
    assert (np.einsum("ij,ij->i", front, outward) > 0).all()
    assert (np.einsum("ij,ij->i", front, normal) > 0).all()


@pytest.mark.parametrize("kind, scale", [*SHAPES, MIRRORED])
def test_unigine_blender_mesh_exports_front_facing(blank_blend, tmp_path, kind, scale):
    """Unigine's axes are Blender's (right-handed, Z up, counter-clockwise fronts).
    A mirrored object exports facing out, its triangles agreeing with the normals
    its tangent quaternions carry."""
    from rigport.io_formats.unigine.mesh_import import tangent_normals
    from rigport.operators.unigine.exporter import export_mesh_file
    from rigport.operators.unigine.settings import MeshExportOptions

    bpy = blank_blend
    obj = _make(bpy, kind, scale)
    path = tmp_path / f"{kind}.mesh"
    export_mesh_file(bpy.context, str(path), [obj], MeshExportOptions())
    fronts, centres, normals = [], [], []
    for s in unigine_mesh.read(path.read_bytes()).surfaces:
        front, centre = _front(s.targets[0].positions, s.coords)
        fronts.append(front)
        centres.append(centre)
        normals.append(tangent_normals(s.targets[0].tangents)[s.tris.reshape(-1, 3)].mean(axis=1))
    front, centre = np.concatenate(fronts), np.concatenate(centres)
    assert len(front) == 12 if kind == "cube" else len(front) == 24
    outward = _outward(kind, centre, np.array([0.0, 0.0, 1.0]))
    assert (np.einsum("ij,ij->i", front, outward) > 0).all()
    assert (np.einsum("ij,ij->i", front, np.concatenate(normals)) > 0).all()


@pytest.mark.parametrize("kind, scale", SHAPES)
def test_renderware_blender_mesh_exports_front_facing_in_dragonff(
    blank_blend, tmp_path, kind, scale
):
    """What DragonFF (the GTA modders' importer) builds from the export faces out."""
    from rigport.operators.renderware.clump_exporter import ClumpExportOptions, export_clump_file

    bpy = blank_blend
    obj = _make(bpy, kind, scale)
    path = tmp_path / f"{kind}.dff"
    export_clump_file(bpy.context, str(path), ClumpExportOptions(), [obj])
    built = dragonff_import(path)
    (mesh,) = [o for o in built["objects"].values() if o.get("type") == "MESH"]
    positions = np.array(mesh["positions"], np.float64).reshape(-1, 3)
    front, centre = _front(positions, np.array(mesh["corners"], np.int64))
    assert len(front) == 12 if kind == "cube" else len(front) == 24
    outward = _outward(kind, centre - positions.mean(axis=0), np.array([0.0, 0.0, 1.0]))
    assert (np.einsum("ij,ij->i", front, outward) > 0).all()


# Round trips: unedited, byte for byte; a .blend saved before the rewinding.


def test_urho3d_round_trip_is_byte_identical(blank_blend, corpus_dir, tmp_path):
    from rigport.operators.urho3d.model_exporter import ModelExportOptions, export_mdl

    bpy = blank_blend
    for rel in ("urho3d/Box.mdl", "urho3d/Jack.mdl"):
        bpy.ops.wm.read_factory_settings(use_empty=True)
        src = corpus_dir / rel
        assert bpy.ops.import_scene.urho3d_mdl(filepath=str(src)) == {"FINISHED"}
        out = tmp_path / src.name
        objs = [o for o in bpy.data.objects if o.type == "MESH"]
        export_mdl(bpy.context, str(out), objs, ModelExportOptions())
        assert out.read_bytes() == src.read_bytes(), rel


def test_urho3d_old_import_exports_the_file(blank_blend, corpus_dir, tmp_path, monkeypatch):
    """A .blend saved before imports rewound the triangles holds them in the file's
    order, with a layout that lacks the mark: it still exports the file byte for
    byte (its faces are turned into Blender's order before the export rewinds)."""
    from rigport.io_formats.urho3d import model_import
    from rigport.operators.blender.extract import read_prop
    from rigport.operators.urho3d.model_exporter import ModelExportOptions, export_mdl

    bpy = blank_blend
    src = corpus_dir / "urho3d/Box.mdl"
    _old_import(bpy, monkeypatch, src)
    (obj,) = [o for o in bpy.data.objects if o.type == "MESH"]
    assert model_import.REWOUND_KEY not in read_prop(obj, "urho_layout")
    agree, total = _agreement(bpy)
    assert agree == 0 and total == 12  # the old import: inside out
    out = tmp_path / "Box.mdl"
    export_mdl(bpy.context, str(out), [obj], ModelExportOptions())
    assert out.read_bytes() == src.read_bytes()


def test_urho3d_cube_round_trip(blank_blend, tmp_path):
    """A Blender-made cube exported, imported and exported again: the same file,
    and the import faces agree with the normals the export wrote."""
    from rigport.operators.urho3d.model_exporter import ModelExportOptions, export_mdl

    bpy = blank_blend
    obj = _make(bpy, "cube")
    first = tmp_path / "first.mdl"
    export_mdl(bpy.context, str(first), [obj], ModelExportOptions())
    bpy.ops.wm.read_factory_settings(use_empty=True)
    assert bpy.ops.import_scene.urho3d_mdl(filepath=str(first)) == {"FINISHED"}
    _assert_agrees(bpy, first.name)
    second = tmp_path / "second.mdl"
    export_mdl(
        bpy.context,
        str(second),
        [o for o in bpy.data.objects if o.type == "MESH"],
        ModelExportOptions(),
    )
    assert second.read_bytes() == first.read_bytes()


def _tangent_signs(model: mdl.Model) -> np.ndarray:
    vb = model.vertex_buffers[0]
    (name,) = [n for n in vb.data.dtype.names if n.startswith("tangent")]
    return np.sign(vb.data[name][:, 3])


def _old_import(bpy, monkeypatch, path: Path) -> None:
    """Import ``path`` as imports did before they rewound the triangles: the
    file's corner order, a layout without the mark."""
    from rigport.io_formats.urho3d import axes, model_import

    def unrewound(corners, convert, out=None):
        if out is None:
            return corners
        out[...] = corners
        return out

    with monkeypatch.context() as old:
        old.setattr(axes, "rewind", unrewound)
        old.setattr(model_import, "REWOUND_KEY", "not_the_mark")
        assert bpy.ops.import_scene.urho3d_mdl(filepath=str(path)) == {"FINISHED"}


@pytest.mark.parametrize("how", ["converted", "file axes", "old import"])
def test_urho3d_recomputed_tangents_match_the_stock_files(
    blank_blend, corpus_dir, tmp_path, monkeypatch, how
):
    """Tangents Blender computes, exported, have the bitangent signs of the
    tangents AssetImporter wrote into the stock Sphere (Urho3D's shaders take
    bitangent = w * tangent x normal): with the axes converted or not, and from
    a .blend whose import kept the file's corner order."""
    from rigport.operators.urho3d.model_exporter import ModelExportOptions, export_mdl
    from rigport.operators.urho3d.model_importer import ModelImportOptions, import_mdl

    bpy = blank_blend
    src = corpus_dir / "urho3d/Sphere.mdl"
    if how == "old import":
        _old_import(bpy, monkeypatch, src)
    else:
        options = ModelImportOptions(lods="FIRST", convert=how == "converted")
        import_mdl(bpy.context, str(src), options)
    objs = [o for o in bpy.data.objects if o.type == "MESH" and o.get("urho_lod", 0) == 0]
    out = tmp_path / "Sphere.mdl"
    export_mdl(bpy.context, str(out), objs, ModelExportOptions(recompute_tangents=True))
    want = _tangent_signs(mdl.read(src.read_bytes()))
    got = _tangent_signs(mdl.read(out.read_bytes()))
    assert len(got) == len(want) and (got == want).all()


def _agree_share(front: np.ndarray, normal: np.ndarray) -> float:
    """The share of triangles (not degenerate) whose front agrees with their normals."""
    ok = (np.linalg.norm(front, axis=1) > 1e-12) & (np.linalg.norm(normal, axis=1) > 1e-6)
    return float((np.einsum("ij,ij->i", front[ok], normal[ok]) > 0).mean())


def test_renderware_to_urho3d_agrees_with_normals(blank_blend, corpus_dir, tmp_path):
    """A clump converted to a model: its triangles face as its normals do."""
    from rigport.operators.urho3d.model_exporter import ModelExportOptions, export_mdl

    bpy = blank_blend
    src = corpus_dir / "renderware/teapot.dff"
    assert bpy.ops.import_scene.rw_dff(filepath=str(src)) == {"FINISHED"}
    out = tmp_path / "teapot.mdl"
    export_mdl(
        bpy.context,
        str(out),
        [o for o in bpy.data.objects if o.type == "MESH"],
        ModelExportOptions(),
    )
    front, _, normal = _urho3d_triangles(mdl.read(out.read_bytes()))
    assert _agree_share(front, normal) > 0.99


def test_urho3d_to_unigine_agrees_with_normals(blank_blend, corpus_dir, tmp_path):
    """A model converted to a Unigine mesh: its triangles face as its normals do."""
    from rigport.io_formats.unigine.mesh_import import tangent_normals
    from rigport.operators.unigine.exporter import export_mesh_file
    from rigport.operators.unigine.settings import MeshExportOptions
    from rigport.operators.urho3d.model_importer import ModelImportOptions, import_mdl

    bpy = blank_blend
    import_mdl(bpy.context, str(corpus_dir / "urho3d/Jack.mdl"), ModelImportOptions(lods="FIRST"))
    out = tmp_path / "Jack.mesh"
    export_mesh_file(
        bpy.context,
        str(out),
        [o for o in bpy.data.objects if o.type == "MESH"],
        MeshExportOptions(),
    )
    fronts, normals = [], []
    for s in unigine_mesh.read(out.read_bytes()).surfaces:
        fronts.append(_front(s.targets[0].positions, s.coords)[0])
        normals.append(tangent_normals(s.targets[0].tangents)[s.tris.reshape(-1, 3)].mean(axis=1))
    assert _agree_share(np.concatenate(fronts), np.concatenate(normals)) > 0.99


def _unigine_corners(path: Path) -> np.ndarray:
    """Every triangle corner of a .mesh as (position, uv, normal, tangent, handedness)
    rows, each triangle's corners rolled to start at its smallest row and the
    triangles sorted: equal for two files that draw the same triangles with the
    same tangent frames."""
    from rigport.io_formats.unigine.mesh_import import tangent_normals

    triangles = []
    for s in unigine_mesh.read(path.read_bytes()).surfaces:
        t = s.targets[0]
        x, y, z, w = (t.tangents[:, i].astype(np.float64) / 32767 for i in range(4))
        tangent = np.stack([1 - 2 * (y * y + z * z), 2 * (x * y + z * w), 2 * (x * z - y * w)], 1)
        frame = np.concatenate([tangent_normals(t.tangents), tangent, np.sign(w)[:, None]], 1)
        rows = np.concatenate([t.positions[s.coords], s.uv0[s.tris], frame[s.tris]], axis=1)
        for tri in np.round(rows, 2).reshape(-1, 3, rows.shape[1]) + 0.0:
            start = min(range(3), key=lambda i: tuple(tri[i]))
            triangles.append(np.roll(tri, -start, axis=0).reshape(-1))
    out = np.array(triangles)
    return out[np.lexsort(out.T[::-1])]


def test_unigine_mirrored_object_exports_its_applied_scale(blank_blend, tmp_path):
    """A mirrored object writes what the same object writes with its scale applied
    (and its faces flipped back to facing out where applying left them inside out):
    the same triangles, corners, normals, tangents and bitangent handedness."""
    from rigport.operators.unigine.exporter import export_mesh_file
    from rigport.operators.unigine.settings import MeshExportOptions

    bpy = blank_blend
    obj = _make(bpy, "cube", MIRRORED[1])
    mirrored, applied = tmp_path / "mirrored.mesh", tmp_path / "applied.mesh"
    export_mesh_file(bpy.context, str(mirrored), [obj], MeshExportOptions())
    bpy.ops.object.transform_apply(location=False, rotation=False, scale=True)
    assert tuple(obj.scale) == (1.0, 1.0, 1.0)
    face = obj.data.polygons[0]
    if face.normal.dot(face.center) < 0:  # inside out (5.0 and 4.2; 5.2 turns them itself)
        bpy.ops.object.mode_set(mode="EDIT")
        bpy.ops.mesh.select_all(action="SELECT")
        bpy.ops.mesh.flip_normals()
        bpy.ops.object.mode_set(mode="OBJECT")
    assert all(f.normal.dot(f.center) > 0 for f in obj.data.polygons)
    export_mesh_file(bpy.context, str(applied), [obj], MeshExportOptions())
    want, got = _unigine_corners(applied), _unigine_corners(mirrored)
    assert want.shape == got.shape == (12, 36)
    np.testing.assert_allclose(got, want, atol=0.02)
