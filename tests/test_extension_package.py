"""The extension zip: Blender's CLI validates and builds it, and Blender installs it.

The install runs in a separate Blender process (the bpy module, or the
Blender program under pytest-blender) with its own temporary user folder, so
the extension's registration never meets the classes the other tests
register with ``rigport.register()``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.blender

ROOT = Path(__file__).resolve().parent.parent
REPO_MODULE = "rigport_test"  # the extension repository created for the install
# batch.py ships with the add-on, and loader.py with it (batch.py loads the package through it)
ADDON_FILES = {"__init__.py", "blender_manifest.toml", "batch.py", "loader.py"}
NOT_IN_ZIP = {
    ".ci",
    ".git",
    ".gitignore",
    ".venv",
    "bench",
    "demo",
    "dist",
    "requirements",
    "samples",
    "tests",
    "tools",
    "Makefile",
    "pyproject.toml",
}


@pytest.fixture(scope="module")
def tools():
    from rigport.tools import extension

    return extension


@pytest.fixture(scope="module")
def built_zip(tools, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    result = tools.build(out)
    assert result.returncode == 0, f"build failed:\n{result.stdout}\n{result.stderr}"
    zip_path = out / tools.zip_name()
    assert zip_path.is_file(), f"no {zip_path.name} in {sorted(p.name for p in out.iterdir())}"
    return zip_path


def test_manifest_validates(tools):
    result = tools.validate(ROOT)
    assert result.returncode == 0, f"validate failed:\n{result.stdout}\n{result.stderr}"


def test_zip_holds_only_the_add_on(tools, built_zip):
    with zipfile.ZipFile(built_zip) as zf:
        names = zf.namelist()
        assert zf.testzip() is None
    top = {name.split("/", 1)[0] for name in names}
    assert ADDON_FILES <= top, f"missing {ADDON_FILES - top} in {sorted(top)}"
    assert not (top & NOT_IN_ZIP), f"should not be packaged: {sorted(top & NOT_IN_ZIP)}"
    assert not [n for n in names if "__pycache__/" in n or n.endswith(".pyc")]
    # The built zip passes validation as well.
    result = tools.validate(built_zip)
    assert result.returncode == 0, f"validate (zip) failed:\n{result.stdout}\n{result.stderr}"


def test_zip_holds_no_sample_writer(built_zip):
    """The sample writers (``samples/``) are test data, not the add-on: none is in
    the zip, under its own name, an old one (``io_formats/*/samples.py``,
    ``*_samples.py``, ``io_formats/unigine/compare.py``) or another."""
    writers = {p.read_bytes() for p in (ROOT / "samples").glob("*.py")}
    with zipfile.ZipFile(built_zip) as zf:
        names = [n for n in zf.namelist() if n.endswith(".py")]
        copies = [n for n in names if zf.read(n) in writers and zf.read(n).strip()]
    named = [
        n
        for n in names
        if n.startswith("samples/")
        or re.search(r"(^|/)(\w+_)?samples\.py$", n)
        or n.endswith("unigine/compare.py")
    ]
    assert not named, f"sample writers in the zip: {named}"
    assert not copies, f"copies of sample writers in the zip: {copies}"


def _pinned(name: str) -> str:
    for line in (ROOT / "requirements" / "common.txt").read_text().splitlines():
        if line.startswith(f"{name}=="):
            return line.split("==", 1)[1].strip()
    raise AssertionError(f"{name} is not pinned in requirements/common.txt")


# Platform tags of each Blender platform's wheels, for CPython 3.11 (Blender 4.2
# to 5.0) and 3.13 (Blender 5.1+).
WHEEL_PLATFORMS = {
    "windows-x64": r"-win_amd64\.whl$",
    "windows-arm64": r"-win_arm64\.whl$",
    "macos-arm64": r"-macosx_\d+_\d+_arm64\.whl$",
    "macos-x64": r"-macosx_\d+_\d+_x86_64\.whl$",
    "linux-x64": r"manylinux_2_17_x86_64",
}
PYTHON_TAGS = ("cp311", "cp313")


def test_manifest_bundles_lz4_wheels_for_every_platform_and_python(tools, built_zip):
    data = tools.manifest()
    assert sorted(data["platforms"]) == sorted(WHEEL_PLATFORMS)
    version = _pinned("lz4")
    wheels = [w.removeprefix("./") for w in data["wheels"]]
    assert len(wheels) == len(WHEEL_PLATFORMS) * len(PYTHON_TAGS), wheels
    for platform, tag in WHEEL_PLATFORMS.items():
        for py in PYTHON_TAGS:
            hits = [w for w in wheels if re.search(tag, w) and f"-{py}-{py}-" in w]
            assert len(hits) == 1, (platform, py, wheels)
            assert hits[0].startswith(f"wheels/lz4-{version}-{py}-{py}-"), hits[0]
            assert (ROOT / hits[0]).is_file(), hits[0]
    with zipfile.ZipFile(built_zip) as zf:
        names = set(zf.namelist())
        for w in wheels:
            assert w in names, w
            with zipfile.ZipFile(zf.open(w)) as whl:  # a real wheel with the block module
                assert any(n.startswith("lz4/block/_block") for n in whl.namelist()), w


def test_split_platform_zips(tools, tmp_path):
    """One zip per platform (what Blender's extensions platform expects for add-ons
    with wheels), each holding only its own platform's wheels, both Pythons."""
    result = tools.build(tmp_path, split_platforms=True)
    assert result.returncode == 0, f"build failed:\n{result.stdout}\n{result.stderr}"
    zips = sorted(p.name for p in tmp_path.glob("*.zip"))
    assert zips == sorted(tools.zip_names(split_platforms=True)), zips
    for platform, tag in WHEEL_PLATFORMS.items():
        name = tools.zip_name(platform)
        with zipfile.ZipFile(tmp_path / name) as zf:
            wheels = [n for n in zf.namelist() if n.endswith(".whl")]
        assert len(wheels) == len(PYTHON_TAGS), (name, wheels)
        assert all(re.search(tag, w) for w in wheels), (name, wheels)


# Runs in a fresh Blender process; prints one line "RIGPORT_RESULT <json>".
INSTALL_SCRIPT = r"""
import json, os, sys, traceback

result = {}
try:
    import bpy  # first: it puts Blender's script folders on sys.path

    import addon_utils

    zip_path = os.environ["RIGPORT_TEST_ZIP"]
    repo_module = os.environ["RIGPORT_TEST_REPO_MODULE"]
    addon = "bl_ext." + repo_module + ".rigport"
    result["blender"] = bpy.app.version_string

    def has_operator():
        try:
            bpy.ops.import_scene.urho3d_mdl.get_rna_type()
        except Exception:
            return False
        return True

    result["operator_before"] = has_operator()
    repos = bpy.context.preferences.extensions.repos
    repo = repos.new(
        name="RigPort test",
        module=repo_module,
        custom_directory=os.environ["RIGPORT_TEST_REPO_DIR"],
        source="USER",
    )
    result["install"] = sorted(bpy.ops.extensions.package_install_files(
        filepath=zip_path, repo=repo_module, enable_on_install=True
    ))
    result["installed_files"] = sorted(os.listdir(os.path.join(repo.directory, "rigport")))
    local = bpy.utils.user_resource("EXTENSIONS", path=".local")
    result["wheel_modules"] = sorted(
        os.path.relpath(os.path.join(root, f), local)
        for root, _dirs, files in os.walk(local)
        for f in files
        if "lz4" in root.split(os.sep) and f.startswith("_block")
    )
    result["check_installed"] = list(addon_utils.check(addon))
    result["operator_installed"] = has_operator()

    # lz4 from the wheel the extension installed for this Python, not the test
    # environment's own copy: put the extension's site-packages first.
    site = [os.path.dirname(os.path.dirname(os.path.join(local, p)))
            for p in result["wheel_modules"]]
    result["python"] = "%d.%d" % sys.version_info[:2]
    for name in [m for m in sys.modules if m == "lz4" or m.startswith("lz4.")]:
        del sys.modules[name]
    sys.path.insert(0, os.path.dirname(site[0]))
    import lz4.block._block
    result["lz4_file"] = os.path.relpath(lz4.block._block.__file__, local)
    bpy.ops.import_scene.urho3d_package(filepath=os.environ["RIGPORT_TEST_PAK"])
    result["package_objects"] = sorted(o.type for o in bpy.data.objects)
    result["package_actions"] = len(bpy.data.actions)

    addon_utils.disable(addon, default_set=True)
    result["check_disabled"] = list(addon_utils.check(addon))
    result["operator_disabled"] = has_operator()

    repo_index = list(repos).index(repo)
    result["uninstall"] = sorted(bpy.ops.extensions.package_uninstall(
        repo_index=repo_index, pkg_id="rigport"
    ))
    result["left_after_uninstall"] = os.path.exists(os.path.join(repo.directory, "rigport"))
    repos.remove(repo)
except BaseException:
    result["error"] = traceback.format_exc()
print("RIGPORT_RESULT " + json.dumps(result), flush=True)
sys.stderr.flush()
os._exit(0)  # bpy 4.2 can crash at interpreter exit
"""


def _blender_command() -> list[str]:
    """A command that runs INSTALL_SCRIPT in a new Blender process."""
    import bpy

    if bpy.app.binary_path:  # inside Blender (pytest-blender): start the same program
        return [
            bpy.app.binary_path,
            "--background",
            "--factory-startup",
            "--python-exit-code",
            "1",
            "--python-expr",
            INSTALL_SCRIPT,
        ]
    return [sys.executable, "-c", INSTALL_SCRIPT]  # the bpy module


def test_zip_installs_and_registers_in_blender(built_zip, tmp_path):
    from rigport.io_formats.urho3d import package
    from rigport.samples import rbfx as rbfx_samples

    pak = tmp_path / "Data.pak"
    pak.write_bytes(rbfx_samples.sample_package(True, False))
    assert package.read(pak.read_bytes()).magic == package.ULZ4
    env = dict(os.environ)
    env.update(
        BLENDER_USER_RESOURCES=str(tmp_path / "user"),
        RIGPORT_TEST_ZIP=str(built_zip),
        RIGPORT_TEST_REPO_MODULE=REPO_MODULE,
        RIGPORT_TEST_REPO_DIR=str(tmp_path / "repo"),
        RIGPORT_TEST_PAK=str(pak),
    )
    proc = subprocess.run(
        _blender_command(), env=env, capture_output=True, text=True, timeout=300, check=False
    )
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RIGPORT_RESULT ")]
    assert lines, f"no result (exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
    result = json.loads(lines[-1].split(" ", 1)[1])
    details = f"{json.dumps(result, indent=1)}\n--- output:\n{proc.stdout}\n{proc.stderr}"

    assert "error" not in result, details
    assert result["operator_before"] is False, details
    assert result["install"] == ["FINISHED"], details
    assert {"__init__.py", "blender_manifest.toml"} <= set(result["installed_files"]), details
    # addon_utils.check -> (loaded by default, loaded now)
    assert result["check_installed"] == [True, True], details
    assert result["operator_installed"] is True, details

    # the bundled lz4 wheel for this platform and Python was installed with the
    # extension, imports, and reads an LZ4-compressed package through it
    assert any(p.endswith(".so") or p.endswith(".pyd") for p in result["wheel_modules"]), details
    assert f"python{result['python']}" in result["lz4_file"], details
    abi = result["python"].replace(".", "")  # _block.cpython-313-... or _block.cp313-...
    assert re.search(f"cp(ython-)?{abi}", os.path.basename(result["lz4_file"])), details
    assert "MESH" in result["package_objects"], details
    assert "ARMATURE" in result["package_objects"], details

    assert result["check_disabled"] == [False, False], details
    assert result["operator_disabled"] is False, details
    assert result["uninstall"] == ["FINISHED"], details
    assert result["left_after_uninstall"] is False, details
