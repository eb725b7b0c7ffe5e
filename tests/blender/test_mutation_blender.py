"""A few mutants per format through Blender (``tools/mutate_blender.py``).

Each mutant is imported by its format's operator in a child process whose
scene already holds an object with an action and an armature with an NLA
track (and, for animations, the model they animate). The child must not
crash; a refusal must be one sentence naming the file and leave the scene as
it was; an import is saved, and a fresh child reopening the .blend must find
every image, action, material and NLA track again. The tool runs the long
campaign; the suite runs the first mutants of a fixed seed.
"""

from __future__ import annotations

import pytest

from rigport.tools import mutate_blender

SEED = 20261124
MUTANTS = 3  # per format: about 1 s of CPU each (one child, two after an import)

SPECS = mutate_blender.specs()


def _cases():
    for key in SPECS:
        for index in range(MUTANTS):
            yield pytest.param(key, index, id=f"{key}-{index}")


@pytest.mark.parametrize(("key", "index"), list(_cases()))
def test_mutant_in_blender(key, index, tmp_path):
    res = mutate_blender.run_mutant(key, SPECS[key], SEED, index, tmp_path)
    assert res.failure is None, f"{res.outcome} ({res.seed_file}): {res.failure}"
