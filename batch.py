"""RigPort on the command line.

    blender -b --python-exit-code 1 --python batch.py -- COMMAND ARGS...
    python batch.py COMMAND ARGS...          (with the bpy module installed)

Commands:
    import FILE... [--save OUT.blend] [--all-lods]   models first, then animations
    convert IN OUT [--model M.mdl]                   import IN, export by OUT's extension
    roundtrip IN OUT [--model M.mdl]                 import, export in the same format
    check FILE...                                    codec only: parse, re-encode, compare
                                                     (a package: itself, then every file in it)
    inspect FILE...                                  codec only: JSON summary on stdout
    pack DIR OUT.pak [--lz4] [--rbfx]                codec only: a package of DIR's files

A file inside a package is named ``PACKAGE.pak:path/inside.mdl`` anywhere a
FILE, IN, OUT or --model is expected; writing to one replaces (or adds) that
file in the existing package.

Global option ``--keep-going`` goes on after a file fails; the exit status is
then 1 if any file failed. Without it the first failure stops the run with
status 1. Usage errors exit with 2. ``check`` and ``inspect`` never import bpy.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import os
import sys
import tempfile
import time
import types
from pathlib import Path

HERE = Path(__file__).resolve().parent
PACKAGE = "rigport"
MIN_BLENDER = (4, 2, 0)  # blender_manifest.toml's blender_version_min

class UsageError(Exception):
    """Bad command line: exit status 2."""


# --------------------------------------------------------------------------
# The add-on package


def _find_loaded_package() -> types.ModuleType | None:
    """``rigport`` or an enabled extension ``bl_ext.<repo>.rigport`` already imported."""
    module = sys.modules.get(PACKAGE)
    if module is not None:
        return module
    for name, module in list(sys.modules.items()):
        if name.startswith("bl_ext.") and name.endswith("." + PACKAGE) and name.count(".") == 2:
            return module
    return None


def package(with_init: bool = False) -> types.ModuleType:
    """The add-on package; its ``__init__.py`` (which imports bpy) runs only if asked."""
    module = _find_loaded_package()
    if module is None:
        spec = importlib.util.spec_from_file_location(
            PACKAGE, HERE / "__init__.py", submodule_search_locations=[str(HERE)]
        )
        module = importlib.util.module_from_spec(spec)
        sys.modules[PACKAGE] = module
    if with_init and "register" not in module.__dict__:
        module.__spec__.loader.exec_module(module)
    return module


def submodule(name: str) -> types.ModuleType:
    return importlib.import_module(f"{package().__name__}.{name}")


def _format_error_class():
    return submodule("io_formats.codec").FormatError


def registry() -> types.ModuleType:
    return submodule("io_formats.registry")


PACKAGE_SEPARATOR = ".pak:"


def split_member(path: str) -> tuple[str, str | None]:
    """``("a/b.pak", "Models/x.mdl")`` for ``a/b.pak:Models/x.mdl``; ``(path, None)``
    for a plain path."""
    at = path.lower().find(PACKAGE_SEPARATOR)
    if at < 0:
        return path, None
    return path[: at + 4], path[at + len(PACKAGE_SEPARATOR) :]


def _ext(path: str) -> str:
    _pak, member = split_member(path)
    return os.path.splitext(member if member is not None else path)[1].lower()


def _check_exts(paths: list[str], kinds: tuple[str, ...] | None = None) -> None:
    """Usage error for a path whose extension no format (of these kinds) has."""
    reg = registry()
    allowed = {e for k in kinds for e in reg.extensions(k)} if kinds else set(reg.extensions())
    for p in paths:
        if _ext(p) not in allowed:
            raise UsageError(
                f"{p}: unknown extension {_ext(p) or '(none)'!r} "
                f"(expected {', '.join(sorted(allowed))})"
            )


def format_of(path: str, kind: str | None = None):
    """The registry format of ``path`` (by extension, and content where shared)."""
    return registry().format_of(path, kind=kind)


# --------------------------------------------------------------------------
# Codec-only commands (no bpy)


def _read_file(path: str) -> bytes:
    FormatError = _format_error_class()
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError as exc:
        raise FormatError(f"cannot read file: {exc.strerror or exc}", None, path) from exc


_PACKAGE_CACHE: dict[tuple, tuple] = {}


def _read_package(pak: str):
    """(format, parsed package) of a package file. The last package read is kept
    while the file is unchanged, so checking its files one by one parses it once."""
    FormatError = _format_error_class()
    try:
        st = os.stat(pak)
        key = (os.path.abspath(pak), st.st_mtime_ns, st.st_size)
    except OSError:
        key = None
    if key is not None and key in _PACKAGE_CACHE:
        return _PACKAGE_CACHE[key]
    data = _read_file(pak)
    fmt = registry().format_of(pak, data[: registry().SNIFF_BYTES])
    if fmt.kind != "package":
        raise UsageError(f"{pak}: a {fmt.label} file is not a package")
    try:
        result = fmt, fmt.read(data)
    except FormatError as err:
        raise err.with_path(pak) from None
    _PACKAGE_CACHE.clear()
    if key is not None:
        _PACKAGE_CACHE[key] = result
    return result


def read_input(path: str) -> bytes:
    """The bytes of a file, or of a file inside a package (``PACKAGE.pak:name``)."""
    FormatError = _format_error_class()
    pak, member = split_member(path)
    if member is None:
        return _read_file(path)
    _fmt, pkg = _read_package(pak)
    entry = pkg.find(member)
    if entry is None:
        raise FormatError(f"the package has no file {member!r}", None, pak)
    return entry.data


def write_into_package(path: str, data: bytes) -> None:
    """Put ``data`` into the existing package as the member ``path`` names."""
    pak, member = split_member(path)
    fmt, pkg = _read_package(pak)
    _PACKAGE_CACHE.clear()  # pkg changes below
    pkg.put(member, data)
    out = fmt.write(pkg)
    tmp = f"{pak}.rigport-tmp"  # the package is replaced only once it is complete
    with open(tmp, "wb") as fh:
        fh.write(out)
    os.replace(tmp, pak)


def package_members(path: str) -> list[str]:
    """``path`` and, for a package, ``path:name`` for each file in it RigPort reads.
    A package that does not parse is returned alone (its check reports why)."""
    if split_member(path)[1] is not None or _ext(path) != ".pak":
        return [path]
    try:
        _fmt, pkg = _read_package(path)
    except Exception:  # FormatError or unreadable: the check of the package says why
        return [path]
    return [path] + [f"{path}:{name}" for name in pkg.names() if _readable(name, pkg)]


def _readable(name: str, pkg) -> bool:
    """A member RigPort reads: a known extension, and content its format's sniff
    accepts (a ``.txt`` that is no BonesPro file, a ``.bin`` that is no MRTK
    recording are skipped)."""
    reg = registry()
    if os.path.splitext(name)[1].lower() not in set(reg.extensions()):
        return False
    head = pkg.find(name).data[: reg.SNIFF_BYTES]
    try:
        fmt = reg.format_of(name, head)
    except _format_error_class():
        return False
    return fmt.sniff is None or fmt.sniff(head)


def _parse(path: str):
    """(format, parsed object, bytes) of one file; FormatError names the path."""
    FormatError = _format_error_class()
    data = read_input(path)
    name = split_member(path)[1] or path
    fmt = registry().format_of(name, data[: registry().SNIFF_BYTES])
    try:
        return fmt, fmt.read(data), data
    except FormatError as err:
        raise err.with_path(path) from None


def check_file(path: str) -> str:
    """Parse, re-encode and compare; returns the detail text, raises on failure."""
    FormatError = _format_error_class()
    _fmt, obj, data = _parse(path)
    out = _fmt.write(obj)
    if out != data:
        n = min(len(out), len(data))
        diff = next((i for i in range(n) if out[i] != data[i]), n)
        raise FormatError(
            f"re-encoded bytes differ ({len(out)} bytes written, {len(data)} read)", diff, path
        )
    return f"lossless ({len(data)} bytes)"


def inspect_file(path: str) -> dict:
    fmt, obj, _data = _parse(path)
    return {"file": path, "format": fmt.key, **fmt.summary(obj)}


def pack_folder(folder: str, out: str, lz4: bool = False, rbfx: bool = False) -> str:
    """Write every file under ``folder`` into the Urho3D/rbfx package ``out``."""
    if not os.path.isdir(folder):
        raise UsageError(f"{folder}: not a folder")
    package_module = submodule("io_formats.urho3d.package")
    pkg = package_module.pack_directory(folder, compressed=lz4, rbfx=rbfx)
    data = package_module.write(pkg)
    with open(out, "wb") as fh:
        fh.write(data)
    size = sum(len(e.data) for e in pkg.entries)
    return (
        f"wrote {out}: {pkg.magic.decode()}, {len(pkg.entries)} files, "
        f"{size} bytes in, {len(data)} bytes out"
    )


# --------------------------------------------------------------------------
# Blender commands


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
        pkg = package(with_init=True)
        self.pkg = pkg
        operators = importlib.import_module(f"{pkg.__name__}.operators")
        self.handlers = {
            entry.key: entry for module in operators.format_modules() for entry in module.BATCH
        }
        self.guard = importlib.import_module(f"{pkg.__name__}.operators.blender.guard")

    def reset(self) -> None:
        """An empty file with the add-on registered."""
        if self.bpy.app.binary_path:  # a real Blender: keep the user's preferences
            self.bpy.ops.wm.read_homefile(use_empty=True)
        else:
            self.bpy.ops.wm.read_factory_settings(use_empty=True)
        self.register()

    def register(self) -> None:
        if hasattr(self.bpy.types, "IMPORT_SCENE_OT_urho3d_mdl"):
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
        summary = self._import_file(path, state, options)
        notes = self.guard.take_notes()
        return summary + (f"; warning: {self.guard.summary(notes)}" if notes else "")

    def _import_file(self, path: str, state: dict, options: dict) -> str:
        pak, member = split_member(path)
        if member is None:
            _fmt, entry = self.handler(path)
            return entry.import_file(self.context, path, state, options)
        # A file in a package: imported from a temporary copy under its own name.
        data = read_input(path)
        _fmt, entry = self.handler(member)
        with tempfile.TemporaryDirectory(prefix="rigport-") as tmp:
            copy = os.path.join(tmp, os.path.basename(member))
            with open(copy, "wb") as fh:
                fh.write(data)
            try:
                return entry.import_file(self.context, copy, state, options)
            except Exception as exc:
                if _is_format_error(exc):
                    exc.with_path(path)
                raise

    def export_file(self, path: str, state: dict, options: dict, kind: str) -> str:
        self.context.view_layer.update()  # as between two operators: world matrices current
        pak, member = split_member(path)
        if member is None:
            _fmt, entry = self.handler(path, exporting=True, kind=kind)
            return entry.export_file(self.context, path, state, options)
        _fmt, entry = self.handler(member, exporting=True, kind=kind)
        with tempfile.TemporaryDirectory(prefix="rigport-") as tmp:
            out = os.path.join(tmp, os.path.basename(member))
            notes = entry.export_file(self.context, out, state, options)
            with open(out, "rb") as fh:
                write_into_package(path, fh.read())
        return notes


_BLENDER: list[_Blender] = []


def blender() -> _Blender:
    if not _BLENDER:
        _BLENDER.append(_Blender())
    return _BLENDER[0]


def _export_like(in_path: str, out_path: str, options: dict) -> str:
    """Import ``in_path`` (after ``--model`` for an animation) into an empty file; export."""
    bl = blender()
    bl.reset()
    state: dict = {}
    options = {**options, "all_lods": True}  # keep every LOD level
    kind = format_of(in_path).kind
    if kind == "animation":
        if not options.get("model"):
            raise UsageError(f"{in_path}: an animation needs --model MODEL for its skeleton")
        bl.import_file(options["model"], state, options)
    bl.import_file(in_path, state, options)
    notes = bl.export_file(out_path, state, options, kind)
    size = len(read_input(out_path))
    return f"wrote {out_path} ({size} bytes){notes}"


# --------------------------------------------------------------------------
# Running


class Runner:
    def __init__(self, keep_going: bool, progress=None) -> None:
        self.keep_going = keep_going
        self.failed = 0
        self.progress = progress or sys.stdout

    def run(self, items: list[str], work) -> bool:
        """``work(item) -> detail``; one progress line per item. False: stop now."""
        n = len(items)
        for i, item in enumerate(items, 1):
            t0 = time.perf_counter()
            try:
                detail = work(item)
            except UsageError:
                raise
            except Exception as exc:  # FormatError and anything a damaged file provokes
                self.failed += 1
                print(f"[{i}/{n}] {item}: {_describe(exc, item)}", file=self.progress, flush=True)
                if not self.keep_going:
                    print(f"error: {_error_text(exc, item)}", file=sys.stderr, flush=True)
                    return False
                continue
            dt = time.perf_counter() - t0
            if detail.startswith("lossless"):  # check: FILE: lossless (N bytes)
                line = f"{item}: {detail}, {dt:.2f} s"
            else:
                line = f"{item}: ok ({detail}, {dt:.2f} s)"
            print(f"[{i}/{n}] {line}", file=self.progress, flush=True)
        return True

    @property
    def status(self) -> int:
        return 1 if self.failed else 0


def _is_format_error(exc: BaseException) -> bool:
    return type(exc).__name__ == "FormatError" and hasattr(exc, "offset")


def _describe(exc: BaseException, path: str) -> str:
    if _is_format_error(exc):
        msg = exc.message
        if exc.offset is None:
            return f"error: {msg}"
        if msg.startswith("re-encoded bytes differ"):
            return f"re-encoded bytes differ at offset {exc.offset}: {msg}"
        return f"error at offset {exc.offset}: {msg}"
    return f"error: {type(exc).__name__}: {exc}"


def _error_text(exc: BaseException, path: str) -> str:
    if _is_format_error(exc):
        if not exc.path:
            exc.with_path(path)
        return str(exc)
    return f"{path}: {type(exc).__name__}: {exc}"


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="batch.py",
        description="RigPort command line: import, export, convert and check game assets.",
    )
    p.add_argument(
        "--keep-going", action="store_true", help="go on after a failed file; exit 1 at the end"
    )
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    s = sub.add_parser("import", help="import files (models first, then animations)")
    s.add_argument("files", nargs="+", metavar="FILE")
    s.add_argument("--save", metavar="OUT.blend", help="save the result as a .blend file")
    s.add_argument("--all-lods", action="store_true", help="import every LOD level")

    for name, text in (
        ("convert", "import IN, export OUT by its extension"),
        ("roundtrip", "import IN, export it in the same format to OUT"),
    ):
        s = sub.add_parser(name, help=text)
        s.add_argument("input", metavar="IN")
        s.add_argument("output", metavar="OUT")
        s.add_argument("--model", metavar="M.mdl", help="the skeleton for an animation")

    s = sub.add_parser("check", help="codec round trip: parse, re-encode, compare bytes")
    s.add_argument("files", nargs="+", metavar="FILE")
    s = sub.add_parser("inspect", help="JSON summary of files (codec only)")
    s.add_argument("files", nargs="+", metavar="FILE")
    s = sub.add_parser("pack", help="write a folder's files into a package (codec only)")
    s.add_argument("folder", metavar="DIR")
    s.add_argument("output", metavar="OUT.pak")
    s.add_argument("--lz4", action="store_true", help="LZ4-compress (ULZ4, or RLZ4 with --rbfx)")
    s.add_argument("--rbfx", action="store_true", help="rbfx layout (RPAK/RLZ4)")
    for sp in sub.choices.values():  # accepted after the command too
        sp.add_argument("--keep-going", action="store_true", default=argparse.SUPPRESS)
    return p


def _argv(argv: list[str] | None) -> list[str]:
    if argv is not None:
        return argv
    if "--" in sys.argv:  # blender -b --python batch.py -- ARGS
        return sys.argv[sys.argv.index("--") + 1 :]
    return sys.argv[1:]


def run(argv: list[str] | None = None) -> int:
    parser = _parser()
    try:
        args = parser.parse_args(_argv(argv))
    except SystemExit as exc:
        return int(exc.code or 0)
    try:
        return _dispatch(args)
    except UsageError as exc:
        print(f"batch.py: error: {exc}", file=sys.stderr, flush=True)
        return 2


def _dispatch(args) -> int:
    runner = Runner(args.keep_going)
    cmd = args.command
    if cmd == "check":
        _check_exts(args.files)
        items = [item for path in args.files for item in package_members(path)]
        runner.run(items, check_file)
        return runner.status

    if cmd == "pack":
        if _ext(args.output) != ".pak":
            raise UsageError(f"{args.output}: expected a .pak path")
        pack = args.output, args.lz4, args.rbfx
        runner.run([args.folder], lambda folder: pack_folder(folder, *pack))
        return runner.status

    if cmd == "inspect":
        _check_exts(args.files)
        results: list[dict] = []

        def work(path: str) -> str:
            results.append(inspect_file(path))
            return results[-1]["format"]

        runner.progress = sys.stderr  # stdout is the JSON document
        runner.run(args.files, work)
        doc = results[0] if len(args.files) == 1 and results else results
        if results:
            json.dump(doc, sys.stdout, indent=2)
            sys.stdout.write("\n")
        return runner.status

    options = vars(args)
    if cmd == "import":
        _check_exts(args.files)
        order = {"package": 0, "model": 1, "animation": 2, "other": 3}
        files = sorted(args.files, key=lambda f: order[_kind_or_other(f)])
        if args.save and _ext(args.save) != ".blend":
            raise UsageError(f"--save {args.save}: expected a .blend path")
        blender().reset()
        state: dict = {}
        ok = runner.run(files, lambda p: blender().import_file(p, state, options))
        if ok and args.save:
            bpy = blender().bpy
            bpy.ops.wm.save_as_mainfile(filepath=os.path.abspath(args.save))
            print(f"saved {args.save}", flush=True)
        return runner.status

    # convert / roundtrip
    _check_exts([args.input, args.output])
    if args.model:
        _check_exts([args.model], ("model",))
    in_kind, out_kind = _kind_or_other(args.input), _kind_or_other(args.output)
    if "other" not in (in_kind, out_kind) and in_kind != out_kind:
        raise UsageError(f"{args.input}: a {in_kind} cannot be written as {_ext(args.output)}")
    if cmd == "roundtrip" and _ext(args.input) != _ext(args.output):
        raise UsageError(
            f"roundtrip writes the same format: {args.input} and {args.output} "
            "have different extensions (use convert)"
        )
    runner.run([args.input], lambda p: _export_like(p, args.output, options))
    return runner.status


def _kind_or_other(path: str) -> str:
    """The kind of the file's format: by content for an existing file whose extension
    several formats share, else by extension; ``"other"`` when it cannot tell."""
    kinds = {f.kind for f in registry().all_formats() if _ext(path) in f.extensions}
    if len(kinds) == 1:
        return kinds.pop()
    try:
        return format_of(path).kind
    except Exception:  # unreadable or not yet written: the command itself will say why
        return "other"


def main(argv: list[str] | None = None) -> None:
    code = run(argv)
    if "bpy" in sys.modules:
        # bpy 4.2 (the module) can crash at interpreter exit: leave before it.
        bpy = sys.modules["bpy"]
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
        if not getattr(bpy.app, "binary_path", ""):
            os._exit(code)
    sys.exit(code)


if __name__ == "__main__":
    main()
