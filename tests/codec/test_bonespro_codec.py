"""BonesPro structure and animation text files: parse/write round trips in every
export mode and header setting, comments and odd whitespace, the nine Euler
orders against a direct matrix computation, and content sniffing.

There are no BonesPro files in the corpus: every file here is generated from
the specification by :mod:`rigport.samples.bonespro`.
"""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np
import pytest

from rigport.io_formats import registry
from rigport.io_formats.bonespro import animation as A
from rigport.io_formats.bonespro import convert, formats, structure
from rigport.io_formats.bonespro.euler import ORDERS
from rigport.samples import bonespro as samples

F32 = dict(rtol=2e-8, atol=1e-12)  # 9 significant digits reproduce every float32


def assert_same(a, b) -> None:
    """Every field of two codec objects equal (arrays exactly); the text each was read
    from (``source``) is not a value."""
    for f in dataclasses.fields(a):
        if not f.compare:
            continue
        x, y = getattr(a, f.name), getattr(b, f.name)
        if isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
            assert x is not None and y is not None, f.name
            assert x.shape == y.shape, f.name
            np.testing.assert_array_equal(x, y, err_msg=f.name)
        else:
            assert x == y, f.name


# ------------------------------------------------------------------ structure
@pytest.mark.parametrize("scaled", [True, False])
def test_structure_round_trip(scaled):
    s = samples.structure(n_vertices=60, scaled=scaled, seed=3)
    text = structure.write(s)
    back = structure.read(text)
    assert back.names == s.names and back.names[3] == "Bip01 L Thigh"
    np.testing.assert_array_equal(back.parents, s.parents)
    assert back.parents[3] == 5  # a parent written after its child
    for name in ("boxes", "bone_transforms", "node_transforms", "positions", "weights"):
        np.testing.assert_allclose(getattr(back, name), getattr(s, name), **F32, err_msg=name)
    np.testing.assert_array_equal(back.weight_counts, s.weight_counts)
    np.testing.assert_array_equal(back.weight_bones, s.weight_bones)
    assert structure.write(back) == text


def test_structure_layout_follows_the_specification():
    s = samples.structure(n_vertices=2, seed=1)
    lines = structure.write(s).decode().splitlines()
    assert lines[:4] == ["6", "2", "<Bip01>", "*"]
    assert len(lines[4].split()) == 3  # box
    assert all(len(line.split()) == 3 for line in lines[5:13])  # bone, node transforms
    assert lines[13] == "<Bip01 Pelvis>" and lines[14] == "0"
    vertex = lines[2 + 6 * 11 :]
    n = int(vertex[1])
    assert n == s.weight_counts[0] and len(vertex[2].split()) == 2


@pytest.mark.parametrize("seed", range(4))
def test_structure_with_comments_and_odd_whitespace(seed):
    text = structure.write(samples.structure(n_vertices=30, seed=seed))
    decorated = samples.decorate(text, seed)
    assert b"//" in decorated and b"\t" in decorated and b"\r\n" in decorated
    assert_same(structure.read(decorated), structure.read(text))


def test_structure_names_with_spaces_and_comment_marks_inside():
    s = samples.structure(n_vertices=3, names=["a b  c", "x//y", "  lead", "t", "u", "v"])
    back = structure.read(structure.write(s))
    assert back.names == ["a b  c", "x//y", "  lead", "t", "u", "v"]


def test_structure_tokens_on_one_line_and_free_spacing():
    text = (
        b"2 1 <root bone> * 1 1 1 1 0 0 0 1 0 0 0 1 0 0 0 1 0 0 0 1 0 0 0 1 0 0 0"
        b"   <child>//c\n0 2 2 2 0 1 0 -1 0 0 0 0 1 1 2 3 1 0 0 0 1 0 0 0 1 1 2 3\n"
        b"0.5 0.25 -1e-3 2 0 0.75 1 0.25"
    )
    s = structure.read(text)
    assert s.names == ["root bone", "child"]
    np.testing.assert_array_equal(s.parents, [-1, 0])
    np.testing.assert_array_equal(
        s.bone_transforms[1], [[0, 1, 0], [-1, 0, 0], [0, 0, 1], [1, 2, 3]]
    )
    np.testing.assert_array_equal(s.positions, [[0.5, 0.25, -1e-3]])
    np.testing.assert_array_equal(s.weight_bones, [0, 1])
    np.testing.assert_array_equal(s.weights, [0.75, 0.25])


def test_structure_zero_weights_and_bone_lists_kept_in_file_order():
    s = samples.structure(n_vertices=4, seed=2)
    s.weights[0] = 0.0
    back = structure.read(structure.write(s))
    np.testing.assert_array_equal(back.weight_bones, s.weight_bones)
    assert back.weights[0] == 0.0


def test_structure_neutral_scene():
    s = samples.structure(n_vertices=25, seed=5)
    scene = convert.structure_to_scene(s, "rig")
    sk = scene.skeleton
    np.testing.assert_allclose(
        sk.bind_matrices(), convert.rows_to_matrix(s.bone_transforms), atol=1e-12
    )
    np.testing.assert_allclose(sk.world_rest(), sk.bind_matrices(), atol=1e-9)
    assert sk.extras[2][convert.INDEX] == 2
    mesh = scene.meshes[0]
    assert len(mesh.corner_verts) == 0 and mesh.skin.joints.shape[1] == s.weight_counts.max()
    back = convert.scene_to_structure(
        sk, mesh.positions, s.weight_counts, s.weight_bones, s.weights
    )
    np.testing.assert_array_equal(back.bone_transforms, s.bone_transforms)
    np.testing.assert_array_equal(back.node_transforms, s.node_transforms)
    np.testing.assert_array_equal(back.boxes, s.boxes)


# ------------------------------------------------------------------ animation
def _bones_cases():
    for system in A.SYSTEMS:
        yield system, A.MATRIX, "XYZ", A.DEGREES
        for order, units in itertools.product(ORDERS, A.UNITS):
            yield system, A.EULER, order, units


@pytest.mark.parametrize(
    "system,representation,order,units",
    list(_bones_cases()),
    ids=lambda v: v.replace(" ", "_"),
)
def test_bones_mode_round_trip_every_setting(system, representation, order, units):
    # Euler angles hold no scale: only an unscaled rig comes back exactly from them.
    s = samples.structure(n_vertices=5, scaled=representation == A.MATRIX)
    a = samples.animation(s, A.BONES, system, representation, order, units, n_frames=4)
    text = A.write(a)
    back = A.read(text)
    assert (back.system, back.representation, back.euler_order, back.angle_units) == (
        system,
        representation,
        order,
        units,
    )
    for name in ("boxes", "bone_values", "node_values"):
        np.testing.assert_allclose(getattr(back, name), getattr(a, name), **F32, err_msg=name)
    assert A.write(back) == text
    assert_same(A.read(samples.decorate(text, 7)), back)
    # The matrices the file describes are the generator's world matrices.
    bone, node = convert.bone_worlds(back, s.parents)
    world = samples.bone_world_frames(s, 4)
    np.testing.assert_allclose(bone, world, atol=1e-6)
    if representation == A.MATRIX:
        np.testing.assert_allclose(node, samples.node_world_frames(s, world), atol=1e-6)


@pytest.mark.parametrize("mode", [A.MESH_ABSOLUTE, A.MESH_BONES])
@pytest.mark.parametrize("quoted", [False, True])
def test_mesh_modes_round_trip(mode, quoted):
    s = samples.structure(n_vertices=30, seed=4)
    a = samples.animation(s, mode, n_frames=6, first=10, step=2, quoted=quoted)
    text = A.write(a)
    assert text.decode().splitlines()[3] == (f'"{mode}"' if quoted else mode)
    back = A.read(text)
    assert back.mode == mode and back.quoted == quoted
    np.testing.assert_array_equal(back.frames(), [10, 12, 14, 16, 18, 20])
    assert A.write(back) == text
    assert_same(A.read(samples.decorate(text, 2)), back)


def test_mesh_bones_cs_reconstructs_the_skinned_positions():
    s = samples.structure(n_vertices=50, seed=6)
    a = A.read(A.write(samples.animation(s, A.MESH_BONES, n_frames=5)))
    world = samples.bone_world_frames(s, 5)
    positions, hits, spread = convert.block_world_positions(a, world)
    np.testing.assert_allclose(positions, samples.skinned_positions(s, world), atol=1e-6)
    assert hits.min() >= 1 and spread.max() < 1e-6
    absolute = A.read(A.write(samples.animation(s, A.MESH_ABSOLUTE, n_frames=5)))
    np.testing.assert_allclose(absolute.positions, positions, atol=1e-6)


def test_header_spellings_accepted():
    s = samples.structure(n_vertices=3)
    text = A.write(samples.animation(s, A.MESH_BONES, n_frames=1)).decode()
    variants = [
        text.replace("Mesh (bones c.s)", "Mesh (bones c.s.)"),
        text.replace("Mesh (bones c.s)", "mesh   (BONES c.s)"),
        text.replace("Mesh (bones c.s)", '"Mesh\n(bones c.s)"'),
        text.replace("Relative to parent", "Absolute").replace("Absolute", "absolute"),
    ]
    for v in variants:
        assert A.read(v.encode()).mode == A.MESH_BONES


# ------------------------------------------------------------------ Euler orders
_AXIS = {"X": 0, "Y": 1, "Z": 2}


def _row_rotation(axis: str, angle: float) -> np.ndarray:
    """3ds Max row-vector rotation: rows are where the X, Y and Z axes go."""
    c, s = np.cos(angle), np.sin(angle)
    return {
        "X": np.array([[1, 0, 0], [0, c, s], [0, -s, c]]),
        "Y": np.array([[c, 0, -s], [0, 1, 0], [s, 0, c]]),
        "Z": np.array([[c, s, 0], [-s, c, 0], [0, 0, 1]]),
    }[axis]


def _direct_rows(e, order: str) -> np.ndarray:
    return (
        _row_rotation(order[0], e[0])
        @ _row_rotation(order[1], e[1])
        @ _row_rotation(order[2], e[2])
    )


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("system", A.SYSTEMS)
def test_euler_orders_match_a_direct_matrix_computation(order, system):
    rng = np.random.default_rng(len(order) + ORDERS.index(order))
    parents = np.array([-1, 0, 1, 0])
    nf, nb = 3, 4
    angles = rng.uniform(-170, 170, (nf, nb, 3))
    trans = rng.uniform(-2, 2, (nf, nb, 3))
    a = A.Animation(nb, 0, nf, A.BONES, system, A.EULER, order, A.DEGREES, 0, nf - 1, 1)
    a.boxes = np.ones((nf, nb, 3))
    a.bone_values = np.concatenate([angles, trans], axis=-1)
    a.node_values = a.bone_values.copy()
    a = A.read(A.write(a))
    bone, _ = convert.bone_worlds(a, parents)
    for f in range(nf):
        world_rows = {}
        for b in (0, 1, 2, 3):
            local = np.eye(4)
            local[:3, :3] = _direct_rows(np.radians(a.bone_values[f, b, :3]), order)
            local[3, :3] = a.bone_values[f, b, 3:]
            p = parents[b]
            world_rows[b] = local if system == A.ABSOLUTE or p < 0 else local @ world_rows[p]
            point = np.array([0.3, -1.2, 2.5, 1.0])
            np.testing.assert_allclose(
                (bone[f, b] @ point)[:3], (point @ world_rows[b])[:3], atol=1e-9
            )
            np.testing.assert_allclose(bone[f, b, :3, :3].T, world_rows[b][:3, :3], atol=1e-12)
    # Radians and the matrix -> angles direction give the same matrices back.
    rad = convert.matrix_to_values(bone, A.EULER, order, A.RADIANS)
    np.testing.assert_allclose(
        convert.values_to_matrix(rad, A.EULER, order, A.RADIANS), bone, atol=1e-12
    )


def test_euler_gimbal_lock_round_trips():
    for order in ORDERS:
        proper = order[0] == order[2]
        for middle in (0.0, 180.0) if proper else (90.0, -90.0):
            values = np.array([[30.0, middle, -50.0, 0, 0, 0]])
            m = convert.values_to_matrix(values, A.EULER, order, A.DEGREES)
            back = convert.matrix_to_values(m, A.EULER, order, A.DEGREES)
            np.testing.assert_allclose(
                convert.values_to_matrix(back, A.EULER, order, A.DEGREES), m, atol=1e-12
            )


# ------------------------------------------------------------------ sniffing / registry
def test_sniff_tells_the_two_files_apart(tmp_path):
    s = samples.structure(n_vertices=3)
    st = structure.write(s)
    an = A.write(samples.animation(s, A.BONES, n_frames=2))
    assert formats.is_structure(st) and not formats.is_animation(st)
    assert formats.is_animation(an) and not formats.is_structure(an)
    assert formats.is_structure(samples.decorate(st)) and formats.is_animation(samples.decorate(an))
    for other in (b"hello world\n", b"", b"1 2 3 4 5\n", b"\x00\x01binary"):
        assert not formats.is_structure(other) and not formats.is_animation(other)
    big = structure.write(samples.structure(n_vertices=400))
    assert formats.is_structure(big[: registry.SNIFF_BYTES])
    for name, data, key in (
        ("s.txt", st, "bonespro.structure"),
        ("a.txt", an, "bonespro.animation"),
    ):
        path = tmp_path / name
        path.write_bytes(data)
        assert registry.format_of(str(path)).key == key
    path = tmp_path / "notes.txt"
    path.write_bytes(b"just some notes\n")
    with pytest.raises(registry.FormatError, match="neither BonesPro Structure nor"):
        registry.format_of(str(path))


def test_affine_inverse_matches_numpy():
    rng = np.random.default_rng(9)
    m = np.zeros((50, 4, 4))
    m[:, :3, :] = rng.uniform(-2, 2, (50, 3, 4))
    m[:, 3, 3] = 1.0
    np.testing.assert_allclose(convert.affine_inverse(m), np.linalg.inv(m), atol=1e-9)


def test_names_outside_ascii_and_names_a_file_cannot_hold():
    names = ["Kopf ÄÖ", "Bein", "c", "d", "e", "f"]
    s = samples.structure(n_vertices=2, names=names)
    assert structure.read(structure.write(s)).names == names
    latin = structure.write(s).replace("Kopf ÄÖ".encode(), "Kopf ÄÖ".encode("latin-1"))
    assert structure.read(latin).names == names  # a Windows code page reads too
    s.names[1] = "a>b"
    with pytest.raises(ValueError, match="cannot hold"):
        structure.write(s)


def test_no_frames_and_no_vertices():
    s = samples.structure(n_vertices=0)
    assert len(structure.read(structure.write(s)).positions) == 0
    for mode in A.MODES:
        a = samples.animation(samples.structure(n_vertices=4), mode, n_frames=0)
        back = A.read(A.write(a))
        assert back.frame_count == 0 and A.write(back) == A.write(a)


def test_byte_order_mark():
    text = structure.write(samples.structure(n_vertices=3))
    assert_same(structure.read(b"\xef\xbb\xbf" + text), structure.read(text))
    assert formats.is_structure(b"\xef\xbb\xbf" + text)
