"""Damaged BonesPro text files: a FormatError naming the line, never another exception.

``FormatError.line`` is the 1-based line number and the message starts with
``line N:`` (``offset`` is None: text files have lines).
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

from rigport.io_formats.bonespro import animation as A
from rigport.io_formats.bonespro import structure
from rigport.io_formats.codec import FormatError
from rigport.samples import bonespro as samples


@functools.cache
def structure_lines() -> tuple[str, ...]:
    return tuple(structure.write(samples.structure(n_vertices=6, seed=1)).decode().splitlines())


@functools.cache
def animation_lines(mode: str, representation: str = A.MATRIX) -> tuple[str, ...]:
    s = samples.structure(n_vertices=6, seed=1)
    a = samples.animation(s, mode, A.RELATIVE, representation, "YZY", n_frames=3)
    return tuple(A.write(a).decode().splitlines())


def _join(lines) -> bytes:
    return ("\n".join(lines) + "\n").encode()


def _replace(lines, index: int, text: str) -> bytes:
    lines = list(lines)
    lines[index] = text
    return _join(lines)


def expect_line(read, data: bytes, line: int, *words: str) -> FormatError:
    with pytest.raises(FormatError) as info:
        read(data)
    err = info.value
    assert err.line == line, str(err)
    assert str(err).startswith(f"line {line}:"), str(err)
    for w in words:
        assert w in str(err), str(err)
    return err


def _first_vertex_line() -> int:
    """0-based index of the first vertex's position line."""
    return 2 + 6 * 11


# ------------------------------------------------------------------ structure
def test_structure_weight_for_a_bone_that_does_not_exist():
    lines = structure_lines()
    i = _first_vertex_line() + 2  # first (bone, weight) pair
    weight = lines[i].split()[1]
    expect_line(structure.read, _replace(lines, i, f"99 {weight}"), i + 1, "99", "does not exist")
    expect_line(structure.read, _replace(lines, i, f"-1 {weight}"), i + 1, "does not exist")
    expect_line(structure.read, _replace(lines, i, f"1.5 {weight}"), i + 1, "does not exist")


def test_structure_vertex_count_larger_than_the_file():
    lines = list(structure_lines())
    lines[1] = "7"
    expect_line(structure.read, _join(lines), len(lines), "vertex 6", "ends")


def test_structure_vertex_count_smaller_than_the_file():
    lines = list(structure_lines())
    lines[1] = "5"
    err = expect_line(structure.read, _join(lines), _last_vertex_start(lines) + 1, "unexpected")
    assert "after vertex 4" in str(err)


def _last_vertex_start(lines) -> int:
    i = _first_vertex_line()
    start = i
    while i < len(lines):
        start = i
        i += 2 + int(lines[i + 1])
    return start


def test_structure_bone_count_too_large():
    lines = list(structure_lines())
    lines[0] = "7"
    # The seventh "bone" begins with the first vertex's position where a <name> belongs.
    expect_line(structure.read, _join(lines), _first_vertex_line() + 1, "bone 6 name", "<name>")


def test_structure_huge_counts_are_refused_before_allocation():
    lines = list(structure_lines())
    lines[1] = "100000000000"
    expect_line(structure.read, _join(lines), len(lines), "expected")


def test_structure_missing_token_in_a_bone_transform():
    lines = list(structure_lines())
    lines[6] = " ".join(lines[6].split()[:2])  # one number short in bone 0's transform
    expect_line(structure.read, _join(lines), 14, "bone 0", "expected a number", "<Bip01 Pelvis>")


def test_structure_bad_parents():
    lines = structure_lines()
    expect_line(structure.read, _replace(lines, 14, "6"), 15, "bone 1 parent", "out of range")
    expect_line(structure.read, _replace(lines, 14, "1"), 15, "its own parent")
    expect_line(structure.read, _replace(lines, 14, "x"), 15, "bone 1 parent", "'x'")
    cycle = _replace(_replace(lines, 3, "1").decode().splitlines(), 14, "0")
    expect_line(structure.read, cycle, 3, "cycle")


def test_structure_bad_names():
    lines = structure_lines()
    expect_line(structure.read, _replace(lines, 2, "<Bip01"), 3, "bone name")
    expect_line(structure.read, _replace(lines, 2, "Bip01"), 3, "bone 0 name", "<name>")
    expect_line(structure.read, _replace(lines, 2, "<a> <b>"), 3, "bone 0 parent", "'<b>'")


def test_structure_bad_weight_count():
    lines = structure_lines()
    i = _first_vertex_line() + 1
    expect_line(structure.read, _replace(lines, i, "-2"), i + 1, "vertex 0", "bone count")
    expect_line(structure.read, _replace(lines, i, "2.5"), i + 1, "vertex 0", "bone count")
    expect_line(structure.read, _replace(lines, i, "nan"), i + 1, "vertex 0", "bone count")


def test_structure_not_a_number():
    lines = structure_lines()
    i = _first_vertex_line()
    expect_line(structure.read, _replace(lines, i, "1.0 abc 2"), i + 1, "'abc'")
    expect_line(structure.read, b"six\n", 1, "Nb")
    expect_line(structure.read, b"", 1, "Nb", "ends")


def test_structure_line_numbers_count_comments_and_crlf():
    lines = list(structure_lines())
    lines[0] = "// header comment\r\n" + lines[0] + "   // Nb"
    i = _first_vertex_line() + 2
    lines[i] = "42 0.5"
    expect_line(structure.read, _join(lines), i + 2, "42")


# ------------------------------------------------------------------ animation
def test_animation_unknown_mode_names():
    lines = animation_lines(A.BONES)
    expect_line(A.read, _replace(lines, 3, "Skeleton"), 4, "ExportMode", "Skeleton")
    expect_line(A.read, _replace(lines, 3, '"Mesh (relative)"'), 4, "ExportMode")
    expect_line(A.read, _replace(lines, 3, '"Bones'), 4, "not closed")
    expect_line(A.read, _replace(lines, 4, "Relative"), 5, "TransformSystem")
    expect_line(A.read, _replace(lines, 5, "Quaternion"), 6, "TransformRepresentation")
    expect_line(A.read, _replace(lines, 6, "XXY"), 7, "EulerOrder")
    expect_line(A.read, _replace(lines, 7, "Gradians"), 8, "AngleUnits")
    expect_line(A.read, _replace(lines, 8, "first"), 9, "FirstFrame")


def test_animation_wrong_counts():
    lines = animation_lines(A.BONES)
    expect_line(A.read, _replace(lines, 2, "4"), len(lines), "4 frames", "ends")
    expect_line(A.read, _replace(lines, 2, "2"), 12 + 2 * 6 * 9, "unexpected", "2 frames")
    expect_line(A.read, _replace(lines, 2, "-1"), 3, "Nf", "out of range")


def test_animation_missing_token_in_bones_mode():
    lines = list(animation_lines(A.BONES))
    lines[13] = " ".join(lines[13].split()[:2])
    expect_line(A.read, _join(lines), len(lines), "expected", "ends")


def test_animation_euler_values():
    lines = animation_lines(A.BONES, A.EULER)
    assert lines[5] == "Euler Angles" and lines[6] == "YZY"
    expect_line(A.read, _replace(lines, 13, "1 2 zz"), 14, "'zz'")


def test_animation_mesh_absolute_counts():
    lines = animation_lines(A.MESH_ABSOLUTE)
    expect_line(A.read, _replace(lines, 1, "7"), len(lines), "ends")
    expect_line(A.read, _join(lines + ("1 2 3",)), len(lines) + 1, "unexpected")


def test_animation_mesh_bones_cs_blocks():
    lines = animation_lines(A.MESH_BONES)
    head = 11  # first "b Nvb" line
    n = int(lines[head].split()[1])
    expect_line(A.read, _replace(lines, head, f"9 {n}"), head + 1, "bone 9", "does not exist")
    expect_line(A.read, _replace(lines, head, f"0 {n + 50}"), head + 1, "vertex count")
    row = lines[head + 1].split()
    bad = _replace(lines, head + 1, " ".join(["6", *row[1:]]))
    expect_line(A.read, bad, head + 2, "vertex index 6.0 does not exist")
    expect_line(A.read, _join(lines[:-1]), len(lines) - 1, "ends")


# ------------------------------------------------------------------ every damage is a FormatError
def _all_samples() -> dict[str, bytes]:
    s = samples.structure(n_vertices=5, seed=2)
    out = {"structure": structure.write(s)}
    for mode in A.MODES:
        out[mode] = A.write(samples.animation(s, mode, n_frames=2))
    out["euler"] = A.write(samples.animation(s, A.BONES, A.RELATIVE, A.EULER, "ZXZ", n_frames=2))
    return out


@pytest.mark.parametrize("name", list(_all_samples()))
def test_truncation_and_token_damage_give_format_errors(name):
    data = _all_samples()[name]
    read = structure.read if name == "structure" else A.read
    rng = np.random.default_rng(0)
    lines = data.decode().splitlines()
    # Truncated at every line, and at random bytes.
    cuts = [len("\n".join(lines[:i])) for i in range(len(lines))]
    cuts += rng.integers(0, len(data), 60).tolist()
    outcomes = 0
    for cut in cuts:
        try:
            read(data[:cut])
        except FormatError as err:
            assert err.line is not None and str(err).startswith(f"line {err.line}:")
            outcomes += 1
    assert outcomes >= len(cuts) - 3  # a cut between a number's digits can still parse
    junk = ["x", "-", "*", "<", ">", "1e999", "-7", "3.5", "1000000", "", "<n>", '"', "nan"]
    for _ in range(300):
        tokens = data.decode().split("\n")
        i = int(rng.integers(0, len(tokens)))
        words = tokens[i].split(" ")
        words[int(rng.integers(0, len(words)))] = junk[int(rng.integers(0, len(junk)))]
        tokens[i] = " ".join(words)
        damaged = "\n".join(tokens).encode()
        try:
            read(damaged)
        except FormatError as err:
            assert str(err).startswith(f"line {err.line}:")


# ------------------------------------------------------------------ counts without values
def _header(nb: int, nv: int, nf: str, mode: str) -> bytes:
    return (
        f'{nb}\n{nv}\n{nf}\n"{mode}"\n"Absolute"\n"Matrix"\n"XYZ"\n"Degrees"\n0\n1\n1\n'
    ).encode()


@pytest.mark.parametrize("mode", A.MODES)
@pytest.mark.parametrize(("nb", "nv"), [(0, 0), (0, 5), (3, 0)])
def test_huge_frame_count_with_empty_frames(mode, nb, nv):
    """10^30 frames of nothing once raised numpy's ValueError from a reshape."""
    expect_line(A.read, _header(nb, nv, "1" + "0" * 30, mode), 3, "Nf", "out of range")


@pytest.mark.parametrize("mode", A.MODES)
def test_frames_that_hold_nothing_are_limited(mode):
    """No bytes back the count of empty frames, and an import makes a key per frame:
    the count is refused above a limit, and accepted (and written back) up to it."""
    nb, nv = (0, 4) if mode != A.MESH_ABSOLUTE else (4, 0)
    expect_line(A.read, _header(nb, nv, str(A.EMPTY_FRAME_LIMIT + 1), mode), 3, "no values")
    data = _header(nb, nv, str(A.EMPTY_FRAME_LIMIT), mode)
    a = A.read(data)
    assert a.frame_count == A.EMPTY_FRAME_LIMIT
    assert A.read(A.write(a)).frame_count == A.EMPTY_FRAME_LIMIT


def test_singular_bone_transform_names_the_bone():
    """A zero bone transform has no inverse bind matrix: once a LinAlgError."""
    from rigport.io_formats.bonespro import convert

    s = samples.structure(n_vertices=6, seed=1)
    s.bone_transforms[2] = 0.0
    s = structure.read(structure.write(s))
    with pytest.raises(FormatError, match=f"bone 2 <{s.names[2]}>: its transform is singular"):
        convert.structure_to_scene(s, "rig")
