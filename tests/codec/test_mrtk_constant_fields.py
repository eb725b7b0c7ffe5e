"""``key_checks.constant_fields`` compares the recorder's constant fields two at a time as
8-byte words: it must find exactly the fields a field-by-field comparison finds."""

from __future__ import annotations

import numpy as np

from rigport.io_formats.mrtk.key_checks import constant_fields
from rigport.io_formats.mrtk.recording import FULL_KEY, SIMPLE_KEY


def _field_by_field(keys: np.ndarray) -> frozenset[str]:
    if len(keys) < 2:
        return frozenset()
    return frozenset(
        name
        for name in keys.dtype.names
        if (keys[name].view("<i4") == keys[name].view("<i4")[0]).all()
    )


def test_pairs_find_the_same_fields_as_one_at_a_time() -> None:
    rng = np.random.default_rng(28)
    found = set()
    for trial in range(3000):
        n = int(rng.integers(0, 6))
        keys = np.zeros(n, FULL_KEY if trial % 3 else SIMPLE_KEY)
        for name in keys.dtype.names:
            bits = keys[name].view("<i4")
            how = int(rng.integers(0, 6))
            if how == 1:  # varying
                bits[:] = rng.integers(0, 3, n)
            elif how == 2 and n:  # only the last key differs
                bits[-1] = 1
            elif how == 3 and n:  # NaN, its sign differing in the first key or not
                bits[:] = 0x7FC00000
                bits[0] = -0x00400000 if rng.random() < 0.5 else 0x7FC00000
            elif how == 4:  # -0.0 beside +0.0 from the third key on
                bits[2:] = -(2**31)
            elif how == 5:  # the first two keys alike, a later one not
                bits[3:] = 7
        got = constant_fields(keys)
        want = _field_by_field(keys)
        assert got == want, (keys, got)
        if "weighted_mode" in keys.dtype.names and n > 1:  # as the read gives it
            known = {"weighted_mode": "weighted_mode" in want}
            assert constant_fields(keys, known) == want
        found.add(len(got))
    assert found >= {0, 2, 5, 7}  # the cases reached every kind of answer


def test_recorder_keys_have_their_five_fields_constant() -> None:
    keys = np.zeros(36, FULL_KEY)
    keys["time"] = np.arange(36) / 60
    keys["value"] = np.linspace(-1, 1, 36)
    keys["weighted_mode"] = 3
    assert constant_fields(keys) == frozenset(FULL_KEY.names[2:])
    keys["out_weight"][20] = 0.5
    assert constant_fields(keys) == frozenset(FULL_KEY.names[2:5] + FULL_KEY.names[6:])
