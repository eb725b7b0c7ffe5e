"""The Urho3D formats for the registry: codecs and their summaries."""

from __future__ import annotations

from ..registry import FileFormat
from . import ani, mdl


def _floats(a) -> list[float]:
    return [round(float(x), 6) for x in a]


def summarize_model(model: mdl.Model) -> dict:
    return {
        "magic": model.magic.decode("ascii", "replace"),
        "vertex_buffers": [
            {
                "vertices": vb.count,
                "elements": [e.key for e in vb.elements],
                "legacy_mask": vb.legacy_mask,
                "morph_range": [vb.morph_start, vb.morph_count],
            }
            for vb in model.vertex_buffers
        ],
        "index_buffers": [
            {"indices": len(ib.indices), "index_size": ib.indices.dtype.itemsize}
            for ib in model.index_buffers
        ],
        "geometries": [
            {
                "bone_mapping": len(g.bone_mapping),
                "lods": [
                    {
                        "distance": round(float(lod.distance), 6),
                        "primitive": lod.primitive_type,
                        "vertex_buffer": lod.vertex_buffer,
                        "index_buffer": lod.index_buffer,
                        "draw_range": [lod.index_start, lod.index_count],
                    }
                    for lod in g.lods
                ],
            }
            for g in model.geometries
        ],
        "morphs": [m.name for m in model.morphs],
        "bones": [
            {
                "name": b.name,
                "parent": None if b.parent == i else model.bones[b.parent].name,
            }
            for i, b in enumerate(model.bones)
        ],
        "bbox": [_floats(model.bbox_min), _floats(model.bbox_max)],
        "geometry_centers": model.geometry_centers is not None,
    }


def summarize_animation(anim: ani.Animation) -> dict:
    return {
        "name": anim.name,
        "length": round(float(anim.length), 6),
        "tracks": [{"name": t.name, "mask": t.mask, "keys": len(t.keys)} for t in anim.tracks],
    }


FORMATS = (
    FileFormat(
        "urho3d.mdl", "Urho3D Model", "model", (".mdl",), mdl.read, mdl.write, summarize_model
    ),
    FileFormat(
        "urho3d.ani",
        "Urho3D Animation",
        "animation",
        (".ani",),
        ani.read,
        ani.write,
        summarize_animation,
    ),
)
