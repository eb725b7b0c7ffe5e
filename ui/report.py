"""What RigPort knows about an object, in plain words: the RigPort panel's text.

:func:`describe` reads only custom properties and counts (no window, no
operator), so tests check the text directly. Each format adds its own lines
(``describe(obj, report)`` in ``operators/<format>/panel.py``); the shared parts
(import counts, the guard's kept faces, bind poses, the import transform) are
read for every object.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field

import numpy as np

from ..io_formats.codec.errors import noun_for
from ..io_formats.global_transform import split
from ..operators import format_parts
from ..operators.blender import guard, kept_keys
from ..operators.blender.build import BIND_SCALE, COUNTS, INVERSE_BIND, LENGTH, LOCAL, REST

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
    return f"{n(count)} {noun_for(count, word, many)}"


def json_value(value):
    """A kept value that may be stored as JSON text, decoded (None when it is not JSON)."""
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


@functools.cache
def _format_panels() -> list:
    return format_parts("panel")


def describe(obj) -> Report:
    """Every format's lines for ``obj`` (``operators/<format>/panel.py``), then the shared ones."""
    r = Report()
    if obj is None:
        return r
    for module in _format_panels():
        module.describe(obj, r)
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
            r.kept.append(
                "invalid numbers Blender shows as 0, written back on export: "
                + ", ".join(_value_name(v) for v in values)
            )
        if not active:
            r.changes.append("the faces and values the import guard kept will be dropped")
    if me.has_custom_normals:
        r.kept.append("the file's normals (custom normals)")


def _value_name(key: str) -> str:
    """A guard's kept value key in the artist's words (``uv:0``: UV map 1)."""
    kind, _, index = key.partition(":")
    if kind == "uv":
        return f"UV map {int(index) + 1}"
    if kind == "color":
        return f"colour layer {int(index) + 1}"
    return "vertex positions" if key == "positions" else key


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
        f"engine bind pose of {plural(full, 'bone')}, written back while the rest pose "
        "stays as imported"
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
    r.kept.append(f"import transform: {', '.join(parts) if parts else 'none'}")


def _actions(obj, r: Report) -> None:
    ad = obj.animation_data
    action = ad.action if ad is not None else None
    if action is None:
        return
    length = kept_keys.get(action, LENGTH)
    fps = action.get("rigport_fps")
    if length is not None and fps is not None:
        r.kept.append(
            f"action {action.name!r}: the file's length, {float(length):g} s at "
            f"{float(fps):g} fps, written back on export"
        )
