"""Named passes: a conversion written as a list of steps over one state object.

Each step reads what earlier steps left on the state and adds its own part,
so a long conversion reads as the names of its steps, in order.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

S = TypeVar("S")


def run_passes(state: S, *steps: Callable[[S], None]) -> S:
    """Run ``steps`` on ``state`` in order; the state they filled."""
    for step in steps:
        step(state)
    return state
