"""Reading and writing whole files: every write is atomic.

A file is written to a temporary name in the target's own folder and renamed
over the target only once it is complete and flushed, so a failed or
interrupted export never leaves a half-written file and never touches the old
one. Errors become a FormatError that names the file.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable

from .errors import FormatError


def read_file(path: str, what: str = "file") -> bytes:
    """The bytes of ``path``; an OSError becomes a FormatError naming it."""
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError as exc:
        raise FormatError(f"cannot read {what}: {exc.strerror or exc}", None, path) from exc


Chunks = bytes | list | tuple


def write_atomic(path: str, data: Chunks | Callable[[], Chunks], what: str = "file") -> None:
    """Write ``data`` (bytes, a list of byte chunks, or a function that makes
    either) to ``path`` atomically. Chunks are written one by one, so a large
    file is never joined into one copy in memory first; a chunk may be a
    function that makes it, called when its turn comes.

    The temporary file sits beside ``path`` (same file system, so the rename is
    atomic) and is removed again when anything fails, including ``data()``.
    """
    tmp = _write_temporary(path, data, what)
    try:
        os.replace(tmp, path)
        tmp = ""
    except OSError as exc:
        raise FormatError(f"cannot write {what}: {exc.strerror or exc}", None, path) from exc
    finally:
        _remove(tmp)


def write_atomic_files(files: list[tuple[str, Chunks | Callable[[], Chunks], str]]) -> None:
    """Write several files that belong together (a version 1 IMG's ``.img`` and
    ``.dir``), each ``(path, data, what)`` as :func:`write_atomic` writes one, as
    one: every file is written completely to its temporary first, and only then
    are they renamed over their targets. When a rename fails, the targets already
    replaced get their old content back (a file that was not there goes again),
    so a failure leaves every old file as it was."""
    temps: list[str] = []
    try:
        for path, data, what in files:
            temps.append(_write_temporary(path, data, what))
        _replace_all([(tmp, path, what) for tmp, (path, _, what) in zip(temps, files, strict=True)])
        temps = []
    finally:
        for tmp in temps:
            _remove(tmp)


def _replace_all(moves: list[tuple[str, str, str]]) -> None:
    """Rename each temporary over its target, in order; on a failure put back the
    targets already replaced (from hard links to their old content) and raise."""
    done: list[tuple[str, str | None]] = []  # (target, its old content's link or None)
    try:
        for tmp, path, what in moves:
            old = _keep_old(path, what)
            try:
                os.replace(tmp, path)
            except OSError as exc:
                _remove(old or "")
                raise FormatError(
                    f"cannot write {what}: {exc.strerror or exc}", None, path
                ) from exc
            done.append((path, old))
    except BaseException:
        for path, old in reversed(done):
            try:
                if old is None:
                    os.unlink(path)
                else:
                    os.replace(old, path)
            except OSError:
                pass
        raise
    finally:
        for _, old in done:
            _remove(old or "")


def _keep_old(path: str, what: str) -> str | None:
    """A second name (a hard link, else a copy) beside ``path`` for its current
    content, or None when there is no file."""
    if not os.path.isfile(path):
        return None
    folder = os.path.dirname(os.path.abspath(path))
    fd, keep = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".old", dir=folder)
    os.close(fd)
    try:
        os.unlink(keep)
        try:
            os.link(path, keep)
        except OSError:  # a file system without hard links
            shutil.copy2(path, keep)
    except OSError as exc:
        _remove(keep)
        raise FormatError(f"cannot write {what}: {exc.strerror or exc}", None, path) from exc
    return keep


def _write_temporary(path: str, data: Chunks | Callable[[], Chunks], what: str) -> str:
    """``data`` written completely, flushed, with ``path``'s permissions, to a
    temporary beside ``path``; its name. Nothing is left behind on a failure."""
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise FormatError(f"cannot write {what}: the folder {folder} does not exist", None, path)
    fd = -1
    tmp = ""
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=folder)
        payload = data() if callable(data) else data
        with os.fdopen(fd, "wb") as fh:
            fd = -1
            for chunk in payload if isinstance(payload, list | tuple) else (payload,):
                fh.write(chunk() if callable(chunk) else chunk)
            fh.flush()
            os.fsync(fh.fileno())
        _keep_mode(path, tmp)
        done, tmp = tmp, ""
        return done
    except OSError as exc:
        raise FormatError(f"cannot write {what}: {exc.strerror or exc}", None, path) from exc
    finally:
        if fd >= 0:
            os.close(fd)
        _remove(tmp)


def _remove(path: str) -> None:
    if path:
        try:
            os.unlink(path)
        except OSError:
            pass


def _keep_mode(target: str, tmp: str) -> None:
    """The new file gets the old file's permissions, or the usual ones for a new file
    (mkstemp creates 0600)."""
    try:
        mode = os.stat(target).st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    os.chmod(tmp, mode)
