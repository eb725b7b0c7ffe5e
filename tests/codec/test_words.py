"""Counted nouns: the shared helper and the messages built with it."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from rigport.io_formats.codec.errors import (
    counted,
    counted_phrase,
    noun_for,
    plural_of,
    singular_of,
)
from rigport.io_formats.unigine import common
from rigport.io_formats.urho3d.animation_convert import steps_warning
from rigport.tests.support import run_batch


@pytest.mark.parametrize(
    ("noun", "many"),
    [
        ("key", "keys"),
        ("mesh", "meshes"),
        ("ms11 mesh", "ms11 meshes"),
        ("vertex", "vertices"),
        ("index", "indices"),
        ("geometry", "geometries"),
        ("texture dictionary", "texture dictionaries"),
        ("shape key", "shape keys"),
        ("bone track", "bone tracks"),
        ("LOD", "LODs"),
        ("day", "days"),
        ("matrix", "matrices"),
        ("axis", "axes"),
        ("box", "boxes"),
        ("batch", "batches"),
    ],
)
def test_plural_of(noun: str, many: str) -> None:
    assert plural_of(noun) == many


@pytest.mark.parametrize(
    ("count", "text"),
    [(0, "0 keys"), (1, "1 key"), (-1, "-1 key"), (2, "2 keys"), (224, "224 keys")],
)
def test_counted_fits_the_count(count: int, text: str) -> None:
    assert counted(count, "key") == text


def test_counted_options() -> None:
    assert counted(4642, "vertex", thousands=True) == "4,642 vertices"
    assert counted(4642, "vertex") == "4642 vertices"
    assert counted(3, "person", "people") == "3 people"
    assert counted(1, "person", "people") == "1 person"
    assert noun_for(2, "animation file") == "animation files"
    assert counted(True, "object") == "1 object"


@pytest.mark.parametrize(
    "word", ["key", "mesh", "vertex", "index", "geometry", "box", "batch", "face", "matrix"]
)
def test_singular_of_undoes_plural_of(word: str) -> None:
    assert singular_of(plural_of(word)) == word


def test_counted_phrase() -> None:
    assert counted_phrase(1, "bones with a NaN/Inf rest") == "1 bone with a NaN/Inf rest"
    assert counted_phrase(2, "bones with a NaN/Inf rest") == "2 bones with a NaN/Inf rest"
    assert counted_phrase(1, "duplicate faces") == "1 duplicate face"
    assert counted_phrase(1, "NaN/Inf or zero-length normals") == "1 NaN/Inf or zero-length normal"
    assert counted_phrase(1, "bone loops (cut)") == "1 bone loop (cut)"
    assert (
        counted_phrase(1, "bones that are their own parent or whose parent is out of range")
        == "1 bone that is its own parent or whose parent is out of range"
    )
    assert counted_phrase(1, "singular or NaN/Inf inverse bind matrices") == (
        "1 singular or NaN/Inf inverse bind matrix"
    )


def test_steps_warning_one_key_one_track() -> None:
    text = steps_warning({"Bip01": {"steps": 1}})
    assert text.startswith("1 key sharing a time with another key (instant steps) in 1 track; ")
    text = steps_warning({"a": {"steps": 2}, "b": {"steps": 1}})
    assert text.startswith("3 keys sharing a time") and " in 2 tracks; " in text


def test_unigine_version_refusal_says_meshes() -> None:
    from rigport.io_formats.codec import FormatError, Reader

    with pytest.raises(FormatError) as info:
        common.expect_magic(Reader(b"ms10" + bytes(8)), b"ms11", "mesh")
    assert "only ms11 meshes" in str(info.value) and "meshs" not in str(info.value)


needs_bpy = pytest.mark.skipif(
    importlib.util.find_spec("bpy") is None, reason="batch import needs the bpy module"
)


@needs_bpy
def test_batch_lines_of_real_files(corpus_dir: Path) -> None:
    """Result.line() of real imports, as batch prints them: one mesh is "1 object"."""
    box = corpus_dir / "urho3d" / "Box.mdl"
    jack = corpus_dir / "urho3d" / "Jack.mdl"
    walk = corpus_dir / "urho3d" / "Jack_Walk.ani"
    proc = run_batch("import", box, jack, walk)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = [ln for ln in proc.stdout.splitlines() if not ln.startswith(("0", " "))]
    assert f"{box}: ok (1 object, " in lines[0] or f"{box}: ok (1 object)" in lines[0], lines[0]
    assert f"{jack}: ok (2 objects, armature Jack" in lines[1], lines[1]
    assert lines[-1].startswith("3 ok, 0 failed")
