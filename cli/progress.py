"""Per-file results, the progress line with an ETA, the summary and the JSON report
(and, while the run goes, its journal: ``journal.py``)."""

from __future__ import annotations

import json
import sys
import time
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, TextIO

from ..io_formats.codec.files import write_atomic

if TYPE_CHECKING:
    from .journal import Journal

WARNING = "; warning: "
OK, FAILED, SKIPPED, NOT_RUN = "ok", "failed", "skipped", "not run"


@dataclass
class Result:
    """What happened to one file. ``detail`` is what its progress line says (for
    a file done, the command's summary with its warnings); ``error`` the whole
    sentence of a failure (file, offset, what is wrong); ``counts`` what it read
    or built; ``data`` the ``inspect`` summary; ``fingerprints`` the size, mtime and
    hash of its input and output (with ``--report``, for ``--resume``); ``resumed``
    that an earlier run did it."""

    item: str
    status: str
    seconds: float = 0.0
    detail: str = ""
    error: str = ""
    output: str | None = None
    warnings: list[str] = field(default_factory=list)
    counts: dict = field(default_factory=dict)
    data: dict | None = None
    fingerprints: dict = field(default_factory=dict)
    resumed: bool = False

    @classmethod
    def ok(cls, item: str, detail: str, seconds: float = 0.0, **kw) -> Result:
        """A file done; the warnings are the ``; warning: ...`` parts of ``detail``."""
        return cls(item, OK, seconds, detail, warnings=detail.split(WARNING)[1:], **kw)

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, doc: dict) -> Result:
        return cls(**doc)


def _clock(seconds: float) -> str:
    s = int(round(seconds))
    h, m, s = s // 3600, s % 3600 // 60, s % 60
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


class Progress:
    """One line per file as results come in (in any order), ``[done/total]``, and
    while files remain the time they will take at the rate so far."""

    def __init__(
        self, total: int, stream: TextIO | None = None, journal: Journal | None = None
    ) -> None:
        self.total = total
        self.stream = stream or sys.stdout
        self.journal = journal  # a journal.Journal: each result is appended as it comes
        self.carried = 0  # files an earlier run did (--resume)
        self.interrupted: str | None = None  # the signal that stopped the run
        self.results: list[Result] = []  # in the order they came in
        self.slots: list[Result | None] = [None] * total  # in the order of the file list
        self.start = time.perf_counter()
        self.bpy: str | None = None  # the Blender version that did the work, if any
        self._ran = 0  # files processed (not skipped): the rate of the ETA

    def add(self, index: int, result: Result) -> None:
        """Record the result of the file at ``index`` in the list, and print its line."""
        self.results.append(result)
        self.slots[index] = result
        if result.status == NOT_RUN:  # counted in the summary, listed in the report
            return
        if self.journal is not None:
            self.journal.add(result.to_json())
        if result.status in (OK, FAILED):
            self._ran += 1
        done = len(self.results)
        line = f"[{done}/{self.total}] {result.item}: {self._text(result)}"
        left = self.total - done
        if left and self._ran:
            eta = (time.perf_counter() - self.start) / self._ran * left
            line += f", eta {_clock(eta)}"
        print(line, file=self.stream, flush=True)

    def carry(self, index: int, result: Result) -> None:
        """The result an earlier run recorded for the file at ``index`` (no line)."""
        result.resumed = True
        self.results.append(result)
        self.slots[index] = result
        self.carried += 1
        if self.journal is not None:
            self.journal.add(result.to_json())

    @property
    def done(self) -> int:
        """Files with a result, not counting those not run."""
        return len(self.results) - self.count(NOT_RUN)

    @staticmethod
    def _text(r: Result) -> str:
        if r.status == OK:
            if r.detail.startswith("lossless"):  # check: FILE: lossless (N bytes), T s
                return f"{r.detail}, {r.seconds:.2f} s"
            return f"ok ({r.detail}, {r.seconds:.2f} s)"
        if r.status == FAILED:
            return r.detail
        return f"{r.status} ({r.detail})"

    def count(self, status: str) -> int:
        return sum(1 for r in self.results if r.status == status)

    @property
    def seconds(self) -> float:
        return time.perf_counter() - self.start

    def summary(self) -> str:
        """``N ok, M failed, K skipped`` (and the files not run after a failure or
        an interruption, and how many of the ok an earlier run did)."""
        ok = f"{self.count(OK)} ok" + (f" ({self.carried} done before)" if self.carried else "")
        text = f"{ok}, {self.count(FAILED)} failed, {self.count(SKIPPED)} skipped"
        not_run = self.count(NOT_RUN)
        if not_run and self.interrupted:
            text += f", {not_run} not run (interrupted by {self.interrupted})"
        elif not_run:
            text += f", {not_run} not run (stopped at the first failure; --keep-going goes on)"
        ran = self._ran
        rate = f", {ran / self.seconds:.1f} files/s" if ran and self.seconds > 0 else ""
        return f"{text} in {self.seconds:.1f} s{rate}"

    def write_report(self, path: str, run: dict) -> None:
        """The JSON report: the run (command, arguments, jobs, shard), whether and by
        what it was interrupted, the totals, and one entry per file in the order of
        the file list."""
        doc = {
            **run,
            "interrupted": self.interrupted,
            "seconds": round(self.seconds, 3),
            "totals": {s: self.count(s) for s in (OK, FAILED, SKIPPED, NOT_RUN)},
            "files": [r.to_json() for r in self.slots if r is not None],
        }
        text = json.dumps(doc, indent=1) + "\n"
        write_atomic(path, text.encode("utf-8"), "report")
