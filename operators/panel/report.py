"""What RigPort knows about an object, in plain words: the RigPort panel's text.

:func:`describe` reads only custom properties and counts (no window, no
operator), so tests check the text directly. Each format has its own
``_<format>`` function; the shared parts (import counts, the guard's kept faces,
bind poses, the import transform) are read for every object.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np

from ...io_formats.global_transform import split
from ...io_formats.unigine.mesh_import import ANIMATIONS_KEY
from ..blender import guard, kept_keys
from ..blender.build import BIND_SCALE, COUNTS, INVERSE_BIND, LENGTH, LOCAL, REST
from ..blender.extract import read_prop

#: Tolerance of "the rest pose is unchanged" (extract.extract_skeleton's).
REST_TOLERANCE = 1e-5


@dataclass
class Report:
    """Source format, what is kept for the round trip, what export will rebuild."""

    source: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    changes: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        out = [f"Source: {s}" for s in self.source]
        out += [f"Kept: {k}" for k in self.kept]
        out += [f"Export: {c}" for c in self.changes]
        return out

    @property
    def empty(self) -> bool:
        return not (self.source or self.kept or self.changes)


def n(value: int) -> str:
    """A count with thousands separators (4,642)."""
    return f"{int(value):,}"


def plural(count: int, word: str, many: str | None = None) -> str:
    return f"{n(count)} {word if count == 1 else (many or word + 's')}"


def _json(value):
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return None
    return value


def mesh_counts(me) -> tuple[int, int, int]:
    return len(me.vertices), len(me.polygons), len(me.loops)


def imported_counts(me) -> tuple[int, int, int] | None:
    value = kept_keys.get(me, COUNTS)
    try:
        return tuple(int(v) for v in value) if value is not None else None
    except (TypeError, ValueError):
        return None


def mesh_edited(obj) -> bool | None:
    """True when the mesh's counts differ from the import's, None when unknown."""
    if obj.type != "MESH":
        return None
    before = imported_counts(obj.data)
    return None if before is None else before != mesh_counts(obj.data)


def report_kept(obj) -> list[str]:
    """The panel's text for ``obj``, one line each (``Report.lines``)."""
    return describe(obj).lines()


def describe(obj) -> Report:
    r = Report()
    if obj is None:
        return r
    for fn in (_urho3d, _unigine, _renderware, _mrtk, _bonespro):
        fn(obj, r)
    _mesh(obj, r)
    _armature(obj, r)
    _transform(obj, r)
    _actions(obj, r)
    return r


# ------------------------------------------------------------------ shared
def _mesh(obj, r: Report) -> None:
    if obj.type != "MESH":
        return
    me = obj.data
    now = mesh_counts(me)
    before = imported_counts(me)
    if before is not None and before != now:
        what = [
            f"{name} {n(a)} -> {n(b)}"
            for name, a, b in zip(("vertices", "faces", "corners"), before, now, strict=True)
            if a != b
        ]
        r.changes.append(f"the mesh was edited since import ({', '.join(what)})")
    kept = guard.loads(me[guard.KEPT]) if isinstance(me.get(guard.KEPT), str) else None
    if kept:
        faces = len((kept.get("faces") or {}).get("sizes", ()))
        values = sorted(k for k in kept if k not in ("faces", "counts"))
        active = kept.get("counts") == {"vertices": now[0], "faces": now[1], "corners": now[2]}
        if faces:
            r.kept.append(f"faces the guard left out: {n(faces)}")
        if values:
            r.kept.append(f"values Blender could not hold: {', '.join(values)}")
        if not active:
            r.changes.append("the faces and values the import guard kept will be dropped")
    if me.has_custom_normals:
        r.kept.append("the file's normals (custom normals)")


def _armature(obj, r: Report) -> None:
    if obj.type != "ARMATURE":
        return
    bones = list(obj.data.bones)
    stored = [b for b in bones if kept_keys.has(b, REST)]
    if not stored:
        return
    moved = 0
    for b in stored:
        rest = np.array(kept_keys.get(b, REST), np.float64).reshape(4, 4)
        if not np.allclose(rest, np.array(b.matrix_local), atol=REST_TOLERANCE):
            moved += 1
    full = sum(kept_keys.has(b, LOCAL) and kept_keys.has(b, INVERSE_BIND) for b in stored)
    r.kept.append(
        f"engine bind pose of {plural(full, 'bone')} (local transforms, inverse bind "
        "matrices), valid while the rest pose is unchanged"
    )
    scaled = 0
    for b in stored:
        s = kept_keys.get(b, BIND_SCALE)
        if s is not None and not np.allclose(np.array(s, np.float64), 1.0, atol=1e-6):
            scaled += 1
    if scaled:
        r.kept.append(f"bind scales Blender cannot hold: {plural(scaled, 'bone')}")
    if moved:
        r.changes.append(
            f"rest pose edited on {plural(moved, 'bone')}: their bind transforms will be "
            "rebuilt from Blender's rest pose"
        )


def _transform(obj, r: Report) -> None:
    value = obj.get("_rigport_import_transform")
    if value is None:
        return
    try:
        m = np.array(list(value), np.float64).reshape(4, 4)
        rotation, scale, offset = split(m)
    except (TypeError, ValueError):
        return
    parts = []
    if not np.isclose(scale, 1.0):
        parts.append(f"scale {scale:g}")
    if not np.allclose(rotation, np.eye(3), atol=1e-6):
        parts.append("axes converted")
    if np.any(np.abs(offset) > 1e-9):
        parts.append("offset")
    r.kept.append(f"import transform: {', '.join(parts) if parts else 'none (identity)'}")


def _actions(obj, r: Report) -> None:
    ad = obj.animation_data
    action = ad.action if ad is not None else None
    if action is None:
        return
    length = kept_keys.get(action, LENGTH)
    fps = action.get("rigport_fps")
    if length is not None and fps is not None:
        r.kept.append(
            f"action {action.name!r}: the file's length {float(length):g} s at {float(fps):g} fps"
        )


# ------------------------------------------------------------------ formats
def _urho3d(obj, r: Report) -> None:
    layout = read_prop(obj, "urho_layout")
    fmt = read_prop(obj, "rigport_format")
    if isinstance(layout, dict):
        magic = layout.get("magic", "?")
        version = layout.get("version")
        r.source.append(
            "Urho3D model "
            + f"({magic}"
            + (f", version {version}" if version is not None else "")
            + f"), LOD {int(obj.get('urho_lod', 0))}"
        )
        vbs = layout.get("vertex_buffers") or []
        total = sum(int(v.get("count", 0)) for v in vbs)
        lod = int(obj.get("urho_lod", 0))
        r.kept.append(
            f"original buffers ({plural(len(vbs), 'vertex buffer')}, "
            f"{plural(len(layout.get('index_buffers') or []), 'index buffer')}, "
            f"{plural(len(layout.get('geometries') or []), 'geometry', 'geometries')})"
            + (f", valid while the vertex count is {n(total)}" if lod == 0 else "")
        )
        if obj.type == "MESH" and lod == 0 and len(obj.data.vertices) != total:
            r.changes.append("vertex order and buffers will be rebuilt")
        if layout.get("morphs"):
            r.kept.append(f"morph ranges of {plural(len(layout['morphs']), 'morph')}")
    elif fmt == "urho3d" and obj.type == "ARMATURE":
        lods = read_prop(obj, "urho_lod_count")
        r.source.append(
            "Urho3D model" + (f", {plural(int(lods), 'LOD')} in the file" if lods else "")
        )
    if obj.type == "ARMATURE" and any(kept_keys.has(b, "urho_index") for b in obj.data.bones):
        r.kept.append("the file's bone order (Urho3D)")


def _unigine(obj, r: Report) -> None:
    surfaces = _json(read_prop(obj, "unigine_surfaces"))
    if isinstance(surfaces, list):
        r.source.append(f"Unigine mesh (ms11), {plural(len(surfaces), 'surface')}")
        r.kept.append(
            "per-surface layout (names, morph target names, which UV sets, colours and "
            "tangents each surface has)"
        )
    if obj.type == "ARMATURE":
        anims = _json(read_prop(obj, ANIMATIONS_KEY))
        if any(kept_keys.has(b, "unigine_index") for b in obj.data.bones):
            r.source.append("Unigine mesh skeleton")
            r.kept.append("the file's bone order (Unigine)")
        if isinstance(anims, list):
            r.kept.append(f"embedded animations: {plural(len(anims), 'action')}")


def rw_version_text(version: int) -> str:
    v = int(version)
    return f"{(v >> 16) & 0xF}.{(v >> 12) & 0xF}.{(v >> 8) & 0xF}.{v & 0xFF}"


def _renderware(obj, r: Report) -> None:
    version = read_prop(obj, "rw_version")
    if version is not None:
        r.source.append(f"RenderWare clump, version {rw_version_text(version)}")
    geometry = read_prop(obj, "rw_geometry")
    if isinstance(geometry, dict):
        gv = geometry.get("version")
        r.source.append(
            "RenderWare atomic" + (f", geometry version {rw_version_text(gv)}" if gv else "")
        )
        parts = ["flags", "bounding spheres"]
        if geometry.get("bin_mesh"):
            parts.append("Bin Mesh (strip order)")
        if geometry.get("night_colors"):
            parts.append("night colours")
        r.kept.append(
            f"geometry data ({', '.join(parts)}), valid while the triangles are unchanged"
        )
        if mesh_edited(obj):
            r.changes.append("the Bin Mesh, spheres and split data will be rebuilt")
    if read_prop(obj, "rw_skin") is not None:
        r.kept.append("skin layout (bone limits, used bones)")
    hanim = read_prop(obj, "rw_hanim")
    if isinstance(hanim, dict):
        r.kept.append("HAnim hierarchy flags and IDs")


def _mrtk(obj, r: Report) -> None:
    role = kept_keys.get(obj, "_mrtk_role")
    for coll in obj.users_collection:
        meta = _json(read_prop(coll, "_mrtk_meta"))
        if isinstance(meta, dict):
            r.source.append(
                f"MRTK input recording {meta.get('version', '?')}, {meta.get('layout', '?')} "
                f"curves, recording collection {coll.name!r}"
            )
            markers = meta.get("markers") or []
            r.kept.append(
                f"recording settings (axes {meta.get('axes', '?')}, "
                f"{float(meta.get('fps', 0)):g} fps), {plural(len(markers), 'marker')}"
            )
            break
    if isinstance(role, str):
        r.source.append(f"MRTK role: {role}")
    ad = obj.animation_data
    action = ad.action if ad is not None else None
    curves = kept_keys.get(action, "_mrtk_curves") if action is not None else None
    if curves is not None:
        r.kept.append(
            f"the file's curves for {plural(len(curves.keys()), 'channel')} (exact Unity keys), "
            "each valid while its keys are unchanged"
        )


def _bonespro(obj, r: Report) -> None:
    if obj.type == "ARMATURE" and any(kept_keys.has(b, "_bonespro_index") for b in obj.data.bones):
        r.source.append("BonesPro structure")
        r.kept.append("the file's bone order, node and bone matrices, bounding boxes")
    holders = [obj]
    ad = obj.animation_data
    if ad is not None and ad.action is not None:
        holders.append(ad.action)
    for h in holders:
        header = _json(read_prop(h, "_bonespro_header"))
        if isinstance(header, dict):
            frames = plural(int(header.get("frame_count", 0)), "frame")
            r.source.append(
                f"BonesPro animation ({header.get('mode', '?')}, {header.get('system', '?')}, "
                f"{header.get('representation', '?')}), {frames}"
            )
            count = int(header.get("vertex_count", 0))
            if count and obj.type == "MESH":
                r.kept.append(f"animation header, valid while the vertex count is {n(count)}")
                if len(obj.data.vertices) != count:
                    r.changes.append("the header's vertex count will be rebuilt")
            break
