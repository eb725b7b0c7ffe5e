"""An imported clump -> Blender: frame objects, one armature, meshes, materials.

Objects take the names the file gives its frames, as DragonFF's do, so a fresh
import has no ".001": a frame outside the HAnim hierarchy that holds exactly one
atomic is that atomic's mesh object (named after the frame, and its frame values
kept on it); any other frame outside the hierarchy is an empty, and the atomics
of a frame holding several are its children named ``<frame>_<atomic>``. HAnim
frames become the bones of one armature, named after the frame holding the
hierarchy, which sits on the frame the skinned atomics hang from (a child of
that frame's object, even when it is the skinned mesh itself), or on the frame
above the hierarchy when they hang elsewhere (a turned bone): the skinned meshes
then sit where their frame is. Skinned meshes that are not their frame's object
are children of the armature. All of it is recorded in a :class:`Built`, so a
failure leaves nothing behind.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any

import bpy
import numpy as np
from mathutils import Matrix

from ...io_formats import kept as kept_text
from ...io_formats.renderware.clump_import import ImportedClump, MaterialInfo
from ...io_formats.transforms import world_from_local
from ..blender import compat, fingerprint, guard, kept_keys
from ..blender.build import Built, build_armature, build_mesh_object, set_prop, shape_keys
from ..blender.weights import assign_vertex_groups
from .txd_importer import bind_clump

IMAGE_EXTENSIONS = (".png", ".tga", ".bmp", ".dds", ".jpg", ".jpeg")
#: Custom properties written on import and read on export.
PROP_COLOR = "rw_color"
PROP_TEXTURE = "rw_texture_name"
PROP_FRAME = "_rw_atomic_frame"
PROP_ATOMIC = "_rw_atomic_index"
#: The skinned atomic's frame in the armature's space as the file has it (float64,
#: which the object's matrix cannot hold), while the object stays there.
PROP_SKIN_SPACE = "_rw_skin_space"
#: The fingerprint (``operators.blender.fingerprint``) of the mesh the atomic's kept
#: geometry data describes (Bin Mesh, triangle material IDs, spheres, split data,
#: per-vertex plugins), with the weights for a skinned one.
FINGERPRINT = "_rw_fingerprint"
#: On the object (so an evaluated copy has it too), beside what the import guard
#: kept (on the mesh) of the file's duplicate and repeated-vertex faces: the
#: positions of their corners' vertices (``io_formats.kept`` text holding
#: ``{"positions": float32 (n, 3)}``), so an export after an edit that renumbered
#: the vertices finds them again.
PROP_KEPT_FACE_POSITIONS = "_rw_kept_face_positions"


def _set(holder, key: str, value) -> None:
    if isinstance(value, dict | list):
        holder[kept_keys.stored_name(key)] = json.dumps(value)
    else:  # integers beyond 32 bits, text that is not UTF-8: see set_prop
        set_prop(holder, key, value)


def srgb_to_linear(c: np.ndarray) -> np.ndarray:
    c = np.asarray(c, np.float64)
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def find_image(directory: str, texture: str) -> str | None:
    """A file named after the texture beside the .dff (any case, common extensions)."""
    if not directory or not texture or not os.path.isdir(directory):
        return None
    wanted = {(texture + ext).lower() for ext in IMAGE_EXTENSIONS}
    for entry in sorted(os.listdir(directory)):
        if entry.lower() in wanted:
            return os.path.join(directory, entry)
    return None


def _material(
    info: MaterialInfo, directory: str, built: Built, images: list, reuse: bool = False
) -> bpy.types.Material:
    """A new material for the clump's material ``info``; with ``reuse``, the blend
    file's material of that name when there is one (left as it is)."""
    if reuse:
        existing = bpy.data.materials.get(info.name)
        if existing is not None:
            return existing
    mat = bpy.data.materials.new(info.name)
    built.materials.append(mat)
    compat.use_material_nodes(mat)
    nodes = mat.node_tree.nodes
    bsdf = next((n for n in nodes if n.type == "BSDF_PRINCIPLED"), None)
    rgba = np.array(info.color, np.float64) / 255.0
    color = (*srgb_to_linear(rgba[:3]), rgba[3])
    mat.diffuse_color = color
    if bsdf is not None:
        bsdf.inputs["Base Color"].default_value = color
        bsdf.inputs["Alpha"].default_value = float(rgba[3])
    if info.texture:
        node = nodes.new("ShaderNodeTexImage")
        node.name = node.label = info.texture
        node.location = (-400, 200)
        path = find_image(directory, info.texture)
        if path is not None:
            existing = {im.as_pointer() for im in bpy.data.images}
            image = bpy.data.images.load(path, check_existing=True)
            if image.as_pointer() not in existing:
                images.append(image)
            node.image = image
        if bsdf is not None:
            mat.node_tree.links.new(node.outputs["Color"], bsdf.inputs["Base Color"])
        mat[PROP_TEXTURE] = info.texture
    mat[PROP_COLOR] = list(info.color)
    for key, value in info.extras.items():
        _set(mat, key, value)
    return mat


@dataclass
class _ClumpBuild:
    """What :func:`build_clump`'s passes read and fill."""

    context: Any
    imp: ImportedClump
    directory: str
    built: Built
    #: Images loaded for the materials (removed again if the build fails).
    images: list
    reuse_materials: bool
    #: Each frame's matrix relative to its parent, and in world space.
    local: np.ndarray = field(default_factory=lambda: np.zeros((0, 4, 4)))
    world: np.ndarray = field(default_factory=lambda: np.zeros((0, 4, 4)))
    #: frame index -> the object made for it (frames outside the HAnim hierarchy):
    #: an empty, or the mesh of the one atomic it holds.
    empties: dict = field(default_factory=dict)
    #: frame index -> the atomic whose mesh object is that frame's object.
    mesh_frames: dict = field(default_factory=dict)
    armature: Any = None
    #: material key (name, colour, texture, extras) -> the material made for it.
    materials: dict = field(default_factory=dict)


def build_clump(
    context,
    imp: ImportedClump,
    directory: str = "",
    dictionaries: list | None = None,
    reuse_materials: bool = False,
) -> Built:
    """Create the clump in the active collection; all or nothing. Textures come
    from ``dictionaries`` (``(label, TxdFile)``) or the .txd named like the clump
    beside it (:mod:`.txd_importer`); what they lack is added to ``imp.warnings``.
    Materials are new unless ``reuse_materials`` (the blend file's material of
    the same name is used then, as it is)."""
    state = _ClumpBuild(context, imp, directory, Built(filled={}), [], reuse_materials)
    try:
        _frame_matrices(state)
        _mesh_frames(state)
        _frame_empties(state)
        _armature(state)
        for k, mesh in enumerate(imp.scene.meshes):
            _atomic(state, k, mesh)
        _place_empties(state)
        _clump_values(state)
        made, warnings = bind_clump(state.built.materials, directory, imp.scene.name, dictionaries)
        state.images += made
        imp.warnings += warnings
    except Exception:
        state.built.discard()
        for image in state.images:
            bpy.data.images.remove(image)
        raise
    return state.built


def _frame_matrices(state: _ClumpBuild) -> None:
    frames = state.imp.frames
    state.local = np.array([f.matrix for f in frames], np.float64).reshape(-1, 4, 4)
    parents = np.array([f.parent for f in frames], np.int32)
    state.world = world_from_local(state.local, parents)


def _mesh_frames(state: _ClumpBuild) -> None:
    """The frames whose object is the mesh of their one atomic: frames outside the
    HAnim hierarchy holding exactly one atomic, which is unskinned, or skinned with
    the armature sitting exactly on that frame (the armature is then its child)."""
    imp = state.imp
    frames = np.asarray(imp.mesh_frames, np.int64)
    if not len(frames):
        return
    held = np.bincount(frames, minlength=len(imp.frames))
    for k, i in enumerate(frames.tolist()):
        if held[i] != 1 or imp.frames[i].bone >= 0:
            continue
        skinned = imp.scene.meshes[k].skin is not None and imp.scene.skeleton is not None
        if skinned and (imp.skin_frame != i or imp.skin_space is not None):
            continue
        state.mesh_frames[i] = k


def _frame_object(obj, f) -> None:
    """The frame's values on its object; its name kept when Blender's differs."""
    for key, value in f.extras.items():
        _set(obj, key, value)
    if obj.name != f.name and "rw_name" not in f.extras:  # the name was taken
        _set(obj, "rw_name", f.name)


def _frame_empties(state: _ClumpBuild) -> None:
    """An empty per frame outside the HAnim hierarchy that is not an atomic's mesh
    object, with the frame's values."""
    frames = state.imp.frames
    world = state.world
    extent = float(np.ptp(world[:, :3, 3], axis=0).max()) if len(frames) > 1 else 1.0
    for i, f in enumerate(frames):
        if f.bone >= 0 or i in state.mesh_frames:
            continue
        obj = bpy.data.objects.new(f.name, None)
        state.built.objects.append(obj)
        state.context.collection.objects.link(obj)
        obj.empty_display_type = "PLAIN_AXES"
        obj.empty_display_size = max(extent * 0.05, 0.01)
        _frame_object(obj, f)
        state.empties[i] = obj


def _clump_values(state: _ClumpBuild) -> None:
    """The clump's own values on the first frame's object (also on the armature)."""
    if state.empties:
        first = state.empties.get(0) or state.empties[min(state.empties)]
        for key, value in state.imp.scene.extras.items():
            _set(first, key, value)


def _armature(state: _ClumpBuild) -> None:
    """The HAnim hierarchy as one armature, on the frame the skinned atomics hang
    from: that frame's empty, else (a bone frame) where that frame is."""
    imp = state.imp
    scene = imp.scene
    if scene.skeleton is None:
        return
    built = state.built
    name = next((f.name for f in imp.frames if f.extras.get("rw_hanim_root")), scene.name)
    armature = build_armature(state.context, scene.skeleton, name, built, state.context.collection)
    state.armature = built.armature = armature
    for key, value in scene.extras.items():
        _set(armature, key, value)
    if imp.skin_frame < 0 or imp.skin_frame in state.mesh_frames:
        return  # no frame above the HAnim hierarchy, or its mesh (_place_empties)
    holder = state.empties.get(imp.skin_frame)
    if holder is not None:
        armature.parent = holder
        return
    # the skinned atomics hang from a bone: the armature sits where it is
    up = imp.frames[imp.skin_frame].parent
    place = state.world[imp.skin_frame]
    if up in state.empties:
        armature.parent = state.empties[up]
        place = np.linalg.inv(state.world[up]) @ place
    armature.matrix_basis = Matrix(place.tolist())


def _place_empties(state: _ClumpBuild) -> None:
    """Each frame's object on its parent frame: an empty or mesh, a bone, or none
    (world space); then the armature on its frame when that is a mesh."""
    imp = state.imp
    frames = imp.frames
    bone_frames = {f.name for f in frames if f.bone >= 0}
    for i in sorted(state.empties):
        obj = state.empties[i]
        p = frames[i].parent
        if p < 0:
            obj.matrix_world = Matrix(state.world[i].tolist())
        elif p in state.empties:
            obj.parent = state.empties[p]
            obj.matrix_basis = Matrix(state.local[i].tolist())
        else:  # a frame hanging from a bone
            obj.parent = state.armature
            obj.parent_type = "BONE"
            obj.parent_bone = frames[p].name if frames[p].name in bone_frames else ""
            obj.matrix_world = Matrix(state.world[i].tolist())
    if state.armature is not None and imp.skin_frame in state.mesh_frames:
        state.armature.parent = state.empties[imp.skin_frame]


def _atomic(state: _ClumpBuild, k: int, mesh) -> None:
    """The mesh object of atomic ``k``: its materials (one per distinct material of
    the clump), skinned to the armature, else on its frame's empty."""
    imp = state.imp
    names = []
    for info in imp.materials[k]:
        key = json.dumps([info.name, info.color, info.texture, info.extras], sort_keys=True)
        if key not in state.materials:
            state.materials[key] = _material(
                info, state.directory, state.built, state.images, state.reuse_materials
            )
        names.append(state.materials[key].name)
    mesh.materials = names
    frame = imp.mesh_frames[k]
    armature = state.armature
    skinned = mesh.skin is not None and armature is not None
    # per-vertex normals take the per-vertex setter on 4.2 (build._set_custom_normals)
    morphs = mesh.morphs
    mesh.morphs = []  # shape keys last: the weights may go in through a modifier
    try:
        # the names are of the materials made just above: use those
        obj = build_mesh_object(
            state.context, mesh, state.built, state.context.collection, reuse_materials=True
        )
    finally:
        mesh.morphs = morphs
    obj[PROP_FRAME] = frame
    obj[PROP_ATOMIC] = k
    is_frame = state.mesh_frames.get(frame) == k
    if is_frame:  # the frame's object: placed with the empties (_place_empties)
        _frame_object(obj, imp.frames[frame])
        state.empties[frame] = obj
    if skinned:
        if not is_frame:
            obj.parent = armature
        if imp.skin_space is not None:  # the atomic's frame, composed into the bind pose
            obj.matrix_basis = Matrix(imp.skin_space.tolist())
            obj[PROP_SKIN_SPACE] = [float(v) for v in imp.skin_space.ravel()]
        obj.modifiers.new("Armature", "ARMATURE").object = armature
        names = state.built.bone_names
        assign_vertex_groups(state.context, obj, mesh.skin.joints, mesh.skin.weights, names)
    if morphs:
        shape_keys(obj, mesh)
    if not skinned and not is_frame:
        holder = state.empties.get(frame)
        if holder is not None:
            obj.parent = holder
        else:
            obj.matrix_world = Matrix(state.world[frame].tolist())
    given = state.built.filled.pop(obj.data.as_pointer(), None)  # hashed, not read back
    if skinned:  # the weights' part from the arrays just given, not read back
        skin = (mesh.skin.joints, mesh.skin.weights, state.built.bone_names)
        fingerprint.store(obj, FINGERPRINT, fingerprint.WITH_WEIGHTS, skin, given)
    else:
        fingerprint.store(obj, FINGERPRINT, given=given)
    _kept_face_positions(obj)


def _kept_face_positions(obj) -> None:
    """Store where the corners of the faces the guard kept aside are (see
    :data:`PROP_KEPT_FACE_POSITIONS`)."""
    me = obj.data
    kept = me.get(guard.KEPT)
    faces = (guard.loads(kept) if isinstance(kept, str) else {}).get("faces")
    if faces is None or not len(me.vertices):
        return
    verts = np.asarray(faces["verts"], np.int64)
    pos = np.empty(len(me.vertices) * 3, np.float32)
    me.attributes["position"].data.foreach_get("vector", pos)
    obj[PROP_KEPT_FACE_POSITIONS] = kept_text.dumps(
        {"positions": pos.reshape(-1, 3)[verts].astype("<f4")}
    )
