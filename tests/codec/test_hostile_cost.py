"""``tools/cost.py`` (issue 26's cost exponents) builds and runs every case; the
exponents themselves are measured by the tool, never asserted in the suite."""

from __future__ import annotations

import pytest

from rigport.tools import cost

pytest.importorskip("lz4.block")


@pytest.mark.parametrize("case", sorted(cost.CASES))
def test_every_case_builds_and_runs(case):
    build, run = cost.CASES[case]
    small, large = build(16), build(128)
    assert len(large) > len(small)
    run(small)
    run(large)


def test_exponent():
    assert cost.exponent(1.0, 8.0) == pytest.approx(1.0)
    assert cost.exponent(1.0, 64.0) == pytest.approx(2.0)
