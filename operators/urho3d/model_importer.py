"""Urho3D models (.mdl) into Blender: armature, meshes, LODs, shape keys."""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from ...io_formats.scene import Scene
from ...io_formats.urho3d import mdl
from ...io_formats.urho3d.model_export import unheld_normals
from ...io_formats.urho3d.model_import import NORMAL_ATTRIBUTE, import_model
from ..blender import compat, fingerprint
from ..blender.build import build_scene
from ..blender.extract import int_attribute
from ..common import in_file, parse_file
from ..conventions import option_matrix, place_roots
from ..result import Result, counted
from .axes import TransformOptions
from .kept import FINGERPRINT


@dataclass(frozen=True)
class ModelImportOptions:
    """How a model is imported (the importer's options, with its names).

    ``lods``: ALL (every level, those after 0 hidden) or FIRST (LOD 0 only);
    ``convert``: Urho3D's axes into Blender's (False keeps the file's);
    ``transform``: the axes and scale options, put on the roots the import makes
    (none: the objects stay where the file has them, unrecorded)."""

    lods: str = "ALL"
    reuse_materials: bool = False
    convert: bool = True
    transform: TransformOptions | None = None


def import_mdl(context, path: str, options: ModelImportOptions) -> Result:
    """Import one .mdl file: what was built; a FormatError leaves nothing behind.
    The parsed file is gone before Blender builds anything (the neutral scene
    holds copies, none of its buffers): Blender's new mesh reuses its memory
    rather than new pages (about 10 MB at 100k vertices)."""
    return build_scene_of(
        context, convert_model(parse_file(path, mdl.read), path, options), path, options
    )


def convert_model(model: mdl.Model, path: str, options: ModelImportOptions) -> Scene:
    """The neutral scene of ``model`` (``path`` names it: a file, or a file in a package)."""
    name = os.path.splitext(os.path.basename(path))[0]
    with in_file(path):
        return import_model(model, name, all_lods=options.lods == "ALL", convert=options.convert)


def build_model(context, model: mdl.Model, path: str, options: ModelImportOptions) -> Result:
    """Build ``model``: :func:`convert_model`, then :func:`build_scene_of`."""
    return build_scene_of(context, convert_model(model, path, options), path, options)


def build_scene_of(context, scene: Scene, path: str, options: ModelImportOptions) -> Result:
    """Build a converted model's ``scene``. With every LOD, the levels after 0 are
    hidden in the viewport (they are still exported). The result's one information
    line counts the objects."""
    filled: dict = {}
    built = build_scene(context, scene, reuse_materials=options.reuse_materials, filled=filled)
    del scene  # the filled meshes are all the fingerprint needs of it
    for obj in built.objects:
        if obj.type != "MESH":
            continue
        # what the kept layout describes, hashed from the arrays Blender was given
        fingerprint.store(obj, FINGERPRINT, given=filled.pop(obj.data.as_pointer(), None))
        if int(obj.get("urho_lod", 0)) > 0:
            obj.hide_set(True)
    if options.transform is not None:
        place_roots(built.objects, option_matrix(options.transform))
    result = Result(objects=list(built.objects), armature=built.armature, undo=[built.discard])
    result.info(counted(len(built.objects), "object"))
    return result.warn(unheld_normals_warning(built.objects))


def unheld_normals_warning(objects: list) -> str:
    """A warning counting the vertices whose file normals Blender cannot hold
    (corners of degenerate triangles), "" when there are none; the exporter
    writes the file's own there. Versions with the ``custom_normal`` attribute
    hold every normal as given, so they skip the check (reading 4.2's corner
    normals costs a second at 1M vertices), and so does a mesh in which
    :func:`may_hold_unheld` finds no degenerate face."""
    if compat.HAS_NORMAL_ATTRIBUTE:
        return ""
    count = 0
    for obj in objects:
        me = obj.data if obj.type == "MESH" else None
        if me is None or NORMAL_ATTRIBUTE not in me.attributes or not len(me.loops):
            continue
        if may_hold_unheld(me):
            count += unheld_vertex_count(me)
    if not count:
        return ""
    return (
        f"{count} vertices lie on degenerate triangles, where Blender cannot hold "
        "their normals: the file's normals are kept and written back"
    )


def may_hold_unheld(me) -> bool:
    """Whether a corner of ``me`` may be one whose normal 4.2 cannot hold: true
    where a face is degenerate. A corner's normal comes from its fan of faces;
    4.2 gives a degenerate face the normal +Z, and a fan holding one builds a
    space the custom normal does not decode from as a unit vector (Jack: the
    corners of its degenerate triangles, and of faces beside them). A face whose
    normal is +Z is degenerate where its corners are in line or coincide (the
    sine of its first angle below 1e-6, ten times float32's rounding, or its
    area below what float32 can normalise); the others' normals are Blender's
    own. Reading the face normals costs a few ms, and testing them about as
    much as the corner-normal read only for a mesh laid flat (200k triangles of
    +Z: 50 ms); the corner normals make 4.2 compute every corner's (55 ms at
    100k vertices). What this lets through: a fan of faces that are all slivers
    below float32's angle resolution, or whose normals cancel."""
    nf, nl = len(me.polygons), len(me.loops)
    normals = np.empty(3 * nf, np.float32)
    me.polygon_normals.foreach_get("vector", normals)
    normals = normals.reshape(-1, 3)
    up = np.flatnonzero((normals[:, 0] == 0) & (normals[:, 1] == 0) & (normals[:, 2] == 1))
    if not len(up):
        return False
    if nl != 3 * nf:
        return True  # n-gons (not from this format's files): not worth telling apart
    corner_verts = int_attribute(me, ".corner_vert", nl)  # loops.vertex_index: one by one
    positions = np.empty(3 * len(me.vertices), np.float32)
    me.attributes["position"].data.foreach_get("vector", positions)
    # a column at a time: the triangles' two edges from their first corner, in float64
    corners = corner_verts.reshape(-1, 3)[up]
    e1, e2 = [], []
    for axis in positions.reshape(-1, 3).T.astype(np.float64):
        first = axis[corners[:, 0]]
        e1.append(axis[corners[:, 1]] - first)
        e2.append(axis[corners[:, 2]] - first)
    area2 = (
        (e1[1] * e2[2] - e1[2] * e2[1]) ** 2
        + (e1[2] * e2[0] - e1[0] * e2[2]) ** 2
        + (e1[0] * e2[1] - e1[1] * e2[0]) ** 2
    )
    lengths2 = (e1[0] ** 2 + e1[1] ** 2 + e1[2] ** 2) * (e2[0] ** 2 + e2[1] ** 2 + e2[2] ** 2)
    return bool(np.any(area2 <= np.maximum(1e-12 * lengths2, 1e-30)))


def unheld_vertex_count(me) -> int:
    """The vertices of ``me`` with a corner whose normal Blender's corner normals
    (custom or computed) do not hold as a unit vector."""
    normals = np.empty(3 * len(me.loops), np.float32)
    me.corner_normals.foreach_get("vector", normals)
    bad = unheld_normals(normals.reshape(-1, 3))
    if not bad.any():
        return 0
    return len(np.unique(int_attribute(me, ".corner_vert", len(me.loops))[bad]))
