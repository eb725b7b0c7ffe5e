"""Files inside containers: ``PACKAGE.pak:path/inside.mdl``, ``gta3.img:ped.dff``.

The command line's one place for member paths. The containers themselves (Urho3D
packages, GTA IMG archives, any format package's ``CONTAINERS``) come from the
registry in ``io_formats/containers.py``: nothing here names one. A member path
is the container's path, a colon and the member's name; it may appear anywhere
the command line expects a file.
"""

from __future__ import annotations

import os

from ..io_formats import containers, registry
from ..io_formats.codec import FormatError
from ..io_formats.codec.files import read_file
from . import UsageError


def split_member(path: str) -> tuple[str, str | None]:
    """``("a/b.pak", "Models/x.mdl")`` for ``a/b.pak:Models/x.mdl``; ``(path, None)``
    for a plain path."""
    return containers.split_member(path)


def file_name(path: str) -> str:
    """The name that decides a path's format: the member's name inside a container."""
    container, member = split_member(path)
    return member if member is not None else container


def ext(path: str) -> str:
    """The lower-case extension of a path (of the member, for a member path)."""
    return os.path.splitext(file_name(path))[1].lower()


def is_container(path: str) -> bool:
    return split_member(path)[1] is None and containers.container_of(path) is not None


_CACHE: dict[tuple, tuple] = {}


def read_container(path: str):
    """(container, opened archive) of a container file. The last one opened is kept
    while the file is unchanged, so checking its files one by one opens it once."""
    container = containers.container_of(path)
    if container is None:
        raise UsageError(f"{path}: not an archive ({', '.join(containers.extensions())})")
    try:
        st = os.stat(path)
        key = (os.path.abspath(path), st.st_mtime_ns, st.st_size)
    except OSError:
        key = None
    if key is not None and key in _CACHE:
        return _CACHE[key]
    result = container, container.open(path)
    _CACHE.clear()
    if key is not None:
        _CACHE[key] = result
    return result


def read_input(path: str) -> bytes:
    """The bytes of a file, or of a file inside a container."""
    where, member = split_member(path)
    if member is None:
        return read_file(path)
    container, archive = read_container(where)
    data = container.read(archive, member)
    if data is None:
        raise FormatError(f"the archive has no file {member!r}", None, where)
    return data


def write_member(path: str, data: bytes) -> None:
    """Put ``data`` into the existing container as the member ``path`` names; the
    container is replaced atomically, once it is complete."""
    where, member = split_member(path)
    container, archive = read_container(where)
    _CACHE.clear()  # the archive changes below
    container.put(archive, member, data)
    container.save(where, archive)


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
    empty list when it does not open: checking the container itself says why)."""
    try:
        container, archive = read_container(path)
    except (FormatError, UsageError):
        return []
    return [
        f"{path}:{name}"
        for name in container.names(archive)
        if readable(name, (container.read(archive, name) or b"")[: registry.SNIFF_BYTES]) is None
    ]
