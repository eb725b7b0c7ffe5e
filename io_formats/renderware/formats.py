"""The RenderWare clump format for the registry: codec and summary."""

from __future__ import annotations

from ..containers import Container
from ..registry import FileFormat
from . import anm, dff, ifp, img, txd
from .chunks import RawChunk, version_of, version_text


def summarize(f: dff.DffFile) -> dict:
    out = {"chunks": [], "trailing_bytes": len(f.trailing)}
    for c in f.chunks:
        if isinstance(c, RawChunk):
            out["chunks"].append({"type": f"0x{c.type:X}", "size": len(c.payload)})
            continue
        fl = c.frame_list
        geos = []
        for g in c.geometries():
            skin = g.skin
            geos.append(
                {
                    "vertices": g.num_vertices,
                    "triangles": len(g.triangles),
                    "uv_sets": len(g.uvs),
                    "prelit": g.colors is not None,
                    "morph_targets": len(g.morph_targets),
                    "materials": len(g.material_list.slots),
                    "native": g.native,
                    "bin_mesh": None
                    if g.bin_mesh is None
                    else {"strips": g.bin_mesh.strips, "meshes": len(g.bin_mesh.meshes)},
                    "skin": None
                    if skin is None
                    else {
                        "bones": skin.num_bones,
                        "used_bones": len(skin.used_bones),
                        "max_weights": skin.max_weights,
                        "layout": "old" if skin.old_layout else "new",
                        "split_meshes": 0 if skin.split is None else skin.split.num_meshes,
                    },
                }
            )
        out["chunks"].append(
            {
                "type": "clump",
                "version": version_text(version_of(c.stamp)),
                "frames": [fl.name(i) for i in range(len(fl))],
                "geometries": geos,
                "atomics": [[a.frame, a.geometry] for a in c.atomics],
            }
        )
    return out


def summarize_ifp(f: ifp.IfpFile) -> dict:
    return {
        "version": f.version,
        "name": f.name,
        "animations": [
            {
                "name": a.name,
                "objects": len(a.objects),
                "frames": a.frame_count,
                "compressed": any(o.compressed for o in a.objects),
            }
            for a in f.animations
        ],
        "trailing_bytes": len(f.trailing),
    }


def summarize_img(a: img.ImgArchive) -> dict:
    return {
        "version": a.version,
        "members": [
            {"name": e.name, "sectors": e.size, "kind": img.kind_of(e.name)} for e in a.entries
        ],
        "bytes": len(a.body),
    }


def summarize_txd(f: txd.TxdFile) -> dict:
    return {
        "device": f.device,
        "textures": [
            {
                "name": t.name,
                "mask": t.mask,
                "platform": "Direct3D 9" if t.platform == txd.D3D9 else "Direct3D 8",
                "size": [t.width, t.height],
                "levels": len(t.levels),
                "dxt": t.dxt,
                "palette": len(t.palette) // 4,
                "format": t.pixel_format,
            }
            for t in f.textures()
        ],
    }


def summarize_anm(f: anm.AnmFile) -> dict:
    out = {"type": f.type_id, "keys": f.count, "flags": f.flags, "duration": float(f.duration)}
    if f.keys is not None:
        out["keys"] = len(f.keys)
        out["nodes"] = f.node_count()
    return out


FORMATS = (
    FileFormat(
        "renderware.dff", "RenderWare Clump", "model", (".dff",), dff.read, dff.write, summarize
    ),
    FileFormat(
        "renderware.ifp",
        "GTA IFP Animations",
        "animation",
        (".ifp",),
        ifp.read,
        ifp.write,
        summarize_ifp,
    ),
    FileFormat(
        "renderware.anm",
        "RenderWare Animation",
        "animation",
        (".anm",),
        anm.read,
        anm.write,
        summarize_anm,
    ),
    FileFormat(
        "renderware.txd",
        "RenderWare Texture Dictionary",
        "other",
        (".txd",),
        txd.read,
        txd.write,
        summarize_txd,
    ),
    FileFormat(
        "renderware.img",
        "GTA IMG Archive",
        "package",
        (".img",),
        img.read_image,
        img.write_image,
        summarize_img,
    ),
    FileFormat(
        "renderware.dir",
        "GTA IMG Directory",
        "other",
        (".dir",),
        img.read_dir_file,
        img.write_directory,
        summarize_img,
    ),
)

CONTAINERS = (
    Container(
        "renderware.img",
        (".img",),
        img.open_archive,
        img.ImgArchive.names,
        img.ImgArchive.read,
        img.ImgArchive.put,
        img.save_archive,
    ),
)
