"""Shared test set-up for RigPort.

Works in two modes:

* plain pytest with the ``bpy`` module from PyPI (``make test``), and
* inside a real Blender through pytest-blender
  (``pytest --blender-executable /path/to/blender tests/``), where ``bpy`` is
  already imported when this file is loaded.

What it provides:

* The repository is importable as the package ``rigport`` whatever its folder
  is called (``loader.py``), so test modules can
  ``from rigport.io_formats.urho3d import mdl``.
  The package's ``__init__.py`` (which imports bpy) runs only when something
  asks for it: the ``rigport`` fixture, or an attribute such as
  ``rigport.register``. Submodules such as ``rigport.io_formats`` load without
  it, so codec tests never import bpy.
* Fixtures ``rigport``, ``rigport_registered``, ``blank_blend``,
  ``corpus_dir`` and ``bpy_available``.
* Every Urho3D model a test writes (``mdl.write``: exporters, batch handlers
  and package writers in this process) is held to the engine's rules
  (``io_formats/urho3d/engine_rules.py``); a test that writes a model the
  engine refuses on purpose says so with ``@pytest.mark.urho3d_engine(skip=True)``,
  one for GL3/D3D11 only with ``@pytest.mark.urho3d_engine(bone_limit=128)``.
* Markers: ``blender`` tests (and everything under ``tests/blender/``) are
  skipped when bpy cannot be imported; ``corpus`` tests (and every test that
  uses ``corpus_dir``) are skipped when ``../shared/corpus`` is absent.
* ``BLENDER_USER_RESOURCES`` points at a temporary folder before bpy is
  imported, so tests never read or write a real Blender configuration, and
  ``TMPDIR`` at another, for the processes tests start: what they leave there
  (Blender's session folders) is removed with it.
* bpy 4.2 crashes at interpreter exit after a test session; with the bpy
  module the session ends with ``os._exit(status)`` once pytest has printed
  its summary, so the exit status is pytest's own. Set
  ``RIGPORT_NO_HARD_EXIT=1`` to turn that off.
"""

from __future__ import annotations

import importlib.metadata
import os
import runpy
import shutil
import sys
import tempfile
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "rigport"
CORPUS_DIR = Path(os.environ.get("RIGPORT_CORPUS", ROOT.parent / "shared" / "corpus"))
BLENDER_TESTS_DIR = ROOT / "tests" / "blender"

# --------------------------------------------------------------------------
# Blender user resources: before anything can import bpy.

_USER_RESOURCES: str | None = None
_CHILD_TEMP: str | None = None
if "bpy" not in sys.modules:
    # Not inside Blender. With pytest-blender this is the outer pytest, and
    # the Blender it starts inherits the variable: a clean configuration too.
    _USER_RESOURCES = tempfile.mkdtemp(prefix="rigport-blender-user-")
    os.environ["BLENDER_USER_RESOURCES"] = _USER_RESOURCES
    # Test children that end with os._exit (the bpy module can crash at interpreter
    # exit) skip Blender's removal of its session folder (blender_XXXXXX): their
    # temporary directory is one of this session's, removed with it. This process
    # keeps the system's (tempfile has it cached from here on).
    tempfile.gettempdir()
    _CHILD_TEMP = tempfile.mkdtemp(prefix="rigport-test-temp-")
    os.environ["TMPDIR"] = _CHILD_TEMP


# --------------------------------------------------------------------------
# bpy availability


_BPY_STATE: dict[str, object] = {}


def bpy_available() -> bool:
    """True when ``import bpy`` works in this process (the result is cached)."""
    if "ok" not in _BPY_STATE:
        try:
            import bpy  # noqa: F401
        except Exception as exc:  # ImportError, or a broken bpy build
            _BPY_STATE.update(ok=False, error=f"{type(exc).__name__}: {exc}")
        else:
            _BPY_STATE.update(ok=True, error="")
    return bool(_BPY_STATE["ok"])


def _in_blender_executable() -> bool:
    """True inside a Blender program (pytest-blender), False with the bpy module."""
    bpy = sys.modules.get("bpy")
    return bpy is not None and bool(bpy.app.binary_path)


# --------------------------------------------------------------------------
# The repository as the package ``rigport``

_LOADER = runpy.run_path(str(ROOT / "loader.py"))  # loader.py: see its docstring
_LOADER["package"]()


def _execute_package_init() -> types.ModuleType:
    """Run the package's ``__init__.py`` once (it registers nothing by itself)."""
    return _LOADER["package"](init=True)


# --------------------------------------------------------------------------
# Registration of the add-on classes (once per session)

_REGISTRATION = {"registered": False}


def _ensure_registered(rigport: types.ModuleType) -> None:
    if _REGISTRATION["registered"]:
        return
    try:
        rigport.register()
    except ValueError as exc:  # Blender: "register_class(...): already registered ..."
        if "already registered" not in str(exc):
            raise
    _REGISTRATION["registered"] = True


# --------------------------------------------------------------------------
# Fixtures


@pytest.fixture(scope="session", name="bpy_available")
def bpy_available_fixture() -> bool:
    """Whether bpy can be imported (tests that need it should be marked ``blender``)."""
    return bpy_available()


@pytest.fixture(scope="session")
def rigport() -> types.ModuleType:
    """The add-on package with its ``__init__.py`` executed (imports bpy)."""
    if not bpy_available():
        pytest.skip(f"bpy not importable: {_BPY_STATE['error']}")
    return _execute_package_init()


@pytest.fixture(scope="session")
def rigport_registered(rigport: types.ModuleType):
    """``rigport.register()`` once per session; ``unregister()`` at its end."""
    _ensure_registered(rigport)
    yield rigport
    if _REGISTRATION["registered"]:
        _REGISTRATION["registered"] = False
        rigport.unregister()


@pytest.fixture
def blank_blend(rigport_registered):
    """An empty Blender file with RigPort registered; returns the ``bpy`` module.

    ``read_factory_settings`` keeps classes registered by calling
    ``register()`` directly, so registering once per session is enough.
    """
    import bpy

    bpy.ops.wm.read_factory_settings(use_empty=True)
    return bpy


@pytest.fixture(autouse=True)
def urho3d_engine_rules(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch):
    """``mdl.write`` refuses (AssertionError) a model that breaks the engine's rules."""
    marker = request.node.get_closest_marker("urho3d_engine")
    options = dict(marker.kwargs) if marker is not None else {}
    if options.get("skip"):
        yield
        return
    from rigport.io_formats.urho3d import engine_rules, mdl

    limit = int(options.get("bone_limit", engine_rules.SKIN_MATRICES_EVERYWHERE))
    write = mdl.write

    def checked_write(model: mdl.Model) -> bytes:
        broken = engine_rules.check(model, limit)
        assert not broken, "the Urho3D engine would refuse this model:\n" + "\n".join(broken)
        return write(model)

    monkeypatch.setattr(mdl, "write", checked_write)
    yield


@pytest.fixture(scope="session")
def corpus_dir() -> Path:
    """``../shared/corpus`` (or ``$RIGPORT_CORPUS``); skips the test when absent."""
    if not CORPUS_DIR.is_dir():
        pytest.skip(f"{CORPUS_DIR} not present (../shared/corpus)")
    return CORPUS_DIR


# --------------------------------------------------------------------------
# Hooks


MIN_BLENDER = (4, 2, 0)  # blender_manifest.toml's blender_version_min


def _why_no_blender() -> str | None:
    """Why Blender tests cannot run here, or None when they can."""
    if not bpy_available():
        return f"bpy not importable: {_BPY_STATE['error']}"
    import bpy

    if tuple(bpy.app.version) < MIN_BLENDER:
        return f"Blender {bpy.app.version_string} is older than RigPort's minimum 4.2.0"
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        path = Path(str(item.path))
        if BLENDER_TESTS_DIR in path.parents and item.get_closest_marker("blender") is None:
            item.add_marker(pytest.mark.blender)
        if "corpus_dir" in getattr(item, "fixturenames", ()) and not item.get_closest_marker(
            "corpus"
        ):
            item.add_marker(pytest.mark.corpus)

    needs_bpy = [item for item in items if item.get_closest_marker("blender")]
    reason = _why_no_blender() if needs_bpy else None
    if reason:
        skip = pytest.mark.skip(reason=reason)
        for item in needs_bpy:
            item.add_marker(skip)

    if not CORPUS_DIR.is_dir():
        skip = pytest.mark.skip(reason=f"{CORPUS_DIR} not present (../shared/corpus)")
        for item in items:
            if item.get_closest_marker("corpus"):
                item.add_marker(skip)


def pytest_report_header(config: pytest.Config) -> list[str]:
    lines = [f"rigport: {ROOT}"]
    bpy = sys.modules.get("bpy")
    if bpy is not None:  # inside Blender
        lines.append(f"blender: {bpy.app.version_string} ({bpy.app.binary_path or 'bpy module'})")
    else:
        try:
            lines.append(f"bpy module: {importlib.metadata.version('bpy')}")
        except importlib.metadata.PackageNotFoundError:
            lines.append("bpy module: not installed")
    lines.append(f"corpus: {CORPUS_DIR if CORPUS_DIR.is_dir() else 'absent'}")
    return lines


class _RepoRootIsNotATestPackage:
    """Collect the repository root as a plain folder.

    The root holds the add-on's ``__init__.py``, so pytest would make it a
    ``Package`` and import that file as a test module, outside any package
    (its relative imports fail). A conftest's own hooks do not reach the
    root, so this is registered as a plugin from ``pytest_configure``.
    """

    @pytest.hookimpl(tryfirst=True)
    def pytest_collect_directory(self, path: Path, parent: pytest.Collector):
        if path == ROOT:
            return pytest.Dir.from_parent(parent, path=path)
        return None


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "urho3d_engine(skip=False, bone_limit=64): how the Urho3D engine-rules check "
        "treats the models this test writes",
    )
    if not config.pluginmanager.has_plugin("rigport-root-dir"):
        config.pluginmanager.register(_RepoRootIsNotATestPackage(), "rigport-root-dir")


_SESSION: dict[str, pytest.Session] = {}


def pytest_sessionstart(session: pytest.Session) -> None:
    _SESSION["session"] = session


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    for folder in (_USER_RESOURCES, _CHILD_TEMP):
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)

    session = _SESSION.get("session")
    if (
        session is None  # pytest stopped before the session (e.g. pytest-blender's outer run)
        or "bpy" not in sys.modules  # nothing imported bpy: a normal exit is safe
        or _in_blender_executable()  # inside Blender, which exits by itself
        or os.environ.get("RIGPORT_NO_HARD_EXIT")
    ):
        return
    # bpy 4.2 crashes during interpreter shutdown: leave before it, keeping
    # pytest's exit status. The summary line has been printed by now.
    config.get_terminal_writer().flush()
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            stream.flush()
        except Exception:
            pass
    from rigport.cli.leave import leave

    leave(int(session.exitstatus))  # Blender's session folder removed first
