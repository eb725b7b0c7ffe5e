"""Facts about a curve's keys that :func:`.recording.read` finds while they are in
the CPU's cache: whether their times are in order, which fields every key has
the same. A 10-minute recording is 388 MB of keys; each later pass over them
reads them from memory again."""

from __future__ import annotations

import functools

import numpy as np


def times_in_order(t: np.ndarray) -> bool:
    """Every time finite and none before the one ahead of it (NaN fails the
    comparison, so finite ends in order leave none between)."""
    return not len(t) or bool(np.isfinite(t[0]) and np.isfinite(t[-1]) and np.all(t[1:] >= t[:-1]))


def constant_fields(keys: np.ndarray, known: dict[str, bool] | None = None) -> frozenset[str]:
    """The fields every key has the same bits in (NaN and -0 included); none for
    fewer than two keys. ``known``: fields already compared (True: the same in
    every key), not compared again."""
    if len(keys) < 2:
        return frozenset()
    known = known or {}
    out = [name for name, same in known.items() if same]
    dtype = keys.dtype
    # The second key tells most varying fields (times, values) at once, from the
    # first two records' bytes (a 10-minute recording has 385 curves: per-field
    # numpy calls would cost more than the passes on short ones). The others are
    # compared two at a time as one 8-byte word (MRTK's recorder writes all five
    # the same: three passes over the keys instead of five), and one at a time
    # only where a pair differs. A pass compares a whole field against the first
    # key's: a bytewise comparison of the 20 bytes is three times slower with
    # numpy 2 (bpy 5.2).
    head = keys[:2].tobytes()
    size = dtype.itemsize
    pending = tuple(
        name
        for name, at in _offsets(dtype)
        if name not in known and head[at : at + 4] == head[size + at : size + at + 4]
    )
    for group in _word_pairs(dtype, pending):
        if len(group) == 2:
            word = keys.view(_pair_view(dtype, group[0]))["w"]
            if (word == word[0]).all():
                out += group
                continue
        for name in group:
            bits = keys[name].view("<i4")
            if (bits == bits[0]).all():
                out.append(name)
    return frozenset(out)


@functools.cache
def _offsets(dtype: np.dtype) -> tuple[tuple[str, int], ...]:
    """Each field of ``dtype`` (4-byte fields) and its byte offset in a record."""
    return tuple((name, dtype.fields[name][1]) for name in dtype.names)


@functools.cache
def _word_pairs(dtype: np.dtype, names: tuple[str, ...]) -> tuple[tuple[str, ...], ...]:
    """``names`` (4-byte fields of ``dtype``, in order) grouped into pairs that sit
    side by side, the rest alone."""
    groups: list[tuple[str, ...]] = []
    i = 0
    while i < len(names):
        a = names[i]
        b = names[i + 1] if i + 1 < len(names) else None
        if b is not None and dtype.fields[b][1] == dtype.fields[a][1] + 4:
            groups.append((a, b))
            i += 2
        else:
            groups.append((a,))
            i += 1
    return tuple(groups)


@functools.cache
def _pair_view(dtype: np.dtype, first: str) -> np.dtype:
    """A view of ``dtype``'s records as the 8 bytes from field ``first`` on."""
    return np.dtype(
        {
            "names": ["w"],
            "formats": ["<u8"],
            "offsets": [dtype.fields[first][1]],
            "itemsize": dtype.itemsize,
        }
    )


class TailCheck:
    """Whether every key of a curve has the first key's fields after its time and
    value (MRTK's recorder: tangents and weights 0, weighted mode Both), by one
    ``memcmp``: a buffer of records holding those fields is given the curve's
    times and values and compared with its keys whole. Two strided writes of 4
    bytes a key and a comparison at memory speed, where comparing the fields
    takes three strided passes.

    The buffer is kept from curve to curve. Its fields are written again only
    when a curve's differ, and its times only when they are another array: a
    curve checked against the times the buffer :meth:`holds` (the curve before's)
    is found to have those times, bit for bit, by the same comparison."""

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._tail = b""
        self._times: np.ndarray | None = None  # the times array the buffer holds

    def holds(self, times: np.ndarray) -> bool:
        """Whether the buffer holds ``times`` (the array, not equal values)."""
        return times is self._times

    def alike(self, keys: np.ndarray, times: np.ndarray) -> bool:
        """For C-contiguous ``keys`` of 4-byte fields with time and value first and
        ``times``, one float32 array as long: whether the keys are ``times`` and
        their values, each with the first key's other fields."""
        n, size = len(keys), keys.nbytes
        first = keys[:1].tobytes()
        if len(self._buffer) < size:
            self._buffer = bytearray(size)
            self._tail, self._times = b"", None
        rows = np.frombuffer(self._buffer, keys.dtype, n)
        if first[8:] != self._tail:
            self._buffer[:size] = first * n
            self._tail, self._times = first[8:], None
        if times is not self._times:
            rows["time"].view("<u4")[:] = times.view("<u4")
            self._times = times
        rows["value"].view("<u4")[:] = keys["value"].view("<u4")
        return self._buffer.startswith(memoryview(keys.view(np.uint8)))
