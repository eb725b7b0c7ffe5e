"""BonesPro text from any writer comes back as it was (no bpy).

Another writer formats numbers its own way (``1.000000``, ``-0.000000``,
``1.000000e+00``, seven digits) and lays the text out with comments, tabs,
CRLF and blank lines (``samples.decorate``, per the specification's ``//``
comments). The codec keeps the text of every number, the comments and the
whitespace: ``batch.py check`` is lossless and a write of the values read
gives the same bytes. An edited value is written RigPort's way and nothing
else changes; when the values no longer line up with the file's (a vertex
fewer), the whole file is RigPort's and the result says why.
"""

from __future__ import annotations

import runpy

import numpy as np
import pytest

from rigport.io_formats.bonespro import animation as A
from rigport.io_formats.bonespro import structure as S
from rigport.io_formats.bonespro.text import split_text
from rigport.io_formats.codec import FormatError
from rigport.samples import bonespro as samples
from rigport.tests.support import BATCH, run_batch

STYLES = sorted(samples.OTHER_FORMATS)
MODES = [
    (A.BONES, A.MATRIX),
    (A.BONES, A.EULER),
    (A.MESH_ABSOLUTE, A.MATRIX),
    (A.MESH_BONES, A.MATRIX),
]


def _structure() -> S.Structure:
    s = samples.structure()
    s.positions[0, 2] = -1e-9  # "-0.000000" in C's %f
    s.boxes[1, 0] = -0.0
    return s


def _structure_text(style: str, seed: int = 3) -> bytes:
    ours = S.write(_structure())
    return samples.decorate(samples.other_writer(ours, style), seed)


def _animation_text(style: str, mode: str, representation: str, seed: int = 4) -> bytes:
    a = samples.animation(samples.structure(), mode, representation=representation)
    return samples.decorate(samples.other_writer(A.write(a), style), seed)


def _differences(a: bytes, b: bytes) -> tuple[list[int], bool]:
    """The indices of the tokens that differ, and whether the gaps (whitespace and
    comments) are all the same."""
    ta, ga = split_text(a.decode())
    tb, gb = split_text(b.decode())
    assert len(ta) == len(tb)
    return [i for i, (x, y) in enumerate(zip(ta, tb, strict=True)) if x != y], ga == gb


@pytest.mark.parametrize("style", STYLES)
def test_structure_from_another_writer_is_written_back_as_it_was(style: str) -> None:
    data = _structure_text(style)
    assert b"//" in data and b"\t" in data and b"\r\n" in data
    assert style != "fixed" or b"-0.000000" in data
    s = S.read(data)
    assert S.write(s) == data
    # the values are the file's (within what its formatting rounds), not ours
    again = _structure()
    assert np.allclose(s.positions, again.positions, atol=5e-7, rtol=5e-7)
    assert np.array_equal(s.weight_bones, again.weight_bones)


@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize("mode,representation", MODES)
def test_animation_from_another_writer_is_written_back_as_it_was(
    style: str, mode: str, representation: str
) -> None:
    data = _animation_text(style, mode, representation)
    assert A.write(A.read(data)) == data


def test_quoted_and_misspelt_header_words_are_kept() -> None:
    a = samples.animation(samples.structure(), A.MESH_BONES, quoted=True)
    data = A.write(a).replace(b'"Mesh (bones c.s)"', b'"mesh   (Bones c.s.)"')
    data = samples.other_writer(data, "exponent").replace(b"\n", b"\r\n")
    back = A.read(data)
    assert back.mode == A.MESH_BONES
    assert A.write(back) == data


def test_one_edited_value_is_written_our_way_and_the_rest_unchanged() -> None:
    data = _structure_text("fixed")
    s = S.read(data)
    s.positions[3, 1] += 0.25
    out, edited, lost = S.write_kept(s)
    changed, same_gaps = _differences(data, out)
    assert same_gaps and len(changed) == 1
    token = split_text(out.decode())[0][changed[0]]
    assert token == f"{s.positions[3, 1]:.9g}"
    assert (edited, lost) == (1, "")


def test_one_edited_animation_key_is_written_our_way() -> None:
    data = _animation_text("exponent", A.BONES, A.EULER)
    a = A.read(data)
    a.bone_values[2, 1, 0] = 12.5
    out, edited, _ = A.write_kept(a)
    assert edited == 1
    changed, same_gaps = _differences(data, out)
    assert same_gaps and len(changed) == 1
    assert split_text(out.decode())[0][changed[0]] == "12.5"


def test_a_value_changed_below_float32_keeps_the_file_text() -> None:
    """What Blender gives back for an unedited value is the file's rounded to float32."""
    data = _structure_text("short")
    s = S.read(data)
    s.positions = s.positions.astype(np.float32).astype(np.float64)
    s.weights = s.weights.astype(np.float32).astype(np.float64)
    assert S.write(s) == data


def test_values_that_no_longer_line_up_are_written_our_way_saying_why() -> None:
    data = _structure_text("fixed")
    s = S.read(data)
    keep = len(s.positions) - 1
    n = int(s.weight_counts[:keep].sum())
    s.positions, s.weight_counts = s.positions[:keep], s.weight_counts[:keep]
    s.weight_bones, s.weights = s.weight_bones[:n], s.weights[:n]
    out, _, lost = S.write_kept(s)
    assert out == S.write(S.read(out)) and b"//" not in out
    assert "not kept" in lost and "values and words" in lost


def test_our_own_text_is_unchanged() -> None:
    s = samples.structure()
    ours = S.write(s)
    back = S.read(ours)
    assert S.write(back) == ours
    assert S.write_kept(back) == (ours, 0, "")
    assert S.foreign_text(back) == ours  # float64 values: Blender's float32 copy drifts
    for k in ("boxes", "bone_transforms", "node_transforms", "positions", "weights"):
        setattr(s, k, getattr(s, k).astype(np.float32).astype(np.float64))
    assert S.foreign_text(S.read(S.write(s))) is None  # float32 values: nothing to keep
    assert S.foreign_text(S.read(_structure_text("fixed"))) == _structure_text("fixed")


def test_batch_check_is_lossless_for_any_writer(tmp_path) -> None:
    files = []
    for style in STYLES:
        f = tmp_path / f"structure_{style}.txt"
        f.write_bytes(_structure_text(style))
        files.append(f)
        for k, (mode, rep) in enumerate(MODES):
            g = tmp_path / f"animation_{style}_{k}.txt"
            g.write_bytes(_animation_text(style, mode, rep))
            files.append(g)
    proc = run_batch("check", "--jobs", "1", *files)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count(": lossless (") == len(files), proc.stdout


def test_a_byte_difference_is_named_once() -> None:
    """The line for a file whose re-encoded bytes differ says so once, with the offset."""
    describe = runpy.run_path(str(BATCH), run_name="batch_under_test")["_describe"]
    err = FormatError("re-encoded bytes differ (100 bytes written, 98 read)", 61, "a.txt")
    line = describe(err, "a.txt")
    assert line == "re-encoded bytes differ at offset 61 (100 bytes written, 98 read)"
    assert line.count("re-encoded") == 1


def test_names_with_slashes_a_byte_order_mark_and_latin1_are_kept() -> None:
    s = _structure()
    s.names[1] = "Bip01 // Pelvis"
    s.names[2] = "Rücken"
    text = samples.decorate(samples.other_writer(S.write(s), "fixed"), 5)
    data = b"\xef\xbb\xbf" + text
    back = S.read(data)
    assert back.names[1] == "Bip01 // Pelvis"
    assert S.write(back) == data
    latin = text.decode().encode("latin-1")  # a name in a Windows code page
    assert S.write(S.read(latin)) == latin
    edited = S.read(latin)
    edited.weights[0] = 0.5
    out = S.write(edited)
    changed, same_gaps = _differences(
        latin.decode("latin-1").encode(), out.decode("latin-1").encode()
    )
    assert same_gaps and len(changed) == 1
    assert "Rücken".encode("latin-1") in out  # still the file's code page
