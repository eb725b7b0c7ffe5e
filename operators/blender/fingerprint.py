"""The one rule for "does the data kept from the file still describe this mesh".

At import a format stores, on each mesh object, a fingerprint of exactly what its
kept data describes: the topology (vertex, corner and face counts, each corner's
vertex, each face's first corner) and, separately, the positions, UV sets and
shape keys. At export the same fingerprint is taken of the mesh being
written (the evaluated copy when modifiers are applied) and compared part by
part: the format reuses what still holds and rebuilds the rest from Blender.

Every part is read in bulk (``foreach_get`` into numpy) and hashed with BLAKE2b,
so a million-vertex mesh costs a fraction of a second, not a Python loop per vertex.
"""

from __future__ import annotations

import json

import bpy
import numpy as np

from ...io_formats.fingerprint import digest
from . import compat

#: The parts of a fingerprint; :data:`TOPOLOGY` is the one every kept layout needs.
TOPOLOGY = "topology"
POSITIONS = "positions"
UVS = "uvs"
SHAPE_KEYS = "shape_keys"
PARTS = (TOPOLOGY, POSITIONS, UVS, SHAPE_KEYS)


def _topology(me: bpy.types.Mesh) -> str:
    nv, nl, nf = len(me.vertices), len(me.loops), len(me.polygons)
    corner_vert = np.zeros(nl, np.int32)
    if nl:
        me.attributes[".corner_vert"].data.foreach_get("value", corner_vert)
    starts = np.empty(nf, np.int32)  # with the corner count, they give every face's size
    me.polygons.foreach_get("loop_start", starts)
    return digest(np.array([nv, nl, nf], np.int64), corner_vert, starts)


def _positions(me: bpy.types.Mesh) -> str:
    pos = np.empty(len(me.vertices) * 3, np.float32)
    if len(pos):
        me.attributes["position"].data.foreach_get("vector", pos)
    return digest(pos)


def _uvs(me: bpy.types.Mesh) -> str:
    arrays = []
    for layer in me.uv_layers:
        uv = np.empty(len(me.loops) * 2, np.float32)
        layer.uv.foreach_get("vector", uv)
        arrays.append(uv)
    return digest(np.array([len(arrays)], np.int64), *arrays)


def _shape_keys(me: bpy.types.Mesh) -> str:
    keys = me.shape_keys
    blocks = list(keys.key_blocks) if keys is not None else []
    arrays = []
    for kb in blocks:
        co = np.empty(len(me.vertices) * 3, np.float32)
        compat.get_shape_key_coords(kb, co)
        arrays.append(co)
    return digest(*arrays, names=[k.name for k in blocks])


_READERS = {TOPOLOGY: _topology, POSITIONS: _positions, UVS: _uvs, SHAPE_KEYS: _shape_keys}


def compute(me: bpy.types.Mesh, parts: tuple[str, ...] = PARTS) -> dict[str, str]:
    """The fingerprint of ``me``: one hash per part."""
    return {part: _READERS[part](me) for part in parts}


def store(obj: bpy.types.Object, key: str, parts: tuple[str, ...] = PARTS) -> None:
    """Store the fingerprint of ``obj``'s mesh under the custom property ``key``
    (a hidden name the format declares in its ``kept.py``)."""
    obj[key] = json.dumps(compute(obj.data, parts), separators=(",", ":"))


def stored(obj: bpy.types.Object, key: str) -> dict[str, str] | None:
    """The fingerprint stored on ``obj`` under ``key``; None when there is none
    (a fresh mesh, kept data forgotten, or a file saved before fingerprints)."""
    text = obj.get(key)
    if not isinstance(text, str):
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def changed(obj: bpy.types.Object, key: str) -> set[str] | None:
    """Which parts of ``obj``'s mesh differ from the fingerprint stored at import
    (an empty set: the kept data still describes it); None when none is stored."""
    old = stored(obj, key)
    if old is None:
        return None
    parts = tuple(p for p in PARTS if p in old)
    now = compute(obj.data, parts)
    return {p for p in parts if now[p] != old[p]}


def topology_changed(obj: bpy.types.Object, key: str) -> bool:
    """The faces, corners or vertex count differ from the import's (False when
    no fingerprint is stored: the kept data is trusted as before fingerprints)."""
    old = stored(obj, key)
    if old is None or TOPOLOGY not in old:
        return False
    return _topology(obj.data) != old[TOPOLOGY]
