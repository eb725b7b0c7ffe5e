"""Validate and build the RigPort extension zip with Blender's own extension CLI.

The CLI (``blender_ext.py``) ships inside the bpy wheel and inside every
Blender install, under ``<version>/scripts/addons_core/bl_pkg/cli/``. It runs
with plain Python 3.11 and needs nothing but the standard library.

Usage (from the repository root; ``make package`` does this)::

    .venv/bpy42/bin/python tools/extension.py validate
    .venv/bpy42/bin/python tools/extension.py build --output-dir dist

The functions are also used by ``tests/test_extension_package.py``. Finding
the CLI never imports bpy unless bpy is already imported (inside Blender).
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CLI_RELPATH = Path("addons_core", "bl_pkg", "cli", "blender_ext.py")
TAGS_RELPATH = Path("modules", "_bpy_internal", "extensions", "tags.py")


def scripts_dir() -> Path:
    """Blender's bundled ``scripts`` folder for the bpy this Python can see."""
    bpy = sys.modules.get("bpy")
    if bpy is not None:  # inside Blender, or bpy already imported
        return Path(bpy.utils.system_resource("SCRIPTS"))
    spec = importlib.util.find_spec("bpy")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError(
            "cannot find the bpy package for this Python; run with a venv that has bpy "
            "(make venv) or pass --cli"
        )
    candidates = []
    for location in spec.submodule_search_locations:
        candidates += sorted(Path(location).glob("[0-9]*.[0-9]*/scripts"))
    if len(candidates) != 1:
        raise RuntimeError(f"expected one bpy/<version>/scripts folder, found {candidates}")
    return candidates[0]


def find_cli() -> Path:
    cli = scripts_dir() / CLI_RELPATH
    if not cli.is_file():
        raise RuntimeError(f"Blender extension CLI not found at {cli}")
    return cli


def find_valid_tags() -> Path | None:
    """Blender's list of valid extension tags, so the manifest's tags are checked too."""
    tags = scripts_dir() / TAGS_RELPATH
    return tags if tags.is_file() else None


def _run(args: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, capture_output=True, text=True, check=False)


def _tags_args(cli: Path | None) -> list[str]:
    if cli is not None:  # an explicit CLI: look for the tags file beside it
        tags = cli.parents[3] / TAGS_RELPATH
        return ["--valid-tags", str(tags)] if tags.is_file() else []
    tags = find_valid_tags()
    return ["--valid-tags", str(tags)] if tags else []


def validate(source: Path = ROOT, cli: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``blender_ext.py validate`` on a source folder or a built zip."""
    exe = cli or find_cli()
    return _run([sys.executable, str(exe), "validate", str(source), *_tags_args(cli)])


def build(
    output_dir: Path, source: Path = ROOT, cli: Path | None = None, split_platforms: bool = False
) -> subprocess.CompletedProcess[str]:
    """Run ``blender_ext.py build``: one zip ``<output_dir>/<id>-<version>.zip`` for
    every platform, or with ``split_platforms`` one zip per platform, holding
    only that platform's wheels (:func:`zip_names`)."""
    exe = cli or find_cli()
    output_dir.mkdir(parents=True, exist_ok=True)  # the CLI needs it to exist
    return _run(
        [
            sys.executable,
            str(exe),
            "build",
            "--source-dir",
            str(source),
            "--output-dir",
            str(output_dir),
            *(["--split-platforms"] if split_platforms else []),
            *_tags_args(cli),
        ]
    )


def manifest() -> dict:
    import tomllib

    with open(ROOT / "blender_manifest.toml", "rb") as fh:
        return tomllib.load(fh)


def zip_name(platform: str | None = None) -> str:
    """The zip's name: for every platform, or for one (``linux-x64`` ...)."""
    data = manifest()
    suffix = f"-{platform.replace('-', '_')}" if platform else ""
    return f"{data['id']}-{data['version']}{suffix}.zip"


def zip_names(split_platforms: bool = False) -> list[str]:
    if not split_platforms:
        return [zip_name()]
    return [zip_name(p) for p in manifest()["platforms"]]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=["cli", "validate", "build"])
    parser.add_argument("--source-dir", type=Path, default=ROOT)
    parser.add_argument("--output-dir", type=Path, default=ROOT / "dist")
    parser.add_argument("--cli", type=Path, default=None, help="path of blender_ext.py")
    parser.add_argument(
        "--split-platforms",
        action="store_true",
        help="also build one zip per platform (what Blender's extensions platform expects)",
    )
    args = parser.parse_args(argv)

    if args.command == "cli":
        print(args.cli or find_cli())
        return 0

    result = validate(args.source_dir, args.cli)
    sys.stdout.write(result.stdout)
    sys.stderr.write(result.stderr)
    if result.returncode != 0:
        print(f"validate failed (exit {result.returncode})", file=sys.stderr)
        return result.returncode
    if args.command == "validate":
        return 0

    result = build(args.output_dir, args.source_dir, args.cli)
    sys.stdout.write(result.stdout)
    sys.stderr.write(result.stderr)
    if result.returncode != 0:
        print(f"build failed (exit {result.returncode})", file=sys.stderr)
        return result.returncode
    names = zip_names()
    if args.split_platforms:
        result = build(args.output_dir, args.source_dir, args.cli, split_platforms=True)
        sys.stdout.write(result.stdout)
        sys.stderr.write(result.stderr)
        if result.returncode != 0:
            print(f"build --split-platforms failed (exit {result.returncode})", file=sys.stderr)
            return result.returncode
        names += zip_names(split_platforms=True)
    for name in names:
        zip_path = args.output_dir / name
        if not zip_path.is_file():
            print(f"build reported success but {zip_path} is missing", file=sys.stderr)
            return 1
        print(f"built {zip_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
