"""The neutral scene model: where every format meets Blender.

Formats convert their native data to and from these classes (in Blender's
axes: right-handed, Z up, metres); the Blender builders read and write only
these. Every bulk array is a numpy array.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from .gather import rows_at


@dataclass
class Skeleton:
    """Bones in file order. ``parents[i]`` is -1 for a root and may be > i."""

    names: list[str]
    parents: np.ndarray  # (N,) int32
    local_translation: np.ndarray  # (N, 3) float64, rest pose relative to the parent
    local_rotation: np.ndarray  # (N, 4) float64, w x y z
    local_scale: np.ndarray  # (N, 3) float64
    inverse_bind: np.ndarray | None = None  # (N, 4, 4) float64, column-vector convention
    extras: list[dict[str, Any]] = field(default_factory=list)  # per-bone custom properties

    def __len__(self) -> int:
        return len(self.names)

    def reordered(self, order) -> tuple[Skeleton, np.ndarray]:
        """The bones in ``order`` (new bone i is old bone ``order[i]``), and each old
        bone's new index (to renumber skin joints with)."""
        order = np.asarray(order, np.int64)
        place = np.empty(len(order), np.int64)
        place[order] = np.arange(len(order))
        parents = self.parents[order]
        parents = np.where(parents < 0, -1, place[np.maximum(parents, 0)]).astype(np.int32)
        skeleton = Skeleton(
            [self.names[i] for i in order],
            parents,
            self.local_translation[order],
            self.local_rotation[order],
            self.local_scale[order],
            None if self.inverse_bind is None else self.inverse_bind[order],
            [self.extras[i] for i in order] if self.extras else [],
        )
        return skeleton, place

    def world_rest(self) -> np.ndarray:
        """World bind matrices (N, 4, 4) from the local rest transforms."""
        from .transforms import compose_trs, world_from_local

        local = compose_trs(self.local_translation, self.local_rotation, self.local_scale)
        return world_from_local(local, self.parents)

    def bind_matrices(self) -> np.ndarray:
        """World bind matrices that skinning uses: inverse bind matrices when present."""
        if self.inverse_bind is not None:
            return np.linalg.inv(self.inverse_bind)
        return self.world_rest()


def _dense(data: np.ndarray, vertices: np.ndarray | None, n: int) -> np.ndarray:
    if vertices is None:
        return data
    out = np.zeros((n,) + np.shape(data)[1:], np.asarray(data).dtype)
    out[vertices] = data
    return out


@dataclass
class UVSet:
    name: str
    uv: np.ndarray  # (C, 2) float32 per corner, Blender convention (v up)


@dataclass
class ColorSet:
    name: str
    color: np.ndarray  # (C, 4) float32 in 0..1 per corner
    byte: bool = True  # stored as 8-bit in the file (BYTE_COLOR in Blender)


@dataclass
class Attribute:
    """Data with no dedicated Blender counterpart, kept as a generic attribute."""

    name: str
    domain: str  # 'POINT', 'CORNER', 'EDGE' or 'FACE'
    type: str  # 'FLOAT', 'INT', 'FLOAT_VECTOR', 'FLOAT_COLOR', 'FLOAT2'
    data: np.ndarray
    # POINT only: the vertices ``data`` holds rows for (ascending), every other
    # vertex 0; None: a row per vertex. A file's sparse data stays sparse until
    # Blender takes it (memory in proportion to what the file holds).
    vertices: np.ndarray | None = None

    def dense(self, n: int) -> np.ndarray:
        """``data`` with a row for each of ``n`` vertices."""
        return _dense(self.data, self.vertices, n)


@dataclass
class Skin:
    joints: np.ndarray  # (V, K) int32 skeleton bone indices
    weights: np.ndarray  # (V, K) float32; 0 = unused slot


@dataclass
class MorphTarget:
    name: str
    position_offsets: np.ndarray  # (V, 3) float32, or (K, 3) for ``vertices``
    default_weight: float = 0.0
    # the vertices the offsets are for (ascending), every other one unmoved; None:
    # an offset per vertex. Sparse morphs stay sparse until Blender takes them.
    vertices: np.ndarray | None = None

    def dense(self, n: int) -> np.ndarray:
        """The offsets with a row for each of ``n`` vertices."""
        return _dense(self.position_offsets, self.vertices, n)


def morph_offsets(base: np.ndarray, target: np.ndarray) -> np.ndarray:
    """A morph target's absolute positions as offsets from ``base``. Where a base
    position is not finite, the offset is from the origin: Blender holds 0 for such a
    position, so the shape key keeps the file's target position, which
    :func:`morph_positions` gives back."""
    base = np.asarray(base, np.float32)
    target = np.asarray(target, np.float32)
    with np.errstate(invalid="ignore", over="ignore"):
        out = target - base
    odd = ~np.isfinite(base).all(axis=-1)
    if odd.any():
        out[odd] = target[odd]
    return out


def morph_positions(base: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """A morph target's absolute positions from offsets made by :func:`morph_offsets`
    (a file's non-finite base position keeps its target's own position)."""
    base = np.asarray(base, np.float32)
    offsets = np.asarray(offsets, np.float32)
    with np.errstate(invalid="ignore", over="ignore"):
        out = base + offsets
    odd = ~np.isfinite(base).all(axis=-1)
    if odd.any():
        out[odd] = offsets[odd]
    return out


@dataclass
class Mesh:
    name: str
    positions: np.ndarray  # (V, 3) float32
    corner_verts: np.ndarray  # (C,) int32
    face_starts: np.ndarray  # (F,) int32 first corner of each face
    face_materials: np.ndarray  # (F,) int32 material slot of each face
    loose_edges: np.ndarray = field(default_factory=lambda: np.zeros((0, 2), np.int32))
    materials: list[str] = field(default_factory=list)
    normals: np.ndarray | None = None  # (C, 3) float32 custom normals, or (V, 3): see below
    # "POINT" where the format stores one normal per vertex: Blender holds them per
    # vertex too, and nothing expands them to every corner (a Urho3D import of 1M
    # vertices faulted in about 16,000 fewer new pages of its 180,000)
    normal_domain: str = "CORNER"
    uv_sets: list[UVSet] = field(default_factory=list)
    colors: list[ColorSet] = field(default_factory=list)
    skin: Skin | None = None
    morphs: list[MorphTarget] = field(default_factory=list)
    attributes: list[Attribute] = field(default_factory=list)
    extras: dict[str, Any] = field(default_factory=dict)  # object custom properties
    collection: str | None = None  # a sub-collection to put the object in (LODs)

    @property
    def face_sizes(self) -> np.ndarray:
        ends = np.append(self.face_starts[1:], len(self.corner_verts))
        return (ends - self.face_starts).astype(np.int32)

    def with_corner_normals(self) -> Mesh:
        """This mesh with its custom normals per corner (itself when they are): the
        form the exporters read."""
        if self.normals is None or self.normal_domain == "CORNER":
            return self
        normals = rows_at(self.normals, self.corner_verts)
        return replace(self, normals=normals, normal_domain="CORNER")


@dataclass
class BoneTrack:
    """Keys of one bone, relative to its parent (the engine's local space)."""

    bone: str
    times: np.ndarray  # (K,) float64 seconds
    translation: np.ndarray | None = None  # (K, 3)
    rotation: np.ndarray | None = None  # (K, 4) w x y z
    scale: np.ndarray | None = None  # (K, 3)


@dataclass
class Animation:
    name: str
    length: float  # seconds
    tracks: list[BoneTrack] = field(default_factory=list)
    extras: dict[str, Any] = field(default_factory=dict)
    #: How the file stores a channel's values ``settle(channel, values)``, for formats
    #: that quantise them: exact keys need no residue where both settle alike.
    settle: Any = field(default=None, compare=False, repr=False)


@dataclass
class FloatCurve:
    """One animated float with exact Bezier data (times in seconds)."""

    target: str  # object name
    data_path: str
    index: int
    co: np.ndarray  # (K, 2)
    handle_left: np.ndarray  # (K, 2)
    handle_right: np.ndarray  # (K, 2)
    interpolation: np.ndarray  # (K,) uint8 codes: mrtk.keys.CONSTANT, LINEAR or BEZIER
    cycle_before: str = "NONE"  # Cycles modifier mode, NONE for no modifier
    cycle_after: str = "NONE"


@dataclass
class Scene:
    name: str
    skeleton: Skeleton | None = None
    meshes: list[Mesh] = field(default_factory=list)
    animations: list[Animation] = field(default_factory=list)
    curves: list[FloatCurve] = field(default_factory=list)
    extras: dict[str, Any] = field(default_factory=dict)  # kept on the armature/root object
