"""The Urho3D formats for the registry: codecs and their summaries."""

from __future__ import annotations

import os

from ..registry import FileFormat
from . import ani, engine_rules, mdl, package, shader


def _floats(a) -> list[float]:
    return [round(float(x), 6) for x in a]


def summarize_model(model: mdl.Model) -> dict:
    return {
        "magic": model.magic.decode("ascii", "replace"),
        **({"version": model.version} if model.version is not None else {}),
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
        **(
            {"morph_weights": [round(float(m.weight), 6) for m in model.morphs]}
            if model.has_morph_weights
            else {}
        ),
        "bones": [
            {
                "name": b.name,
                "parent": None if b.parent == i else model.bones[b.parent].name,
            }
            for i, b in enumerate(model.bones)
        ],
        "bbox": [_floats(model.bbox_min), _floats(model.bbox_max)],
        "geometry_centers": model.geometry_centers is not None,
        # What the engine would draw wrong (engine_rules.py); empty for a good model.
        "engine_problems": engine_rules.check(model),
    }


def summarize_animation(anim: ani.Animation) -> dict:
    out = {
        "name": anim.name,
        "length": round(float(anim.length), 6),
        "tracks": [{"name": t.name, "mask": t.mask, "keys": len(t.keys)} for t in anim.tracks],
    }
    if anim.version is not None:
        out["magic"] = "UAN2"
        out["version"] = anim.version
        if anim.version >= ani.TRACK_WEIGHT_VERSION:
            for row, t in zip(out["tracks"], anim.tracks, strict=True):
                row["weight"] = round(float(t.weight), 6)
        out["variant_tracks"] = [
            {
                "name": t.name,
                "type": ani.VARIANT_NAMES.get(t.value_type, t.value_type),
                "interpolation": t.interpolation,
                "keys": len(t.times),
            }
            for t in anim.variant_tracks
        ]
    return out


MEMBER_KINDS = {".mdl": "model", ".ani": "animation", **dict.fromkeys(shader.EXTENSIONS, "shader")}


def member_kind(name: str) -> str:
    """What a file inside a package is, by its extension: model, animation, shader or other."""
    return MEMBER_KINDS.get(os.path.splitext(name)[1].lower(), "other")


def member_summary(name: str, data: bytes) -> dict | None:
    """The codec summary of a package member RigPort reads; None for other files.
    A member that does not parse gets {"error": ...}."""
    codecs = {
        "model": (mdl, summarize_model),
        "animation": (ani, summarize_animation),
        "shader": (shader, shader.summarize),
    }
    if member_kind(name) not in codecs:
        return None
    module, summary = codecs[member_kind(name)]
    try:
        return summary(module.read(data))
    except ValueError as err:  # FormatError
        return {"error": str(err)}


def summarize_package(pkg: package.Package) -> dict:
    files = []
    for e in pkg.entries:
        row = {
            "name": e.name,
            "size": len(e.data),
            "stored": len(e.stored) if e.stored is not None else None,
            "kind": member_kind(e.name),
        }
        if pkg.compressed:
            row["blocks"] = e.blocks
        if row["kind"] == "shader":
            row["shader"] = member_summary(e.name, e.data)
        files.append(row)
    out = {
        "magic": pkg.magic.decode("ascii"),
        "files": files,
        "size_trailer": pkg.size_trailer,
    }
    if pkg.rbfx:
        out["version"] = pkg.version
    return out


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
    FileFormat(
        "urho3d.pak",
        "Urho3D Package",
        "package",
        (".pak",),
        package.read,
        package.write,
        summarize_package,
    ),
    FileFormat(
        "urho3d.shader",
        "Urho3D Compiled Shader",
        "other",
        shader.EXTENSIONS,
        shader.read,
        shader.write,
        shader.summarize,
    ),
)
