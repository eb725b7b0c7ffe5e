"""A seeded mutation run over every codec entry point, at a fixed budget.

``tools/mutate.py`` builds the mutants (bit flips, special bytes, huge and
negative int32 fields, NaN/Inf/signalling-NaN floats, truncation, duplicated and
spliced chunks, inserted bytes, extreme numbers in text) from the corpus (when
``../shared/corpus`` is there) and our writers' samples, and runs each through
what an import does: read, write back, summary, the neutral conversion the
importer calls (RenderWare: IFP and .anm animations onto a skeleton, every
TXD raster and mipmap level decoded, every IMG member read and converted by
its kind). Every mutant must get through or raise FormatError, within a
CPU-time budget (CPU time of this process, so a loaded machine does not make
it flake). The same seed gives the same mutants; the tool runs the long
campaign.
"""

from __future__ import annotations

import warnings
from collections import Counter

import pytest

from rigport.tools import mutate

MUTANTS = 2000
#: Formats whose every mutant imports a whole archive (a ped, its textures and
#: its animations) take fewer: about 2 ms of CPU each, four times the others.
FEWER = {"renderware.img": 600, "renderware.dir": 300}
SEED = 20261123
CPU_LIMIT = 5.0  # seconds of CPU time per mutant; the slowest take about 0.1 s


def test_every_registered_format_has_a_target():
    from rigport.io_formats import registry

    assert {f.key for f in registry.all_formats()} <= set(mutate.targets())


def test_mutants_are_deterministic():
    target = mutate.targets()["urho3d.ani"]
    seeds = target.seeds(True)
    first = [mutate.mutant(seeds, SEED, i, False) for i in range(20)]
    again = [mutate.mutant(seeds, SEED, i, False) for i in range(20)]
    assert first == again
    assert len({data for _, data in first}) > 15  # and they differ from each other


@pytest.mark.parametrize("key", list(mutate.targets()))
def test_mutants_parse_or_give_format_error(key):
    target = mutate.targets()[key]
    if not target.seeds(True):
        pytest.skip(f"no seed files for {key}")
    target.sources = target.seeds(True)
    n = FEWER.get(key, MUTANTS)
    counts: Counter = Counter()
    failures = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numpy's warnings about NaN in mutants
        for i, name, data, res in mutate.iter_results(target, SEED, 0, n, CPU_LIMIT, True):
            counts[res.outcome] += 1
            if res.outcome not in ("parsed", "FormatError"):
                failures.append(
                    f"mutant {i} of {name} ({len(data)} bytes): {res.outcome} {res.detail}"
                )
    assert not failures, f"{len(failures)} of {n}: " + "; ".join(failures[:5])
    # Both paths were taken: the budget is not spent on mutants that all fail at once.
    assert counts["parsed"] > n // 100 and counts["FormatError"] > n // 100, counts
