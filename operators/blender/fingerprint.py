"""The one rule for "does the data kept from the file still describe this mesh".

At import a format stores, on each mesh object, a fingerprint of exactly what its
kept data describes: the topology (vertex, corner and face counts, each corner's
vertex, each face's first corner) and, separately, the positions, UV sets,
shape keys and (for a format that keeps data depending on them) the weights.
At export the same fingerprint is taken of the mesh being written (the
evaluated copy when modifiers are applied) and compared part by part: the format
reuses what still holds and rebuilds the rest from Blender.

Every part is read in bulk (``foreach_get`` into numpy) and hashed (SHA-256;
fingerprints stored by older builds, BLAKE2b, are compared with their own hash:
``io_formats.fingerprint.version_of``), so a million-vertex mesh costs a fraction
of a second, not a Python loop per vertex.
Right after an import the parts are hashed from the arrays it gave Blender
instead (``given``): the same digests, without reading them back.
"""

from __future__ import annotations

import json

import bpy
import numpy as np

from ...io_formats.fingerprint import (
    POSITIONS,
    TOPOLOGY,
    UVS,
    VERSION,
    Digest,
    digest,
    given_parts,
    version_of,
)
from ...io_formats.scene import Mesh
from . import compat
from .build import morph_coords
from .extract import face_starts, int_attribute, triplets_by_vertex
from .weights import weight_triplets

#: The parts of a fingerprint; :data:`TOPOLOGY` is the one every kept layout needs.
SHAPE_KEYS = "shape_keys"
#: The vertex groups' weights: read from the object (they are not the mesh's), so
#: only where asked for (``WITH_WEIGHTS``); a format storing it gets it compared.
WEIGHTS = "weights"
PARTS = (TOPOLOGY, POSITIONS, UVS, SHAPE_KEYS)
WITH_WEIGHTS = (*PARTS, WEIGHTS)


def _topology(me: bpy.types.Mesh, version: int = VERSION) -> str:
    nv, nl, nf = len(me.vertices), len(me.loops), len(me.polygons)
    corner_vert = int_attribute(me, ".corner_vert", nl)
    starts = face_starts(me)  # with the corner count, they give every face's size
    return digest(np.array([nv, nl, nf], np.int64), corner_vert, starts, version=version)


def _positions(me: bpy.types.Mesh, version: int = VERSION) -> str:
    pos = np.empty(len(me.vertices) * 3, np.float32)
    if len(pos):
        me.attributes["position"].data.foreach_get("vector", pos)
    return digest(pos, version=version)


def _uvs(me: bpy.types.Mesh, version: int = VERSION) -> str:
    arrays = []
    for layer in me.uv_layers:
        uv = np.empty(len(me.loops) * 2, np.float32)
        layer.uv.foreach_get("vector", uv)
        arrays.append(uv)
    return digest(np.array([len(arrays)], np.int64), *arrays, version=version)


def _shape_keys(me: bpy.types.Mesh, version: int = VERSION) -> str:
    keys = me.shape_keys
    blocks = list(keys.key_blocks) if keys is not None else []
    arrays = []
    for kb in blocks:
        co = np.empty(len(me.vertices) * 3, np.float32)
        compat.get_shape_key_coords(kb, co)
        arrays.append(co)
    return digest(*arrays, names=[k.name for k in blocks], version=version)


def _weights(obj: bpy.types.Object, version: int = VERSION) -> str:
    """Every non-zero weight by vertex and group name, in an order that does not
    depend on the order of the vertex groups (read in bulk where Blender allows)."""
    names = [g.name for g in obj.vertex_groups]
    triplets = weight_triplets(bpy.context, obj, names) if names else None
    if triplets is None and names:
        triplets = triplets_by_vertex(obj, names)
    if triplets is None:
        return digest(np.zeros(0, np.int64), version=version)
    return _weights_digest(names, *triplets, version=version)


def _name_rank(names: list[str]) -> np.ndarray:
    """Each name's place among the names sorted (int64)."""
    order = np.argsort(np.array(names, dtype=object), kind="stable")
    return np.argsort(order, kind="stable").astype(np.int64)


def _weights_digest(
    names: list[str],
    owner: np.ndarray,
    group: np.ndarray,
    weight: np.ndarray,
    version: int = VERSION,
) -> str:
    """The weights' digest of (vertex, index into ``names``, weight) triplets."""
    rank = _name_rank(names)
    keep = (group >= 0) & (weight > 0)
    owner, group, weight = owner[keep], rank[group[keep]], weight[keep]
    order = np.lexsort((group, owner))
    return digest(
        owner[order].astype(np.int64),
        group[order].astype(np.int64),
        weight[order].astype(np.float32),
        names=sorted(names),
        version=version,
    )


_READERS = {TOPOLOGY: _topology, POSITIONS: _positions, UVS: _uvs, SHAPE_KEYS: _shape_keys}


def _as_given(
    me: bpy.types.Mesh, mesh: Mesh, parts: tuple[str, ...], version: int = VERSION
) -> dict[str, str] | None:
    """The parts (not :data:`WEIGHTS`) hashed from ``mesh``, the neutral mesh the
    build just filled ``me`` from (``build.Built.filled``): the arrays it gave
    Blender, which holds them bit for bit, so the digests equal the read-back's
    without ``foreach_get`` (about 0.2 s at a million vertices). None where
    ``me`` may hold something else (other counts or layers, a non-finite
    position): the caller reads it back then."""
    nv, nl, nf = len(mesh.positions), len(mesh.corner_verts), len(mesh.face_starts)
    if (nv, nl, nf) != (len(me.vertices), len(me.loops), len(me.polygons)):
        return None
    keys = me.shape_keys
    blocks = list(keys.key_blocks) if keys is not None else []
    if len(me.uv_layers) != len(mesh.uv_sets) or len(blocks) != (
        len(mesh.morphs) + 1 if mesh.morphs else 0
    ):
        return None
    hashed = given_parts(mesh, version)
    if hashed is None:
        return None
    out = {part: hashed[part] for part in (TOPOLOGY, POSITIONS, UVS) if part in parts}
    if SHAPE_KEYS in parts:
        # one key's coordinates at a time: each is dropped once hashed
        h = Digest([k.name for k in blocks], version)
        if mesh.morphs:
            h.add(np.ascontiguousarray(mesh.positions, np.float32).reshape(-1))
        for m in mesh.morphs:
            h.add(morph_coords(mesh, m))
        out[SHAPE_KEYS] = h.hexdigest()
    return out


def skin_as_held(
    obj: bpy.types.Object, joints: np.ndarray, weights: np.ndarray, bone_names: list[str]
) -> tuple[np.ndarray, np.ndarray] | None:
    """The (V, K) skin an import just gave ``obj`` through
    ``weights.assign_vertex_groups`` (a group per bone of ``bone_names``, in that
    order, on an object that had none) as its groups hold it: int64 joints, and
    float32 weights zeroed where no group entry was made (not finite, not above 0,
    joint out of range). Lets an import fingerprint the weights without reading
    the groups back, which needs a node group and a depsgraph evaluation (about
    0.2 s for a 64-bone ped). None where the groups may hold something else
    (vertex count or shapes differ, groups renamed or other than the bones, a bone
    named like an attribute, a weight above 1 that Blender clamps, one bone twice
    on a vertex): the caller reads them back then."""
    names = [g.name for g in obj.vertex_groups]
    me = obj.data
    nv = len(me.vertices)
    if not names or names != list(bone_names):
        return None
    if any(me.attributes.get(n) is not None for n in names):
        return None
    if joints.ndim != 2 or joints.shape != weights.shape or joints.shape[0] != nv:
        return None
    j = joints.astype(np.int64)
    w = np.where(np.isfinite(weights), weights, 0).astype(np.float32)
    w[(w < 0) | (j < 0) | (j >= len(names))] = 0
    if w.size and w.max() > 1:
        return None
    held = w > 0
    k = joints.shape[1]
    for a in range(k):  # a slot pair at a time (K is small), not a sort of every weight
        for b in range(a + 1, k):
            if np.any(held[:, a] & held[:, b] & (j[:, a] == j[:, b])):
                return None
    return np.where(held, j, 0), w


def _skin_weights(
    obj: bpy.types.Object,
    joints: np.ndarray,
    weights: np.ndarray,
    bone_names: list[str],
    version: int = VERSION,
) -> str | None:
    """The weights' digest of the skin an import just gave (:func:`skin_as_held`),
    None where it must be read back."""
    skin = skin_as_held(obj, joints, weights, bone_names)
    if skin is None:
        return None
    j, w = skin
    # the order _weights_digest sorts into (by vertex, then group name), reached by
    # sorting each vertex's few slots instead of every weight: the same digest
    rank = _name_rank(bone_names)
    key = np.where(w > 0, rank[j], len(bone_names))
    by_name = np.argsort(key, axis=1, kind="stable")
    j, w = np.take_along_axis(j, by_name, 1), np.take_along_axis(w, by_name, 1)
    owner, slot = np.nonzero(w)
    return digest(
        owner.astype(np.int64),
        rank[j[owner, slot]],
        w[owner, slot],
        names=sorted(bone_names),
        version=version,
    )


def compute(
    me: bpy.types.Mesh,
    parts: tuple[str, ...] = PARTS,
    obj: bpy.types.Object | None = None,
    skin: tuple[np.ndarray, np.ndarray, list[str]] | None = None,
    given: Mesh | None = None,
    version: int = VERSION,
) -> dict[str, str]:
    """The fingerprint of ``me``: one hash per part; :data:`WEIGHTS` needs the
    object ``obj`` whose vertex groups hold them (its mesh being ``me``), or,
    right after an import filled them, ``skin``: the (V, K) joints and weights
    and the bone names it gave (see :func:`skin_as_held`). ``given``: the neutral
    mesh an import just filled ``me`` from (see :func:`_as_given`). ``version``:
    the hash (``io_formats.fingerprint``), an older one to compare with a
    fingerprint an older build stored (:func:`stored_version`)."""
    out = _as_given(me, given, parts, version) if given is not None else None
    if out is None:
        out = {part: _READERS[part](me, version) for part in parts if part != WEIGHTS}
    if WEIGHTS in parts:
        if obj is None:
            raise ValueError("the weights' fingerprint needs the object (its vertex groups)")
        given = _skin_weights(obj, *skin, version) if skin is not None else None
        out[WEIGHTS] = given if given is not None else _weights(obj, version)
    return out


def store(
    obj: bpy.types.Object,
    key: str,
    parts: tuple[str, ...] = PARTS,
    skin: tuple[np.ndarray, np.ndarray, list[str]] | None = None,
    given: Mesh | None = None,
    version: int = VERSION,
) -> None:
    """Store the fingerprint of ``obj``'s mesh under the custom property ``key``
    (a hidden name the format declares in its ``kept.py``); ``skin``, ``given``
    and ``version``: see :func:`compute`."""
    fp = compute(obj.data, parts, obj, skin, given, version)
    obj[key] = json.dumps(fp, separators=(",", ":"))


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


def stored_version(old: dict[str, str]) -> int:
    """The hash version a :func:`stored` fingerprint was made with (all its parts
    share one: a store makes them together), from its topology part."""
    text = old.get(TOPOLOGY, next(iter(old.values()), ""))
    return version_of(text) if isinstance(text, str) else VERSION


def changed(obj: bpy.types.Object, key: str) -> set[str] | None:
    """Which parts of ``obj``'s mesh differ from the fingerprint stored at import
    (an empty set: the kept data still describes it); None when none is stored."""
    old = stored(obj, key)
    if old is None:
        return None
    parts = tuple(p for p in WITH_WEIGHTS if p in old)
    now = compute(obj.data, parts, obj, version=stored_version(old))
    return {p for p in parts if now[p] != old[p]}


def topology_changed(obj: bpy.types.Object, key: str) -> bool:
    """The faces, corners or vertex count differ from the import's (False when
    no fingerprint is stored: the kept data is trusted as before fingerprints)."""
    old = stored(obj, key)
    if old is None or TOPOLOGY not in old:
        return False
    return _topology(obj.data, stored_version(old)) != old[TOPOLOGY]
