"""Reading and writing whole files: every write is atomic.

A file is written to a temporary name in the target's own folder and renamed
over the target only once it is complete and flushed, so a failed or
interrupted export never leaves a half-written file and never touches the old
one. Errors become a FormatError that names the file.
"""

from __future__ import annotations

import os
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
    file is never joined into one copy in memory first.

    The temporary file sits beside ``path`` (same file system, so the rename is
    atomic) and is removed again when anything fails, including ``data()``.
    """
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
                fh.write(chunk)
            fh.flush()
            os.fsync(fh.fileno())
        _keep_mode(path, tmp)
        os.replace(tmp, path)
        tmp = ""
    except OSError as exc:
        raise FormatError(f"cannot write {what}: {exc.strerror or exc}", None, path) from exc
    finally:
        if fd >= 0:
            os.close(fd)
        if tmp:
            try:
                os.unlink(tmp)
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
