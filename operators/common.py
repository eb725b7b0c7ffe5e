"""Shared operator plumbing: file lists, errors, progress, batch entries."""

from __future__ import annotations

import gc
import os
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from typing import Any, TypeVar

import bpy
from bpy.props import CollectionProperty, StringProperty
from bpy_extras.io_utils import ExportHelper, ImportHelper, poll_file_object_drop
from numpy._core import multiarray as _multiarray

from ..io_formats.codec import FormatError
from .blender import guard
from .blender.actions import keep_all
from .blender.snapshot import SceneState
from .conventions import select_imported
from .result import Result, counted, report

T = TypeVar("T")


def selected_paths(op) -> list[str]:
    """Every file the operator was given (multi-file import) or its filepath."""
    files = getattr(op, "files", None)
    directory = getattr(op, "directory", "")
    if files and directory and any(f.name for f in files):
        return [os.path.join(directory, f.name) for f in files if f.name]
    return [op.filepath]


@contextmanager
def in_file(path: str) -> Iterator[None]:
    """A FormatError raised inside names ``path`` (one naming a file already keeps
    it): the codecs and converters an importer calls do not know the file."""
    try:
        yield
    except FormatError as err:
        raise (err if err.path else err.with_path(path)) from None


def read_bytes(path: str) -> bytes:
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError as exc:
        raise FormatError(f"cannot read file: {exc.strerror or exc}", None, path) from exc


def parse_file(path: str, parse: Callable[[bytes], T]) -> T:
    """``parse`` (a codec's ``read``) of the bytes in ``path``; a FormatError names the file."""
    data = read_bytes(path)
    with in_file(path):
        return parse(data)


class Progress:
    """window_manager progress when there is a window, silent otherwise."""

    def __init__(self, context, total: int):
        self.wm = context.window_manager if context.window else None
        self.total = max(total, 1)
        if self.wm:
            self.wm.progress_begin(0, self.total)

    def update(self, value: float) -> None:
        if self.wm:
            self.wm.progress_update(value)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        if self.wm:
            self.wm.progress_end()


def failure_message(err: Exception, what: str) -> str:
    """A sentence for an import that failed: a FormatError says it itself; anything
    else is a RigPort bug, written to the console with its traceback."""
    if isinstance(err, FormatError):
        return str(err if err.path else err.with_path(what))
    traceback.print_exception(err)
    return (
        f"{what}: RigPort could not import this file ({type(err).__name__}: {err}); "
        "nothing was imported. This is a bug in RigPort: please report it with the "
        "file and the details printed in the system console"
    )


def import_failed(op, state: SceneState, err: Exception, what: str) -> set[str]:
    """The one way a failed import ends: the scene back as ``state`` saw it (every
    file of the call, NLA tracks and selection included), the guard's notes of
    the failed build dropped, and the error reported on ``op``."""
    message = failure_message(err, what)
    state.restore()
    guard.take_notes()
    op.report({"ERROR"}, guard.blender_name(message))
    return {"CANCELLED"}


Undo = Callable[[], None]

#: ``one(context, path, progress)`` of :meth:`ImportFiles.import_files`.
ImportOne = Callable[[Any, str, Callable[[float], None]], Result]


def actions_of(result: Result) -> list:
    """The actions an import made: what the scene's timing follows after an
    animation import (``ImportFiles.import_files``' ``timed``)."""
    return result.actions


@cache
def file_type(extension: str) -> type:
    """Mixin (first after ``bpy.types.Operator``) for an importer or exporter of
    ``extension`` files: ``filename_ext`` and the file browser's hidden filter."""
    return type(
        f"FileType_{extension.lstrip('.')}",
        (),
        {
            "filename_ext": extension,
            "__annotations__": {
                "filter_glob": StringProperty(default=f"*{extension}", options={"HIDDEN"})
            },
        },
    )


class ImportFiles(ImportHelper):
    """Mixin for import operators: one or several files (multi-select, drag and
    drop), imported all or nothing; undoable, with presets (every RigPort
    importer's ``bl_options``)."""

    bl_options = {"REGISTER", "UNDO", "PRESET"}
    files: CollectionProperty(
        type=bpy.types.OperatorFileListElement, options={"HIDDEN", "SKIP_SAVE"}
    )
    directory: StringProperty(subtype="DIR_PATH", options={"HIDDEN", "SKIP_SAVE"})

    def invoke(self, context, event):
        """A dropped file (its path already set) gets the options popup, as glTF's
        and FBX's importers do; File > Import opens the file browser."""
        return self.invoke_popup(context)

    def import_files(
        self,
        context,
        one: ImportOne,
        paths: list[str] | None = None,
        timed: Callable[[Result], list] | None = None,
        keep: bool = False,
    ) -> set[str]:
        """Run ``one(context, path, progress)`` for every file (``paths`` or the
        selection). It returns a :class:`Result`, whose messages are reported after
        the file's name. Any
        failure leaves the scene as it was before the first file
        (:func:`import_failed`); what the guard left out of Blender is one
        warning per file. ``timed``: what of each result the scene's timing
        follows once every file is in (anything with a ``frame_range``, as
        :func:`actions_of`; ``FrameRateOptions.apply_scene_timing``). ``keep``:
        ``one`` left its actions unstashed; they are stashed on each result's
        armature once every file is in (``actions.keep_all``: one stash per
        armature, not per file)."""
        with bulk_work():
            return self._import_files(context, one, paths, timed, keep)

    def _import_files(self, context, one, paths, timed, keep) -> set[str]:
        paths = paths or selected_paths(self)
        made: list = []
        animated: list[tuple] = []
        state = SceneState(context)
        guard.take_notes()
        with Progress(context, len(paths)) as progress:
            for i, path in enumerate(paths):
                name = guard.blender_name(os.path.basename(path))
                try:
                    done = one(context, path, lambda f, i=i: progress.update(i + f))
                except Exception as err:
                    return import_failed(self, state, err, path)
                if timed is not None:
                    made.extend(timed(done))
                if keep and done.armature is not None:
                    animated.append((done.armature, done.actions))
                notes = guard.take_notes()
                if notes:
                    done.warn(guard.summary(notes))
                report(self, done, f"{name}: ", guard.blender_name)
                progress.update(i + 1)
        try:
            keep_all(animated)
        except Exception as err:
            return import_failed(self, state, err, paths[-1])
        select_imported(context, state.added_objects())
        if timed is not None:
            self.apply_scene_timing(context, made)
        return {"FINISHED"}


class FileBrowserList:
    """Mixin for importers whose file browser lists what a file holds (package
    members, archive members, animations), refreshed when the file changes.

    The operator declares a CollectionProperty named by ``list_attr`` (items
    with ``select``), and ``list_rows(path)`` returning one dict per row;
    ``fill_item(item, row)`` copies a row into an item (every key by default).
    ``listed`` is the file the list shows, ``list_error`` why it shows none.
    An importer: undoable, with presets (as :class:`ImportFiles`)."""

    bl_options = {"REGISTER", "UNDO", "PRESET"}
    listed: StringProperty(options={"HIDDEN", "SKIP_SAVE"})
    list_error: StringProperty(options={"HIDDEN", "SKIP_SAVE"})
    list_attr = ""

    def list_rows(self, path: str) -> list[dict]:
        raise NotImplementedError

    def fill_item(self, item, row: dict) -> None:
        for key, value in row.items():
            setattr(item, key, value)

    def invoke(self, context, event):
        """A dropped file (its path already set): list what it holds, then the
        options popup, which shows the list; File > Import opens the file browser.
        ``ImportHelper.invoke_popup`` needs ``files``, which an importer of one
        archive does not have: its dialog is opened here the same way."""
        if not self.properties.is_property_set("filepath"):
            context.window_manager.fileselect_add(self)
            return {"RUNNING_MODAL"}
        self._list()
        if hasattr(self, "files"):
            return ImportHelper.invoke_popup(self, context)
        return context.window_manager.invoke_props_dialog(
            self, confirm_text=self.bl_label, title=self.filepath, translate=False
        )

    def _list(self) -> None:
        """Fill the browser list for the current file (or say why it cannot be read)."""
        items = getattr(self, self.list_attr)
        items.clear()
        self.listed = self.filepath
        self.list_error = ""
        if not os.path.isfile(self.filepath):
            return
        try:
            rows = self.list_rows(self.filepath)
        except FormatError as err:
            self.list_error = err.message
            return
        for row in rows:
            self.fill_item(items.add(), row)

    def check(self, context) -> bool:
        if self.listed != self.filepath:
            self._list()
            return True
        return False

    def chosen_names(
        self, typed: str, nothing: str, keep: Callable[[Any], bool] | None = None
    ) -> list[str] | None:
        """What to import: the names of ``typed`` (an option's ';'-separated
        list), else those ticked in the list of the current file (of the rows
        ``keep`` accepts), else None (everything). FormatError ``nothing`` when
        the list has rows and none is ticked."""
        if typed:
            return [n.strip() for n in typed.split(";") if n.strip()]
        items = getattr(self, self.list_attr)
        if self.listed != self.filepath or not len(items):
            return None
        names = [i.name for i in items if i.select and (keep is None or keep(i))]
        if not names:
            raise FormatError(nothing)
        return names

    def draw_list_state(self, box, nothing_selected: str, empty: str) -> bool:
        """Draw why there is no list (an error, no file, nothing in it); True when
        there is a list to draw."""
        if self.list_error:
            box.label(text=self.list_error, icon="ERROR")
            return False
        if not getattr(self, self.list_attr):
            box.label(text=nothing_selected if not self.filepath else empty)
            return False
        return True


class ExportFile(ExportHelper):
    """Mixin for export operators: the file browser, and presets (every RigPort
    exporter's ``bl_options``; an export changes nothing to undo)."""

    bl_options = {"REGISTER", "PRESET"}


def export_failure_message(err: Exception, path: str) -> str:
    """A sentence for an export that failed: a FormatError says it itself; anything
    else is a RigPort bug, written to the console with its traceback. Exports
    write atomically, so the file at ``path`` is as it was either way."""
    if isinstance(err, FormatError):
        return str(err)
    traceback.print_exception(err)
    return (
        f"{path}: RigPort could not write this file ({type(err).__name__}: {err}); "
        "the file on disk was left as it was. This is a bug in RigPort: please report "
        "it with the scene and the details printed in the system console"
    )


@contextmanager
def no_collector_pauses() -> Iterator[None]:
    """Python's cyclic garbage collector held off for the block (as it was after).

    An import or export makes many small Python objects, and every few hundred
    the collector may stop to walk all objects of its generation; in Blender
    (some 85,000 of them at start-up) one such pass took 3.5 ms of a 9 ms
    animation import. Nothing an import or export makes needs collecting before
    it ends; the collector runs again after, as usual."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


@contextmanager
def no_huge_page_advice() -> Iterator[None]:
    """numpy's advice that its large arrays be backed by huge pages held off for
    the block (as it was after).

    On Linux numpy advises huge pages (``madvise``) for every array of 4 MB and
    more. Where the kernel serves that advice by compacting memory at the first
    touch (transparent huge pages set to "madvise", the default of many
    distributions, once free memory is fragmented) that touch can stall for
    milliseconds, and the advice stays on the memory after numpy frees it (numpy
    issue 31590). An import or export touches each of its large arrays once or
    twice, where huge pages save little. Measured on the bench machine (a
    million vertices, a fresh process each, four or five runs): the Urho3D
    import took 2.14 to 2.43 s without the advice against 1.88 to 3.04 s with it
    on bpy 5.0, 2.15 to 2.26 against 2.00 to 2.65 s on 4.5, 2.26 to 3.09 against
    2.45 to 3.33 s on 5.2. Other platforms have no such advice: nothing changes."""
    setter = getattr(_multiarray, "_set_madvise_hugepage", None)
    if setter is None:
        yield
        return
    was = setter(False)
    try:
        yield
    finally:
        setter(was)


@contextmanager
def bulk_work() -> Iterator[None]:
    """What an import or export runs inside: :func:`no_collector_pauses` and
    :func:`no_huge_page_advice`."""
    with no_collector_pauses(), no_huge_page_advice():
        yield


def report_export(op, export: Callable[[], Result]) -> set[str]:
    """Run an operator's export: any failure is reported as one error sentence
    naming the file (CANCELLED), the result's messages as reports."""
    try:
        with bulk_work():
            done = export()
    except Exception as err:
        op.report({"ERROR"}, guard.blender_name(export_failure_message(err, op.filepath)))
        return {"CANCELLED"}
    report(op, done, name=guard.blender_name)
    return {"FINISHED"}


def current_action(obj) -> bpy.types.Action | None:
    """The action ``obj`` plays, if any."""
    return obj.animation_data.action if obj.animation_data is not None else None


def _poll_drop(cls, context) -> bool:
    return poll_file_object_drop(context)


@dataclass(frozen=True)
class FileKind:
    """One kind of file as Blender offers it: File > Import and Export entries
    ("<label> (<extension>)", none for an operator left "" or with ``menu`` off)
    and, when ``handler`` names one, a FileHandler for drag and drop into the 3D
    viewport (Blender 4.2+) labelled ``handler_label`` (default: ``label``)."""

    label: str
    extension: str
    import_op: str = ""
    export_op: str = ""
    handler: str = ""
    handler_label: str = ""
    menu: bool = True

    def menu_label(self) -> str:
        return f"{self.label} ({self.extension})"


def file_handlers(kinds: tuple[FileKind, ...]) -> tuple[type[bpy.types.FileHandler], ...]:
    """The FileHandler classes of ``kinds`` (those naming a ``handler``), for ``CLASSES``."""
    return tuple(
        type(
            f"RIGPORT_FH_{kind.handler}",
            (bpy.types.FileHandler,),
            {
                "bl_idname": f"RIGPORT_FH_{kind.handler}",
                "bl_label": kind.handler_label or kind.label,
                "bl_import_operator": kind.import_op,
                "bl_export_operator": kind.export_op,
                "bl_file_extensions": kind.extension,
                "poll_drop": classmethod(_poll_drop),
            },
        )
        for kind in kinds
        if kind.handler
    )


def menus(kinds: tuple[FileKind, ...]) -> tuple[tuple, tuple]:
    """``MENU_IMPORT`` and ``MENU_EXPORT`` of ``kinds``: (operator idname, label) pairs."""
    shown = [kind for kind in kinds if kind.menu]
    return (
        tuple((k.import_op, k.menu_label()) for k in shown if k.import_op),
        tuple((k.export_op, k.menu_label()) for k in shown if k.export_op),
    )


def batch_add_built(state: dict, built: Result) -> str:
    """Record a model import in batch ``state``; its summary."""
    if built.armature is not None:
        state["armature"] = built.armature
    state.setdefault("objects", []).extend(built.objects)
    arm = f", armature {built.armature.name}" if built.armature is not None else ""
    return f"{counted(len(built.objects), 'object')}{arm}"


def batch_meshes(state: dict) -> list:
    """The mesh objects a batch run imported so far."""
    return [o for o in state.get("objects", []) if o.type == "MESH"]


def batch_armature(state: dict, what: str) -> bpy.types.Object:
    """The armature a batch run imported, for an export that needs one (``what``,
    for example "an Urho3D animation"); FormatError when the input had none."""
    armature = state.get("armature")
    if armature is None:
        raise FormatError(f"nothing to export: {what} needs an armature, and the input has none")
    return armature


@dataclass(frozen=True)
class BatchFormat:
    """How ``batch.py`` imports and exports one registry format in Blender.

    ``import_file(context, path, state, options) -> Result`` builds the file
    into the current scene; batch prints the result's ``line()`` (its summary
    and warnings). ``state`` is shared by the files of one run: set
    ``state["armature"]`` (the armature later animations go onto), extend
    ``state["objects"]`` and set ``state["action"]`` for an animation.
    ``export_file(context, path, state, options) -> Result`` writes what
    ``state`` holds. ``options`` is the command line as a dict (``all_lods``,
    ``model`` ...). Failures raise FormatError.
    """

    key: str
    import_file: Callable[[Any, str, dict, dict], Result]
    export_file: Callable[[Any, str, dict, dict], Result] | None = None
