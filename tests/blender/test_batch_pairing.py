"""``batch.py`` on a library of characters with their animations: each animation
goes with the model of its folder whose bones its tracks name, outputs keep the
folders' layout (two ``Hero.mdl`` do not collide), the report names the pairs and
the files left unpaired. A library our writers build (``write_characters``) and
the corpus's Urho3D folder (Jack.mdl with Jack_Walk.ani)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from rigport.demo import sample_library
from rigport.io_formats.urho3d import ani
from rigport.tests.support import run_batch


@pytest.fixture(scope="module")
def characters(tmp_path_factory) -> tuple[Path, dict[str, list[Path]]]:
    lib = tmp_path_factory.mktemp("chars")
    return lib, sample_library.write_characters(lib)


def _same_animation(a: Path, b: Path) -> None:
    """Track names, masks and key values of two .ani files agree."""
    x, y = ani.read(a.read_bytes()), ani.read(b.read_bytes())
    assert [(t.name, t.mask, len(t.keys)) for t in x.tracks] == [
        (t.name, t.mask, len(t.keys)) for t in y.tracks
    ]
    for s, t in zip(x.tracks, y.tracks, strict=True):
        for field in s.keys.dtype.names:
            np.testing.assert_allclose(s.keys[field], t.keys[field], atol=1e-5)


def test_library_roundtrip_pairs_by_bones_and_keeps_layout(characters, tmp_path):
    lib, made = characters
    out = tmp_path / "out"
    out.mkdir()
    report = tmp_path / "r.json"
    proc = run_batch("roundtrip", lib, out, "-r", "--jobs", "2", "--report", report)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.splitlines()[-1].startswith("8 ok, 0 failed, 1 skipped in ")
    doc = json.loads(report.read_text())
    pairs = {p["model"]: p["animations"] for p in doc["pairing"]["pairs"]}
    assert pairs == {model: sorted(str(a) for a in anims) for model, anims in made.items()}
    assert all(p["by"] == ["bone names"] for p in doc["pairing"]["pairs"])
    stray = str(lib / "b" / "Stray.ani")
    assert [u["item"] for u in doc["pairing"]["unpaired"]] == [stray]
    reason = doc["pairing"]["unpaired"][0]["reason"]
    assert reason == (
        "none of its 4 tracks names a bone of a model in its folder (Hero.mdl); "
        "name one with --model"
    )
    assert f"unpaired: {stray}: none of its 4 tracks" in proc.stdout
    entry = next(f for f in doc["files"] if f["item"] == stray)
    assert entry["status"] == "skipped" and "--model" in entry["detail"]
    # every model comes out with its animations, in its own folder
    for model, anims in made.items():
        src = Path(model)
        assert (out / src.relative_to(lib)).is_file()
        for anim in anims:
            dst = out / anim.relative_to(lib)
            _same_animation(anim, dst)
            row = next(f for f in doc["files"] if f["item"] == str(anim))
            assert row["counts"]["bones"] == len(ani.read(anim.read_bytes()).tracks)
    assert (out / "a" / "Hero.mdl").read_bytes() != (out / "b" / "Hero.mdl").read_bytes()
    assert not (out / "b" / "Stray.ani").exists()


def test_two_folders_with_the_same_names_stay_apart(characters, tmp_path):
    lib, made = characters
    out = tmp_path / "out"
    out.mkdir()
    proc = run_batch(
        "convert", lib / "a", lib / "b", out, "--to", ".mdl", "--to", ".ani", "--jobs", "1"
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "is also the output of" not in proc.stdout
    written = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    expected = sorted(
        Path(p).relative_to(lib).as_posix()
        for model, anims in made.items()
        for p in [model, *anims]
    )
    assert written == expected


def test_model_forces_one(characters, tmp_path):
    lib, _made = characters
    out = tmp_path / "out"
    out.mkdir()
    ogre = lib / "a" / "Ogre.mdl"
    proc = run_batch("roundtrip", lib / "a", out, "--model", ogre, "--keep-going", "--jobs", "1")
    # every animation onto Ogre's skeleton: Hero's find none of its bones
    assert proc.returncode == 1 and "pair:" not in proc.stdout
    assert (out / "Clip.ani").is_file() and (out / "Ogre_Walk.ani").is_file()
    for clip in ("Hero_Run", "Hero_Walk"):
        assert f"{clip}.ani: error: 0 of 5 animated bones match a bone of armature 'Ogre'" in (
            proc.stdout
        )
        assert not (out / f"{clip}.ani").exists()


def test_corpus_urho3d_folder_pairs_jack(corpus_dir, tmp_path):
    lib = tmp_path / "lib"
    shutil.copytree(corpus_dir / "urho3d", lib)
    out = tmp_path / "out"
    out.mkdir()
    report = tmp_path / "r.json"
    proc = run_batch("roundtrip", lib, out, "--jobs", "1", "--report", report)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    doc = json.loads(report.read_text())
    assert doc["pairing"]["pairs"] == [
        {
            "model": str(lib / "Jack.mdl"),
            "animations": [str(lib / "Jack_Walk.ani")],
            "by": ["bone names"],
        }
    ]
    assert doc["totals"]["skipped"] == 0
    _same_animation(lib / "Jack_Walk.ani", out / "Jack_Walk.ani")
    models = sorted(p.name for p in lib.glob("*.mdl"))
    assert sorted(p.name for p in out.glob("*.mdl")) == models


def test_library_to_gltf_one_file_per_model_with_its_animations(characters, tmp_path):
    from rigport.cli.bridges import _gltf_animation_names

    lib, made = characters
    out = tmp_path / "out"
    out.mkdir()
    report = tmp_path / "r.json"
    proc = run_batch("convert", lib, out, "-r", "--to", ".glb", "--report", report)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.splitlines()[-1].startswith("3 ok, 0 failed, 1 skipped in ")
    written = sorted(p.relative_to(out).as_posix() for p in out.rglob("*.glb"))
    assert written == ["a/Hero.glb", "a/Ogre.glb", "b/Hero.glb"]
    for model, anims in made.items():
        glb = out / Path(model).relative_to(lib).with_suffix(".glb")
        # the clips are "Take 001" inside: the glTF animations take the file names
        assert sorted(_gltf_animation_names(str(glb))) == sorted(a.stem for a in anims)
    doc = json.loads(report.read_text())
    assert doc["pairing"]["unpaired"][0]["item"] == str(lib / "b" / "Stray.ani")
    assert doc["totals"] == {"ok": 3, "failed": 0, "skipped": 1, "not run": 0}
