"""The Unigine formats for the registry: codecs and their summaries."""

from __future__ import annotations

from ..registry import FileFormat
from . import anim, mesh


def summarize_mesh(m: mesh.Mesh) -> dict:
    return {
        "magic": "ms11",
        "bones": [
            {"name": b.name, "parent": None if b.parent < 0 else m.bones[b.parent].name}
            for b in m.bones
        ],
        "surfaces": [
            {
                "name": s.name,
                "coordinate_vertices": s.n_coords,
                "surface_vertices": s.n_vertices,
                "triangles": len(s.tris) // 3,
                "morph_targets": [t.name for t in s.targets],
                "uv_sets": int(len(s.uv0) > 0) + int(len(s.uv1) > 0),
                "colors": len(s.colors) > 0,
                "weights": len(s.weights),
            }
            for s in m.surfaces
        ],
        "animations": [
            {"name": a.name, "bones": len(a.bones), "flag": a.flag, "frames": a.frames.n_frames}
            for a in m.animations
        ],
    }


def summarize_anim(a: anim.AnimFile) -> dict:
    return {
        "magic": "an10",
        "bones": len(a.bones),
        "animations": [
            {"name": c.name, "bones": len(c.bones), "flag": c.flag, "frames": c.frames.n_frames}
            for c in a.animations
        ],
    }


FORMATS = (
    FileFormat(
        "unigine.mesh", "Unigine Mesh", "model", (".mesh",), mesh.read, mesh.write, summarize_mesh
    ),
    FileFormat(
        "unigine.anim",
        "Unigine Animation",
        "animation",
        (".anim",),
        anim.read,
        anim.write,
        summarize_anim,
    ),
)
