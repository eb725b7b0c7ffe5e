"""Whether what a Unigine import kept of its ``.mesh`` still describes the mesh.

The shared fingerprint (:mod:`operators.blender.fingerprint`) of the topology,
positions, UVs and shape keys, stored at import, plus a part for the weights
(the skin as Blender holds it, hashed by :func:`io_formats.fingerprint.skin_digest`
so that bone order does not matter). The exporter compares them: the file's weight
bytes are written while topology and weights are unchanged, each vertex no
triangle uses goes back to its surface while the topology is.
"""

from __future__ import annotations

import json

import bpy

from ...io_formats.fingerprint import VERSION, skin_digest, version_of
from ...io_formats.scene import Mesh, Skin
from ..blender import fingerprint
from ..blender.extract import read_skin
from .kept import FINGERPRINT

#: The fingerprint part the Unigine side adds: the skin.
WEIGHTS = "weights"


def _skin_digest(skin: Skin | None, names: list[str], version: int = VERSION) -> str:
    if skin is None:
        return ""
    return skin_digest(skin.joints, skin.weights, names, version)


def store(
    obj: bpy.types.Object,
    names: list[str] | None,
    given: Skin | None = None,
    bone_names: list[str] | None = None,
    version: int = VERSION,
    filled: Mesh | None = None,
) -> None:
    """The fingerprint of the imported ``obj``, its weights (groups ``names``) included:
    hashed from ``given``, the skin the import just gave the groups named
    ``bone_names`` (Blender's bone names), where that is what they hold
    (:func:`fingerprint.skin_as_held`) and at most 4 a vertex (all that
    ``read_skin`` reads back), else read back from the groups. ``version``: the
    hash (``io_formats.fingerprint``; an older one only to build what an older
    build stored). ``filled``: the neutral mesh the build filled ``obj``'s mesh
    from (``build.Built.filled``), so the shared parts are hashed from its arrays
    instead of read back (:func:`fingerprint.compute`)."""
    fingerprint.store(obj, FINGERPRINT, given=filled, version=version)
    skin = None
    if names and obj.vertex_groups:
        held = None
        slots = given.weights.shape[-1] if given is not None else 0
        if given is not None and bone_names is not None and slots <= 4:
            held = fingerprint.skin_as_held(obj, given.joints, given.weights, bone_names)
        skin = Skin(*held) if held is not None else read_skin(obj, names)
    stored = fingerprint.stored(obj, FINGERPRINT) or {}
    stored[WEIGHTS] = _skin_digest(skin, names or [], version)
    obj[FINGERPRINT] = json.dumps(stored, separators=(",", ":"))


def holds(obj: bpy.types.Object, skin: Skin | None, names: list[str] | None) -> tuple[bool, bool]:
    """(topology holds, weights hold) for ``obj`` about to be written with ``skin``
    (unnormalised, as Blender holds it, joints into ``names``); both False when no
    fingerprint was stored (a fresh mesh, or kept data forgotten)."""
    old = fingerprint.stored(obj, FINGERPRINT)
    # the topology alone: the whole fingerprint would also read the groups back
    # for the shared weights part, which this one's skin digest replaces
    if old is None or fingerprint.topology_changed(obj, FINGERPRINT):
        return False, False
    kept = old.get(WEIGHTS)
    version = version_of(kept) if isinstance(kept, str) else fingerprint.stored_version(old)
    return True, kept == _skin_digest(skin, names or [], version)
