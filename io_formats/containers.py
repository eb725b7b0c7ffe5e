"""Archives whose members RigPort reads in place: ``ARCHIVE.ext:member`` paths.

A container opens an archive from its path (some need a file beside it: a GTA
III ``.img`` has its ``.dir``), lists and reads its members, replaces or adds
one and saves the archive atomically (and :func:`read_members` parses the members
an import chose). A format package declares its own in
``formats.py`` as ``CONTAINERS``; a registry format of kind ``"package"`` whose
parsed object has ``names()``, ``find(name).data`` and ``put(name, data)`` is
a container without declaring one. Nothing here imports bpy.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from . import registry
from .codec import FormatError, read_file, write_atomic


@dataclass(frozen=True)
class Container:
    key: str
    extensions: tuple[str, ...]
    open: Callable[[str], Any]  # path -> archive (FormatError naming the path)
    names: Callable[[Any], list[str]]
    read: Callable[[Any, str], bytes | None]  # None: no such member
    put: Callable[[Any, str, bytes], None]
    save: Callable[[str, Any], None]  # atomic


def _from_format(fmt: registry.FileFormat) -> Container:
    def open_(path: str):
        data = read_file(path, fmt.label)
        try:
            return fmt.read(data)
        except FormatError as err:
            raise err.with_path(path) from None

    def read(archive, name: str) -> bytes | None:
        entry = archive.find(name)
        return None if entry is None else entry.data

    def save(path: str, archive) -> None:
        write_atomic(path, lambda: fmt.write(archive), fmt.label)

    return Container(
        fmt.key,
        fmt.extensions,
        open_,
        lambda a: list(a.names()),
        read,
        lambda a, name, data: a.put(name, data) and None,
        save,
    )


_CACHE: list[tuple[Container, ...]] = []


def all_containers() -> tuple[Container, ...]:
    if not _CACHE:
        declared: list[Container] = []
        base = __name__.rsplit(".", 1)[0]
        packages = sorted({f.key.split(".", 1)[0] for f in registry.all_formats()})
        for name in packages:
            module = importlib.import_module(f"{base}.{name}.formats")
            declared.extend(getattr(module, "CONTAINERS", ()))
        keys = {c.key for c in declared}
        derived = [
            _from_format(f)
            for f in registry.all_formats()
            if f.kind == "package" and f.key not in keys
        ]
        _CACHE.append(tuple(declared + derived))
    return _CACHE[0]


def container_of(path: str) -> Container | None:
    ext = os.path.splitext(path)[1].lower()
    return next((c for c in all_containers() if ext in c.extensions), None)


def extensions() -> list[str]:
    return sorted({e for c in all_containers() for e in c.extensions})


def split_member(path: str) -> tuple[str, str | None]:
    """``("a/b.img", "x.dff")`` for ``a/b.img:x.dff`` (any container extension,
    without case); ``(path, None)`` for a plain path."""
    low = path.lower()
    best = -1
    for ext in extensions():
        at = low.find(ext + ":")
        if at >= 0 and (best < 0 or at < best):
            best, cut = at, at + len(ext)
    if best < 0:
        return path, None
    return path[:cut], path[cut + 1 :]


def container(key: str) -> Container:
    """The container registered under ``key`` (``"renderware.img"``, ``"urho3d.pak"``)."""
    found = next((c for c in all_containers() if c.key == key), None)
    if found is None:
        raise KeyError(f"no container {key!r}")
    return found


@dataclass(frozen=True)
class Member:
    """One member of an archive chosen for import, parsed."""

    name: str
    where: str  # "ARCHIVE:member", what messages about it name
    kind: str
    data: bytes
    parsed: Any


@dataclass(frozen=True)
class Importable:
    """What an archive importer takes from a container: ``readers`` parse each
    kind it imports (in the order they are built: models before what goes on
    them), ``kind_of`` tells a member's kind by its name; ``noun`` ("archive",
    "package") and ``what`` ("a model or an animation") word its refusals,
    ``labels`` (kind: noun) its summary ("2 models, 1 animation")."""

    container: str
    readers: dict[str, Callable[[bytes], Any]]
    kind_of: Callable[[str], str]
    noun: str
    what: str
    labels: dict[str, str]


def read_members(
    spec: Importable, path: str, names: list[str] | None = None
) -> tuple[Any, list[Member]]:
    """Open the archive at ``path`` and parse the members ``names`` (every
    importable one when None), all before anything is built, sorted in the
    order of ``spec.readers``. FormatError names ``ARCHIVE:member`` for a damaged
    member, and refuses a name the archive lacks, a kind RigPort does not
    import, and an archive with nothing to import."""
    box = container(spec.container)
    archive = box.open(path)
    if names is None:
        names = [n for n in box.names(archive) if spec.kind_of(n) in spec.readers]
    members = []
    for name in names:
        data = box.read(archive, name)
        if data is None:
            raise FormatError(f"the {spec.noun} has no file {name!r}", None, path)
        kind = spec.kind_of(name)
        if kind not in spec.readers:
            raise FormatError(f"{name} is not {spec.what}", None, path)
        where = f"{path}:{name}"
        try:
            members.append(Member(name, where, kind, data, spec.readers[kind](data)))
        except FormatError as err:
            raise err.with_path(where) from None
    if not members:
        raise FormatError(
            f"nothing in the {spec.noun} is {spec.what}: nothing to import", None, path
        )
    order = list(spec.readers)
    return archive, sorted(members, key=lambda m: order.index(m.kind))
