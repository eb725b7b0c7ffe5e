"""An imported clump -> Blender: frame empties, one armature, meshes, materials.

Frames outside the HAnim hierarchy become empties (parented as the frames
are); HAnim frames become the bones of one armature, which sits on the frame
the skinned atomics hang from. Every atomic is a mesh object: skinned ones are
children of the armature, the others children of their frame's empty. All of
it is recorded in a :class:`Built`, so a failure leaves nothing behind.
"""

from __future__ import annotations

import json
import os

import bpy
import numpy as np
from mathutils import Matrix

from ...io_formats.renderware.clump_import import ImportedClump, MaterialInfo
from ...io_formats.transforms import world_from_local
from ..blender import compat, kept_keys
from ..blender.build import Built, build_armature, build_mesh_object, set_prop, shape_keys
from ..blender.weights import assign_vertex_groups
from .txd_importer import bind_clump

IMAGE_EXTENSIONS = (".png", ".tga", ".bmp", ".dds", ".jpg", ".jpeg")
#: Custom properties written on import and read on export.
PROP_COLOR = "rw_color"
PROP_TEXTURE = "rw_texture_name"
PROP_FRAME = "_rw_atomic_frame"
PROP_ATOMIC = "_rw_atomic_index"


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


def build_clump(
    context,
    imp: ImportedClump,
    directory: str = "",
    dictionaries: list | None = None,
    reuse_materials: bool = False,
) -> Built:
    """Create the clump in the active collection; all or nothing. Textures come
    from ``dictionaries`` (``(label, TxdFile)``) or the .txd named like the clump
    beside it (:mod:`.txd`); what they lack is added to ``imp.warnings``.
    Materials are new unless ``reuse_materials`` (the blend file's material of
    the same name is used then, as it is)."""
    built = Built()
    images: list = []
    try:
        _build(context, imp, directory, built, images, reuse_materials)
        made, warnings = bind_clump(built.materials, directory, imp.scene.name, dictionaries)
        images += made
        imp.warnings += warnings
    except Exception:
        built.discard()
        for image in images:
            bpy.data.images.remove(image)
        raise
    return built


def _build(
    context, imp: ImportedClump, directory: str, built: Built, images: list, reuse: bool
) -> None:
    collection = context.collection
    scene = imp.scene
    frames = imp.frames
    local = np.array([f.matrix for f in frames], np.float64).reshape(-1, 4, 4)
    parents = np.array([f.parent for f in frames], np.int32)
    world = world_from_local(local, parents)
    objects: dict[int, bpy.types.Object] = {}
    extent = float(np.ptp(world[:, :3, 3], axis=0).max()) if len(frames) > 1 else 1.0
    for i, f in enumerate(frames):
        if f.bone >= 0:
            continue
        obj = bpy.data.objects.new(f.name, None)
        built.objects.append(obj)
        collection.objects.link(obj)
        obj.empty_display_type = "PLAIN_AXES"
        obj.empty_display_size = max(extent * 0.05, 0.01)
        for key, value in f.extras.items():
            _set(obj, key, value)
        if obj.name != f.name and "rw_name" not in f.extras:  # the name was taken
            obj["rw_name"] = f.name
        objects[i] = obj
    if objects:  # the clump's own values, also on the armature below
        for key, value in scene.extras.items():
            _set(objects.get(0) or next(iter(objects.values())), key, value)
    armature = None
    names = None
    if scene.skeleton is not None:
        armature = build_armature(context, scene.skeleton, scene.name, built, collection)
        built.armature = armature
        names = built.bone_names
        for key, value in scene.extras.items():
            _set(armature, key, value)
        holder = objects.get(imp.skin_frame)
        if holder is not None:
            armature.parent = holder
        else:  # the skinned atomics hang from a bone: the armature sits where it is
            up = frames[imp.skin_frame].parent
            place = world[imp.skin_frame]
            if up in objects:
                armature.parent = objects[up]
                place = np.linalg.inv(world[up]) @ place
            armature.matrix_basis = Matrix(place.tolist())
    bone_frame = {f.name: i for i, f in enumerate(frames) if f.bone >= 0}
    for i, obj in objects.items():
        p = frames[i].parent
        if p < 0:
            obj.matrix_world = Matrix(world[i].tolist())
        elif p in objects:
            obj.parent = objects[p]
            obj.matrix_basis = Matrix(local[i].tolist())
        else:  # a frame hanging from a bone
            obj.parent = armature
            obj.parent_type = "BONE"
            obj.parent_bone = frames[p].name if frames[p].name in bone_frame else ""
            obj.matrix_world = Matrix(world[i].tolist())
    made: dict[str, bpy.types.Material] = {}
    for k, mesh in enumerate(scene.meshes):
        infos = imp.materials[k]
        names_k = []
        for info in infos:
            key = json.dumps([info.name, info.color, info.texture, info.extras], sort_keys=True)
            if key not in made:
                made[key] = _material(info, directory, built, images, reuse)
            names_k.append(made[key].name)
        mesh.materials = names_k
        frame = imp.mesh_frames[k]
        skinned = mesh.skin is not None and armature is not None
        # per-vertex normals take the per-vertex setter on 4.2 (build._set_custom_normals)
        morphs = mesh.morphs
        mesh.morphs = []  # shape keys last: the weights may go in through a modifier
        try:
            # the names are of the materials made just above: use those
            obj = build_mesh_object(context, mesh, built, collection, reuse_materials=True)
        finally:
            mesh.morphs = morphs
        obj[PROP_FRAME] = frame
        obj[PROP_ATOMIC] = k
        if skinned:
            obj.parent = armature
            obj.modifiers.new("Armature", "ARMATURE").object = armature
            assign_vertex_groups(context, obj, mesh.skin.joints, mesh.skin.weights, names)
        if morphs:
            shape_keys(obj, mesh)
        if not skinned:
            holder = objects.get(frame)
            if holder is not None:
                obj.parent = holder
            else:
                obj.matrix_world = Matrix(world[frame].tolist())
