"""What a Unigine ``.mesh`` holds that Blender cannot give back exactly, kept at import.

The file's bounds (boxes and spheres the engine's tool made, often looser than
the tight ones :func:`common.compute_bounds` gives), its weight bytes (ushorts
that do not survive the trip through Blender's float weights and the
re-normalising to 65535), its zero-weight influences (Blender keeps no group
entry for a zero weight) and how many coordinate vertices each surface had (so a
vertex no triangle uses goes back into its surface).

Bounds are a function of positions only: a surface's kept bounds are written
while its positions are, bit for bit, the file's (a digest of them is kept).
The weights and the surface each vertex came from hold while the Blender side's
fingerprint says the topology and the weights are unchanged; the exporter is told
so through :class:`mesh_export.ExportOptions`.
"""

from __future__ import annotations

import base64
import json
import zlib
from dataclasses import dataclass

import numpy as np

from ..fingerprint import VERSION, digest, version_of
from . import mesh as native

#: The extras key of the kept record (stored hidden on the mesh object).
KEPT_KEY = "unigine_kept"


def _b64(a: np.ndarray) -> str:
    """An array's bytes, deflated (weights compress to about a third), as base64."""
    return base64.b64encode(zlib.compress(np.ascontiguousarray(a).tobytes())).decode("ascii")


def _unb64(text: str, dtype: str, count: int) -> np.ndarray | None:
    """``count`` items of ``dtype`` from :func:`_b64`'s text; None when it does not
    hold exactly that many (inflating stops one byte past the expected size)."""
    size = count * np.dtype(dtype).itemsize
    try:
        packed = base64.b64decode(text.encode("ascii"), validate=True)
        inflate = zlib.decompressobj()
        raw = inflate.decompress(packed, size + 1)
    except (ValueError, UnicodeEncodeError, zlib.error):
        return None
    if len(raw) != size or not inflate.eof:
        return None
    return np.frombuffer(raw, dtype)


def positions_digest(positions: np.ndarray, version: int = VERSION) -> str:
    """The digest of a surface's base positions as the file stores them (float32);
    ``version``: the hash (``io_formats.fingerprint``)."""
    return digest(np.asarray(positions, "<f4").reshape(-1, 3), version=version)


def record(m: native.Mesh) -> str:
    """The kept record of a file, as a JSON text."""
    counts = [np.asarray(s.weights.counts, np.uint8) for s in m.surfaces]
    bones = [np.asarray(s.weights.bones, "<i2") for s in m.surfaces]
    values = [np.asarray(s.weights.values, "<u2") for s in m.surfaces]
    weighted = [len(s.weights) == s.n_coords and s.n_coords > 0 for s in m.surfaces]
    out = {
        "bounds": [float(v) for v in np.asarray(m.bounds, np.float32)],
        "coords": [s.n_coords for s in m.surfaces],
        "surfaces": [
            {
                "bounds": [float(v) for v in np.asarray(s.bounds, np.float32)],
                "positions": positions_digest(s.targets[0].positions) if s.targets else "",
            }
            for s in m.surfaces
        ],
    }
    if all(weighted) and m.bones:
        out["bones"] = [b.name for b in m.bones]
        out["weights"] = {
            "counts": _b64(np.concatenate(counts)),
            "bones": _b64(np.concatenate(bones)),
            "values": _b64(np.concatenate(values)),
        }
    return json.dumps(out, separators=(",", ":"))


@dataclass
class Kept:
    """A parsed kept record."""

    bounds: np.ndarray  # (10,) float32, the file's
    surface_bounds: list[np.ndarray]  # (10,) float32 per surface
    surface_positions: list[str]  # digest of each surface's base positions
    coords: np.ndarray  # coordinate vertices per surface
    bone_names: list[str]
    counts: np.ndarray | None = None  # (V,) influences per vertex, zero weights included
    bones: np.ndarray | None = None  # (sum counts,) file bone indices
    values: np.ndarray | None = None  # (sum counts,) ushort weights

    def surface_of_vertex(self) -> np.ndarray:
        """The surface each file coordinate vertex (= imported Blender vertex) came from."""
        return np.repeat(np.arange(len(self.coords)), self.coords)

    def bounds_for(self, si: int, positions: np.ndarray) -> np.ndarray | None:
        """Surface ``si``'s kept bounds, if ``positions`` are still the file's."""
        if si >= len(self.surface_bounds) or not self.surface_positions[si]:
            return None
        kept = self.surface_positions[si]
        if positions_digest(positions, version_of(kept)) != kept:
            return None
        return self.surface_bounds[si]

    def weights_for(self, names: list[str], n_vertices: int) -> native.Weights | None:
        """The file's weights of every vertex, bone indices into ``names`` (the
        skeleton being written); None when they are not kept, the vertex count
        differs or a bone they use is gone."""
        if self.counts is None or self.bones is None or self.values is None:
            return None
        if len(self.counts) != n_vertices:
            return None
        index = {n: i for i, n in enumerate(names)}
        used = np.unique(self.bones)
        if len(used) and (used.min() < 0 or used.max() >= len(self.bone_names)):
            return None
        remap = np.full(len(self.bone_names), -1, np.int64)
        for b in used.tolist():
            remap[b] = index.get(self.bone_names[b], -1)
        bones = remap[self.bones.astype(np.int64)]
        if (bones < 0).any():
            return None
        return native.Weights(self.counts.copy(), bones.astype(np.int16), self.values.copy())


def _floats(value, n: int) -> np.ndarray | None:
    if not isinstance(value, list) or len(value) != n:
        return None
    try:
        return np.array(value, np.float32)
    except (TypeError, ValueError):
        return None


def parse(text) -> Kept | None:
    """The kept record of ``text`` (the JSON text, or the dict the Blender side
    decodes it to); None when there is none or it is not one."""
    try:
        d = json.loads(text) if isinstance(text, str) else text
        if not isinstance(d, dict):
            return None
        surfaces = d["surfaces"]
        coords = np.array(d["coords"], np.int64)
        bounds = _floats(d["bounds"], 10)
        per = [_floats(s["bounds"], 10) for s in surfaces]
        digests = [str(s["positions"]) for s in surfaces]
    except (ValueError, KeyError, TypeError):
        return None
    if bounds is None or any(b is None for b in per) or len(coords) != len(surfaces):
        return None
    if (coords < 0).any():
        return None
    kept = Kept(bounds, per, digests, coords, [str(n) for n in d.get("bones") or []])
    weights = d.get("weights")
    if isinstance(weights, dict):
        n = int(coords.sum())
        counts = _unb64(str(weights.get("counts", "")), "u1", n)
        total = int(counts.sum()) if counts is not None else -1
        if counts is not None and counts.max(initial=0) <= native.MAX_INFLUENCES:
            bones = _unb64(str(weights.get("bones", "")), "<i2", total)
            values = _unb64(str(weights.get("values", "")), "<u2", total)
            if bones is not None and values is not None:
                kept.counts, kept.bones, kept.values = counts, bones, values
    return kept


def vertex_weights(w: native.Weights, vertices: np.ndarray) -> native.Weights:
    """The rows of ``vertices`` (file-wide) out of file-wide weights ``w``."""
    counts = w.counts.astype(np.int64)
    first = np.cumsum(counts) - counts
    c = counts[vertices]
    start = np.repeat(first[vertices], c)
    offset = np.arange(int(c.sum())) - np.repeat(np.cumsum(c) - c, c)
    pick = start + offset
    return native.Weights(c.astype(np.uint8), w.bones[pick], w.values[pick])
