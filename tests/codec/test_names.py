"""``io_formats/names.py``: an action is named after its file when the name inside
says nothing or is taken."""

from __future__ import annotations

import pytest

from rigport.io_formats.names import action_name, is_generic


@pytest.mark.parametrize(
    "name", ["", "  ", "Take 001", "take_0", "Animation", "anim", "Clip 2", "mixamo.com", "001"]
)
def test_generic(name):
    assert is_generic(name)


@pytest.mark.parametrize("name", ["Walk", "Take Cover", "run_01", "Jack_Walk", "Idle 2b"])
def test_specific(name):
    assert not is_generic(name)


def test_three_take_001_files_take_their_file_names():
    taken: set[str] = set()
    for stem in ("Hero_Walk", "Hero_Run", "Hero_Death"):
        name = action_name("Take 001", stem, taken)
        assert name == stem
        taken.add(name)


def test_specific_names_stay_unless_taken():
    assert action_name("Walk", "Jack_Walk", set()) == "Walk"
    assert action_name("Walk", "Ninja_Walk", {"Walk"}) == "Ninja_Walk"
    assert action_name("Walk", "Walk", {"Walk"}) == "Walk Walk"
    assert action_name("", "Hero_Run", set()) == "Hero_Run"


def test_clips_of_one_file_keep_names_that_tell_them_apart():
    taken: set[str] = set()
    names = []
    for inner in ("take_0", "take_1", "", "take_1"):
        names.append(action_name(inner, "ogre", taken, clips=4))
        taken.add(names[-1])
    assert names == ["take_0", "take_1", "ogre", "ogre take_1"]
    # the same file imported again: every name is taken
    again = [action_name(n, "ogre", taken, clips=2) for n in ("take_0", "take_1")]
    assert again == ["ogre take_0", "ogre 2"]
    assert action_name("Take 001", "ogre", {"ogre", "ogre Take 001"}) == "ogre 2"


def test_without_a_file_stem_the_inner_name():
    assert action_name("Take 001", None, {"Take 001"}) == "Take 001"
    assert action_name("", None, set()) == "Animation"
