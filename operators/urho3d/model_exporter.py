"""Blender meshes (with their armature and LOD levels) to one Urho3D model (.mdl).

The export runs as named passes over one :class:`_ModelExport` state: choose the
armature and the LOD levels, find the transform to bake, read each level's meshes,
choose the file's layout, encode and check the model, write it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import bpy
import numpy as np

from ...io_formats.codec import FormatError
from ...io_formats.merge import merge_meshes
from ...io_formats.scene import Mesh, Skeleton
from ...io_formats.urho3d import engine_rules, mdl
from ...io_formats.urho3d.layout import WEIGHT_BITS, weight_from_bits
from ...io_formats.urho3d.model_export import (
    COMPUTED_TANGENT,
    ExportOptions,
    export_model,
    file_order,
    imported_bone_limit,
    rewind_mesh,
)
from ...io_formats.urho3d.model_import import (
    GEOMETRY_ATTRIBUTE,
    NORMAL_ATTRIBUTE,
    REWOUND_KEY,
    TANGENT_ATTRIBUTE,
)
from ...io_formats.urho3d.transform import bake_bones, bake_layout, bake_meshes
from ..blender import fingerprint
from ..blender.armatures import mesh_armature, one_armature
from ..blender.extract import extract_mesh, extract_skeleton, read_prop
from ..blender.weights import reader_groups_kept
from ..conventions import ExportTransform, file_matrix
from ..result import Result, counted
from .axes import export_axes, export_convert
from .kept import FINGERPRINT
from .output import default_entry, package_path, write_output


@dataclass(frozen=True)
class ModelExportOptions:
    """How a model is exported (the exporter's options, with its names).

    ``file_format`` and ``bone_limit`` default to what the import recorded
    (UMD2 and 64 bones per draw for new models); ``package_file`` names an
    existing package to write into as ``package_entry`` (default:
    ``Models/<file name>``); ``transform``: the axes and scale options baked
    into the data (none: the data as Blender has it, the axes as imported)."""

    file_format: str = "AUTO"
    tangents: bool = True
    recompute_tangents: bool = False
    bone_limit: str = "AUTO"
    package_file: str = ""
    package_entry: str = ""
    transform: ExportTransform | None = None


@dataclass
class _ModelExport:
    """What the passes of :func:`export_mdl` read and fill."""

    objects: list
    options: ModelExportOptions
    armature: object = None
    skeleton: Skeleton | None = None
    by_lod: dict[int, list] = field(default_factory=dict)
    matrix: np.ndarray = field(default_factory=lambda: np.eye(4))
    lods: list[tuple[int, Mesh]] = field(default_factory=list)
    slot_names: tuple[str, ...] = ()  # the first level's merged slots, for sentences
    rebuilt: list[str] = field(default_factory=list)  # objects whose topology changed
    recorded: dict = field(default_factory=dict)
    layout: dict | None = None
    codec: ExportOptions | None = None
    model: mdl.Model | None = None
    result: Result = field(default_factory=Result)


def export_mdl(context, path: str, objects: list, options: ModelExportOptions) -> Result:
    """Write the mesh ``objects`` (LODs by their ``urho_lod`` property) to one .mdl,
    or into the package the options name; the result's warnings say what the file
    could not hold as Blender has it. Skinned meshes are read in their armature's
    space, others in world space."""
    state = _ModelExport(objects, options)
    _choose_armature_and_lods(state)
    _check_topology(state)
    _find_transform(state)
    _read_lods(state)
    _choose_layout(state)
    _encode(state)
    _write(state, path)
    return state.result


def _choose_armature_and_lods(state: _ModelExport) -> None:
    """The one armature the meshes share (its skeleton in the file's bone order),
    and the objects of each LOD level."""
    if not state.objects:
        raise FormatError("no mesh objects to export")
    state.armature = one_armature(state.objects, "an Urho3D model")
    if state.armature is not None:
        state.skeleton = file_order(extract_skeleton(state.armature))
    for obj in state.objects:
        state.by_lod.setdefault(int(obj.get("urho_lod", 0)), []).append(obj)


def _check_topology(state: _ModelExport) -> None:
    """The objects whose kept layout and per-vertex data no longer describe them
    (one INFO line each kind): their faces, corners or vertex count differ from
    the import's, or they hold ``urho:*`` data without the layout it belongs to
    (kept data forgotten, or an imported mesh joined into a new one)."""
    changed, orphaned = [], []
    for obj in state.objects:
        if fingerprint.topology_changed(obj, FINGERPRINT):
            changed.append(obj.name)
        elif _orphaned(obj):
            orphaned.append(obj.name)
    state.rebuilt = sorted(changed + orphaned)
    for names, why in (
        (changed, "the mesh's topology changed since import"),
        (orphaned, "its Urho3D vertex data no longer has the layout it came with"),
    ):
        if names:
            listed = ", ".join(sorted(names)[:3]) + (" ..." if len(names) > 3 else "")
            state.result.info(
                f"the vertex layout was rebuilt from Blender because {why} ({listed})"
            )


def _orphaned(obj) -> bool:
    """``obj`` holds the file's per-vertex data but neither the fingerprint nor the
    layout that say which mesh it describes."""
    if fingerprint.stored(obj, FINGERPRINT) is not None or read_prop(obj, "urho_layout"):
        return False
    return any(
        a.name.startswith("urho:") and a.domain in ("POINT", "CORNER") for a in obj.data.attributes
    )


def _in_file_order(obj) -> bool:
    """``obj`` was imported, with the axes converted, before imports rewound the
    file's triangles into Blender's order (its layout lacks the mark): its faces
    still run the file's way."""
    layout = read_prop(obj, "urho_layout")
    if not isinstance(layout, dict):
        return False
    return bool(layout.get("axes", True)) and not layout.get(REWOUND_KEY)


def _into_blender_order(mesh: Mesh) -> None:
    """A mesh read from an object in the file's order, rewound into Blender's; the
    tangents Blender computed on its inside-out faces get their bitangent sign
    turned, as Blender computes it on faces that agree with their normals."""
    rewind_mesh(mesh)
    for attr in mesh.attributes:
        if attr.name == COMPUTED_TANGENT and attr.data.shape[1:] == (4,):
            data = attr.data.copy()
            data[:, 3] = -data[:, 3]
            attr.data = data


def _without_kept(mesh: Mesh) -> None:
    """Drop the file's per-vertex and per-corner data (``urho:*`` point and corner
    attributes: vertex order, normals, tangents, UVs, morph data, raw elements)."""
    mesh.attributes = [
        a
        for a in mesh.attributes
        if not (a.name.startswith("urho:") and a.domain in ("POINT", "CORNER"))
    ]


def _find_transform(state: _ModelExport) -> None:
    """The matrix baked into the data (the axes and scale options in the space the
    data is read in: the armature's, else world space for the first level's first
    object's root), baked into the skeleton at once."""
    transform = state.options.transform
    if transform is not None:
        if state.armature is not None:
            space = np.array(state.armature.matrix_world, np.float64)
            state.matrix = file_matrix(transform, state.armature, space)
        else:
            first = min(state.by_lod[min(state.by_lod)], key=lambda o: o.name)
            state.matrix = file_matrix(transform, _top(first), None)
    if state.skeleton is not None:
        bake_bones(state.skeleton, state.matrix)


def _read_lods(state: _ModelExport) -> None:
    """Each LOD level's objects read, placed, baked and merged into one mesh."""
    names = state.skeleton.names if state.skeleton is not None else None
    options = state.options
    for lod, objs in sorted(state.by_lod.items()):
        # Blender's tangents only when the file's own are not all kept (they win on export)
        need = options.tangents and (
            options.recompute_tangents
            or any(
                TANGENT_ATTRIBUTE not in o.data.attributes or o.name in state.rebuilt for o in objs
            )
        )
        meshes, names_of_slots = [], []
        with reader_groups_kept():  # one weight-reading node group for every object
            for obj in sorted(objs, key=lambda o: o.name):
                mesh = extract_mesh(obj, names, tangents=need)
                if obj.name in state.rebuilt:
                    _without_kept(mesh)
                if _in_file_order(obj):
                    _into_blender_order(mesh)
                _apply_object_transform(mesh, obj, state.armature)
                meshes.append(mesh)
                names_of_slots += _slot_names(obj, mesh)
        if not state.lods:
            state.slot_names = tuple(names_of_slots)
        bake_meshes(meshes, state.matrix)
        merged, notes = merge_meshes(meshes, (GEOMETRY_ATTRIBUTE,))
        state.result.warn_all(notes)
        state.lods.append((lod, merged))


def _slot_names(obj, mesh: Mesh) -> list[str]:
    """``obj``'s material slots as merge_meshes merges them (one for none), named."""
    return [
        f"object {obj.name!r}, material {m!r}" if m else f"object {obj.name!r}, slot {i}"
        for i, m in enumerate(mesh.materials or [""])
    ]


def _choose_layout(state: _ModelExport) -> None:
    """The codec's options: the imported layout while the model is one object per
    level and no object's topology changed, the format, bone limit and axes as
    imported unless the options say."""
    options = state.options
    recorded = read_prop(state.by_lod[min(state.by_lod)][0], "urho_layout")
    recorded = recorded if isinstance(recorded, dict) else {}
    state.recorded = recorded
    single = all(len(v) == 1 for v in state.by_lod.values())
    state.layout = recorded if single and recorded and not state.rebuilt else None
    magic = recorded.get("magic", "UMD2") if options.file_format == "AUTO" else options.file_format
    bone_limit = options.bone_limit
    if bone_limit == "AUTO":
        bone_limit = imported_bone_limit(recorded)
    convert_axes = export_axes(export_convert(options.transform), recorded.get("axes"))
    state.codec = ExportOptions(
        magic=magic.encode("ascii"),
        convert_axes=convert_axes,
        tangents=options.tangents,
        recompute_tangents=options.recompute_tangents,
        bone_limit=int(bone_limit),
        layout=bake_layout(state.layout, state.matrix, convert_axes),
        slot_names=state.slot_names,
    )


def _encode(state: _ModelExport) -> None:
    """The model, with a warning per engine rule it breaks; UMD3's own fields."""
    model, warnings = export_model(state.lods, state.skeleton, state.codec)
    state.result.warn_all(warnings)
    state.result.warn_all(
        f"Urho3D would refuse to load this model: {v}"
        for v in engine_rules.check(model, state.codec.bone_limit)
    )
    if model.magic == b"UMD3":
        version_from = state.recorded if state.rebuilt else state.layout
        _rbfx_model_fields(model, state.objects, version_from)
    state.model = model


def _write(state: _ModelExport, path: str) -> None:
    """The file (or the package entry); a warning when LOD levels were left out."""
    options = state.options
    into = package_path(options.package_file)
    entry = options.package_entry or default_entry(path)
    write_output(path, lambda: mdl.write(state.model), into, entry)
    if len(state.lods) == 1 and isinstance(state.layout, dict):
        n = max((len(g["lods"]) for g in state.layout["geometries"]), default=1)
        if n > 1:
            state.result.warn(_one_lod_note(state, n))
    if into:
        state.result.info(f"wrote {entry} into {options.package_file}")


def _one_lod_note(state: _ModelExport, n: int) -> str:
    """Why the file has one LOD level of the imported ``n``: the others were not
    imported, or their objects are in Blender but were not among those exported
    (an import hides the levels after 0, and Selected Objects leaves hidden
    objects out)."""
    level = state.lods[0][0]
    exported = {obj.name for obj in state.objects}
    # the model's: deformed by its armature, else in a collection of its own with it
    # (an import puts a model's LOD objects in one, "<model>_LODs")
    masters = {scene.collection.as_pointer() for scene in bpy.data.scenes}
    shared = {
        c.as_pointer()
        for obj in state.objects
        for c in obj.users_collection
        if c.as_pointer() not in masters
    }

    def of_model(obj) -> bool:
        if state.armature is not None:
            return mesh_armature(obj) == state.armature
        return any(c.as_pointer() in shared for c in obj.users_collection)

    left = sorted(
        obj.name
        for obj in bpy.data.objects
        if obj.type == "MESH"
        and obj.name not in exported
        and "urho_lod" in obj
        and int(obj["urho_lod"]) != level
        and of_model(obj)
    )
    if not left:
        return (
            f"the imported model had {n} LOD levels; only LOD {level} was in Blender, "
            "so the file has one (import with all LODs to keep them)"
        )
    shown = ", ".join(left[:3]) + (" ..." if len(left) > 3 else "")
    return (
        f"the imported model had {n} LOD levels; only LOD {level} was exported: "
        f"{counted(len(left), 'mesh object')} of its other levels ({shown}) were not among "
        "the objects to export (an import hides the levels after 0, and Selected Objects "
        "leaves hidden objects out: unhide and select them to export every level)"
    )


def _rbfx_model_fields(model: mdl.Model, objects: list, layout: dict | None) -> None:
    """UMD3: the version (as imported, else the newest) and each morph's default
    weight, which is the shape key's value in Blender; a weight Blender could not
    hold (NaN: the key got 0) goes back with its exact bits while the key is 0."""
    model.version = int((layout or {}).get("version", mdl.UMD3_VERSIONS[-1]))
    kept = {m["name"]: m[WEIGHT_BITS] for m in (layout or {}).get("morphs", ()) if WEIGHT_BITS in m}
    values: dict[str, float] = {}
    for obj in objects:
        keys = obj.data.shape_keys
        for kb in keys.key_blocks[1:] if keys is not None else ():
            values.setdefault(kb.name, float(kb.value))
    for m in model.morphs:
        m.weight = values.get(m.name, 0.0)
        if m.name in kept and m.weight == 0.0:
            m.weight = weight_from_bits(kept[m.name])


def _top(obj):
    """The topmost parent of ``obj`` (where an import recorded its transform)."""
    while obj.parent is not None:
        obj = obj.parent
    return obj


def _apply_object_transform(mesh: Mesh, obj, armature) -> None:
    """``obj``'s placement (relative to ``armature`` when skinned) applied to what
    was read in its own space: positions, normals (Blender's and the file's) by
    the inverse transpose, tangents (Blender's and the file's) like positions,
    their handedness flipped by a mirroring placement."""
    m = np.array(obj.matrix_world, np.float64)
    if armature is not None:
        m = np.linalg.inv(np.array(armature.matrix_world, np.float64)) @ m
    if np.allclose(m, np.eye(4), atol=1e-9):
        return
    linear = m[:3, :3]
    normal_matrix = np.linalg.inv(linear).T
    mesh.positions = (mesh.positions @ linear.T + m[:3, 3]).astype(np.float32)
    if mesh.normals is not None:
        mesh.normals = _directions(mesh.normals, normal_matrix)
    if np.allclose(linear, np.eye(3), atol=1e-9):  # moved only: directions as they are
        return
    flip = np.linalg.det(linear) < 0
    if flip:  # a mirrored object: Blender draws it facing out, so must the file
        rewind_mesh(mesh)
    for attr in mesh.attributes:
        if attr.name == NORMAL_ATTRIBUTE:
            attr.data = _directions(attr.data, normal_matrix)
        elif attr.name in (TANGENT_ATTRIBUTE, COMPUTED_TANGENT) and attr.data.shape[1:] == (4,):
            data = attr.data.copy()
            data[:, :3] = _directions(attr.data[:, :3], linear)
            if flip:
                data[:, 3] = -data[:, 3]
            attr.data = data


def _directions(v: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """Unit directions ``v`` times ``matrix``, normalised (zero ones stay zero)."""
    out = v @ matrix.T
    return (out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)).astype(np.float32)
