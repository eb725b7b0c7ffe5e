"""One archive importer for every container RigPort reads members of (a GTA IMG,
an Urho3D package): choosing members (typed, or ticked in the file browser's
list, ``common.FileBrowserList``), parsing every chosen one before anything is
built (``io_formats.containers.read_members``), building models first and what
goes on them after, and one undo for the lot.

A format's archive operator mixes in :class:`ArchiveImporter`, names its
container and member kinds (``io_formats.containers.Importable``), lists its
rows (``list_rows``) and imports with :func:`import_members` and a function
that builds one member.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from ..io_formats.codec import FormatError
from ..io_formats.containers import Importable, Member, read_members
from .blender import guard
from .blender.snapshot import SceneState
from .common import FileBrowserList, Progress, bulk_work, import_failed
from .conventions import FrameRateOptions, select_imported
from .result import Result, counted, report

#: ``build(context, archive, member, so_far)``: one member into the scene, after
#: the members ``so_far`` made (their objects, armature and actions).
BuildMember = Callable[[Any, Any, Member, Result], Result]


def import_members(
    context,
    spec: Importable,
    path: str,
    names: list[str] | None,
    build: BuildMember,
    progress: Progress | None = None,
) -> Result:
    """Import the members ``names`` of the archive at ``path`` (every importable
    one when None) with ``build``, in the order of ``spec.readers``. Any failure
    takes back what the earlier members built and raises (a FormatError names
    ``ARCHIVE:member``). The summary counts the members of each kind."""
    archive, members = read_members(spec, path, names)
    done = Result()
    try:
        for i, member in enumerate(members):
            try:
                done.merge(build(context, archive, member, done))
            except FormatError as err:
                raise (err if err.path else err.with_path(member.where)) from None
            if progress is not None:
                progress.update(i + 1)
    except Exception:
        done.take_back()
        raise
    done.summary = ", ".join(
        counted(sum(m.kind == kind for m in members), label) for kind, label in spec.labels.items()
    )
    return done


class ArchiveImporter(FileBrowserList):
    """Mixin for an archive's importer: choosing the members (``members``, a
    ';'-separated list, else the ticks of the browser's list), the import with
    progress, one undo for the lot (the scene goes back as it was on any
    failure), the reports and the selection. The operator declares ``members``
    and its list (``list_attr``, items with ``name``, ``kind`` and ``select``),
    sets ``archive`` (what it imports) and ``nothing_ticked`` (the refusal when
    the list has no tick), and defines ``list_rows`` and ``import_archive``."""

    archive = Importable("", {}, str, "archive", "", {})
    nothing_ticked = "tick at least one member to import"

    def fill_item(self, item, row: dict) -> None:
        """Every key of ``row``; ticked (unless the row says) when RigPort imports it."""
        item.select = row["kind"] in self.archive.readers
        FileBrowserList.fill_item(self, item, row)

    def import_archive(self, context, names: list[str] | None, progress=None) -> Result:
        return import_members(
            context, self.archive, self.filepath, names, self.build_member, progress
        )

    def execute(self, context):
        try:
            names = self.chosen_names(
                self.members, self.nothing_ticked, lambda i: i.kind in self.archive.readers
            )
        except FormatError as err:
            self.report({"ERROR"}, str(err))
            return {"CANCELLED"}
        total = len(names) if names is not None else len(getattr(self, self.list_attr)) or 1
        state = SceneState(context)
        guard.take_notes()
        try:
            with Progress(context, total) as progress, bulk_work():
                result = self.import_archive(context, names, progress)
        except Exception as err:  # whatever it was, the scene goes back as it was
            return import_failed(self, state, err, self.filepath)
        notes = guard.take_notes()
        if notes:
            result.warn(f"{os.path.basename(self.filepath)}: {guard.summary(notes)}")
        report(self, result, name=guard.blender_name)
        if isinstance(self, FrameRateOptions):
            self.apply_scene_timing(context, result.actions)
        select_imported(context, state.added_objects())
        return {"FINISHED"}


def batch_import(import_archive: Callable[[Any, str, dict], Result]):
    """A ``BatchFormat.import_file`` for an archive: ``import_archive(context,
    path, options)`` imports every member; the run's state takes what it made."""

    def import_file(context, path: str, state: dict, options: dict) -> Result:
        result = import_archive(context, path, options)
        state.setdefault("objects", []).extend(result.objects)
        if result.armature is not None:
            state["armature"] = result.armature
        if result.actions:
            state["action"] = result.actions[-1]
        return result

    return import_file
