"""Urho3D vertex element descriptions: legacy masks (UMDL) and UMD2 descriptors.

A vertex buffer's bytes are read into a numpy structured array whose fields are
the elements in file order, so writing the array back gives the same bytes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

TYPE_INT, TYPE_FLOAT, TYPE_VECTOR2, TYPE_VECTOR3, TYPE_VECTOR4, TYPE_UBYTE4, TYPE_UBYTE4_NORM = (
    range(7)
)
TYPE_DTYPES: dict[int, tuple[str, tuple[int, ...]]] = {
    TYPE_INT: ("<i4", ()),
    TYPE_FLOAT: ("<f4", ()),
    TYPE_VECTOR2: ("<f4", (2,)),
    TYPE_VECTOR3: ("<f4", (3,)),
    TYPE_VECTOR4: ("<f4", (4,)),
    TYPE_UBYTE4: ("u1", (4,)),
    TYPE_UBYTE4_NORM: ("u1", (4,)),
}

(
    SEM_POSITION,
    SEM_NORMAL,
    SEM_BINORMAL,
    SEM_TANGENT,
    SEM_TEXCOORD,
    SEM_COLOR,
    SEM_BLENDWEIGHTS,
    SEM_BLENDINDICES,
    SEM_OBJECTINDEX,
) = range(9)
SEMANTIC_NAMES = (
    "position",
    "normal",
    "binormal",
    "tangent",
    "texcoord",
    "color",
    "blendweights",
    "blendindices",
    "objectindex",
)


@dataclass(frozen=True)
class VertexElement:
    type: int
    semantic: int
    index: int = 0

    @property
    def descriptor(self) -> int:
        return self.type | self.semantic << 8 | self.index << 16

    @classmethod
    def from_descriptor(cls, value: int) -> VertexElement:
        return cls(value & 0xFF, (value >> 8) & 0xFF, (value >> 16) & 0xFF)

    @property
    def key(self) -> str:
        """Field name: semantic name plus index, e.g. ``texcoord1``."""
        return f"{SEMANTIC_NAMES[self.semantic]}{self.index}"


# Legacy mask bits in order; each bit's element as the engine defines it.
LEGACY_ELEMENTS: tuple[VertexElement, ...] = (
    VertexElement(TYPE_VECTOR3, SEM_POSITION, 0),
    VertexElement(TYPE_VECTOR3, SEM_NORMAL, 0),
    VertexElement(TYPE_UBYTE4_NORM, SEM_COLOR, 0),
    VertexElement(TYPE_VECTOR2, SEM_TEXCOORD, 0),
    VertexElement(TYPE_VECTOR2, SEM_TEXCOORD, 1),
    VertexElement(TYPE_VECTOR3, SEM_TEXCOORD, 0),  # cube texcoord 1
    VertexElement(TYPE_VECTOR3, SEM_TEXCOORD, 1),  # cube texcoord 2
    VertexElement(TYPE_VECTOR4, SEM_TANGENT, 0),
    VertexElement(TYPE_VECTOR4, SEM_BLENDWEIGHTS, 0),
    VertexElement(TYPE_UBYTE4, SEM_BLENDINDICES, 0),
    VertexElement(TYPE_VECTOR4, SEM_TEXCOORD, 4),  # instance matrix row 1
    VertexElement(TYPE_VECTOR4, SEM_TEXCOORD, 5),  # instance matrix row 2
    VertexElement(TYPE_VECTOR4, SEM_TEXCOORD, 6),  # instance matrix row 3
    VertexElement(TYPE_INT, SEM_OBJECTINDEX, 0),
)
LEGACY_FIELD_NAMES = (
    "position0",
    "normal0",
    "color0",
    "texcoord0",
    "texcoord1",
    "cubetexcoord0",
    "cubetexcoord1",
    "tangent0",
    "blendweights0",
    "blendindices0",
    "instancematrix0",
    "instancematrix1",
    "instancematrix2",
    "objectindex0",
)
LEGACY_KNOWN_MASK = (1 << len(LEGACY_ELEMENTS)) - 1

MASK_POSITION = 0x1
MASK_NORMAL = 0x2
MASK_TANGENT = 0x80


def elements_from_mask(mask: int) -> list[VertexElement]:
    return [e for bit, e in enumerate(LEGACY_ELEMENTS) if mask & (1 << bit)]


def mask_from_elements(elements: list[VertexElement]) -> int | None:
    """The legacy mask that describes exactly these elements in this order, or None."""
    mask = 0
    last = -1
    for e in elements:
        try:
            bit = LEGACY_ELEMENTS.index(e)
        except ValueError:
            return None
        if bit <= last:
            return None
        last = bit
        mask |= 1 << bit
    return mask


def field_names(elements: list[VertexElement], legacy: bool) -> list[str]:
    """Unique field names: legacy names for UMDL, ``semantic+index`` otherwise."""
    if legacy:
        return [LEGACY_FIELD_NAMES[LEGACY_ELEMENTS.index(e)] for e in elements]
    # A repeated element gets ``_1``, ``_2`` ... (never another element's key, which
    # has no underscore): one count per key keeps this linear in the elements.
    names: list[str] = []
    seen: dict[str, int] = {}
    for e in elements:
        k = seen.get(e.key, 0)
        names.append(f"{e.key}_{k}" if k else e.key)
        seen[e.key] = k + 1
    return names


def vertex_dtype(elements: list[VertexElement], legacy: bool) -> np.dtype:
    names = field_names(elements, legacy)
    return np.dtype(
        [
            (n, *TYPE_DTYPES[e.type]) if TYPE_DTYPES[e.type][1] else (n, TYPE_DTYPES[e.type][0])
            for n, e in zip(names, elements, strict=True)
        ]
    )


def morph_dtype(mask: int) -> np.dtype:
    fields: list[tuple] = [("index", "<u4")]
    if mask & MASK_POSITION:
        fields.append(("position", "<f4", (3,)))
    if mask & MASK_NORMAL:
        fields.append(("normal", "<f4", (3,)))
    if mask & MASK_TANGENT:
        fields.append(("tangent", "<f4", (3,)))
    return np.dtype(fields)
