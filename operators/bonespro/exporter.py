"""Blender to BonesPro structure and animation files, without an operator.

:func:`export_structure` and :func:`export_animation` take what an export
operator takes (one options dataclass, its fields named as the operator's
properties): they choose the armature and mesh from the export's scope and
return a :class:`Result`. :func:`write_structure` and :func:`write_animation`
write the armature and mesh they are given (batch, tests).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ClassVar

import bpy
import numpy as np

from ...io_formats.bonespro import animation as anim_file
from ...io_formats.bonespro import convert, structure
from ...io_formats.bonespro.euler import ORDERS
from ...io_formats.bonespro.placement import bake_matrices, bake_points, bake_structure
from ...io_formats.bonespro.text import KeptText, unpack_source
from ...io_formats.codec import FormatError
from ...io_formats.codec.files import write_atomic
from ...io_formats.global_transform import is_identity, split
from ..animation_files import chosen_files, written_message
from ..blender import compat
from ..blender.armatures import choose_armature, mesh_armature, one_armature
from ..blender.extract import extract_skeleton, read_prop
from ..conventions import ExportScope, evaluated_meshes, file_matrix, scene_fps
from ..result import Result, counted
from .importer import (
    BOXES,
    BOXES_PER_FRAME,
    FRAME_SCALE,
    HEADER,
    NODE_OFFSET,
    NODE_OFFSETS_PER_FRAME,
    SOURCE_MESH,
    TEXT,
    TransformOptions,
)
from .rig import bone_order, bone_parents, get_weights, sample_frames, world_positions

#: (enum identifier, the file's own spelling) of each header setting.
MODE_IDS = (
    ("BONES", anim_file.BONES),
    ("MESH_ABSOLUTE", anim_file.MESH_ABSOLUTE),
    ("MESH_BONES", anim_file.MESH_BONES),
)
SYSTEM_IDS = (("ABSOLUTE", anim_file.ABSOLUTE), ("RELATIVE", anim_file.RELATIVE))
REPRESENTATION_IDS = (("MATRIX", anim_file.MATRIX), ("EULER", anim_file.EULER))
UNIT_IDS = (("DEGREES", anim_file.DEGREES), ("RADIANS", anim_file.RADIANS))
ORDER_IDS = tuple((o, o) for o in ORDERS)


def _file_value(identifier: str, pairs) -> str:
    """The file's own spelling of an enum identifier ("AUTO" stays)."""
    return dict(pairs).get(identifier, identifier)


@dataclass(frozen=True)
class StructureExportOptions(TransformOptions):
    """``export_scene.bonespro_structure``: the export's scope
    (``conventions.ExportScope``) and transform."""

    use_transform_as_imported: bool = True
    use_selection: bool = False
    use_visible: bool = False
    use_active_collection: bool = False
    collection: str = ""
    apply_modifiers: bool = True
    transform_export: ClassVar[bool] = True

    def scope_objects(self, context, types: tuple[str, ...]) -> list:
        """The objects of ``types`` this export takes (``ExportScope.scope_objects``)."""
        return ExportScope.scope_objects(self, context, types)

    def file_space(self, root) -> np.ndarray:
        """The transform from ``root``'s space into the file's (the options')."""
        return file_matrix(self, root, np.array(root.matrix_world, np.float64))


@dataclass(frozen=True)
class AnimationExportOptions(StructureExportOptions):
    """``export_anim.bonespro_anim``: which animations, frames and frame rate, and the
    file's header settings ("AUTO": as imported)."""

    frame_rate: str = "AUTO"
    fps: float = 30.0
    export_animations: str = "ACTIVE"
    use_action_names: bool = False
    mode: str = "AUTO"
    system: str = "AUTO"
    representation: str = "AUTO"
    euler_order: str = "AUTO"
    angle_units: str = "AUTO"
    interval: str = "AUTO"
    first_frame: float = 0.0
    last_frame: float = 100.0
    step: float = 1.0

    def frame_scale(self, context) -> float | None:
        """Blender frames per file frame (None: as imported)."""
        if self.frame_rate == "AUTO":
            return None
        if self.frame_rate == "SCENE":
            return 1.0
        return scene_fps(context) / float(self.fps)

    def frame_interval(self, context) -> tuple[float, float, float] | None:
        """(first, last, step) in Blender frames (None: as imported)."""
        if self.interval == "SCENE":
            return (context.scene.frame_start, context.scene.frame_end, 1.0)
        if self.interval == "CUSTOM":
            return (self.first_frame, self.last_frame, self.step)
        return None

    def header(self) -> dict[str, str]:
        """The header settings the options give, in the file's spelling (AUTO kept)."""
        return {
            "mode": _file_value(self.mode, MODE_IDS),
            "system": _file_value(self.system, SYSTEM_IDS),
            "representation": _file_value(self.representation, REPRESENTATION_IDS),
            "euler_order": _file_value(self.euler_order, ORDER_IDS),
            "angle_units": _file_value(self.angle_units, UNIT_IDS),
        }


# ------------------------------------------------------------------ what to export
def _deformed_mesh(context, armature) -> bpy.types.Object | None:
    meshes = [
        o
        for o in context.scene.objects
        if o.type == "MESH" and (armature is None or mesh_armature(o) == armature)
    ]
    return meshes[0] if meshes else None


def _mesh_animation(context, armature) -> bpy.types.Object | None:
    """The mesh-mode animation an import made for ``armature`` (a mesh with the
    file's header, deformed by it or copied from a mesh it deforms), when the
    armature plays no action of its own: what an export with the armature active
    (as after Select All) writes. None when there is none; FormatError when there
    are several."""
    if armature is None or (armature.animation_data and armature.animation_data.action):
        return None
    objects = context.scene.objects

    def made_for(o) -> bool:  # an import copies the mesh, or an earlier mesh animation
        seen = set()
        while o is not None and o.name not in seen:
            if mesh_armature(o) == armature:
                return True
            seen.add(o.name)
            o = objects.get(o.get(SOURCE_MESH, ""))
        return False

    found = [o for o in objects if o.type == "MESH" and HEADER in o and made_for(o)]
    if len(found) > 1:
        names = ", ".join(sorted(o.name for o in found)[:3]) + (" ..." if len(found) > 3 else "")
        raise FormatError(
            f"armature {armature.name!r} plays no action and has {len(found)} mesh "
            f"animations ({names}): make the one to export active"
        )
    return found[0] if found else None


def _active_armature_and_mesh(context):
    active = context.view_layer.objects.active
    mesh = active if active is not None and active.type == "MESH" else None
    armature = choose_armature(context, active_mesh=True).armature
    return armature, mesh or _mesh_animation(context, armature)


def _scoped_armature_and_mesh(options: StructureExportOptions, context):
    """The armature and mesh an export takes: the active ones (the Include options
    unset), else those of the export's scope (a Collection Exporter's collection,
    selection, visibility, active collection)."""
    if not (
        options.collection
        or options.use_selection
        or options.use_visible
        or options.use_active_collection
    ):
        return _active_armature_and_mesh(context)
    meshes = options.scope_objects(context, ("MESH",))
    arms = options.scope_objects(context, ("ARMATURE",))
    armature = one_armature(meshes, "a BonesPro file") if meshes else None
    if armature is None:
        if len(arms) > 1:
            raise FormatError(
                f"{len(arms)} armatures to export ({', '.join(a.name for a in arms[:3])}"
                f"{' ...' if len(arms) > 3 else ''}): a BonesPro file holds one"
            )
        armature = arms[0] if arms else None
    active = context.view_layer.objects.active
    mine = [m for m in meshes if armature is None or mesh_armature(m) == armature]
    mesh = active if active in mine else (mine[0] if mine else None)
    mesh = mesh or _mesh_animation(context, armature)
    if mesh is None and not meshes and armature is None:
        raise FormatError("nothing to export: no armature or mesh in the export's scope")
    return armature, mesh


def _file_name(name: str, warnings: list[str]) -> str:
    """A bone name a ``<name>`` can hold: no '>' and no line breaks."""
    clean = name.replace(">", "_").replace("\n", "_").replace("\r", "_")
    if clean != name:
        warnings.append(f"bone {name!r} is written as {clean!r} (a <name> cannot hold '>')")
    return clean


def _file_space(matrix: np.ndarray | None, armature, path: str) -> np.ndarray:
    """The transform from ``armature``'s space into the file's: ``matrix``, else the
    armature's world matrix (3ds Max writes world space); FormatError when it shears
    or scales unevenly (bones cannot hold that)."""
    m = np.array(armature.matrix_world, np.float64) if matrix is None else matrix
    if not is_identity(m):
        try:
            split(m)
        except ValueError as err:
            raise FormatError(
                f"the transform of {armature.name!r} {err.args[0][len('the transform ') :]}, "
                "which a BonesPro file cannot hold: apply its scale first",
                None,
                path,
            ) from None
    return m


# ------------------------------------------------------------------ structure
def export_structure(context, path: str, options: StructureExportOptions) -> Result:
    """The scope's armature (or the active mesh's) and its mesh's weights, the mesh as
    its modifiers make it with ``apply_modifiers``."""
    armature, mesh = _scoped_armature_and_mesh(options, context)
    if armature is None:
        raise FormatError("select the armature (or a mesh it deforms) to export")
    if mesh is None:
        mesh = _deformed_mesh(context, armature)
    matrix = options.file_space(armature)
    with evaluated_meshes(context, [mesh] if mesh else [], options.apply_modifiers) as (
        objs,
        warnings,
    ):
        written = write_structure(context, path, armature, objs[0] if objs else None, matrix)
    return Result().warn(*warnings).merge(written)


def write_structure(
    context, path: str, armature, mesh=None, matrix: np.ndarray | None = None
) -> Result:
    """The armature's rest pose and the mesh's weights (the mesh the armature deforms
    by default) as a structure file, both read in the armature's space and written
    through ``matrix`` (from that space into the file's; the armature's world matrix
    by default)."""
    if armature is None:
        raise FormatError(
            "a BonesPro structure is a skeleton with its vertex weights: there is no "
            "armature to export (import or select one)",
            None,
            path,
        )
    if not armature.data.bones:
        raise FormatError(f"armature {armature.name!r} has no bones to export", None, path)
    warnings: list[str] = []
    matrix = _file_space(matrix, armature, path)
    space = np.array(armature.matrix_world, np.float64)
    names = bone_order(armature)
    skeleton = extract_skeleton(armature)
    order = [skeleton.names.index(n) for n in names]
    inverse = np.argsort(order)
    parents = np.array([inverse[p] if p >= 0 else -1 for p in skeleton.parents[order]], np.int32)
    bind = skeleton.bind_matrices()[order]
    skeleton.names = [_file_name(n, warnings) for n in names]
    skeleton.parents = parents
    skeleton.inverse_bind = np.linalg.inv(bind)
    skeleton.extras = [skeleton.extras[i] for i in order]
    lengths = np.array([armature.data.bones[n].length for n in names])
    if mesh is None:
        mesh = _deformed_mesh(context, armature)
    if mesh is None:
        warnings.append("no mesh is deformed by the armature: the file has no vertices")
        counts = np.zeros(0, np.int32)
        bones = np.zeros(0, np.int32)
        weights = np.zeros(0)
        positions = np.zeros((0, 3))
    else:
        counts, bones, weights = get_weights(mesh, names)
        positions = world_positions(mesh, space=space)
        if (counts == 0).any():
            warnings.append(f"no bone weights on {counted(int((counts == 0).sum()), 'vertex')}")
    s = convert.scene_to_structure(skeleton, positions, counts, bones, weights, lengths)
    s = bake_structure(s, matrix)
    s.source = _stored_text(armature)
    kept = structure.write_kept(s)
    write_atomic(path, lambda: kept.data)
    return _kept_result(kept, warnings)


# ------------------------------------------------------------------ animation
def export_animation(context, path: str, options: AnimationExportOptions) -> Result:
    """The scope's armature's animation (or the active mesh's deformation): the active
    action to ``path``, or with All Actions or NLA Tracks one file each beside it."""
    armature, mesh = _scoped_armature_and_mesh(options, context)
    if options.export_animations == "ACTIVE":
        return write_animation(context, path, armature, mesh, options, options.file_space)
    if armature is None:
        raise FormatError(
            "All Actions and NLA Tracks export an armature's actions: select the armature"
        )
    chosen = chosen_files(armature, options.export_animations, path, options.use_action_names)
    ad = armature.animation_data or armature.animation_data_create()
    kept_action, kept_nla = ad.action, ad.use_nla
    warnings: list[str] = []
    try:
        ad.use_nla = False  # each action alone
        for file, _, action in chosen:
            compat.assign_action(armature, action)
            more = write_animation(context, file, armature, mesh, options, options.file_space)
            warnings += [f"{os.path.basename(file)}: {w}" for w in more.warnings]
    finally:
        if kept_action is None:
            ad.action = None
        else:
            compat.assign_action(armature, kept_action)
        ad.use_nla = kept_nla
    written = [(name, action) for _, name, action in chosen]
    result = Result().info(f"{len(chosen)} BonesPro animations written")
    return result.info(written_message(armature, written)).warn(*warnings)


@dataclass
class _AnimationExport:
    """One animation file under way: what it reads and the file it builds."""

    context: object
    path: str
    armature: bpy.types.Object | None
    mesh: bpy.types.Object | None
    file_space: Callable[[bpy.types.Object], np.ndarray] | None
    action: bpy.types.Action | None
    stored: dict
    file_frames: np.ndarray
    frames: np.ndarray
    template: anim_file.Animation
    warnings: list[str] = field(default_factory=list)
    text: bytes | None = None  # the imported file's own text (``TEXT``)

    def root_space(self, root) -> np.ndarray:
        """The transform from ``root``'s space into the file's, checked."""
        if self.file_space is None:
            return _file_space(np.array(root.matrix_world, np.float64), root, self.path)
        return _file_space(self.file_space(root), root, self.path)


def write_animation(
    context,
    path: str,
    armature,
    mesh,
    options: AnimationExportOptions,
    file_space: Callable[[bpy.types.Object], np.ndarray] | None = None,
) -> Result:
    """The animation of ``armature`` (or ``mesh``'s deformation) as an animation file.
    AUTO settings are the imported file's, else Bones, Absolute, Matrix, XYZ, Degrees;
    the frames the options' interval (else the imported one, else the action's frame
    range). Data is read in the space of its root (the mesh in Mesh (absolute), else
    the armature) and written through ``file_space(root)`` (the root's world matrix by
    default: world space)."""
    job = _start_animation(context, path, armature, mesh, options, file_space)
    mode = job.template.mode
    if mode == anim_file.MESH_ABSOLUTE:
        out = _mesh_absolute(job)
    elif armature is None:
        raise FormatError(f"{mode} needs an armature: select it")
    elif mode == anim_file.MESH_BONES:
        out = _mesh_bones(job)
    else:
        out = _bones(job)
    out.source, source = _text_for(out, job.text)
    if source is not None and mode != anim_file.MESH_ABSOLUTE:
        convert.keep_unedited(out, source)
    kept = anim_file.write_kept(out)
    write_atomic(path, lambda: kept.data)
    return _kept_result(kept, job.warnings)


def _text_for(out: anim_file.Animation, text: bytes | None):
    """(text, its animation): the imported file's when ``out`` is written in its
    settings; another mode, system or representation is another file, whose text has
    nothing to say about it (None, None). Unreadable text comes back alone, for
    ``write_kept`` to say so."""
    if text is None:
        return None, None
    try:
        source = anim_file.read(text)
    except FormatError:
        return text, None
    settings = ("mode", "system", "representation", "euler_order", "angle_units")
    if any(getattr(out, k) != getattr(source, k) for k in settings):
        return None, None
    return text, source


def _stored_text(*holders) -> bytes | None:
    """The file's own text an import kept (another writer's layout), if any."""
    for h in holders:
        if h is not None:
            text = unpack_source(read_prop(h, TEXT))
            if text is not None:
                return text
    return None


def _kept_result(kept: KeptText, warnings: list[str]) -> Result:
    """The export's Result: its warnings, and what became of the file's own text."""
    result = Result().warn(*warnings, kept.lost)
    if kept.edited and not kept.lost:
        result.info(
            f"{kept.edited} edited values written in RigPort's formatting, the rest as "
            "the imported file had them"
        )
    return result


def _start_animation(context, path, armature, mesh, options, file_space) -> _AnimationExport:
    """The header (the options', else the stored one, else the defaults) and the frames
    to write."""
    action = None
    if armature is not None and armature.animation_data is not None:
        action = armature.animation_data.action
    shape_action = None
    if (
        mesh is not None
        and mesh.data.shape_keys is not None
        and mesh.data.shape_keys.animation_data
    ):
        shape_action = mesh.data.shape_keys.animation_data.action
    # A mesh animation's own settings come first: it is what the user picked.
    stored = _stored_header(shape_action, mesh, action)
    h = _header(stored, options)
    frame_scale = options.frame_scale(context)
    if frame_scale is None:
        frame_scale = _stored_frame_scale(shape_action, mesh, action)
    k = float(frame_scale)
    first, last, step = _file_interval(
        options.frame_interval(context), stored, action or shape_action, k
    )
    nf = int(np.floor((last - first) / step + 1e-9)) + 1
    file_frames = first + np.arange(nf) * step
    template = anim_file.Animation(0, 0, nf, first_frame=first, last_frame=last, step=step)
    for key, value in h.items():
        setattr(template, key, value)
    job = _AnimationExport(
        context, path, armature, mesh, file_space, action, stored, file_frames,
        file_frames * k, template,
    )  # fmt: skip
    job.text = _stored_text(shape_action, mesh, action)
    return job


def _header(stored: dict, options: AnimationExportOptions) -> dict:
    """The file's header settings: the options' where not AUTO, else the stored ones
    (the imported file's), else Bones, Absolute, Matrix, XYZ, Degrees."""
    h = {
        "mode": anim_file.BONES,
        "system": anim_file.ABSOLUTE,
        "representation": anim_file.MATRIX,
        "euler_order": "XYZ",
        "angle_units": anim_file.DEGREES,
        "quoted": False,
    }
    h.update({k: v for k, v in stored.items() if k in h})
    h.update({k: v for k, v in options.header().items() if v != "AUTO"})
    return h


def _file_interval(interval, stored: dict, src, k: float) -> tuple[float, float, float]:
    """(first, last, step) in file frames: ``interval`` (Blender frames; None: the
    imported one, else the frame range of the action ``src``), a file frame being
    ``k`` Blender frames."""
    if interval is None and "first_frame" in stored:
        file_interval = (stored["first_frame"], stored["last_frame"], stored["step"])
    else:
        if interval is None:
            if src is None:
                raise FormatError("nothing is animated: give a frame interval")
            lo, hi = src.frame_range
            interval = (float(lo), float(hi), 1.0)
        file_interval = tuple(float(v) / k for v in interval)
    first, last, step = (float(v) for v in file_interval)
    if step <= 0 or last < first:
        raise FormatError(f"bad frame interval {first:g}..{last:g} step {step:g}")
    return first, last, step


def _mesh_absolute(job: _AnimationExport) -> anim_file.Animation:
    """Mesh (absolute): the mesh's deformed vertex positions at every frame."""
    mesh, armature, out = job.mesh, job.armature, job.template
    if mesh is None:
        raise FormatError("Mesh (absolute) needs a mesh: select it")
    space = np.array(mesh.matrix_world, np.float64)
    _, positions = sample_frames(job.context, job.frames, None, None, mesh, space)
    matrix = job.root_space(mesh)
    if not is_identity(matrix):
        positions = bake_points(positions, matrix)
    out.vertex_count = positions.shape[1]
    out.bone_count = (
        len(bone_order(armature)) if armature is not None else int(job.stored.get("bone_count", 0))
    )
    out.positions = positions
    return out


def _posed(job: _AnimationExport, with_mesh: bool):
    """The bone names, the bones' file-space matrices at every frame and (``with_mesh``)
    the mesh's deformed positions, and the transform into the file's space."""
    armature = job.armature
    names = bone_order(armature)
    space = np.array(armature.matrix_world, np.float64)
    bones, positions = sample_frames(
        job.context, job.frames, armature, names, job.mesh if with_mesh else None, space
    )
    matrix = job.root_space(armature)
    if not is_identity(matrix):
        bones = bake_matrices(bones, matrix)
        if positions is not None:
            positions = bake_points(positions, matrix)
    return names, bones, positions, matrix


def _mesh_bones(job: _AnimationExport) -> anim_file.Animation:
    """Mesh (bones c.s.): each vertex's positions in the space of every bone moving it."""
    if job.mesh is None:
        raise FormatError("Mesh (bones c.s) needs a mesh with the bone weights: select it")
    names, bones, positions, _ = _posed(job, True)
    out = job.template
    counts, wb, w = get_weights(job.mesh, names)
    owner = np.repeat(np.arange(len(counts)), counts)
    members = [owner[(wb == b) & (w > 0)] for b in range(len(names))]
    out.bone_count, out.vertex_count = len(names), positions.shape[1]
    (
        out.block_bones,
        out.block_counts,
        out.block_vertices,
        out.block_positions,
    ) = convert.world_positions_to_blocks(positions, bones, members)
    return out


def _bones(job: _AnimationExport) -> anim_file.Animation:
    """Bones: every bone's and node's transform at every frame, and the boxes."""
    armature = job.armature
    names, bones, _, matrix = _posed(job, False)
    parents = bone_parents(armature, names)
    nf = len(job.file_frames)
    offset, boxes = _node_offsets_and_boxes(armature, job.action, names)
    per_frame = _per_frame(job.action, job.stored, job.file_frames, len(names), job.warnings)
    offset = per_frame.get("offsets", offset[None])
    boxes = per_frame.get("boxes", np.broadcast_to(boxes, (nf, len(names), 3)))
    if not is_identity(matrix):  # bones hold no scale: it goes into the offsets' translations
        scale = split(matrix)[1]
        offset = np.array(offset, np.float64)
        offset[..., :3, 3] *= scale
        boxes = boxes * scale
    out = convert.worlds_to_bones_animation(bones, bones @ offset, boxes, parents, job.template)
    deformed = job.mesh or _deformed_mesh(job.context, armature)
    out.vertex_count = (
        len(deformed.data.vertices)
        if deformed is not None
        else int(job.stored.get("vertex_count", 0))
    )
    if out.representation == anim_file.EULER:
        scale = np.linalg.norm(bones[..., :3, :3], axis=-2)
        if np.abs(scale - 1).max() > 1e-5:
            job.warnings.append("Euler angles hold no scale: the bones' scale is not written")
    return out


def _stored_header(*holders) -> dict:
    for h in holders:
        if h is None or HEADER not in h:
            continue
        value = read_prop(h, HEADER)
        if isinstance(value, dict):
            return value
    return {}


def _stored_frame_scale(*holders) -> float:
    """The Blender frames per file frame an import used (1 when it did not say)."""
    for h in holders:
        if h is not None and FRAME_SCALE in h:
            value = h[FRAME_SCALE]
            if isinstance(value, (int, float)) and np.isfinite(value) and value > 0:
                return float(value)
    return 1.0


def _per_frame(action, stored: dict, frames: np.ndarray, nb: int, warnings: list) -> dict:
    """Node offsets and boxes stored per frame by the import, when the export writes
    the same frames."""
    out: dict = {}
    if action is None:
        return out
    same = "first_frame" in stored and np.array_equal(
        frames,
        stored["first_frame"] + np.arange(int(stored["frame_count"])) * stored["step"],
    )
    for key, name, width in (
        (NODE_OFFSETS_PER_FRAME, "offsets", 12),
        (BOXES_PER_FRAME, "boxes", 3),
    ):
        if key not in action:
            continue
        if not same:
            warnings.append(
                f"the imported {'node transforms' if width == 12 else 'box sizes'} change "
                "over the frames, and these are other frames: the first frame's are written"
            )
            continue
        values = np.asarray(read_prop(action, key), np.float64).reshape(len(frames), nb, -1)
        if width == 12:
            full = np.zeros((len(frames), nb, 4, 4))
            full[..., :3, :] = values.reshape(len(frames), nb, 3, 4)
            full[..., 3, 3] = 1.0
            values = full
        out[name] = values
    return out


def _node_offsets_and_boxes(armature, action, names) -> tuple[np.ndarray, np.ndarray]:
    """Per bone: node = bone @ offset, and the box size. From the imported animation,
    else the imported structure, else identity and the bone length."""
    nb = len(names)
    offset = np.tile(np.eye(4), (nb, 1, 1))
    boxes = np.array(
        [
            [b.length, b.length * 0.25, b.length * 0.25]
            for b in (armature.data.bones[n] for n in names)
        ]
    )
    stored_offset = read_prop(action, NODE_OFFSET) if action is not None else None
    stored_boxes = read_prop(action, BOXES) if action is not None else None
    for i, n in enumerate(names):
        bone = armature.data.bones[n]
        rows_b, rows_n = read_prop(bone, convert.BONE), read_prop(bone, convert.NODE)
        if rows_b is not None and rows_n is not None:
            offset[i] = np.linalg.inv(convert.rows_to_matrix(np.array(rows_b))) @ (
                convert.rows_to_matrix(np.array(rows_n))
            )
        box = read_prop(bone, convert.BOX)
        if box is not None:
            boxes[i] = box
    if stored_offset is not None and len(stored_offset) == nb * 16:
        offset = np.array(stored_offset, np.float64).reshape(nb, 4, 4)
    if stored_boxes is not None and len(stored_boxes) == nb * 3:
        boxes = np.array(stored_boxes, np.float64).reshape(nb, 3)
    return offset, boxes
