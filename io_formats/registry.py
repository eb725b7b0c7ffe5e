"""Which file formats RigPort knows, for the command line and the menus.

Each format package under ``io_formats`` lists its formats in a module
``formats.py`` with a tuple ``FORMATS`` of :class:`FileFormat`. They are found
by walking the package, so adding a format touches no shared file. Nothing
here imports bpy.
"""

from __future__ import annotations

import importlib
import os
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .codec import FormatError

KINDS = ("model", "animation", "package", "other")


@dataclass(frozen=True)
class FileFormat:
    """One file format: how to read, write and summarise it without Blender.

    ``sniff`` tells formats that share an extension apart (BonesPro's two
    ``.txt`` files); it sees the first bytes of the file and returns True when
    the content is this format's.
    """

    key: str
    label: str
    kind: str
    extensions: tuple[str, ...]
    read: Callable[[bytes], Any]
    write: Callable[[Any], bytes]
    summary: Callable[[Any], dict]
    sniff: Callable[[bytes], bool] | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"{self.key}: kind {self.kind!r} is not one of {KINDS}")


_CACHE: list[tuple[FileFormat, ...]] = []


def all_formats() -> tuple[FileFormat, ...]:
    """Every format of every package under ``io_formats``, in package order."""
    if not _CACHE:
        found: list[FileFormat] = []
        base = __name__.rsplit(".", 1)[0]
        here = os.path.dirname(__file__)
        for info in sorted(pkgutil.iter_modules([here]), key=lambda i: i.name):
            if not info.ispkg or info.name == "codec":
                continue
            try:
                module = importlib.import_module(f"{base}.{info.name}.formats")
            except ModuleNotFoundError as exc:
                if exc.name != f"{base}.{info.name}.formats":
                    raise
                continue
            found.extend(module.FORMATS)
        _CACHE.append(tuple(found))
    return _CACHE[0]


def extensions(kind: str | None = None) -> list[str]:
    """The known extensions (of one kind), sorted."""
    return sorted({e for f in all_formats() if kind in (None, f.kind) for e in f.extensions})


def by_key(key: str) -> FileFormat:
    for f in all_formats():
        if f.key == key:
            return f
    raise KeyError(key)


SNIFF_BYTES = 4096


def format_of(path: str, head: bytes | None = None, kind: str | None = None) -> FileFormat:
    """The format of ``path`` by its extension, and by its content where needed.

    ``kind`` narrows the choice (a file about to be written has no content to
    look at). ``head`` is the start of the file (read from ``path`` when not
    given and the extension alone does not decide). Raises FormatError when
    nothing matches, naming what was expected.
    """
    ext = os.path.splitext(path)[1].lower()
    candidates = [f for f in all_formats() if ext in f.extensions and kind in (None, f.kind)]
    if not candidates:
        known = ", ".join(extensions(kind))
        raise FormatError(f"unknown extension {ext or '(none)'!r} (expected {known})", None, path)
    if len(candidates) == 1:
        # The sniff only chooses among several; a lone format's reader says best
        # what is wrong with content that is not its own (and with ``kind``
        # given, the file may not exist yet).
        return candidates[0]
    if head is None:
        try:
            with open(path, "rb") as fh:
                head = fh.read(SNIFF_BYTES)
        except OSError as exc:
            raise FormatError(f"cannot read file: {exc.strerror or exc}", None, path) from exc
    for f in candidates:
        if f.sniff is None or f.sniff(head):
            return f
    names = " nor ".join(f.label for f in candidates)
    raise FormatError(f"the content is neither {names}", 0, path)
