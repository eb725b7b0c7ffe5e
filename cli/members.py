"""Files inside containers: ``PACKAGE.pak:path/inside.mdl``, the one place that knows.

A container is any registry format of kind ``"package"``: its ``read`` gives an
object with ``names()``, ``find(name)`` (an entry with ``.data``, or None) and
``put(name, data)``, and its ``write`` turns that object back into bytes. A
member path is the container's path, a colon and the member's name; it may
appear anywhere the command line expects a file. A second container kind plugs
in by registering such a format: nothing here names one.
"""

from __future__ import annotations

import os

from ..io_formats import registry
from ..io_formats.codec import FormatError
from ..io_formats.codec.files import read_file, write_atomic
from . import UsageError


def _container_exts() -> list[str]:
    return registry.extensions("package")


def split_member(path: str) -> tuple[str, str | None]:
    """``("a/b.pak", "Models/x.mdl")`` for ``a/b.pak:Models/x.mdl``; ``(path, None)``
    for a plain path. The first ``<container extension>:`` in the path splits it."""
    low = path.lower()
    best: tuple[int, str] | None = None
    for ext in _container_exts():
        at = low.find(ext + ":")
        if at >= 0 and (best is None or at < best[0]):
            best = at, ext
    if best is None:
        return path, None
    at, ext = best
    return path[: at + len(ext)], path[at + len(ext) + 1 :]


def file_name(path: str) -> str:
    """The name that decides a path's format: the member's name inside a container."""
    container, member = split_member(path)
    return member if member is not None else container


def ext(path: str) -> str:
    """The lower-case extension of a path (of the member, for a member path)."""
    return os.path.splitext(file_name(path))[1].lower()


def is_container(path: str) -> bool:
    return split_member(path)[1] is None and ext(path) in _container_exts()


_CACHE: dict[tuple, tuple] = {}


def read_container(path: str):
    """(format, parsed container) of a container file. The last one read is kept
    while the file is unchanged, so checking its files one by one parses it once."""
    try:
        st = os.stat(path)
        key = (os.path.abspath(path), st.st_mtime_ns, st.st_size)
    except OSError:
        key = None
    if key is not None and key in _CACHE:
        return _CACHE[key]
    data = read_file(path)
    fmt = registry.format_of(path, data[: registry.SNIFF_BYTES])
    if fmt.kind != "package":
        raise UsageError(f"{path}: a {fmt.label} file is not a package")
    try:
        result = fmt, fmt.read(data)
    except FormatError as err:
        raise err.with_path(path) from None
    _CACHE.clear()
    if key is not None:
        _CACHE[key] = result
    return result


def read_input(path: str) -> bytes:
    """The bytes of a file, or of a file inside a container."""
    container, member = split_member(path)
    if member is None:
        return read_file(path)
    _fmt, pkg = read_container(container)
    entry = pkg.find(member)
    if entry is None:
        raise FormatError(f"the package has no file {member!r}", None, container)
    return entry.data


def write_member(path: str, data: bytes) -> None:
    """Put ``data`` into the existing container as the member ``path`` names; the
    container is replaced atomically, once it is complete."""
    container, member = split_member(path)
    fmt, pkg = read_container(container)
    _CACHE.clear()  # pkg changes below
    pkg.put(member, data)
    write_atomic(container, lambda: fmt.write(pkg), "package")


def readable(name: str, head: bytes) -> str | None:
    """Why RigPort does not read a file called ``name`` starting with ``head``, or
    None when it does: a known extension, and content its format's sniff accepts
    (a ``.txt`` that is no BonesPro export is not read)."""
    if os.path.splitext(name)[1].lower() not in set(registry.extensions()):
        return "not a file RigPort reads"
    try:
        fmt = registry.format_of(name, head)
    except FormatError as err:
        return err.message
    if fmt.sniff is not None and not fmt.sniff(head):
        return f"not a {fmt.label} file"
    return None


def members(path: str) -> list[str]:
    """``path:name`` for each file in the container ``path`` that RigPort reads (an
    empty list when it does not parse: checking the container itself says why)."""
    try:
        _fmt, pkg = read_container(path)
    except (FormatError, UsageError):
        return []
    return [
        f"{path}:{name}"
        for name in pkg.names()
        if readable(name, pkg.find(name).data[: registry.SNIFF_BYTES]) is None
    ]
