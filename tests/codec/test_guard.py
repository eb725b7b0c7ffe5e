"""The guard between the neutral scene and Blender, without Blender (pure numpy)."""

from __future__ import annotations

import numpy as np
import pytest

from rigport.io_formats.scene import Attribute, BoneTrack, Mesh, Skeleton, UVSet
from rigport.operators.blender import guard


def _mesh(tris, nv=6, normals=True) -> Mesh:
    cv = np.asarray(tris, np.int32).ravel()
    nf = len(cv) // 3
    rng = np.random.default_rng(3)
    n = rng.normal(size=(len(cv), 3)).astype(np.float32)
    return Mesh(
        "m",
        rng.random((nv, 3)).astype(np.float32),
        cv,
        np.arange(0, len(cv), 3, dtype=np.int32),
        np.arange(nf, dtype=np.int32) % 2,
        normals=n if normals else None,
        uv_sets=[UVSet("UV", rng.random((len(cv), 2)).astype(np.float32))],
        attributes=[Attribute("x:src", "CORNER", "INT", np.arange(len(cv), dtype=np.int32))],
    )


def test_faces_blender_cannot_hold_are_left_out_and_counted():
    tris = [(0, 1, 2), (0, 0, 3), (2, 1, 0), (3, 4, 5), (1, 2, 9), (3, 4, 5), (4, 4, 4)]
    safe, kept, note = guard.guard_mesh(_mesh(tris))
    assert safe.corner_verts.reshape(-1, 3).tolist() == [[0, 1, 2], [3, 4, 5]]
    assert safe.face_starts.tolist() == [0, 3]
    assert safe.face_materials.tolist() == [0, 1]
    assert "1 face with a vertex index out of range" in note
    assert "2 faces with a repeated vertex" in note
    assert "2 duplicate faces" in note  # (2, 1, 0) is (0, 1, 2) turned round
    faces = kept["faces"]
    # kept for export (not the one out of range): where they go, and their corners
    assert faces["before"].tolist() == [1, 1, 2, 2]
    assert faces["verts"].reshape(-1, 3).tolist() == [[0, 0, 3], [2, 1, 0], [3, 4, 5], [4, 4, 4]]
    assert kept["counts"] == {"vertices": 6, "faces": 2, "corners": 6}


def test_restorer_puts_the_faces_back_in_file_order():
    tris = [(0, 1, 2), (0, 0, 3), (3, 4, 5), (3, 4, 5)]
    mesh = _mesh(tris)
    safe, kept, _ = guard.guard_mesh(mesh)
    kept = guard.loads(guard.dumps(kept))  # as stored on the mesh
    nl = len(safe.corner_verts)
    r = guard.Restorer(kept, 6, nl, len(safe.face_starts))
    loops, mats = r.triangles(np.arange(nl), np.arange(len(safe.face_starts)), safe.face_materials)
    verts = r.corners("verts", safe.corner_verts.astype(np.int32))
    assert verts[loops].reshape(-1, 3).tolist() == [list(t) for t in tris]
    assert mats.tolist() == mesh.face_materials.tolist()
    assert np.array_equal(r.corners("normals", safe.normals)[loops], mesh.normals)
    assert np.array_equal(r.corners("uv:0", safe.uv_sets[0].uv)[loops], mesh.uv_sets[0].uv)
    src = r.corners("attr:x:src", safe.attributes[0].data)[loops]
    assert src.tolist() == list(range(12))


def test_restorer_does_nothing_once_the_mesh_is_edited():
    safe, kept, _ = guard.guard_mesh(_mesh([(0, 1, 2), (0, 0, 3)]))
    r = guard.Restorer(kept, 7, len(safe.corner_verts), 1)  # a vertex was added
    loops, _ = r.triangles(np.arange(3), np.arange(1), np.zeros(1, np.int32))
    assert loops.tolist() == [0, 1, 2]


def test_non_finite_values_become_zero_and_are_kept():
    mesh = _mesh([(0, 1, 2), (3, 4, 5)])
    mesh.positions[2] = (np.nan, 0, np.inf)
    mesh.normals[1] = 0
    mesh.normals[4, 0] = np.nan
    mesh.uv_sets[0].uv[5] = np.inf
    safe, kept, note = guard.guard_mesh(mesh)
    assert np.isfinite(safe.positions).all() and not safe.positions[2].any()
    assert not safe.normals[[1, 4]].any() and safe.normals[[0, 2, 3, 5]].all()
    assert np.isfinite(safe.uv_sets[0].uv).all()
    assert "1 NaN/Inf position" in note and "2 NaN/Inf or zero-length normals" in note
    r = guard.Restorer(kept, 6, 6, 2)
    back = r.positions(safe.positions)
    assert np.array_equal(back, mesh.positions, equal_nan=True)
    assert np.array_equal(r.corners("normals", safe.normals), mesh.normals, equal_nan=True)
    assert np.array_equal(r.corners("uv:0", safe.uv_sets[0].uv), mesh.uv_sets[0].uv)
    moved = safe.positions.copy()
    moved[2] = 1.0  # the artist moved the vertex: the edit stays
    assert np.array_equal(r.positions(moved)[2], [1.0, 1.0, 1.0])


def test_a_clean_mesh_passes_unchanged():
    mesh = _mesh([(0, 1, 2), (3, 4, 5), (1, 2, 3)])
    safe, kept, note = guard.guard_mesh(mesh)
    assert kept is None and note == ""
    assert safe.corner_verts is mesh.corner_verts


def test_polygons_of_mixed_sizes():
    cv = np.array([0, 1, 2, 3, 0, 1, 1, 2, 4, 5, 0, 3, 2, 1], np.int32)
    starts = np.array([0, 4, 8, 10], np.int32)
    mesh = Mesh("q", np.zeros((6, 3), np.float32), cv, starts, np.zeros(4, np.int32))
    safe, kept, note = guard.guard_mesh(mesh)
    # (0 1 1 2) repeats a vertex, (4 5) is too small, (0 3 2 1) is (0 1 2 3) again
    assert safe.face_starts.tolist() == [0] and safe.corner_verts.tolist() == [0, 1, 2, 3]
    assert "1 face with fewer than 3 corners" in note
    assert kept["faces"]["sizes"].tolist() == [4, 4]
    r = guard.Restorer(kept, 6, 4, 1)
    loops, _ = r.triangles(np.array([0, 1, 2, 0, 2, 3]), np.array([0, 0]), np.zeros(2, np.int32))
    verts = r.corners("verts", safe.corner_verts)
    assert verts[loops].reshape(-1, 3).tolist() == [
        [0, 1, 2],
        [0, 2, 3],
        [0, 1, 1],
        [0, 1, 2],
        [0, 3, 2],
        [0, 2, 1],
    ]


def _skeleton(parents) -> Skeleton:
    n = len(parents)
    t = np.zeros((n, 3))
    t[:, 1] = 1.0
    return Skeleton(
        [f"b{i}" for i in range(n)],
        np.asarray(parents, np.int32),
        t,
        np.tile([1.0, 0, 0, 0], (n, 1)),
        np.ones((n, 3)),
    )


def test_bone_loops_and_self_parents_are_cut():
    safe, bind, note = guard.guard_skeleton(_skeleton([-1, 1, 3, 2, 0, 7]))
    p = safe.parents.tolist()
    assert p[0] == -1 and p[1] == -1 and p[4] == 0 and p[5] == -1
    assert sorted([p[2], p[3]]) == [-1, 2]  # the loop 2 <-> 3 is cut once
    assert "2 bones that are their own parent or whose parent is out of range" in note
    assert "1 bone loop (cut)" in note
    assert np.isfinite(bind).all()


def test_singular_and_non_finite_bind_matrices():
    sk = _skeleton([-1, 0, 1])
    sk.inverse_bind = np.tile(np.eye(4), (3, 1, 1))
    sk.inverse_bind[1] = 0
    sk.inverse_bind[2, 0, 0] = np.nan
    sk.local_scale[0] = 0
    safe, bind, note = guard.guard_skeleton(sk)
    assert "2 singular or NaN/Inf inverse bind matrices" in note
    assert "1 bone with a NaN/Inf, zero-scale or zero rotation rest transform" in note
    assert np.all(np.abs(np.linalg.det(bind)) > 0.5)
    assert safe.inverse_bind is sk.inverse_bind  # the file's own, for export


def test_names_that_are_not_utf8():
    raw = b"bone\xff\x00".decode("utf-8", "surrogateescape")
    name = guard.blender_name(raw)
    name.encode("utf-8")
    assert name == "bone\\xff\\x00"
    assert guard.blender_name("Kopf ü") == "Kopf ü"
    assert not guard.is_utf8(raw) and guard.is_utf8("ü")


def test_tracks_lose_non_finite_keys():
    tr = BoneTrack(
        "b\udcff", np.array([0.0, np.nan, 1.0, 2.0]), np.zeros((4, 3)), np.ones((4, 4)), None
    )
    tr.translation[2, 1] = np.inf
    out, lost = guard.guard_track(tr)
    assert lost == 2 and out.times.tolist() == [0.0, 2.0] and out.bone == "b\\xff"


def _faces_by_hand(cv, sizes, nv):
    """The face checks one face at a time: the counts and the faces kept."""
    counts = dict.fromkeys(("range", "small", "repeated", "duplicate"), 0)
    seen, kept, at = set(), [], 0
    for k in sizes:
        verts = [int(v) for v in cv[at : at + k]]
        at += k
        if any(v < 0 or v >= nv for v in verts):
            counts["range"] += 1
        elif k < 3:
            counts["small"] += 1
        elif len(set(verts)) < k:
            counts["repeated"] += 1
        elif tuple(sorted(verts)) in seen:
            counts["duplicate"] += 1
        else:
            seen.add(tuple(sorted(verts)))
            kept += verts
    return counts, kept


def test_face_checks_match_a_face_by_face_reference():
    """The packed-key checks (triangle lists in the file's own integer width, 64-bit
    keys, and rows of void keys past 21 bits a vertex) against plain Python."""
    _match_the_reference(np.random.default_rng(11))


def test_face_checks_in_blocks_match_the_reference(monkeypatch):
    """Triangle keys built a block at a time (``guard.TRIANGLE_BLOCK``): blocks of 5
    triangles, so lists split unevenly, give what plain Python gives."""
    monkeypatch.setattr(guard, "TRIANGLE_BLOCK", 5)
    _match_the_reference(np.random.default_rng(12))


def _match_the_reference(rng):
    for trial in range(400):
        nv = int(rng.choice([3, 6, 40, 3_000_000]))
        sizes = np.full(int(rng.integers(0, 40)), 3)
        if trial % 3 == 0:
            sizes = rng.integers(1, 7, len(sizes))
        cv = rng.integers(-1 if trial % 5 == 0 else 0, min(nv, 7) + (trial % 7 == 0), sizes.sum())
        if len(sizes) > 2 and (sizes == 3).all():  # a duplicate turned round
            i, j = rng.integers(0, len(sizes), 2)
            cv[3 * j : 3 * j + 3] = np.roll(cv[3 * i : 3 * i + 3], 1)
        unsigned_ok = not len(cv) or cv.min() >= 0
        dtype = [np.int32, np.int64, np.uint32][trial % 3] if unsigned_ok else np.int32
        mesh = Mesh(
            "m",
            np.zeros((nv, 3), np.float32),
            cv.astype(dtype),
            (np.cumsum(sizes) - sizes).astype(np.int32),
            np.zeros(len(sizes), np.int32),
        )
        want, kept_verts = _faces_by_hand(cv, sizes.tolist(), nv)
        counts: dict = {}
        safe = guard._drop_faces(mesh, nv, counts, {})
        assert [
            counts["faces with a vertex index out of range"],
            counts["faces with fewer than 3 corners"],
            counts["faces with a repeated vertex"],
            counts["duplicate faces"],
        ] == list(want.values()), trial
        assert np.asarray(safe.corner_verts).tolist() == kept_verts, trial


def test_face_offsets_that_wrap_in_32_bits_are_refused():
    """Offsets that only increase when their differences wrap around in int32."""
    for starts in ([0, 2**31 - 1, -(2**31)], [1, 3], [0, 3, 3], [0, 9]):
        mesh = Mesh(
            "m",
            np.zeros((3, 3), np.float32),
            np.tile(np.arange(3, dtype=np.int32), 3),
            np.array(starts, np.int32),
            np.zeros(len(starts), np.int32),
        )
        with pytest.raises(ValueError, match="not increasing"):
            guard.guard_mesh(mesh)
