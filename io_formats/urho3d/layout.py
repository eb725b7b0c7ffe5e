"""The parts of an Urho3D model's layout Blender has no place for, as plain JSON.

Kept on each imported object so that an unchanged mesh is exported with the
same buffers, draw ranges, bone mappings and trailer it came with.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .mdl import Model, Morph
from .vertex_layout import SEM_BLENDINDICES

#: A morph's key in the layout for the bits of a default weight Blender cannot hold.
WEIGHT_BITS = "weight_bits"


def skin_palette(model: Model) -> int:
    """The most skin matrices one draw of the model uploads (0: not skinned)."""
    if any(len(g.bone_mapping) for g in model.geometries):
        return max(len(g.bone_mapping) for g in model.geometries)
    skinned = any(
        e.semantic == SEM_BLENDINDICES for vb in model.vertex_buffers for e in vb.elements
    )
    return len(model.bones) if skinned else 0


def model_layout(model: Model, convert: bool) -> dict[str, Any]:
    return {
        "magic": model.magic.decode("ascii"),
        "axes": bool(convert),
        "vertex_buffers": [
            {
                "count": vb.count,
                "elements": [e.descriptor for e in vb.elements],
                "legacy_mask": vb.legacy_mask,
                "morph_start": vb.morph_start,
                "morph_count": vb.morph_count,
            }
            for vb in model.vertex_buffers
        ],
        "index_buffers": [
            {"count": len(ib.indices), "size": ib.index_size} for ib in model.index_buffers
        ],
        "geometries": [
            {
                "bone_mapping": [int(b) for b in g.bone_mapping],
                "lods": [
                    [
                        float(d.distance),
                        d.primitive_type,
                        d.vertex_buffer,
                        d.index_buffer,
                        d.index_start,
                        d.index_count,
                    ]
                    for d in g.lods
                ],
            }
            for g in model.geometries
        ],
        "morphs": [_morph(m) for m in model.morphs],
        "skin_palette": skin_palette(model),
        "bbox": [float(v) for v in (*model.bbox_min, *model.bbox_max)],
        "centers": None
        if model.geometry_centers is None
        else [[float(v) for v in c] for c in model.geometry_centers],
    }


def _morph(m: Morph) -> dict:
    """A morph's name and buffers; a default weight Blender cannot hold (NaN,
    infinite: the shape key gets 0) as its exact float32 bits, to write back."""
    entry = {"name": m.name, "buffers": [[mb.vertex_buffer, mb.mask] for mb in m.buffers]}
    if not np.isfinite(m.weight):
        entry[WEIGHT_BITS] = f"{int(np.asarray(m.weight, np.float32).view(np.uint32)):08x}"
    return entry


def weight_from_bits(bits: str) -> np.float32:
    """The float32 of :data:`WEIGHT_BITS`, a signalling NaN kept one."""
    return np.array(int(bits, 16), np.uint32).view(np.float32)[()]
