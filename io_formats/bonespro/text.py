"""Tokens of a BonesPro text export, with line numbers for errors.

The files are ASCII: ``//`` starts a comment that runs to the end of the line
(even straight after a token), tokens are separated by any whitespace, and a
``<name>`` runs from ``<`` to the first ``>`` on its line, spaces included.
Tokens are plain ``str.split`` pieces between the names, and numbers are
converted in bulk by numpy; line numbers are worked out only when an error is
reported.
"""

from __future__ import annotations

import re

import numpy as np

from ..codec import FormatError

_COMMENT_OR_NAME = re.compile(r"(<[^>\n]*>)|//[^\n]*")
_NAME_SPLIT = re.compile(r"(<[^>\n]*>)")
_TOKEN = re.compile(r"<[^>\n]*>|[^\s<]+|<")


class Tokens:
    """The tokens of one file and a cursor over them."""

    def __init__(self, data: bytes):
        try:
            text = data.decode("ascii")
        except UnicodeDecodeError:
            text = data.decode("latin-1")
        if "//" in text:
            text = _COMMENT_OR_NAME.sub(lambda m: m.group(1) or "", text)
        self.text = text
        items: list[str] = []
        self.items = items
        self.pos = 0
        self._starts: list[int] | None = None
        for i, part in enumerate(_NAME_SPLIT.split(text)):
            if i % 2:
                items.append(part)
                continue
            words = part.split()
            if "<" in part or ">" in part:
                k = next(k for k, w in enumerate(words) if "<" in w or ">" in w)
                raise self.error(
                    f"a bone name must be <...> on one line, got {words[k]!r}", len(items) + k
                )
            items.extend(words)

    # ----------------------------------------------------------------- errors
    def line_of(self, index: int) -> int:
        """1-based line of token ``index`` (the last line when past the end)."""
        if self._starts is None:
            self._starts = [m.start() for m in _TOKEN.finditer(self.text)]
        if index < len(self._starts):
            return self.text.count("\n", 0, self._starts[index]) + 1
        return self.text.rstrip().count("\n") + 1

    def error(self, message: str, index: int | None = None) -> FormatError:
        """A FormatError at token ``index`` (the cursor by default).

        Text files have lines, not byte offsets: the message starts with ``line N:``
        and the error's ``line`` attribute holds N (``offset`` stays None).
        """
        line = self.line_of(self.pos if index is None else index)
        err = FormatError(f"line {line}: {message}")
        err.line = line
        return err

    # ----------------------------------------------------------------- reading
    @property
    def remaining(self) -> int:
        return len(self.items) - self.pos

    def need(self, n: int, what: str) -> None:
        if n < 0 or n > self.remaining:
            raise self.error(
                f"{what}: expected {n} more values, the file ends after {self.remaining}",
                len(self.items),
            )

    def word(self, what: str) -> str:
        self.need(1, what)
        tok = self.items[self.pos]
        self.pos += 1
        return tok

    def name(self, what: str) -> str:
        tok = self.word(what)
        if not (tok.startswith("<") and tok.endswith(">")):
            raise self.error(f"{what}: expected a <name>, got {tok!r}", self.pos - 1)
        return tok[1:-1]

    def number(self, what: str) -> float:
        tok = self.word(what)
        try:
            return float(tok)
        except ValueError:
            raise self.error(f"{what}: expected a number, got {tok!r}", self.pos - 1) from None

    def integer(self, what: str, low: int = 0, high: int | None = None) -> int:
        value = self.number(what)
        if not np.isfinite(value) or value != int(value):
            raise self.error(f"{what}: expected an integer, got {value!r}", self.pos - 1)
        value = int(value)
        if value < low or (high is not None and value >= high):
            limit = f"{low}..{high - 1}" if high is not None else f">= {low}"
            raise self.error(f"{what}: {value} is out of range ({limit})", self.pos - 1)
        return value

    def floats(self, n: int, what: str) -> np.ndarray:
        """The next ``n`` tokens as float64, converted by numpy."""
        self.need(n, what)
        start = self.pos
        chunk = self.items[start : start + n]
        try:
            out = np.array(chunk, dtype=np.float64)
        except ValueError:
            for k, tok in enumerate(chunk):
                try:
                    float(tok)
                except ValueError:
                    raise self.error(f"{what}: expected a number, got {tok!r}", start + k) from None
            raise
        self.pos += n
        return out

    def phrase(self, choices: tuple[str, ...], what: str) -> tuple[str, bool]:
        """One of ``choices`` (words separated by any whitespace, optionally in double
        quotes, any letter case); returns its spelling from ``choices`` and whether it was
        quoted."""
        self.need(1, what)
        start = self.pos
        first = self.items[start]
        if first.startswith('"'):
            end = start
            while not (self.items[end].endswith('"') and (end > start or len(first) > 1)):
                end += 1
                if end >= len(self.items):
                    raise self.error(f"{what}: the quoted value is not closed", start)
            words = " ".join(self.items[start : end + 1])[1:-1].split()
            for choice in choices:
                if [w.lower() for w in choice.split()] == [w.lower() for w in words]:
                    self.pos = end + 1
                    return choice, True
            raise self.error(
                f"{what}: unknown value {' '.join(words)!r} (expected one of {choices})", start
            )
        for choice in sorted(choices, key=lambda c: -len(c.split())):
            words = choice.split()
            got = self.items[start : start + len(words)]
            if [w.lower() for w in got] == [w.lower() for w in words]:
                self.pos = start + len(words)
                return choice, False
        raise self.error(f"{what}: unknown value {first!r} (expected one of {choices})", start)

    def end(self, what: str) -> None:
        if self.remaining:
            raise self.error(f"unexpected {self.items[self.pos]!r} after {what}")


def format_numbers(values: np.ndarray, per_line: int, fmt: str = "%.9g") -> str:
    """Numbers as text, ``per_line`` on each line (values rounded to 9 significant digits,
    which reproduces every float32 exactly)."""
    flat = np.asarray(values, np.float64).reshape(-1, per_line)
    if not len(flat):
        return ""
    line = " ".join([fmt] * per_line) + "\n"
    return (line * len(flat)) % tuple(flat.ravel().tolist())
