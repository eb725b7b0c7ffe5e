"""TXD texture dictionaries: textures as packed Blender images, bound to materials.

A DFF's materials name their textures; a texture dictionary holds them. The
clump import looks for the dictionary named like the .dff beside it (any
case) and binds its textures to the materials' image nodes
(:func:`bind_clump`); importing a .txd on its own (:func:`import_txd_file`)
binds it to every RigPort material in the scene that names one of its
textures. A texture the materials name but no dictionary holds is listed in
one warning. Images are decoded with numpy, filled with ``foreach_set`` and
packed, so they survive a save; the .txd itself is not changed (export is out
of scope), and the materials keep their texture names, so an exported model
still refers to it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import bpy
import numpy as np

from ...io_formats.codec import read_file
from ...io_formats.renderware import txd
from ..common import in_file
from ..result import Result, counted

PROP_TEXTURE = "rw_texture_name"  # the material's texture name (.build)


def read_txd(path: str, data: bytes | None = None) -> txd.TxdFile:
    with in_file(path):
        return txd.read(read_file(path, "texture dictionary") if data is None else data)


def dictionary_beside(directory: str, stem: str) -> str | None:
    """``<stem>.txd`` in ``directory``, any case."""
    if not directory or not os.path.isdir(directory):
        return None
    want = f"{stem}.txd".lower()
    for entry in sorted(os.listdir(directory)):
        if entry.lower() == want:
            return os.path.join(directory, entry)
    return None


def make_image(name: str, rgba: np.ndarray, source: str) -> bpy.types.Image:
    """A packed image of (h, w, 4) uint8 pixels (top row first), with a fake user:
    a texture no material names (and every further mipmap level) has no other
    user, and Blender saves no data-block without one."""
    h, w = rgba.shape[:2]
    image = bpy.data.images.new(name, w, h, alpha=True)
    try:
        flat = np.ascontiguousarray(rgba[::-1], np.float32).reshape(-1) / np.float32(255.0)
        image.pixels.foreach_set(flat)
        image.pack()
        image.use_fake_user = True
        image["rw_txd"] = source
        image["rw_texture"] = name
    except Exception:
        bpy.data.images.remove(image)
        raise
    return image


def texture_images(
    f: txd.TxdFile,
    source: str,
    names: set[str] | None = None,
    mipmaps: bool = False,
    have: dict[str, bpy.types.Image] | None = None,
) -> tuple[dict[str, list], list]:
    """Images of the dictionary's textures (those in ``names``, lower case, when
    given): level 0, and every further level as ``name/level`` with ``mipmaps``;
    an image ``have`` holds already (by that label, lower case) is used, not made
    again. Returns the images by texture name (lower case; of two textures of
    one name the last) and every image made. All or nothing."""
    by_name: dict[str, list] = {}
    made: list = []
    try:
        for tex in f.textures():
            if names is not None and tex.name.lower() not in names:
                continue
            levels = range(len(tex.levels)) if mipmaps else range(min(1, len(tex.levels)))
            images = []
            by_name[tex.name.lower()] = images
            for level in levels:
                label = tex.name if level == 0 else f"{tex.name}/{level}"
                image = (have or {}).get(label.lower())
                if image is None:
                    image = make_image(label, txd.decode(tex, level), source)
                    made.append(image)
                images.append(image)
    except Exception:
        for image in made:
            bpy.data.images.remove(image)
        raise
    return by_name, made


def _image_nodes(mat, texture: str) -> list:
    if mat.node_tree is None:
        return []
    return [n for n in mat.node_tree.nodes if n.type == "TEX_IMAGE" and n.label == texture]


def bind(materials: list, images: dict[str, list]) -> list[str]:
    """Put each material's texture on its image node; the names no image has."""
    missing = []
    for mat in materials:
        name = mat.get(PROP_TEXTURE)
        if not isinstance(name, str) or not name:
            continue
        found = images.get(name.lower())
        if not found:
            missing.append(name)
            continue
        for node in _image_nodes(mat, name):
            if node.image is None:
                node.image = found[0]
    return sorted(set(missing))


def missing_warning(missing: list[str], where: str) -> str:
    shown = ", ".join(missing[:12]) + (" ..." if len(missing) > 12 else "")
    return f"{counted(len(missing), 'texture')} the materials name, not found in {where}: {shown}"


def bind_clump(
    materials: list, directory: str, stem: str, dictionaries: list | None = None
) -> tuple[list, list[str]]:
    """Bind a just-built clump's materials: to ``dictionaries`` (``(label,
    TxdFile)`` pairs) when given, else to ``<stem>.txd`` beside the .dff.
    Returns the images made and warnings."""
    wanted = {m.get(PROP_TEXTURE).lower() for m in materials if m.get(PROP_TEXTURE)}
    if not wanted:
        return [], []
    if dictionaries is None:
        path = dictionary_beside(directory, stem)
        if path is None:
            return [], []
        dictionaries = [(os.path.basename(path), read_txd(path))]
    images: dict[str, list] = {}
    made = []
    try:
        for label, f in dictionaries:
            todo = wanted - set(images)
            got, new = texture_images(f, label, todo)
            images.update(got)
            made += new
    except Exception:
        for image in made:
            bpy.data.images.remove(image)
        raise
    missing = bind(materials, images)
    where = " or ".join(label for label, _ in dictionaries)
    return made, [missing_warning(missing, where)] if missing else []


@dataclass(frozen=True)
class TxdImportOptions:
    """The TXD importer's options (named and defaulted as its properties)."""

    mipmaps: bool = False


def import_txd_file(
    context,
    path: str,
    options: TxdImportOptions,
    data: bytes | None = None,
    have: dict[str, bpy.types.Image] | None = None,
) -> Result:
    """Every texture of one .txd (``data``, else read from ``path``) as a packed
    image, with every further mipmap level with ``mipmaps``, bound to the scene's
    materials that name it; the images ``have`` holds (by label, lower case: the
    same import made them from this dictionary for a model) are used, not made
    twice. The result's ``undo`` removes the images made."""
    f = read_txd(path, data)
    label = os.path.basename(path)
    images, made = texture_images(f, label, None, options.mipmaps, have)
    materials = [m for m in bpy.data.materials if m.get(PROP_TEXTURE)]
    missing = bind(materials, images)
    summary = f"{counted(len(images), 'texture')} from {label}"
    result = Result(summary=summary).info(summary)
    if missing:
        result.warn(missing_warning(missing, label))

    def undo() -> None:
        for image in made:
            try:
                bpy.data.images.remove(image)
            except (ReferenceError, RuntimeError):
                pass

    result.undo.append(undo)
    return result
