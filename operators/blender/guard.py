"""The guard between the neutral scene and Blender (pure numpy: no bpy here).

Some data a file may validly hold, Blender cannot: faces with a repeated vertex
or duplicate faces (Blender 5.0 and 5.2 crash in the custom normal setter on
them), indices out of range, NaN or Inf values, zero-length custom normals,
bones that are their own parent or that loop, singular bind matrices, names
that are not UTF-8. :func:`guard_mesh`, :func:`guard_skeleton` and
:func:`guard_track` leave such data out of what reaches Blender and say what
they left out; what an unedited export needs to write the file's own data
again is returned as a plain dict (stored on the mesh datablock by
``build.py`` and applied by ``extract.py`` through :class:`Restorer`).
"""

from __future__ import annotations

import math
import re
from dataclasses import replace

import numpy as np

from ...io_formats.codec import FormatError
from ...io_formats.codec.errors import counted_phrase
from ...io_formats.finite import all_finite, finite_rows
from ...io_formats.kept import dumps, loads  # noqa: F401  (guard.dumps/loads)
from ...io_formats.scene import Attribute, BoneTrack, ColorSet, Mesh, Skeleton, Skin, UVSet

#: Mesh custom property holding what the guard left out of a mesh (JSON text).
KEPT = "_rigport_guard"

#: Blender's custom properties are 32-bit signed integers.
INT32 = (-(2**31), 2**31 - 1)


def is_utf8(text: str) -> bool:
    """Whether ``text`` encodes as UTF-8 (codecs keep other bytes as surrogates)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return "\0" not in text


def blender_name(name: str) -> str:
    """``name`` as a string Blender accepts: bytes that were not UTF-8 (kept by the
    codecs as surrogate escapes) become ``\\xNN`` text, a NUL character ``\\x00``."""
    if not isinstance(name, str):
        name = str(name)
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        name = name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return name.replace("\0", "\\x00")


#: The longest name (in UTF-8 bytes) Blender holds for a data-block or shape key.
NAME_BYTES = 63


def _fit(name: str, size: int) -> str:
    """``name`` cut to at most ``size`` UTF-8 bytes, on a character boundary."""
    return name.encode("utf-8")[:size].decode("utf-8", "ignore")


def unique_names(names: list[str], taken: set[str], empty: str = "Key") -> list[str]:
    """Blender's names for ``names`` (``blender_name``, cut to its length, ``empty``
    for ""), each made unique against ``taken`` and the earlier ones as Blender
    does: a taken "Key.007" tries "Key.008", "Key.009"... Given these, Blender
    renames nothing: its own search scans every key per try, so a file of
    thousands of names that collide once cut took minutes (issue 26). Here each
    search resumes where the last one for the same name stopped: linear."""
    taken = set(taken)
    resume: dict[tuple[str, int], int] = {}
    out = []
    for name in names:
        name = _fit(blender_name(name), NAME_BYTES) or empty
        if name in taken:
            found = re.fullmatch(r"(.*)\.([0-9]+)", name, re.DOTALL)
            left, number = (found[1], int(found[2])) if found else (name, 0)
            k = resume.get((left, number), number)
            while True:
                k += 1
                suffix = f".{k:03d}"
                candidate = _fit(left, NAME_BYTES - len(suffix)) + suffix
                if candidate not in taken:
                    break
            resume[(left, number)] = k
            name = candidate
        taken.add(name)
        out.append(name)
    return out


#: Notes of what the guard left out, since the last :func:`take_notes`.
_NOTES: list[str] = []


def note(what: str, text: str) -> None:
    """Record that the guard left ``text`` out of ``what`` (a mesh, an armature ...)."""
    if text:
        _NOTES.append(f"{what}: {text}")


def take_notes() -> list[str]:
    """The notes recorded since the last call (and forget them)."""
    out = list(_NOTES)
    _NOTES.clear()
    return out


def summary(notes: list[str]) -> str:
    """One warning for everything the guard left out of one import."""
    return (
        "Blender cannot hold some of this file's data: it is kept for export and "
        "written back while those parts stay unedited: " + "; ".join(notes)
    )


# --- meshes --------------------------------------------------------------------


def _count_note(counts: dict[str, int]) -> str:
    return ", ".join(counted_phrase(n, what) for what, n in counts.items() if n)


def _face_flags(cv: np.ndarray, starts: np.ndarray, sizes: np.ndarray, nv: int):
    """Per face: an index out of range, fewer than 3 corners, a repeated vertex, and a
    duplicate of an earlier face (the same vertex set). ``cv``, ``starts``: signed
    integers of the file's own width (a million-vertex mesh's int64 copies cost
    more page faults than the checks)."""
    nf = len(starts)
    out_of_range = np.zeros(nf, bool)
    small = sizes < 3
    if nf and (cv.min() < 0 or cv.max() >= nv):
        bad = (cv < 0) | (cv >= nv)
        out_of_range = np.add.reduceat(bad.astype(np.int64), starts) > 0
    bits = max(int(nv - 1).bit_length(), 1)
    if nf and 3 * bits <= 63 and bool(np.all(sizes == 3)):
        repeated, duplicate = _triangle_flags(cv, out_of_range, bits)
        return out_of_range, small, repeated, duplicate
    triangles = bool(nf) and bool(np.all(sizes == 3))
    if triangles:  # the usual triangle list: each row sorted by min, middle, max
        a, b, c = cv[0::3], cv[1::3], cv[2::3]
        lo, hi = _low_high(a, b, c)
        rows = np.stack([lo, _middle(a, b, c), hi], axis=1).astype(np.int64)
        repeated = (rows[:, 0] == rows[:, 1]) | (rows[:, 1] == rows[:, 2])
        sorted_cv = rows.ravel()
    else:
        face = np.repeat(np.arange(nf), sizes)
        order = np.lexsort((cv, face))
        sorted_cv = cv[order]
        same = (face[order][1:] == face[order][:-1]) & (sorted_cv[1:] == sorted_cv[:-1])
        repeated = np.zeros(nf, bool)
        repeated[face[order][1:][same]] = True
    duplicate = np.zeros(nf, bool)
    ok = ~(out_of_range | small | repeated)
    for k in np.unique(sizes[ok]).tolist():
        if triangles:
            faces = np.arange(nf) if ok.all() else np.nonzero(ok)[0]
            rows = sorted_cv.reshape(nf, 3)
            rows = rows if ok.all() else np.take(rows, faces, axis=0)
        else:
            faces = np.nonzero(ok & (sizes == k))[0]
            rows = sorted_cv[starts[faces][:, None] + np.arange(k)].astype(np.int64)
        if k * bits <= 63:  # one packed integer per face: a plain integer sort
            keys = rows[:, 0].astype(np.int64)
            for c in range(1, k):
                keys <<= bits
                keys |= rows[:, c]
        else:
            keys = np.ascontiguousarray(rows, np.int64).view(np.dtype((np.void, 8 * k))).ravel()
        duplicate[_copies(keys, faces)] = True
    return out_of_range, small, repeated, duplicate


def _low_high(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    lo = np.minimum(a, b)
    np.minimum(lo, c, out=lo)
    hi = np.maximum(a, b)
    np.maximum(hi, c, out=hi)
    return lo, hi


def _middle(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """The median of three (no sum: it could overflow the file's integer width)."""
    mid = np.maximum(a, b)
    np.minimum(mid, c, out=mid)
    return np.maximum(mid, np.minimum(a, b), out=mid)


#: Triangles per block of :func:`_triangle_keys`: its few temporaries stay in the
#: CPU's cache (a million-vertex mesh's whole-array temporaries were 8 to 16 MB
#: each, every one of them new pages).
TRIANGLE_BLOCK = 1 << 16


def _triangle_keys(cv: np.ndarray, bits: int) -> tuple[np.ndarray, np.ndarray]:
    """Each triangle's sorted vertices packed into one int64 (``3 * bits`` <= 63),
    and whether it repeats a vertex, a block of triangles at a time."""
    tri = cv.reshape(-1, 3)
    n = len(tri)
    keys = np.empty(n, np.int64)
    repeated = np.empty(n, bool)
    for start in range(0, n, TRIANGLE_BLOCK):
        stop = min(start + TRIANGLE_BLOCK, n)
        t = tri[start:stop]
        a, b, c = t[:, 0], t[:, 1], t[:, 2]
        lo, hi = _low_high(a, b, c)
        mid = _middle(a, b, c)
        rep = repeated[start:stop]
        np.equal(lo, mid, out=rep)
        rep |= mid == hi
        key = keys[start:stop]
        key[:] = lo
        key <<= bits
        key |= mid
        key <<= bits
        key |= hi
    return keys, repeated


def _triangle_flags(cv: np.ndarray, out_of_range: np.ndarray, bits: int):
    """A triangle list's repeated-vertex and duplicate flags (:func:`_triangle_keys`):
    no (N, 3) rows. Most meshes have no duplicate: their keys are sorted in place
    to tell, and built again only where a copy turns up."""
    keys, repeated = _triangle_keys(cv, bits)
    duplicate = np.zeros(len(keys), bool)
    ok = ~(out_of_range | repeated)
    if ok.all():
        keys.sort(kind="stable")  # timsort takes the runs of triangles in vertex order
        if not np.any(keys[1:] == keys[:-1]):
            return repeated, duplicate
        keys = _triangle_keys(cv, bits)[0]
    faces = np.arange(len(keys)) if ok.all() else np.nonzero(ok)[0]
    duplicate[_copies(keys if len(faces) == len(keys) else keys[faces], faces)] = True
    return repeated, duplicate


def _copies(keys: np.ndarray, faces: np.ndarray) -> np.ndarray:
    """The faces (of ``faces``, ascending) whose key an earlier one has: every copy
    after the first in file order."""
    if keys.dtype == np.int64:  # most meshes have none: a quick sort tells
        # timsort takes the runs of a mesh whose triangles follow its vertex order
        # (most do): 2M triangles in 6 ms against 120 ms; in random order, 1.1 x
        quick = np.sort(keys, kind="stable")
        if not np.any(quick[1:] == quick[:-1]):
            return faces[:0]
        del quick
    order = np.argsort(keys, kind="stable")
    same = keys[order][1:] == keys[order][:-1]
    return faces[order[1:][same]]


def _patch_non_finite(a: np.ndarray, kept: dict, key: str, counts: dict, what: str):
    """``a`` with non-finite rows zeroed; their original rows kept under ``key``."""
    if all_finite(a):  # one sum, no mask of every row (a million vertices' UVs: 6 MB)
        return a
    good = finite_rows(a)
    rows = np.nonzero(~good)[0]
    kept[key] = {"index": rows.astype(np.int64), "value": np.asarray(a)[rows].copy()}
    counts[what] = counts.get(what, 0) + len(rows)
    out = np.array(a, copy=True)
    out[rows] = 0
    return out


#: The most memory RigPort lets Blender's shape keys of one import take: Blender
#: stores each key densely (12 bytes per vertex), and an allocation it cannot make
#: crashes it. A file of many small morphs can ask for far more than it holds.
SHAPE_KEY_BYTES = 2 << 30


def check_shape_keys(meshes: list[Mesh]) -> None:
    """Refuse, before anything is built, shape keys Blender would need more than
    :data:`SHAPE_KEY_BYTES` for (every key holds every vertex of its mesh)."""
    need = sum(12 * len(m.positions) * (len(m.morphs) + 1) for m in meshes if m.morphs)
    if need > SHAPE_KEY_BYTES:
        keys = sum(len(m.morphs) for m in meshes)
        raise FormatError(
            f"{keys} shape keys would take {need / (1 << 30):.1f} GiB in Blender, which "
            f"stores every vertex in every key; RigPort builds at most "
            f"{SHAPE_KEY_BYTES >> 30} GiB of them (the file's morphs were not imported)"
        )


def guard_mesh(mesh: Mesh, n_bones: int | None = None) -> tuple[Mesh, dict | None, str]:
    """``mesh`` made safe for every supported Blender; what was left out (for export,
    or None); a note counting it ("" when nothing was).

    Faces Blender cannot hold are dropped; non-finite positions, UVs and colours
    become 0 and non-finite or zero-length custom normals (0, 0, 0), which the
    builders read as "Blender's own normal". Non-finite weights, weights of bones
    out of range and non-finite morph offsets are counted here and left out where
    they are set (``weights.assign_vertex_groups``, ``build.shape_keys``).

    Passes, in order: faces, loose edges, values (positions, normals, UVs,
    colours), then the counts of what the builders leave out."""
    counts: dict[str, int] = {}
    kept: dict = {}
    positions = np.asarray(mesh.positions, np.float32).reshape(-1, 3)
    nv = len(positions)
    mesh = _drop_faces(mesh, nv, counts, kept)
    mesh = _drop_loose_edges(mesh, nv, counts)
    mesh = _patch_values(mesh, positions, counts, kept)
    _count_left_out(mesh, nv, n_bones, counts)
    if kept:
        kept["counts"] = {
            "vertices": nv,
            "faces": len(mesh.face_starts),
            "corners": len(mesh.corner_verts),
        }
    return mesh, (kept or None), _count_note(counts)


def _signed(a) -> np.ndarray:
    """``a`` as signed integers, of its own width where it has one (no copy)."""
    a = np.asarray(a)
    return a if a.dtype.kind == "i" else a.astype(np.int64)


def _drop_faces(mesh: Mesh, nv: int, counts: dict, kept: dict) -> Mesh:
    """Without the faces Blender cannot hold (a vertex out of range, fewer than 3
    corners, a repeated vertex, a duplicate); those it could restore on export
    (repeated vertices, duplicates) go to ``kept["faces"]`` with their corners."""
    cv, starts = _signed(mesh.corner_verts), _signed(mesh.face_starts)
    nc, nf = len(cv), len(starts)
    if nf and (starts[0] != 0 or starts.min() < 0 or starts.max() >= nc):
        raise ValueError(f"mesh {mesh.name!r}: face offsets are not increasing")
    # within 0..nc no difference overflows: at the offsets' own width (np.diff's
    # append widens them to int64, twice the memory)
    sizes = np.empty(nf, starts.dtype)
    np.subtract(starts[1:], starts[:-1], out=sizes[:-1])
    if nf:
        sizes[-1] = nc - starts[-1]
    if nf and sizes.min() <= 0:
        raise ValueError(f"mesh {mesh.name!r}: face offsets are not increasing")
    out_of_range, small, repeated, duplicate = _face_flags(cv, starts, sizes, nv)
    counts["faces with a vertex index out of range"] = int(out_of_range.sum())
    counts["faces with fewer than 3 corners"] = int((small & ~out_of_range).sum())
    counts["faces with a repeated vertex"] = int((repeated & ~out_of_range & ~small).sum())
    counts["duplicate faces"] = int(duplicate.sum())
    drop = out_of_range | small | repeated | duplicate
    if not drop.any():
        return mesh
    keep_face = ~drop
    face_materials = np.asarray(mesh.face_materials, np.int32)
    restorable = drop & ~out_of_range & ~small
    kept["faces"] = _kept_faces(mesh, cv, sizes, keep_face, restorable, face_materials)
    return _faces_kept(mesh, sizes, keep_face, face_materials)


def _kept_faces(
    mesh: Mesh,
    cv: np.ndarray,
    sizes: np.ndarray,
    keep_face: np.ndarray,
    restorable: np.ndarray,
    face_materials: np.ndarray,
) -> dict:
    """The dropped faces export can put back: where they were, their corners' vertices,
    materials and per-corner values."""
    rcorner = np.repeat(restorable, sizes)
    faces: dict = {
        "before": (np.cumsum(keep_face) - keep_face)[restorable].astype(np.int64),
        "sizes": sizes[restorable].astype(np.int64),
        "verts": cv[rcorner].astype(np.int64),
        "materials": face_materials[restorable] if len(face_materials) else None,
        "corners": {},
    }
    if mesh.normals is not None:
        at = rcorner if mesh.normal_domain == "CORNER" else cv[rcorner]
        faces["corners"]["normals"] = np.asarray(mesh.normals, np.float32)[at]
    for k, uv in enumerate(mesh.uv_sets):  # by place: Blender may rename a layer
        faces["corners"][f"uv:{k}"] = np.asarray(uv.uv, np.float32)[rcorner]
    for k, col in enumerate(mesh.colors):
        faces["corners"][f"color:{k}"] = np.asarray(col.color, np.float32)[rcorner]
    for a in mesh.attributes:
        if a.domain == "CORNER":
            faces["corners"][f"attr:{blender_name(a.name)}"] = np.asarray(a.data)[rcorner]
    if faces["materials"] is None:
        del faces["materials"]
    return faces


def _faces_kept(
    mesh: Mesh, sizes: np.ndarray, keep_face: np.ndarray, face_materials: np.ndarray
) -> Mesh:
    """``mesh`` with only the faces ``keep_face`` marks, and their corners."""
    keep_corner = np.repeat(keep_face, sizes)
    new_sizes = sizes[keep_face]

    def by_domain(a: Attribute):
        if a.domain == "CORNER":
            return np.asarray(a.data)[keep_corner]
        return np.asarray(a.data)[keep_face] if a.domain == "FACE" else a.data

    return replace(
        mesh,
        corner_verts=np.asarray(mesh.corner_verts)[keep_corner],
        face_starts=(np.cumsum(new_sizes) - new_sizes).astype(np.int32),
        face_materials=face_materials[keep_face] if len(face_materials) else face_materials,
        normals=mesh.normals
        if mesh.normals is None or mesh.normal_domain != "CORNER"
        else np.asarray(mesh.normals)[keep_corner],
        uv_sets=[UVSet(u.name, np.asarray(u.uv)[keep_corner]) for u in mesh.uv_sets],
        colors=[ColorSet(c.name, np.asarray(c.color)[keep_corner], c.byte) for c in mesh.colors],
        attributes=[replace(a, data=by_domain(a)) for a in mesh.attributes],
    )


def _drop_loose_edges(mesh: Mesh, nv: int, counts: dict) -> Mesh:
    """Without loose edges out of range or from a vertex to itself."""
    edges = np.asarray(mesh.loose_edges, np.int64).reshape(-1, 2)
    if not len(edges):
        return mesh
    bad_edge = (edges < 0).any(axis=1) | (edges >= nv).any(axis=1) | (edges[:, 0] == edges[:, 1])
    if not bad_edge.any():
        return mesh
    counts["loose edges out of range or from a vertex to itself"] = int(bad_edge.sum())
    return replace(mesh, loose_edges=np.asarray(mesh.loose_edges)[~bad_edge])


def _patch_values(mesh: Mesh, positions: np.ndarray, counts: dict, kept: dict) -> Mesh:
    """Non-finite positions, UVs and colours as 0, bad normals as (0, 0, 0); the
    file's values kept for export."""
    mesh = replace(
        mesh, positions=_patch_non_finite(positions, kept, "positions", counts, "NaN/Inf positions")
    )
    if mesh.normals is not None:
        n = np.asarray(mesh.normals, np.float32)
        with np.errstate(invalid="ignore", over="ignore"):
            dot = np.einsum("ij,ij->i", n, n)
            # the usual normals in two passes: a NaN minimum fails, an Inf fails the sum
            sound = not len(dot) or (dot.min() > 0 and all_finite(dot))
            bad = None if sound else ~(np.isfinite(dot) & (dot > 0))  # NaN, Inf or zero length
        if bad is not None and bad.any():
            rows = np.nonzero(bad)[0]
            corners = at = rows  # kept per corner, as export reads them
            if mesh.normal_domain != "CORNER":
                cv = np.asarray(mesh.corner_verts, np.int64)
                corners = np.nonzero(bad[cv])[0]
                at = cv[corners]
            if len(corners):  # a loose vertex has no corner to keep a normal for
                kept["normals"] = {"index": corners.astype(np.int64), "value": n[at]}
            counts["NaN/Inf or zero-length normals"] = len(corners)
            n = n.copy()
            n[rows] = 0
            mesh = replace(mesh, normals=n)
    uvs = [
        UVSet(uv.name, _patch_non_finite(uv.uv, kept, f"uv:{k}", counts, "NaN/Inf UVs"))
        for k, uv in enumerate(mesh.uv_sets)
    ]
    cols = [
        ColorSet(
            c.name,
            _patch_non_finite(c.color, kept, f"color:{k}", counts, "NaN/Inf colours"),
            c.byte,
        )
        for k, c in enumerate(mesh.colors)
    ]
    return replace(mesh, uv_sets=uvs, colors=cols)


def _count_left_out(mesh: Mesh, nv: int, n_bones: int | None, counts: dict) -> None:
    """Count the weights and morph offsets the builders leave out."""
    if mesh.skin is not None:
        _count_skin(mesh.skin, nv, n_bones, counts)
    for m in mesh.morphs:
        bad = ~np.isfinite(np.asarray(m.position_offsets, np.float32))
        if bad.any() or not np.isfinite(m.default_weight):
            counts["NaN/Inf morph offsets"] = counts.get("NaN/Inf morph offsets", 0) + max(
                int(bad.reshape(len(bad), -1).any(axis=1).sum()), 1
            )


def _count_skin(skin: Skin, nv: int, n_bones: int | None, counts: dict) -> None:
    """Count the weights ``weights.assign_vertex_groups`` leaves out."""
    joints = np.asarray(skin.joints)
    weights = np.asarray(skin.weights, np.float32)
    if joints.shape[0] != nv or weights.shape != joints.shape:
        counts["skins whose size does not match the vertices"] = 1
        return
    if finite_rows(weights.reshape(1, -1))[0] and (
        not joints.size or (joints.min() >= 0 and (n_bones is None or joints.max() < n_bones))
    ):  # the usual skin: nothing left out, in three passes
        counts["NaN/Inf weights"] = counts["weights of bones out of range"] = 0
        return
    bad_w = ~np.isfinite(weights)
    bad_j = (joints < 0) & (weights != 0)
    if n_bones is not None:
        bad_j |= (joints >= n_bones) & (weights != 0)
    counts["NaN/Inf weights"] = int(bad_w.sum())
    counts["weights of bones out of range"] = int((bad_j & ~bad_w).sum())


# --- restoring on export -------------------------------------------------------


class Restorer:
    """Puts what the guard left out of a mesh back into the arrays ``extract.py``
    reads, while the mesh still has the counts it was built with (unedited).

    ``extract.py`` reads Blender's per-corner data as arrays over the mesh's loops
    and picks triangles with ``tri_loops``; the dropped faces' corners are appended
    after the loops (:meth:`corners`) and their triangles inserted before the
    triangles of the face that followed them in the file (:attr:`tri_loops`)."""

    def __init__(self, kept: dict | None, nv: int, nl: int, nf: int):
        counts = (kept or {}).get("counts", {})
        self.active = bool(kept) and counts == {"vertices": nv, "faces": nf, "corners": nl}
        self.kept = kept if self.active else {}
        self.nl = nl
        self._loop_verts: np.ndarray | None = None  # set by corners("verts")

    def positions(self, pos: np.ndarray) -> np.ndarray:
        return self._patch(pos, "positions")

    def _patch(self, a: np.ndarray, key: str) -> np.ndarray:
        p = self.kept.get(key)
        if p is None:
            return a
        rows, value = p["index"], p["value"]
        # where the stand-in 0 is still there (normals: Blender's own normal stands in)
        still = ~np.asarray(a[rows], np.float64).reshape(len(rows), -1).any(axis=1)
        if key == "normals":
            still[:] = True
        out = np.array(a, copy=True)
        out[rows[still]] = np.asarray(value, out.dtype)[still]
        return out

    def corners(self, key: str, a: np.ndarray) -> np.ndarray:
        """A per-loop array (``key``: ``normals``, ``verts``, ``uv:K`` and ``color:K``
        for the K-th UV map and corner colour, ``attr:NAME``), patched, with the
        dropped corners after it."""
        if key != "verts":
            a = self._patch(a, key)
        faces = self.kept.get("faces")
        if faces is None:
            return a
        if key == "verts":
            self._loop_verts = np.asarray(a)
            extra = faces["verts"]
        else:
            extra = faces["corners"].get(key)
        if extra is None:  # not kept (Blender made it): what another corner of the vertex has
            extra = np.zeros((len(faces["verts"]),) + a.shape[1:], a.dtype)
            lv = self._loop_verts
            if lv is not None and len(lv):
                first = np.full(int(max(lv.max(), faces["verts"].max())) + 1, -1, np.int64)
                first[lv[::-1]] = np.arange(len(lv) - 1, -1, -1)
                at = first[faces["verts"]]
                extra[at >= 0] = a[at[at >= 0]]
        return np.concatenate([a, np.asarray(extra, a.dtype).reshape((-1,) + a.shape[1:])])

    def triangles(
        self, tri_loops: np.ndarray, tri_poly: np.ndarray, tri_mat: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """``tri_loops`` and the triangles' materials with the dropped faces'
        triangles (fans of their corners) in their places."""
        faces = self.kept.get("faces")
        if faces is None:
            return tri_loops, tri_mat
        sizes = faces["sizes"]
        first = self.nl + np.cumsum(sizes) - sizes
        fans = sizes - 2
        owner = np.repeat(np.arange(len(sizes)), fans)
        step = np.arange(len(owner)) - np.repeat(np.cumsum(fans) - fans, fans)
        tris = np.stack([first[owner], first[owner] + step + 1, first[owner] + step + 2], axis=1)
        at = np.searchsorted(tri_poly, faces["before"][owner], "left")
        nt = len(tri_poly)
        loops = np.insert(tri_loops.reshape(nt, 3).astype(np.int64), at, tris, axis=0).ravel()
        mats = faces.get("materials")
        mats = np.zeros(len(sizes), np.int32) if mats is None else mats
        return loops, np.insert(tri_mat, at, np.asarray(mats, tri_mat.dtype)[owner])


# --- skeletons and tracks ------------------------------------------------------


def inverse(m: np.ndarray) -> np.ndarray:
    """Inverses of (N, 4, 4) matrices; identity for one that has none."""
    return _safe_inverse(m)[0]


def _safe_inverse(m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per matrix: its inverse, and whether it had one (finite, not singular)."""
    m = np.asarray(m, np.float64)
    finite = np.isfinite(m).all(axis=(1, 2))
    with np.errstate(all="ignore"):
        det = np.where(finite, np.linalg.det(np.where(finite[:, None, None], m, np.eye(4))), 0.0)
    scale = np.abs(m[:, :3, :3]).max(axis=(1, 2)) if len(m) else np.zeros(0)
    ok = finite & (np.abs(det) > 1e-12 * np.maximum(scale, 1e-30) ** 3)
    out = np.tile(np.eye(4), (len(m), 1, 1))
    if ok.any():
        out[ok] = np.linalg.inv(m[ok])
    ok &= np.isfinite(out).all(axis=(1, 2))
    out[~ok] = np.eye(4)
    return out, ok


def guard_skeleton(skeleton: Skeleton) -> tuple[Skeleton, np.ndarray, str]:
    """``skeleton`` safe for Blender, the world bind matrices to build the rest pose
    from (always invertible), and a note. Bones that are their own parent, whose
    parent is out of range, or that close a loop become roots; non-finite rest
    transforms become identity parts; names are made valid (:func:`blender_name`).
    The original inverse bind matrices stay in ``skeleton.inverse_bind`` (kept on
    the bones for export)."""
    counts: dict[str, int] = {}
    n = len(skeleton)
    names = [blender_name(x) for x in skeleton.names]
    counts["bone names that are not UTF-8"] = sum(
        a != b for a, b in zip(names, skeleton.names, strict=True)
    )
    parents = np.asarray(skeleton.parents, np.int64).copy()
    bad = (parents >= n) | (parents < -1) | (parents == np.arange(n))
    counts["bones that are their own parent or whose parent is out of range"] = int(bad.sum())
    parents[bad] = -1
    state = np.zeros(n, np.int8)  # 0 new, 1 on the current path, 2 done
    loops = 0
    for i in range(n):
        path = []
        j = i
        while j >= 0 and state[j] == 0:
            state[j] = 1
            path.append(j)
            j = int(parents[j])
        if j >= 0 and state[j] == 1:  # came back onto this path: a loop; cut it at j
            parents[j] = -1
            loops += 1
        state[path] = 2
    counts["bone loops (cut)"] = loops
    t = np.asarray(skeleton.local_translation, np.float64)
    q = np.asarray(skeleton.local_rotation, np.float64)
    s = np.asarray(skeleton.local_scale, np.float64)
    bad_t, bad_q, bad_s = ~finite_rows(t), ~finite_rows(q), ~finite_rows(s)
    bad_q |= np.einsum("ij,ij->i", np.nan_to_num(q), np.nan_to_num(q)) == 0
    bad_s |= (np.nan_to_num(s) == 0).any(axis=1)
    counts["bones with a NaN/Inf, zero-scale or zero rotation rest transform"] = int(
        (bad_t | bad_q | bad_s).sum()
    )
    t = np.where(bad_t[:, None], 0.0, t)
    q = np.where(bad_q[:, None], np.array([1.0, 0, 0, 0]), q)
    s = np.where(bad_s[:, None], 1.0, s)
    safe = replace(
        skeleton,
        names=names,
        parents=parents.astype(np.int32),
        local_translation=t,
        local_rotation=q,
        local_scale=s,
    )
    world = safe.world_rest()
    if skeleton.inverse_bind is not None:
        bind, ok = _safe_inverse(skeleton.inverse_bind)
        counts["singular or NaN/Inf inverse bind matrices"] = int((~ok).sum())
        bind[~ok] = world[~ok]
    else:
        bind = world
    _, ok = _safe_inverse(bind)
    bind[~ok] = np.eye(4)
    return safe, bind, _count_note(counts)


_ADD = np.add.reduce


def guard_track(track: BoneTrack) -> tuple[BoneTrack, int]:
    """``track`` without keys whose time or values are NaN/Inf; how many it lost
    (``track`` itself when it loses none and its bone's name is Blender's)."""
    return guard_tracks([track])[0]


def guard_tracks(tracks: list[BoneTrack]) -> list[tuple[BoneTrack, int]]:
    """:func:`guard_track` of each of ``tracks`` (one error state for all)."""
    out = []
    with np.errstate(over="ignore", invalid="ignore"):  # one sum per array: all finite
        # add.reduce and math.isfinite: np.sum's and np.isfinite's wrappers cost more
        # than the sum of a few hundred keys (an IFP holds thousands of tracks)
        for track in tracks:
            for a in (track.times, track.translation, track.rotation, track.scale):
                if a is not None and not math.isfinite(_ADD(a, axis=None, dtype=np.float64)):
                    out.append(_finite_keys(track))
                    break
            else:
                name = blender_name(track.bone)
                out.append((track if name == track.bone else replace(track, bone=name), 0))
    return out


def _finite_keys(track: BoneTrack) -> tuple[BoneTrack, int]:
    """``track`` without the keys a NaN/Inf is in (the slow path of :func:`guard_tracks`)."""
    times = np.asarray(track.times, np.float64)
    good = np.isfinite(times)
    for v in (track.translation, track.rotation, track.scale):
        if v is not None:
            good &= finite_rows(np.asarray(v, np.float64))
    if good.all():
        return replace(track, bone=blender_name(track.bone)), 0
    return (
        BoneTrack(
            blender_name(track.bone),
            times[good],
            *(
                None if v is None else np.asarray(v)[good]
                for v in (track.translation, track.rotation, track.scale)
            ),
        ),
        int((~good).sum()),
    )
