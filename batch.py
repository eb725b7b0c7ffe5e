"""RigPort on the command line.

    blender -b --python batch.py -- COMMAND ARGS...
    python batch.py COMMAND ARGS...          (with the bpy module installed)

Commands:
    import FILE... [--save OUT.blend] [--all-lods]   models first, then animations
    convert IN OUT [--model M.mdl]                   import IN, export by OUT's extension
    roundtrip IN OUT [--model M.mdl]                 import, export in the same format
    check FILE...                                    codec only: parse, re-encode, compare
    inspect FILE...                                  codec only: JSON summary on stdout

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
import time
import types
from pathlib import Path

HERE = Path(__file__).resolve().parent
PACKAGE = "rigport"

MODEL_EXTS = {".mdl": "urho3d"}
ANIM_EXTS = {".ani": "urho3d"}
KNOWN_EXTS = {**MODEL_EXTS, **ANIM_EXTS}


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


def _ext(path: str) -> str:
    return os.path.splitext(path)[1].lower()


def _check_exts(paths: list[str], allowed: dict[str, str]) -> None:
    for p in paths:
        if _ext(p) not in allowed:
            raise UsageError(
                f"{p}: unknown extension {_ext(p) or '(none)'!r} "
                f"(expected {', '.join(sorted(allowed))})"
            )


# --------------------------------------------------------------------------
# Codec-only commands (no bpy)


def _codec(path: str):
    mod = "mdl" if _ext(path) in MODEL_EXTS else "ani"
    return submodule(f"io_formats.{KNOWN_EXTS[_ext(path)]}.{mod}")


def _read_file(path: str) -> bytes:
    FormatError = _format_error_class()
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError as exc:
        raise FormatError(f"cannot read file: {exc.strerror or exc}", None, path) from exc


def check_file(path: str) -> str:
    """Parse, re-encode and compare; returns the detail text, raises on failure."""
    FormatError = _format_error_class()
    data = _read_file(path)
    codec = _codec(path)
    try:
        obj = codec.read(data)
    except FormatError as err:
        raise err.with_path(path) from None
    out = codec.write(obj)
    if out != data:
        n = min(len(out), len(data))
        diff = next((i for i in range(n) if out[i] != data[i]), n)
        raise FormatError(
            f"re-encoded bytes differ ({len(out)} bytes written, {len(data)} read)", diff, path
        )
    return f"lossless ({len(data)} bytes)"


def _floats(a) -> list[float]:
    return [round(float(x), 6) for x in a]


def inspect_model(model) -> dict:
    return {
        "format": "urho3d.mdl",
        "magic": model.magic.decode("ascii", "replace"),
        "vertex_buffers": [
            {
                "vertices": vb.count,
                "elements": [e.key for e in vb.elements],
                "legacy_mask": vb.legacy_mask,
                "morph_range": [vb.morph_start, vb.morph_count],
            }
            for vb in model.vertex_buffers
        ],
        "index_buffers": [
            {"indices": len(ib.indices), "index_size": ib.indices.dtype.itemsize}
            for ib in model.index_buffers
        ],
        "geometries": [
            {
                "bone_mapping": len(g.bone_mapping),
                "lods": [
                    {
                        "distance": round(float(lod.distance), 6),
                        "primitive": lod.primitive_type,
                        "vertex_buffer": lod.vertex_buffer,
                        "index_buffer": lod.index_buffer,
                        "draw_range": [lod.index_start, lod.index_count],
                    }
                    for lod in g.lods
                ],
            }
            for g in model.geometries
        ],
        "morphs": [m.name for m in model.morphs],
        "bones": [
            {
                "name": b.name,
                "parent": None if b.parent == i else model.bones[b.parent].name,
            }
            for i, b in enumerate(model.bones)
        ],
        "bbox": [_floats(model.bbox_min), _floats(model.bbox_max)],
        "geometry_centers": model.geometry_centers is not None,
    }


def inspect_animation(anim) -> dict:
    return {
        "format": "urho3d.ani",
        "name": anim.name,
        "length": round(float(anim.length), 6),
        "tracks": [{"name": t.name, "mask": t.mask, "keys": len(t.keys)} for t in anim.tracks],
    }


def inspect_file(path: str) -> dict:
    FormatError = _format_error_class()
    data = _read_file(path)
    try:
        obj = _codec(path).read(data)
    except FormatError as err:
        raise err.with_path(path) from None
    summary = inspect_model(obj) if _ext(path) in MODEL_EXTS else inspect_animation(obj)
    return {"file": path, **summary}


# --------------------------------------------------------------------------
# Blender commands


class _Blender:
    """bpy, the add-on's operator module and the context, loaded on first use."""

    def __init__(self) -> None:
        import bpy

        self.bpy = bpy
        pkg = package(with_init=True)
        self.pkg = pkg
        self.ops = importlib.import_module(f"{pkg.__name__}.operators.urho3d")

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

    def import_model(self, path: str, all_lods: bool = False):
        return self.ops.import_mdl_file(self.context, path, all_lods=all_lods)

    def import_animation(self, path: str, armature):
        return self.ops.import_ani_file(self.context, path, armature)

    def export_model(self, path: str, objects) -> list[str]:
        meshes = [o for o in objects if o.type == "MESH"]
        return self.ops.export_mdl_file(self.context, path, meshes)

    def export_animation(self, path: str, armature, action) -> None:
        self.ops.export_ani_file(self.context, path, armature, action)


_BLENDER: list[_Blender] = []


def blender() -> _Blender:
    if not _BLENDER:
        _BLENDER.append(_Blender())
    return _BLENDER[0]


def _import_files(paths: list[str], all_lods: bool, state: dict) -> str:
    """Import one file into the current scene; ``state`` carries the armature."""
    bl = blender()
    path = paths[0]
    if _ext(path) in MODEL_EXTS:
        built = bl.import_model(path, all_lods)
        if built.armature is not None:
            state["armature"] = built.armature
        state["objects"] = state.get("objects", []) + list(built.objects)
        arm = f", armature {built.armature.name}" if built.armature is not None else ""
        return f"{len(built.objects)} objects{arm}"
    arm, action, how = bl.import_animation(path, state.get("armature"))
    state["armature"], state["action"] = arm, action
    return f"action {action.name} on {arm.name} ({how})"


def _export_like(in_path: str, out_path: str, model: str | None) -> str:
    """Import ``in_path`` (and ``model`` for an animation) into an empty file; export."""
    bl = blender()
    bl.reset()
    if _ext(in_path) in MODEL_EXTS:
        built = bl.import_model(in_path, all_lods=True)  # keep every LOD level
        warnings = bl.export_model(out_path, built.objects)
    else:
        if not model:
            raise UsageError(f"{in_path}: an animation needs --model MODEL.mdl for its skeleton")
        built = bl.import_model(model)
        arm, action, _how = bl.import_animation(in_path, built.armature)
        bl.export_animation(out_path, arm, action)
        warnings = []
    size = os.path.getsize(out_path)
    text = f"wrote {out_path} ({size} bytes)"
    for w in warnings:
        text += f"; warning: {w}"
    return text


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
        _check_exts(args.files, KNOWN_EXTS)
        runner.run(args.files, check_file)
        return runner.status

    if cmd == "inspect":
        _check_exts(args.files, KNOWN_EXTS)
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

    if cmd == "import":
        _check_exts(args.files, KNOWN_EXTS)
        files = [f for f in args.files if _ext(f) in MODEL_EXTS]
        files += [f for f in args.files if _ext(f) in ANIM_EXTS]
        if args.save and _ext(args.save) != ".blend":
            raise UsageError(f"--save {args.save}: expected a .blend path")
        blender().reset()
        state: dict = {}
        ok = runner.run(files, lambda p: _import_files([p], args.all_lods, state))
        if ok and args.save:
            bpy = blender().bpy
            bpy.ops.wm.save_as_mainfile(filepath=os.path.abspath(args.save))
            print(f"saved {args.save}", flush=True)
        return runner.status

    # convert / roundtrip
    _check_exts([args.input, args.output], KNOWN_EXTS)
    if args.model:
        _check_exts([args.model], MODEL_EXTS)
    in_model, out_model = _ext(args.input) in MODEL_EXTS, _ext(args.output) in MODEL_EXTS
    if in_model != out_model:
        kind = "a model" if in_model else "an animation"
        raise UsageError(f"{args.input}: {kind} cannot be written as {_ext(args.output)}")
    if cmd == "roundtrip" and _ext(args.input) != _ext(args.output):
        raise UsageError(
            f"roundtrip writes the same format: {args.input} and {args.output} "
            "have different extensions (use convert)"
        )
    runner.run([args.input], lambda p: _export_like(p, args.output, args.model))
    return runner.status


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
