"""``cli/pairing.py``: which model an animation goes with (pure, no bpy)."""

from __future__ import annotations

from pathlib import Path

from rigport.cli import pairing
from rigport.cli.pairing import Skeleton
from rigport.demo import sample_library


def _s(*names: str) -> Skeleton:
    return Skeleton(frozenset(n.casefold() for n in names), len(names))


def test_bone_names_decide_before_file_names():
    models = [("lib/Hero.mdl", _s("a", "b")), ("lib/Ogre.mdl", _s("x", "y", "z"))]
    assert pairing.choose("lib/Hero_Walk.ani", _s("x", "z"), models) == (
        "lib/Ogre.mdl",
        "bone names",
    )


def test_shared_rig_falls_back_to_the_file_name_then_refuses():
    rig = _s("root", "spine")
    models = [("l/Ninja.mdl", rig), ("l/Ninja_Red.mdl", rig), ("l/Pirate.mdl", rig)]
    assert pairing.choose("l/Ninja_Red_Run.ani", rig, models) == (
        "l/Ninja_Red.mdl",
        "bone names and file name",
    )
    assert pairing.choose("l/Ninja_Walk.ani", rig, models)[0] == "l/Ninja.mdl"
    found, why = pairing.choose("l/Idle.ani", rig, models)
    assert found is None
    assert (
        why
        == "its bone names fit Ninja.mdl, Ninja_Red.mdl, Pirate.mdl equally; name one with --model"
    )


def test_nameless_tracks_pair_by_count():
    models = [("m/a.txt", _s("p", "q", "r")), ("m/b.txt", _s("p", "q"))]
    assert pairing.choose("m/w.txt", Skeleton(frozenset(), 2), models) == ("m/b.txt", "bone count")
    found, why = pairing.choose("m/w.txt", Skeleton(frozenset(), 5), models)
    assert found is None and "its 5 bones" in why
    assert (
        pairing.choose("m/w.ani", _s("a"), [])[1]
        == "no model of its format in its folder for w.ani"
    )


def test_pair_reads_a_library(tmp_path: Path):
    made = sample_library.write_characters(tmp_path)
    paths = sorted(str(p) for p in tmp_path.rglob("*") if p.is_file())
    found = pairing.pair(paths)
    want = {str(a): model for model, anims in made.items() for a in anims}
    assert found.model == want
    assert set(found.unpaired) == {str(tmp_path / "b" / "Stray.ani")}
    assert found.lines()[0].startswith(f"pair: {tmp_path / 'a' / 'Hero.mdl'} <- ")
    assert found.to_json()["unpaired"][0]["reason"].endswith("name one with --model")


def test_partial_match_names_the_closest_model():
    models = [("l/Hero.mdl", _s("a", "b", "c")), ("l/Ogre.mdl", _s("x"))]
    found, why = pairing.choose("l/Hero_Wave.ani", _s("a", "b", "hand"), models)
    assert found is None
    assert why == (
        "its 3 tracks match no model's bones in its folder (closest: Hero.mdl, 2 of 3 found); "
        "name one with --model"
    )
