"""The file list of a run: named files, walked folders, opened containers, shards.

Every file becomes a :class:`Task`. Files a folder walk finds that RigPort does
not read by content (a ``.txt`` that is no BonesPro export) become tasks that
are skipped with the reason, so that a report accounts for every file with a
known extension. The list is sorted the same way on every machine, so that
``--shard K/N`` gives the same slices on every node of a farm.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass

from ..io_formats import registry
from . import UsageError, members


@dataclass
class Task:
    """One file of a run. ``root`` is the folder argument a walk found it under
    (None for a file named on the command line); ``skip`` says why it is not
    processed; ``output`` is where a converting command writes it; ``model`` is
    the skeleton of an animation (``--model``, or the model pairing chose)."""

    item: str
    root: str | None = None
    output: str | None = None
    skip: str | None = None
    model: str | None = None

    @property
    def named(self) -> bool:
        return self.root is None

    def to_json(self) -> dict:
        return {
            "item": self.item,
            "root": self.root,
            "output": self.output,
            "skip": self.skip,
            "model": self.model,
        }


def _needs_sniff(ext: str) -> bool:
    formats = [f for f in registry.all_formats() if ext in f.extensions]
    return len(formats) > 1 or any(f.sniff is not None for f in formats)


def _head(path: str) -> bytes | None:
    try:
        with open(path, "rb") as fh:
            return fh.read(registry.SNIFF_BYTES)
    except OSError:
        return None  # the command reports the file it cannot read


def walk(folder: str, recursive: bool, extra: list[str] | None = None) -> list[Task]:
    """The files under ``folder`` with a known extension (or one of ``extra``: the
    glTF, FBX and USD a conversion takes), sorted by their path relative to it
    (``/``-separated). Hidden files and folders are left out."""
    known = set(registry.extensions()) | set(extra or [])
    found: list[str] = []
    for here, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if not d.startswith(".")] if recursive else []
        rel = os.path.relpath(here, folder)
        for name in files:
            if name.startswith(".") or os.path.splitext(name)[1].lower() not in known:
                continue
            found.append(name if rel == "." else os.path.join(rel, name))
    found.sort(key=lambda p: p.replace(os.sep, "/"))
    tasks = []
    for rel in found:
        path = os.path.join(folder, rel)
        task = Task(path, root=folder)
        if _needs_sniff(os.path.splitext(rel)[1].lower()):
            head = _head(path)
            if head is not None:
                task.skip = members.readable(rel, head)
        tasks.append(task)
    return tasks


def expand(
    paths: list[str],
    recursive: bool = False,
    open_containers: bool = False,
    extra: list[str] | None = None,
) -> list[Task]:
    """Tasks for the command line's paths, in order: a folder is walked (into its
    subfolders with ``recursive``); with ``open_containers`` a container is
    followed by the files in it that RigPort reads. A named file with an unknown
    extension is a usage error; ``extra`` extensions (Blender's glTF, FBX, USD)
    are accepted for named files."""
    known = set(registry.extensions()) | set(extra or [])
    tasks: list[Task] = []
    for path in paths:
        if members.split_member(path)[1] is None and os.path.isdir(path):
            found = walk(path, recursive, extra)
        else:
            if members.ext(path) not in known:
                raise UsageError(
                    f"{path}: unknown extension {members.ext(path) or '(none)'!r} "
                    f"(expected {', '.join(sorted(known))}, or a folder)"
                )
            found = [Task(path)]
        for task in found:
            tasks.append(task)
            if open_containers and task.skip is None and members.is_container(task.item):
                tasks += [Task(m, root=task.root) for m in members.members(task.item)]
    return tasks


def parse_shard(text: str) -> tuple[int, int]:
    """``"2/8"`` -> ``(2, 8)``: the second of eight slices (1 <= K <= N)."""
    try:
        k, n = (int(x) for x in text.split("/"))
    except ValueError:
        raise UsageError(f"--shard {text}: expected K/N, e.g. 1/4") from None
    if not 1 <= k <= n:
        raise UsageError(f"--shard {text}: K must be between 1 and N")
    return k, n


def shard(tasks: list[Task], k: int, n: int) -> list[Task]:
    """The K-th of N slices: every N-th task from the K-th on. The slices are
    disjoint, cover the list, and differ in size by one at most."""
    return tasks[k - 1 :: n]


def relative_name(task: Task, anchor: str | None = None) -> str:
    """The path a converting command recreates under its output folder: relative
    to the walked folder (to ``anchor``, the folder the walked folders share, when
    there are several, so that ``lib/a/x.mdl`` and ``lib/b/x.mdl`` stay apart as
    ``a/x.mdl`` and ``b/x.mdl``), the member's path for a file in a container,
    else the file's own name."""
    container, member = members.split_member(task.item)
    if member is not None:
        return member.replace("\\", "/")
    if task.root is not None:
        return os.path.relpath(task.item, anchor or task.root)
    return os.path.basename(task.item)


def common_anchor(tasks: list[Task]) -> str | None:
    """The folder several walked folders share (None with one or none): outputs keep
    each walked folder's own name below OUT."""
    roots = sorted({os.path.abspath(t.root) for t in tasks if t.root is not None})
    if len(roots) < 2:
        return None
    return os.path.commonpath(roots)


def _probe(path: str, folder: str) -> None:
    """Usage error naming ``path`` unless a file can be created in ``folder`` (a
    real try: permission bits do not tell for root, read-only mounts, quotas)."""
    try:
        fd, tmp = tempfile.mkstemp(prefix=".rigport-probe-", dir=folder)
    except OSError as exc:
        raise UsageError(
            f"{path}: cannot write in the output folder {folder}: {exc.strerror or exc}"
        ) from None
    os.close(fd)
    os.unlink(tmp)


def check_output_file(path: str) -> None:
    """Usage error naming ``path`` when it cannot be written: its folder is
    missing or not writable, it is a folder, or (a member) its container is
    missing."""
    container, member = members.split_member(path)
    if member is not None:
        if not os.path.isfile(container):
            raise UsageError(f"{path}: the package {container} does not exist")
        path = container
    if os.path.isdir(path):
        raise UsageError(f"{path}: is a folder, not a file")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise UsageError(f"{path}: the output folder {folder} does not exist")
    _probe(path, folder)


def check_output_folder(folder: str) -> None:
    """Usage error naming ``folder`` when it is missing, not a folder or not writable."""
    if not os.path.exists(folder):
        raise UsageError(f"{folder}: the output folder does not exist")
    if not os.path.isdir(folder):
        raise UsageError(f"{folder}: the output is a file, but several inputs need a folder")
    _probe(folder, folder)
