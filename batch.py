"""RigPort on the command line.

    blender -b --python-exit-code 1 --python batch.py -- COMMAND ARGS...
    python batch.py COMMAND ARGS...          (with the bpy module installed)

Commands (FILE may be a folder: its files with a known extension, sorted):
    check FILE...                  codec only: parse, re-encode, compare
                                   (a package: itself, then every file in it)
    inspect FILE...                codec only: JSON summary on stdout
    roundtrip IN... OUT [--model M]            import, export in the same format
    convert IN... OUT [--to EXT...] [--model M]  import, export as OUT's (or --to's) format
                                   with .glb .gltf .fbx .usd .usda .usdc on a side:
                                   one scene, through Blender's own add-ons
                                   [--axis-forward A] [--axis-up A] [--scale S]
                                   [--action NAME] (cli/bridges.py); folders
                                   with --to .glb: one file per model
    Without --model, each animation of a folder goes with the model of its
    folder whose bones its tracks name (cli/pairing.py; the report's "pairing").
    import FILE... [--save OUT.blend] [--all-lods]   one scene: models, then animations
    pack DIR OUT.pak [--lz4] [--rbfx]          codec only: a package of DIR's files

With several inputs (or a folder) OUT is an existing folder, where each output
keeps the input's path relative to its folder. A file inside a package is
named ``PACKAGE.pak:path/inside.mdl`` or ``gta3.img:ped.dff`` anywhere a file
is expected; writing to one replaces (or adds) that file in the existing
archive (atomically). Archive kinds come from ``io_formats/containers.py``.

Options (before or after the command):
    --recursive        walk folders into their subfolders
    --keep-going       go on after a failed file
    --jobs N           check, inspect, roundtrip and convert run N worker
                       processes (default: the number of cores; 1: this one)
    --shard K/N        only the K-th of N slices of the file list
    --report R.json    per file: status, seconds, detail, warnings, counts;
                       written as the run goes (R.json.journal, see cli/journal.py)
    --resume R.json    check, inspect, roundtrip, convert: skip the files R.json
                       records as done whose input and output are unchanged
                       (the report is R.json again unless --report says otherwise)

Exit status: 0 every file ok (or skipped), 1 a file failed, 2 usage (also an
output that cannot be written, found before any work), 128 + the signal's
number when SIGTERM or SIGINT stopped the run (the report is still written).
``check``, ``inspect`` and ``pack`` never import bpy.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import importlib.util
import json
import os
import runpy
import signal
import sys
import tempfile
import threading
import time
import types
from pathlib import Path

HERE = Path(__file__).resolve().parent
MIN_BLENDER = (4, 2, 0)  # blender_manifest.toml's blender_version_min
CODEC_COMMANDS = ("check", "inspect", "pack")
PER_FILE_COMMANDS = ("check", "inspect", "roundtrip", "convert")  # these run in parallel
SIGPIPE_STATUS = 141  # what a shell reports for a program ended by a closed pipe


# --------------------------------------------------------------------------
# The add-on package: this file's folder as ``rigport``, or the extension
# Blender enabled (loader.py). The codec and command-line modules need no bpy
# and are imported here; the Blender side when Blender work starts (_Blender).

_LOADER = runpy.run_path(str(HERE / "loader.py"))
rigport = _LOADER["package"](extension=True)


def submodule(name: str) -> types.ModuleType:
    """``rigport.<name>``, imported: in Blender the package may be ``bl_ext.<repo>.rigport``."""
    return importlib.import_module(f"{rigport.__name__}.{name}")


for _name in (
    "cli.bridges",
    "cli.inputs",
    "cli.journal",
    "cli.leave",
    "cli.members",
    "cli.outputs",
    "cli.pool",
    "cli.progress",
    "io_formats.codec.files",
    "io_formats.registry",
    "io_formats.urho3d.package",
):
    submodule(_name)
cli, io_formats = rigport.cli, rigport.io_formats
UsageError = cli.UsageError  # a bad command line: exit status 2


def split_member(path: str) -> tuple[str, str | None]:
    """``(container, member)`` of ``PACKAGE.pak:member``: see ``cli/members.py``."""
    return cli.members.split_member(path)


def read_input(path: str) -> bytes:
    return cli.members.read_input(path)


def format_of(path: str, kind: str | None = None):
    """The registry format of ``path`` (by extension, and content where shared)."""
    return io_formats.registry.format_of(path, kind=kind)


def _has_bpy() -> bool:
    return "bpy" in sys.modules or importlib.util.find_spec("bpy") is not None


# --------------------------------------------------------------------------
# Codec-only work (no bpy)


def _copy_companions(pak: str, member: str, folder: str) -> None:
    """Write the archive's other members whose name (without extension) is
    ``member``'s into ``folder``."""
    container, archive = cli.members.read_container(pak)
    write_atomic = io_formats.codec.files.write_atomic
    stem = os.path.splitext(os.path.basename(member))[0].lower()
    for name in container.names(archive):
        base = os.path.basename(name)
        if name != member and os.path.splitext(base)[0].lower() == stem:
            write_atomic(os.path.join(folder, base), container.read(archive, name))


def _parse(path: str):
    """(format, parsed object, bytes) of one file; FormatError names the path."""
    members, registry = cli.members, io_formats.registry
    data = members.read_input(path)
    fmt = registry.format_of(members.file_name(path), data[: registry.SNIFF_BYTES])
    try:
        return fmt, fmt.read(data), data
    except io_formats.codec.FormatError as err:
        raise err.with_path(path) from None


REENCODED = "re-encoded bytes differ"


def check_file(path: str) -> str:
    """Parse, re-encode and compare; returns the detail text, raises on failure."""
    fmt, obj, data = _parse(path)
    out = fmt.write(obj)
    if out != data:
        n = min(len(out), len(data))
        diff = next((i for i in range(n) if out[i] != data[i]), n)
        raise io_formats.codec.FormatError(
            f"{REENCODED} ({len(out)} bytes written, {len(data)} read)", diff, path
        )
    return f"lossless ({len(data)} bytes)"


def inspect_file(path: str) -> dict:
    fmt, obj, _data = _parse(path)
    return {"file": path, "format": fmt.key, **fmt.summary(obj)}


def pack_folder(folder: str, out: str, lz4: bool = False, rbfx: bool = False) -> str:
    """Write every file under ``folder`` into the Urho3D/rbfx package ``out``."""
    if not os.path.isdir(folder):
        raise UsageError(f"{folder}: not a folder")
    package_module = io_formats.urho3d.package
    pkg = package_module.pack_directory(folder, compressed=lz4, rbfx=rbfx)
    data = package_module.write(pkg)
    io_formats.codec.files.write_atomic(out, data, "package")
    size = sum(len(e.data) for e in pkg.entries)
    return (
        f"wrote {out}: {pkg.magic.decode()}, {len(pkg.entries)} files, "
        f"{size} bytes in, {len(data)} bytes out"
    )


# --------------------------------------------------------------------------
# Blender work


class _Blender:
    """bpy, the add-on's batch handlers and the context, loaded on first use."""

    def __init__(self) -> None:
        import bpy

        if tuple(bpy.app.version) < MIN_BLENDER:
            raise UsageError(
                f"RigPort needs Blender {'.'.join(map(str, MIN_BLENDER))} or newer; "
                f"this is {bpy.app.version_string}"
            )
        self.bpy = bpy
        pkg = _LOADER["run_init"](rigport)
        self.pkg = pkg
        self.handlers = {
            entry.key: entry for module in pkg.operators.format_modules() for entry in module.BATCH
        }
        self.guard = submodule("operators.blender.guard")
        self.bulk_work = submodule("operators.common").bulk_work

    def reset(self) -> None:
        """An empty file with the add-on registered."""
        if self.bpy.app.binary_path:  # a real Blender: keep the user's preferences
            self.bpy.ops.wm.read_homefile(use_empty=True)
        else:
            self.bpy.ops.wm.read_factory_settings(use_empty=True)
        self.register()

    def register(self) -> None:
        if hasattr(self.bpy.types, "OBJECT_PT_rigport"):  # the add-on's own panel
            return
        try:
            self.pkg.register()
        except ValueError as exc:  # "register_class(...): already registered"
            if "already registered" not in str(exc):
                raise

    @property
    def context(self):
        return self.bpy.context

    def handler(self, path: str, exporting: bool = False, kind: str | None = None):
        fmt = format_of(path, kind)
        entry = self.handlers.get(fmt.key)
        if entry is None or (exporting and entry.export_file is None):
            what = "export" if exporting else "import"
            raise UsageError(f"{path}: {fmt.label} files cannot be {what}ed in Blender")
        return fmt, entry

    def import_file(self, path: str, state: dict, options: dict) -> str:
        """Import one file; what Blender could not hold is one warning on its line."""
        self.guard.take_notes()
        with self.bulk_work():  # as the import operators run
            summary = self._import_file(path, state, options).line()
        notes = self.guard.take_notes()
        return summary + (f"; warning: {self.guard.summary(notes)}" if notes else "")

    def _import_file(self, path: str, state: dict, options: dict) -> str:
        container, member = split_member(path)
        if member is None:
            _fmt, entry = self.handler(path)
            return entry.import_file(self.context, path, state, options)
        # A file in an archive: imported from a temporary copy under its own name,
        # with the members named like it beside it (a .dff's .txd), as on disk.
        data = read_input(path)
        _fmt, entry = self.handler(member)
        with tempfile.TemporaryDirectory(prefix="rigport-") as tmp:
            copy = os.path.join(tmp, os.path.basename(member))
            io_formats.codec.files.write_atomic(copy, data)
            _copy_companions(container, member, tmp)
            try:
                return entry.import_file(self.context, copy, state, options)
            except Exception as exc:
                if _is_format_error(exc):
                    exc.with_path(path)
                raise

    def export_file(self, path: str, state: dict, options: dict, kind: str) -> str:
        self.context.view_layer.update()  # as between two operators: world matrices current
        with self.bulk_work():  # as the export operators run
            return self._export_file(path, state, options, kind)

    def _export_file(self, path: str, state: dict, options: dict, kind: str) -> str:
        _container, member = split_member(path)
        if member is None:
            _fmt, entry = self.handler(path, exporting=True, kind=kind)
            return _line(entry.export_file(self.context, path, state, options))
        _fmt, entry = self.handler(member, exporting=True, kind=kind)
        with tempfile.TemporaryDirectory(prefix="rigport-") as tmp:
            out = os.path.join(tmp, os.path.basename(member))
            notes = _line(entry.export_file(self.context, out, state, options))
            cli.members.write_member(path, Path(out).read_bytes())
        return notes

    def counts(self, state: dict) -> dict:
        """What an import built: objects, mesh vertices and faces, bones, keys."""
        fcurves = submodule("operators.blender.compat").fcurves
        objects = [o for o in state.get("objects", []) if o.name in self.bpy.data.objects]
        meshes = [o.data for o in objects if o.type == "MESH"]
        arm = state.get("armature")
        action = state.get("action")
        return {
            "objects": len(objects),
            "vertices": sum(len(m.vertices) for m in meshes),
            "faces": sum(len(m.polygons) for m in meshes),
            "bones": len(arm.data.bones) if arm is not None else 0,
            "keys": sum(len(fc.keyframe_points) for fc in fcurves(action)) if action else 0,
        }


def _line(done) -> str:
    """A batch handler's Result as its line (after "wrote FILE (N bytes)")."""
    return f", {done.line()}" if done.summary else done.line()


_BLENDER: list[_Blender] = []


def blender() -> _Blender:
    if not _BLENDER:
        _BLENDER.append(_Blender())
    return _BLENDER[0]


def _export_like(in_path: str, out_path: str, options: dict) -> tuple[str, dict]:
    """Import ``in_path`` (after ``--model`` for an animation) into an empty file and
    export it to ``out_path``: the summary and the counts."""
    bl = blender()
    bl.reset()
    state: dict = {}
    options = {**options, "all_lods": True}  # keep every LOD level
    if format_of(in_path).kind == "animation":
        bl.import_file(options["model"], state, options)
    bl.import_file(in_path, state, options)
    kind = format_of(in_path).kind
    notes = bl.export_file(out_path, state, options, kind)
    size = len(read_input(out_path))
    counts = {**bl.counts(state), "bytes_written": size}
    return f"wrote {out_path} ({size} bytes){notes}", counts


# --------------------------------------------------------------------------
# One file: the same in this process and in a worker


def _attempt(item: str, work, output: str | None = None):
    """``work() -> Result``, timed; an exception other than a usage error becomes a
    failed Result that says what went wrong."""
    progress = cli.progress
    t0 = time.perf_counter()
    try:
        result = work()
    except UsageError:
        raise
    except Exception as exc:  # FormatError, and anything a damaged file provokes
        result = progress.Result(
            item,
            progress.FAILED,
            detail=_describe(exc, item),
            error=_error_text(exc, item),
            output=output,
        )
    result.seconds = time.perf_counter() - t0
    return result


def run_task(command: str, task, options: dict, fingerprints: bool = False):
    """The Result of ``command`` on one Task; a failure is a result, not an exception.
    With ``fingerprints`` a file done records its input's and output's (for --resume):
    the input's taken before the work, so that a change meanwhile shows."""
    progress = cli.progress
    if task.skip:
        return progress.Result(task.item, progress.SKIPPED, detail=task.skip, output=task.output)

    def work():
        if command == "check":
            return progress.Result.ok(task.item, check_file(task.item))
        if command == "inspect":
            data = inspect_file(task.item)
            return progress.Result.ok(task.item, data["format"], data=data)
        detail, counts = _export_like(task.item, task.output, {**options, "model": task.model})
        return progress.Result.ok(task.item, detail, counts=counts, output=task.output)

    source = cli.journal.fingerprint(task.item) if fingerprints else None
    try:
        result = _attempt(task.item, work, task.output)
    except UsageError as exc:  # "... files cannot be imported in Blender"
        return progress.Result(task.item, progress.SKIPPED, detail=str(exc), output=task.output)
    if fingerprints and result.status == progress.OK:
        output = cli.journal.fingerprint(task.output) if task.output else None
        result.fingerprints = {"input": source, "output": output}
    return result


def _is_format_error(exc: BaseException) -> bool:
    return type(exc).__name__ == "FormatError" and hasattr(exc, "offset")


def _describe(exc: BaseException, path: str) -> str:
    """The progress line's text for a failure; names the file when it is not the
    input (an output that could not be written, the --model file)."""
    if _is_format_error(exc):
        msg = exc.message
        if exc.path and str(exc.path) != path:
            msg = f"{exc.path}: {msg}"
        if exc.offset is None:
            return f"error: {msg}"
        if exc.message.startswith(REENCODED):  # the offset goes into the sentence
            head = msg[: len(msg) - len(exc.message)]
            return f"{head}{REENCODED} at offset {exc.offset}{exc.message[len(REENCODED) :]}"
        return f"error at offset {exc.offset}: {msg}"
    return f"error: {type(exc).__name__}: {exc}"


def _error_text(exc: BaseException, path: str) -> str:
    """The sentence on stderr: the file, (the offset,) what is wrong."""
    if _is_format_error(exc):
        if not exc.path:
            exc.with_path(path)
        return str(exc)
    return f"{path}: {type(exc).__name__}: {exc}"


# --------------------------------------------------------------------------
# The command line


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="batch.py",
        description="RigPort command line: import, export, convert and check game assets.",
        epilog="Exit status: 0 ok, 1 a file failed, 2 usage.",
    )
    _global_options(p)
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    after = argparse.ArgumentParser(add_help=False)
    _global_options(after)  # also after the command

    def add(name: str, text: str) -> argparse.ArgumentParser:
        return sub.add_parser(name, help=text, parents=[after])

    s = add("check", "codec round trip: parse, re-encode, compare bytes")
    s.add_argument("files", nargs="+", metavar="FILE")
    s = add("inspect", "JSON summary of files (codec only)")
    s.add_argument("files", nargs="+", metavar="FILE")
    for name, text in (
        ("roundtrip", "import IN, export it in the same format to OUT"),
        ("convert", "import IN, export OUT by its extension (or --to)"),
    ):
        s = add(name, text)
        s.add_argument("inputs", nargs="+", metavar="IN")
        s.add_argument("output", metavar="OUT")
        s.add_argument("--model", metavar="MODEL", help="the skeleton for animations")
        if name == "convert":
            s.add_argument(
                "--to",
                action="append",
                metavar="EXT",
                help="output extension(s) when OUT is a folder, e.g. --to .dff "
                "(one per kind: --to .mdl --to .ani)",
            )
            _bridge_options(s)
            s.add_argument(
                "--mrtk-version",
                choices=("V11_SIMPLE", "V11_FULL", "V10"),
                help="MRTK recordings: the version and layout written (default: as imported)",
            )
    s = add("import", "import files into one scene (models first, then animations)")
    s.add_argument("files", nargs="+", metavar="FILE")
    s.add_argument("--save", metavar="OUT.blend", help="save the result as a .blend file")
    s.add_argument("--all-lods", action="store_true", help="import every LOD level")
    s = add("pack", "write a folder's files into a package (codec only)")
    s.add_argument("folder", metavar="DIR")
    s.add_argument("output", metavar="OUT.pak")
    s.add_argument("--lz4", action="store_true", help="LZ4-compress (ULZ4, or RLZ4 with --rbfx)")
    s.add_argument("--rbfx", action="store_true", help="rbfx layout (RPAK/RLZ4)")
    return p


def _bridge_options(p: argparse.ArgumentParser) -> None:
    """The flags of a conversion to or from glTF, FBX or USD (``cli/bridges.py``)."""
    axes = cli.bridges.AXES
    p.add_argument(
        "--axis-forward",
        dest="bridge_forward",
        choices=axes,
        metavar="AXIS",
        help="FBX and USD: the file's forward axis (FBX default -Z, USD default -Z)",
    )
    p.add_argument(
        "--axis-up",
        dest="bridge_up",
        choices=axes,
        metavar="AXIS",
        help="FBX and USD: the file's up axis (default Y)",
    )
    p.add_argument(
        "--scale",
        dest="bridge_scale",
        type=float,
        metavar="S",
        help="FBX: scale applied on import and export (default 1.0)",
    )
    p.add_argument(
        "--action",
        dest="bridge_actions",
        action="append",
        metavar="NAME",
        help="export only this action (repeat for several; default: every action)",
    )


def _global_options(p: argparse.ArgumentParser) -> None:
    """The options accepted before and after the command. They default to
    ``SUPPRESS``, so that the subcommand's parser does not reset a value given
    before the command; ``GLOBAL_DEFAULTS`` fills in what neither gave."""
    default = argparse.SUPPRESS
    p.add_argument(
        "--keep-going",
        action="store_true",
        default=default,
        help="go on after a failed file; exit 1 at the end",
    )
    p.add_argument(
        "--recursive",
        "-r",
        action="store_true",
        default=default,
        help="walk folders into their subfolders",
    )
    p.add_argument(
        "--jobs",
        "-j",
        type=int,
        metavar="N",
        default=default,
        help="worker processes for check, inspect, roundtrip and convert "
        "(default: the number of cores; 1: run in this process)",
    )
    p.add_argument(
        "--shard",
        metavar="K/N",
        default=default,
        help="process only the K-th of N slices of the file list (for farm array jobs)",
    )
    p.add_argument(
        "--report",
        metavar="REPORT.json",
        default=default,
        help="write per-file status, seconds, warnings and counts as JSON "
        "(a journal beside it as the run goes)",
    )
    p.add_argument(
        "--resume",
        metavar="REPORT.json",
        default=default,
        help="skip the files REPORT.json records as done whose input and output are "
        "unchanged (check, inspect, roundtrip, convert)",
    )


GLOBAL_DEFAULTS = {
    "keep_going": False,
    "recursive": False,
    "jobs": None,
    "shard": None,
    "report": None,
    "resume": None,
}


def _argv(argv: list[str] | None) -> list[str]:
    if argv is not None:
        return argv
    if "--" in sys.argv:  # blender -b --python batch.py -- ARGS
        return sys.argv[sys.argv.index("--") + 1 :]
    return sys.argv[1:]


_SIGNALS = (signal.SIGTERM, signal.SIGINT)
_CAUGHT: list[int] = []  # the signal that interrupted the run, once one has


@contextlib.contextmanager
def _interruptible(worker: bool):
    """SIGTERM (and SIGINT) raise ``cli.Interrupted`` while the run goes; a second
    signal while the first one is being handled is ignored, so that the report gets
    written. A worker ignores SIGINT: Ctrl-C reaches the whole process group, and
    the parent stops its workers itself. The old handlers come back afterwards."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _CAUGHT.clear()

    def handler(signum, _frame):
        if not _CAUGHT:
            _CAUGHT.append(signum)
            raise cli.Interrupted(signum)

    old = {sig: signal.getsignal(sig) for sig in _SIGNALS}
    signal.signal(signal.SIGTERM, handler)
    signal.signal(signal.SIGINT, signal.SIG_IGN if worker else handler)
    try:
        yield
    finally:
        for sig, previous in old.items():
            signal.signal(sig, previous if previous is not None else signal.SIG_DFL)


def run(argv: list[str] | None = None) -> int:
    """Run the command line; the exit status."""
    args_list = _argv(argv)
    worker = args_list[:1] == ["--worker"]
    with _interruptible(worker):
        return _worker() if worker else _run(args_list)


def _run(args_list: list[str]) -> int:
    parser = _parser()
    try:
        args = parser.parse_args(args_list)
    except SystemExit as exc:
        return int(exc.code or 0)
    for name, value in GLOBAL_DEFAULTS.items():
        if not hasattr(args, name):
            setattr(args, name, value)
    args.argv = args_list
    if args.command not in CODEC_COMMANDS and not _has_bpy():
        print(
            f"batch.py: error: {args.command} needs Blender: run it with a Python that has "
            "the bpy module (pip install bpy), or as "
            f"blender -b --python-exit-code 1 --python batch.py -- {args.command} ...",
            file=sys.stderr,
            flush=True,
        )
        return 2
    try:
        return _dispatch(args)
    except UsageError as exc:
        print(f"batch.py: error: {exc}", file=sys.stderr, flush=True)
        return 2


CODEC_BYTES_PER_WORKER = 32 << 20  # a worker starts in about 0.5 s; the codec reads ~40 MB/s


def _default_jobs(command: str, tasks: list) -> int:
    """The number of cores; for the codec commands only as many workers as there are
    32 MiB of input to share (starting one costs more than checking a small file)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    if command not in CODEC_COMMANDS:
        return cores
    size = 0
    for task in tasks:
        path = cli.members.split_member(task.item)[0]
        try:
            size += os.path.getsize(path)
        except OSError:
            pass
    return max(1, min(cores, size // CODEC_BYTES_PER_WORKER))


def _dispatch(args) -> int:
    cmd = args.command
    if args.jobs is not None and args.jobs < 1:
        raise UsageError(f"--jobs {args.jobs}: expected 1 or more")
    if cmd not in PER_FILE_COMMANDS:
        for flag, value in (("--jobs", args.jobs), ("--shard", args.shard)):
            if value is not None and not (flag == "--jobs" and value == 1):
                raise UsageError(
                    f"{flag} applies to check, inspect, roundtrip and convert; "
                    f"{cmd} works in one process"
                )
    if args.resume:
        if cmd not in PER_FILE_COMMANDS:
            raise UsageError(
                f"--resume applies to check, inspect, roundtrip and convert; {cmd} starts over"
            )
        args.report = args.report or args.resume
    if args.report:
        cli.inputs.check_output_file(args.report)
    if cmd == "pack":
        return _pack(args)
    if cmd == "import":
        return _import(args)
    if cmd == "convert":
        _check_convert_extensions(args)
        if _bridged(args):
            folders = [p for p in args.inputs if split_member(p)[1] is None and os.path.isdir(p)]
            return _convert_library(args) if folders else _convert_scene(args)
    return _per_file(args)


def _run_list(args, tasks: list, work, prog) -> None:
    """Run ``work(task) -> Result`` over the tasks ``prog`` has no result for yet, in
    this process, with progress lines; stops after the first failure unless
    --keep-going."""
    progress = cli.progress
    stopped = False
    for i, task in enumerate(tasks):
        if prog.slots[i] is not None:  # done in an earlier run (--resume)
            continue
        if stopped:
            prog.add(i, progress.Result(task.item, progress.NOT_RUN, detail="after a failure"))
            continue
        result = work(task)
        if _CAUGHT:  # the interruption was swallowed on the way (Blender calling Python)
            if result.status != progress.FAILED:  # a failure may be the interruption's doing
                prog.add(i, result)
            raise cli.Interrupted(_CAUGHT[0])
        prog.add(i, result)
        if result.status == progress.FAILED and not args.keep_going:
            print(f"error: {result.error}", file=sys.stderr, flush=True)
            stopped = True


def _finish(args, prog, jobs: int = 1) -> int:
    """The summary line, the report (and the journal removed), the exit status."""
    progress = cli.progress
    print(prog.summary(), file=prog.stream, flush=True)
    if prog.interrupted:
        again = f"; --resume {args.report} goes on" if args.report else ""
        print(
            f"batch.py: interrupted by {prog.interrupted}: {prog.done} of {prog.total} "
            f"files done{again}",
            file=sys.stderr,
            flush=True,
        )
    if args.report:
        written = False
        try:
            prog.write_report(
                args.report,
                {
                    "command": args.command,
                    "arguments": args.argv,
                    "jobs": jobs,
                    "shard": args.shard,
                    "bpy": prog.bpy or _bpy_version(),
                    **({"pairing": args.pairing} if getattr(args, "pairing", None) else {}),
                },
            )
            written = True
        finally:
            if prog.journal is not None:
                prog.journal.close(remove=written)
    if prog.interrupted:
        return 128 + signal.Signals[prog.interrupted].value
    return 1 if prog.count(progress.FAILED) else 0


def _bpy_version() -> str | None:
    bpy = sys.modules.get("bpy")
    return bpy.app.version_string if bpy is not None else None


def _pack(args) -> int:
    inputs, progress = cli.inputs, cli.progress
    if cli.members.ext(args.output) != ".pak":
        raise UsageError(f"{args.output}: expected a .pak path")
    inputs.check_output_file(args.output)
    task = inputs.Task(args.folder)

    def work(t):
        detail = pack_folder(t.item, args.output, args.lz4, args.rbfx)
        return progress.Result.ok(t.item, detail, output=args.output)

    prog = progress.Progress(1)
    _run_list(args, [task], lambda t: _attempt(t.item, lambda: work(t)), prog)
    return _finish(args, prog)


def _import(args) -> int:
    inputs, progress = cli.inputs, cli.progress
    if args.save:
        if cli.members.ext(args.save) != ".blend":
            raise UsageError(f"--save {args.save}: expected a .blend path")
        inputs.check_output_file(args.save)
    tasks = inputs.expand(args.files, args.recursive)
    order = {"package": 0, "model": 1, "animation": 2, "other": 3}
    kind_of = cli.outputs.kind_of
    tasks.sort(key=lambda t: order[kind_of(t.item)])  # stable: the list order stays
    bl = blender()
    bl.reset()
    state: dict = {}
    options = vars(args)

    def work(task):
        if task.skip:
            return progress.Result(task.item, progress.SKIPPED, detail=task.skip)
        return _attempt(
            task.item,
            lambda: progress.Result.ok(task.item, bl.import_file(task.item, state, options)),
        )

    prog = progress.Progress(len(tasks))
    _run_list(args, tasks, work, prog)
    if args.save and not prog.count(progress.FAILED):
        path = os.path.abspath(args.save)
        # Blender writes the .blend itself (to a temporary name it renames at the end)
        bl.bpy.ops.wm.save_as_mainfile(filepath=path)
        print(f"saved {args.save}", file=prog.stream, flush=True)
    return _finish(args, prog)


def _bridged(args) -> bool:
    """Whether a conversion has glTF, FBX or USD on one side (``cli/bridges.py``),
    named or in a folder among the inputs."""
    bridge_of = cli.bridges.bridge_of
    to = ["FILE" + (e if e.startswith(".") else "." + e) for e in args.to or []]
    if any(bridge_of(p) for p in [*args.inputs, args.output, *to]):
        return True
    folders = [
        p for p in args.inputs if cli.members.split_member(p)[1] is None and os.path.isdir(p)
    ]
    walked = cli.inputs.expand(folders, args.recursive, extra=cli.bridges.extensions())
    return any(bridge_of(t.item) for t in walked)


def _check_convert_extensions(args) -> None:
    """A usage error that lists every extension convert knows (RigPort's and
    Blender's glTF, FBX and USD) for a named input or output file it does not."""
    known = {*io_formats.registry.extensions(), *cli.bridges.extensions()}
    # an OUT without an extension, or with --to, is a folder: the planner checks it
    out_file = not args.to and cli.members.ext(args.output) and not os.path.isdir(args.output)
    named = [p for p in args.inputs if not os.path.isdir(p)]
    for path in [*named, *([args.output] if out_file else [])]:
        ext = cli.members.ext(path)
        if ext not in known:
            raise UsageError(
                f"{path}: unknown extension {ext or '(none)'!r} "
                f"(expected {', '.join(sorted(known))}, or a folder)"
            )


def _safe_name(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name) or "action"


def _convert_scene(args) -> int:
    """``convert`` with glTF, FBX or USD on one side: every input imported into one
    scene (models first, then animations), then each output written from it. OUT
    is a file, or a folder with ``--to`` (an animation extension writes one file
    per action, ``STEM_ACTION.ani``)."""
    inputs, progress, bridges = cli.inputs, cli.progress, cli.bridges
    if args.shard or args.resume:
        raise UsageError("--shard and --resume do not apply to a glTF, FBX or USD conversion")
    if args.model:
        raise UsageError("--model does not apply to a glTF, FBX or USD conversion: name the model")
    tasks = inputs.expand(args.inputs, args.recursive, extra=bridges.extensions())
    order = {"package": 0, "model": 1, "animation": 2, "other": 3}

    def rank(task) -> int:
        return 1 if bridges.bridge_of(task.item) else order[cli.outputs.kind_of(task.item)]

    tasks.sort(key=rank)
    stem = os.path.splitext(os.path.basename(cli.members.file_name(tasks[0].item)))[0]
    folder = os.path.isdir(args.output) or args.output.endswith(("/", os.sep))
    if folder:
        inputs.check_output_folder(args.output)
        if not args.to:
            raise UsageError(
                f"{args.output}: converting into a folder needs --to EXT (e.g. --to .glb)"
            )
        known = [*io_formats.registry.extensions(), *bridges.extensions()]
        outs = []
        for ext in args.to:
            ext = (ext if ext.startswith(".") else "." + ext).lower()
            if ext not in known:
                raise UsageError(
                    f"--to {ext}: unknown extension (expected {', '.join(sorted(known))})"
                )
            outs.append(os.path.join(args.output, stem + ext))
    else:
        inputs.check_output_file(args.output)
        outs = [args.output]
    for out in outs:
        if not bridges.bridge_of(out):
            _kind_for_export(out)  # a usage error for an unknown extension
    options = {
        "axis_forward": args.bridge_forward,
        "axis_up": args.bridge_up,
        "scale": args.bridge_scale,
        "action": args.bridge_actions,
    }
    bridges.check_options(options, [t.item for t in tasks] + outs)
    bl = blender()
    bl.reset()
    state: dict = {"actions": []}
    rigport_options = {**vars(args), "all_lods": True}

    def work(task):
        if task.skip:
            return progress.Result(task.item, progress.SKIPPED, detail=task.skip)
        return _attempt(
            task.item,
            lambda: progress.Result.ok(
                task.item, _load(bl, task.item, state, options, rigport_options)
            ),
        )

    prog = progress.Progress(len(tasks) + len(outs))
    out_tasks = [inputs.Task(out) for out in outs]

    def step(task):
        if task in out_tasks:
            if prog.count(progress.FAILED):
                return progress.Result(task.item, progress.NOT_RUN, detail="after a failure")
            return _attempt(
                task.item,
                lambda: progress.Result.ok(
                    task.item, _write_scene(bl, task.item, state, options, folder, stem)
                ),
                task.item,
            )
        return work(task)

    _run_list(args, [*tasks, *out_tasks], step, prog)
    return _finish(args, prog)


def _load(bl, item: str, state: dict, options: dict, rigport_options: dict) -> str:
    """Import one file into the scene ``state`` describes: glTF, FBX or USD through
    Blender, else RigPort's importer (its action joins ``state["actions"]``)."""
    bridges = cli.bridges
    if bridges.bridge_of(item):
        return bridges.import_file(item, state, options)
    line = bl.import_file(item, state, rigport_options)
    if state.get("action") is not None and state["action"] not in state["actions"]:
        state["actions"].append(state["action"])
    return line


def _bridge_targets(args) -> list[str]:
    """``--to``'s extensions, lower case with their dot; a usage error for an unknown one."""
    known = [*io_formats.registry.extensions(), *cli.bridges.extensions()]
    out = []
    for ext in args.to or []:
        ext = (ext if ext.startswith(".") else "." + ext).lower()
        if ext not in known:
            raise UsageError(f"--to {ext}: unknown extension (expected {', '.join(sorted(known))})")
        out.append(ext)
    return out


def _library_groups(args, tasks: list) -> tuple[list, dict[str, list[str]]]:
    """The scenes of a library conversion: one Task per model or glTF, FBX or USD
    file, in list order (animations, and files no scene takes, as skipped Tasks),
    and the animations pairing gives each model."""
    inputs, bridges, kind_of = cli.inputs, cli.bridges, cli.outputs.kind_of
    kinds = {t.item: kind_of(t.item) for t in tasks if not t.skip and not bridges.bridge_of(t.item)}
    found = cli.pairing.pair([p for p, k in kinds.items() if k in ("model", "animation")])
    if kinds:
        args.pairing = found.to_json()
        for line in found.lines():
            print(line, flush=True)
    groups = []
    for task in tasks:
        kind = kinds.get(task.item)
        if task.skip or bridges.bridge_of(task.item) or kind == "model":
            groups.append(task)
        elif kind == "animation" and task.item in found.model:
            continue  # it goes with its model
        elif kind == "animation":
            groups.append(
                inputs.Task(task.item, task.root, skip=f"unpaired: {found.unpaired[task.item]}")
            )
        else:
            groups.append(inputs.Task(task.item, task.root, skip=f"a {kind} file is not converted"))
    animations: dict[str, list[str]] = {}
    for anim, model in found.model.items():
        animations.setdefault(model, []).append(anim)
    return groups, animations


def _convert_library(args) -> int:
    """``convert`` of folders with glTF, FBX or USD on a side: one scene per model
    (with the animations pairing gives it) or per glTF, FBX or USD file, each written
    as OUT/<its path>.<ext> for every ``--to``; sharded like the per-file commands."""
    inputs, progress, bridges = cli.inputs, cli.progress, cli.bridges
    if args.resume or args.model:
        raise UsageError(
            "--resume and --model do not apply to converting folders to or from glTF, FBX or USD"
        )
    inputs.check_output_folder(args.output)
    exts = _bridge_targets(args)
    if not exts:
        raise UsageError(f"{args.output}: converting folders needs --to EXT (e.g. --to .glb)")
    for ext in exts:
        if not bridges.bridge_of("FILE" + ext):
            _kind_for_export(os.path.join(args.output, "FILE" + ext))  # a model or animation
    options = {
        "axis_forward": args.bridge_forward,
        "axis_up": args.bridge_up,
        "scale": args.bridge_scale,
        "action": args.bridge_actions,
    }
    tasks = inputs.expand(args.inputs, args.recursive, extra=bridges.extensions())
    bridges.check_options(options, [t.item for t in tasks] + exts)
    groups, animations = _library_groups(args, tasks)
    if args.shard:
        groups = inputs.shard(groups, *inputs.parse_shard(args.shard))
    anchor = inputs.common_anchor(tasks)
    bl = blender()
    rigport_options = {**vars(args), "all_lods": True}

    def scene(task) -> str:
        base = os.path.join(args.output, os.path.splitext(inputs.relative_name(task, anchor))[0])
        os.makedirs(os.path.dirname(os.path.abspath(base)), exist_ok=True)
        bl.reset()
        state: dict = {"actions": []}
        with_ = animations.get(task.item, [])
        lines = [_load(bl, item, state, options, rigport_options) for item in [task.item, *with_]]
        stem = os.path.basename(base)
        written = [_write_scene(bl, base + ext, state, options, True, stem) for ext in exts]
        took = [f"with {', '.join(os.path.basename(a) for a in with_)}"] if with_ else []
        return "; ".join([lines[0], *took, *written])

    def step(task):
        if task.skip:
            return progress.Result(task.item, progress.SKIPPED, detail=task.skip)
        return _attempt(task.item, lambda: progress.Result.ok(task.item, scene(task)))

    journal = None
    if args.report:
        journal = cli.journal.Journal(
            args.report,
            {"command": "convert", "arguments": args.argv, "jobs": 1, "shard": args.shard},
        )
    prog = progress.Progress(len(groups), sys.stdout, journal)
    _run_list(args, groups, step, prog)
    return _finish(args, prog)


def _kind_for_export(path: str) -> str:
    """The kind (model or animation) RigPort writes at ``path``."""
    kind = cli.outputs.kind_of(path)
    if kind not in ("model", "animation"):
        known = [*io_formats.registry.extensions(), *cli.bridges.extensions()]
        raise UsageError(
            f"{path}: unknown extension {cli.members.ext(path) or '(none)'!r} "
            f"(expected {', '.join(sorted(known))})"
        )
    return kind


def _write_scene(bl, out: str, state: dict, options: dict, folder: bool, stem: str) -> str:
    """Write the scene ``state`` holds to ``out``: glTF, FBX or USD through Blender,
    else RigPort's exporter (one file per action for an animation into a folder)."""
    bridges = cli.bridges
    if bridges.bridge_of(out):
        return bridges.export_file(out, state, options)
    if _kind_for_export(out) == "model":
        return f"wrote {out}{bl.export_file(out, state, {}, 'model')}"
    actions = bridges.chosen_actions(state, options["action"])
    if not actions:
        raise UsageError(f"{out}: the inputs have no animation to write")
    compat = submodule("operators.blender.compat")
    armature = state.get("armature")
    written, notes = [], []
    chosen = actions if folder else actions[:1]
    for action in chosen:
        path = out
        if folder:
            base = os.path.join(os.path.dirname(out), f"{stem}_{_safe_name(action.name)}")
            path = base + cli.members.ext(out)
        if armature is not None:
            compat.assign_action(armature, action)
        state["action"] = action
        notes.append(bl.export_file(path, state, {}, "animation"))
        written.append(path)
    left = [a.name for a in actions[len(chosen) :]]
    warning = ""
    if left:
        warning = (
            f"; warning: one animation per file: {', '.join(left)} not written "
            "(choose with --action, or convert into a folder with --to)"
        )
    return f"wrote {', '.join(written)}{''.join(notes)}{warning}"


def _resumed(args, tasks: list, stream) -> dict:
    """--resume: the Results of the tasks the report records as done, by index,
    for those whose input and output are unchanged since."""
    if not args.resume:
        return {}
    journal, progress = cli.journal, cli.progress
    done = journal.done(args.resume, args.command)
    carried = {}
    for i, task in enumerate(tasks):
        entry = done.get((task.item, task.output))
        if not task.skip and entry is not None and journal.still_done(entry):
            carried[i] = progress.Result.from_json(entry)
    print(
        f"resuming {args.resume}: {len(carried)} of {len(tasks)} files done before and unchanged",
        file=stream,
        flush=True,
    )
    return carried


def _per_file(args) -> int:
    """check, inspect, roundtrip, convert: the file list, sharded, run in this
    process or on worker processes; the files --resume carries over are not run."""
    inputs, progress = cli.inputs, cli.progress
    cmd = args.command
    if cmd in ("check", "inspect"):
        tasks = inputs.expand(args.files, args.recursive, open_containers=cmd == "check")
    else:
        tasks, found = cli.outputs.plan_paired(
            cmd, args.inputs, args.output, args.recursive, args.model, getattr(args, "to", None)
        )
        if found is not None:
            args.pairing = found.to_json()
            for line in found.lines():
                print(line, flush=True)
    if args.shard:
        tasks = inputs.shard(tasks, *inputs.parse_shard(args.shard))
    stream = sys.stderr if cmd == "inspect" else sys.stdout  # stdout is the JSON document
    kept = ("model", "to", "all_lods", "mrtk_version")
    options = {k: v for k, v in vars(args).items() if k in kept}
    carried = _resumed(args, tasks, stream)
    todo = sum(1 for i, t in enumerate(tasks) if not t.skip and i not in carried)
    jobs = max(1, min(args.jobs or _default_jobs(cmd, tasks), todo))
    journal = None
    if args.report:
        run = {"command": cmd, "arguments": args.argv, "jobs": jobs, "shard": args.shard}
        journal = cli.journal.Journal(args.report, run)
    prog = progress.Progress(len(tasks), stream, journal)
    for i, result in carried.items():
        prog.carry(i, result)
    prints = bool(args.report)
    try:
        if jobs == 1:
            _run_list(args, tasks, lambda t: run_task(cmd, t, options, prints), prog)
        else:
            _run_pool(args, tasks, options, jobs, prog)
    except cli.Interrupted as exc:
        prog.interrupted = exc.name
        for i, task in enumerate(tasks):
            if prog.slots[i] is None:
                prog.add(i, progress.Result(task.item, progress.NOT_RUN, detail="interrupted"))
    named_skips = [
        r
        for t, r in zip(tasks, prog.slots, strict=True)
        if t.named and r is not None and r.status == progress.SKIPPED
    ]
    if cmd == "inspect":
        docs = [r.data for r in prog.slots if r is not None and r.data is not None]
        if docs:
            named_one = len(args.files) == 1 and not os.path.isdir(args.files[0])
            json.dump(docs[0] if named_one else docs, sys.stdout, indent=2)
            sys.stdout.write("\n")
            sys.stdout.flush()
    status = _finish(args, prog, jobs)
    if named_skips and not status:  # a file the command line names must be processed
        print(f"batch.py: error: {named_skips[0].detail}", file=sys.stderr, flush=True)
        return 2
    return status


def _run_pool(args, tasks: list, options: dict, jobs: int, prog) -> None:
    """The tasks ``prog`` has no result for yet on ``jobs`` worker processes; progress
    lines as results come in."""
    progress, pool = cli.progress, cli.pool
    header = {"command": args.command, "options": options, "fingerprints": bool(args.report)}
    work = []
    for i, task in enumerate(tasks):
        if prog.slots[i] is not None:  # done in an earlier run (--resume)
            continue
        if task.skip:
            prog.add(i, run_task(args.command, task, options))
        else:
            work.append((i, task.to_json()))
    first_error: list[str] = []

    def on_result(index: int, doc: dict | None, why: str) -> bool:
        task = tasks[index]
        if doc is None:
            result = progress.Result(
                task.item,
                progress.FAILED,
                detail=f"error: {why}",
                error=f"{task.item}: {why}",
                output=task.output,
            )
        else:
            result = progress.Result.from_json(doc)
        prog.add(index, result)
        if result.status == progress.FAILED and not first_error:
            first_error.append(result.error)
        return args.keep_going or not first_error

    ready = pool.run(pool.Job(_worker_argv(args.command), header, work, jobs), on_result)
    prog.bpy = ready.get("bpy")
    for i, task in enumerate(tasks):
        if prog.slots[i] is None:
            prog.add(i, progress.Result(task.item, progress.NOT_RUN, detail="after a failure"))
    if first_error and not args.keep_going:
        print(f"error: {first_error[0]}", file=sys.stderr, flush=True)


def _worker_argv(command: str) -> list[str]:
    """How to start a worker: the Blender program for Blender work inside Blender,
    else this Python (which has the bpy module, or needs none)."""
    bpy = sys.modules.get("bpy")
    binary = getattr(getattr(bpy, "app", None), "binary_path", "") if bpy else ""
    if binary and command not in CODEC_COMMANDS:
        return [
            binary,
            "-b",
            "--python-exit-code",
            "1",
            "--python",
            str(Path(__file__).resolve()),
            "--",
            "--worker",
        ]
    return [sys.executable, str(Path(__file__).resolve()), "--worker"]


def _worker() -> int:
    """A worker process: tasks in on stdin, results out on stdout (see cli/pool.py).
    Everything else printed (by Blender, by an operator) goes to stderr. SIGTERM
    stops it (after the temporary file of an output it was writing is removed)."""
    results = os.fdopen(os.dup(sys.stdout.fileno()), "w", encoding="utf-8", buffering=1)
    sys.stdout.flush()
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    try:
        header = json.loads(sys.stdin.readline())
        command, options = header["command"], header["options"]
        prints = header["fingerprints"]
        if command not in CODEC_COMMANDS:
            blender()  # bpy and the add-on, once
        results.write(json.dumps({"ready": True, "bpy": _bpy_version()}) + "\n")
        task_class = cli.inputs.Task
        for line in sys.stdin:
            task = task_class(**json.loads(line))
            result = run_task(command, task, options, prints)
            if _CAUGHT:  # interrupted, and swallowed on the way: the result may be its doing
                return 128 + _CAUGHT[0]
            results.write(json.dumps(result.to_json()) + "\n")
    except cli.Interrupted as exc:
        return 128 + exc.signum
    finally:
        results.close()
    return 0


def _quiet_closed_pipe() -> None:
    """stdout's reader went away (``batch.py inspect ... | head``): send what is
    left to /dev/null, so the interpreter's final flush does not complain."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    for stream in (sys.stdout, sys.stderr):
        try:
            os.dup2(devnull, stream.fileno())
        except (OSError, ValueError):
            pass


def main(argv: list[str] | None = None) -> None:
    try:
        code = run(argv)
    except BrokenPipeError:
        _quiet_closed_pipe()
        code = SIGPIPE_STATUS
    except cli.Interrupted as exc:  # before the run started, or a command with no report
        print(f"batch.py: interrupted by {exc.name}", file=sys.stderr, flush=True)
        code = 128 + exc.signum
    except KeyboardInterrupt:
        print("batch.py: interrupted", file=sys.stderr, flush=True)
        code = 130
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (BrokenPipeError, OSError, ValueError):
            _quiet_closed_pipe()
    bpy = sys.modules.get("bpy")
    if bpy is not None and not getattr(bpy.app, "binary_path", ""):
        cli.leave.leave(code)  # bpy 4.2 (the module) can crash at interpreter exit
    sys.exit(code)


if __name__ == "__main__":
    main()
