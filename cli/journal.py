"""The report of a run as it goes, and ``--resume``.

``--report R.json`` writes two files. While the run goes, ``R.json.journal``:
JSON Lines, one line appended (and flushed) after each file. The first line
is the run (``{"run": {...}}``: command, arguments, jobs, shard), every other
line one file's result as in the report, with the fingerprints (size,
``mtime_ns``, SHA-256) of its input and output. Appending keeps a run linear
in its files, and a run killed even with SIGKILL leaves a journal that is
valid up to its last complete line. When the run ends, also on SIGTERM or
SIGINT, the summary ``R.json`` (the report, see docs/batch.md) is written
atomically and the journal removed: a journal beside a report means the run
that wrote it was killed.

``--resume R.json`` reads its journal when there is one, else the report, and
carries over every file done (status ``ok``) whose input and output still
have the recorded fingerprints; the rest is done again.
"""

from __future__ import annotations

import hashlib
import json
import os

from ..io_formats.codec import FormatError
from ..io_formats.codec.files import write_atomic
from . import UsageError, members

SUFFIX = ".journal"
CHUNK = 1 << 20


def journal_path(report: str) -> str:
    return report + SUFFIX


def _sha256_file(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def fingerprint(path: str) -> dict | None:
    """Size, ``mtime_ns`` and SHA-256 of a file; None when it cannot be read. A
    file in a container has no ``mtime_ns`` of its own (the container's changes
    whenever any of its files is written), so its size and hash decide."""
    container, member = members.split_member(path)
    try:
        if member is None:
            st = os.stat(path)  # before reading: a change meanwhile shows as a new mtime
            return {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "sha256": _sha256_file(path)}
        data = members.read_input(path)
    except (OSError, FormatError, UsageError):
        return None
    return {"size": len(data), "mtime_ns": None, "sha256": hashlib.sha256(data).hexdigest()}


def unchanged(recorded: dict | None, path: str) -> bool:
    """Whether ``path`` still has the ``recorded`` fingerprint (the hash is read
    only when size and mtime agree)."""
    if not recorded:
        return False
    if members.split_member(path)[1] is None:
        try:
            st = os.stat(path)
        except OSError:
            return False
        if (st.st_size, st.st_mtime_ns) != (recorded["size"], recorded["mtime_ns"]):
            return False
    return fingerprint(path) == recorded


def read(report: str) -> tuple[dict, list[dict]]:
    """The run and the file entries ``report`` recorded: from its journal (up to
    its last complete line) when there is one, else from the report itself."""
    journal = journal_path(report)
    if os.path.exists(journal):
        return _read_journal(journal)
    try:
        with open(report, encoding="utf-8") as fh:
            doc = json.load(fh)
        files = doc.pop("files")
    except OSError as exc:
        raise UsageError(f"--resume {report}: cannot read it: {exc.strerror or exc}") from None
    except (ValueError, KeyError, AttributeError):
        raise UsageError(f"--resume {report}: not a batch.py report") from None
    return doc, files


def _read_journal(path: str) -> tuple[dict, list[dict]]:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            lines = fh.read().split("\n")
    except OSError as exc:
        raise UsageError(f"--resume: cannot read {path}: {exc.strerror or exc}") from None
    docs = []
    for line in lines[:-1]:  # the part after the last newline is a line cut short
        try:
            docs.append(json.loads(line))
        except ValueError:
            break
    if not docs or not isinstance(docs[0], dict) or "run" not in docs[0]:
        raise UsageError(f"--resume: {path} is not a batch.py journal")
    return docs[0]["run"], [d for d in docs[1:] if isinstance(d, dict) and "item" in d]


def done(report: str, command: str) -> dict[tuple[str, str | None], dict]:
    """The file entries of ``report`` that are done, by (input, output); a usage
    error when it is the report of another command."""
    run, files = read(report)
    if run.get("command") != command:
        raise UsageError(f"--resume {report}: a report of {run.get('command')}, not {command}")
    return {(f["item"], f.get("output")): f for f in files if f.get("status") == "ok"}


def still_done(entry: dict) -> bool:
    """Whether a file done earlier needs no redoing: its input and its output (if
    it has one) are as the entry recorded."""
    prints = entry.get("fingerprints") or {}
    if not unchanged(prints.get("input"), entry["item"]):
        return False
    return entry.get("output") is None or unchanged(prints.get("output"), entry["output"])


class Journal:
    """``R.json.journal``: the run, then one line per file, appended as results come."""

    def __init__(self, report: str, run: dict) -> None:
        self.path = journal_path(report)
        write_atomic(self.path, (json.dumps({"run": run}) + "\n").encode("utf-8"), "journal")
        self.fd = os.open(self.path, os.O_WRONLY | os.O_APPEND)

    def add(self, doc: dict) -> None:
        """One line, written with one ``write`` where the system allows."""
        data = memoryview((json.dumps(doc) + "\n").encode("utf-8"))
        while data:
            data = data[os.write(self.fd, data) :]

    def close(self, remove: bool) -> None:
        """Close it; ``remove`` once the report holds everything it says."""
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
        if remove:
            try:
                os.unlink(self.path)
            except OSError:
                pass
