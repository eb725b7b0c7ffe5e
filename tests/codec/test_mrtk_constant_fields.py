"""``key_checks.constant_fields`` compares the recorder's constant fields two at a time as
8-byte words, and ``key_checks.TailCheck`` all five at once against a buffer: each must
find exactly the fields a field-by-field comparison finds."""

from __future__ import annotations

import numpy as np
import pytest

from rigport.io_formats.codec import FormatError
from rigport.io_formats.mrtk import recording as R
from rigport.io_formats.mrtk.key_checks import TailCheck, constant_fields
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


def test_check_with_a_tail_buffer_finds_what_field_by_field_finds() -> None:
    """``check_keys`` with a :class:`TailCheck` (one buffer for many curves, of every
    length and tail, as an import loads them) answers as it does without one."""
    rng = np.random.default_rng(7)
    tails = TailCheck()
    used = 0
    for trial in range(2000):
        n = int(rng.integers(0, 40))
        keys = np.zeros(n, FULL_KEY)
        keys["time"] = np.arange(n, dtype=np.float32) / 60
        keys["value"] = rng.integers(0, 2, n) if trial % 4 == 0 else rng.random(n)
        keys["weighted_mode"] = 3 if trial % 5 else int(rng.integers(0, 4))
        keys["in_weight"] = 0 if trial % 7 else 0.25
        if n and trial % 3 == 0:  # one bit of one field of one key after the first
            bits = keys.view("<u1").reshape(n, 28)
            row, byte = int(rng.integers(1, n)) if n > 1 else 0, int(rng.integers(8, 28))
            bits[row, byte] ^= 1 << int(rng.integers(0, 8))
        if n and trial % 11 == 0:  # NaN and -0 in the tails of every key
            keys["in_tangent"] = np.float32(-0.0)
            keys["out_tangent"].view("<u4")[:] = 0x7FC00001
        times = np.ascontiguousarray(keys["time"])
        try:
            want = R.check_keys(keys, 100, times)
        except FormatError as exc:
            with pytest.raises(FormatError) as got:
                R.check_keys(keys, 100, times, alike=R._tails_alike(keys, times, tails))
            assert (got.value.message, got.value.offset) == (exc.message, exc.offset)
            continue
        alike = R._tails_alike(keys, times, tails)
        assert R.check_keys(keys, 100, times, alike=alike) == want
        assert want[1] == _field_by_field(keys)
        used += alike
    assert used > 500  # the buffer answered for many curves, not only the fallback


def test_a_mode_out_of_range_in_every_key_is_found_through_the_buffer() -> None:
    keys = np.zeros(5, FULL_KEY)
    keys["time"] = np.arange(5)
    keys["weighted_mode"] = 9
    times = np.ascontiguousarray(keys["time"])
    tails = TailCheck()
    assert R._tails_alike(keys, times, tails)
    with pytest.raises(FormatError, match="weighted mode 9 of key 0 is not 0..3") as err:
        R.check_keys(keys, 100, times, alike=True)
    assert err.value.offset == 100 + 24


def test_keys_not_in_one_block_are_compared_field_by_field() -> None:
    keys = np.zeros(10, FULL_KEY)[::2]
    keys["weighted_mode"] = 3
    times = np.ascontiguousarray(keys["time"])
    assert not R._tails_alike(keys, times, TailCheck())
    assert R.check_keys(keys, None, times)[1] == _field_by_field(keys)


def test_the_buffer_compares_the_times_it_holds_too() -> None:
    """Checked against the times array the buffer holds, keys at other times are not
    alike, though their other fields are."""
    keys = np.zeros(8, FULL_KEY)
    keys["time"] = np.arange(8, dtype=np.float32)
    keys["weighted_mode"] = 3
    times = np.ascontiguousarray(keys["time"])
    tails = TailCheck()
    assert tails.alike(keys, times) and tails.holds(times)
    later = keys.copy()
    later["time"][5] = np.nextafter(later["time"][5], np.float32(9))
    assert not tails.alike(later, times)
    assert tails.alike(later, np.ascontiguousarray(later["time"]))
