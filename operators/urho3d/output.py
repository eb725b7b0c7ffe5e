"""Where an Urho3D export's bytes go: a file of their own, or a file inside an existing package."""

from __future__ import annotations

import os
from collections.abc import Callable

import bpy
from bpy.props import StringProperty

from ...io_formats.codec.files import write_atomic
from ...io_formats.urho3d import package
from ..conventions import section

#: The folder of a package an export goes into when no path in it is given.
PACKAGE_FOLDER = "Models"


def package_path(package_file: str) -> str:
    """The package an export writes into (its option, a Blender path such as
    ``//Data.pak``, made absolute), or "" to write a file of its own."""
    return bpy.path.abspath(package_file) if package_file else ""


def default_entry(path: str) -> str:
    """The name an export gets inside a package when none is given: ``Models/<file name>``."""
    return f"{PACKAGE_FOLDER}/{os.path.basename(path)}"


def write_output(
    path: str, data: Callable[[], bytes], package_file: str = "", entry: str = ""
) -> str:
    """Write what ``data()`` makes to ``path`` (atomically), or into the existing
    package ``package_file`` as ``entry`` (default: ``path``'s file name); returns
    where it went."""
    if not package_file:
        write_atomic(path, data)
        return path
    name = entry or os.path.basename(path)
    package.update_file(package_file, name, data())
    return f"{package_file}:{name}"


def package_file_property(what: str):
    """An exporter's ``package_file``: an existing .pak to write ``what`` into."""
    return StringProperty(
        name="Into Package",
        subtype="FILE_PATH",
        default="",
        description=f"An existing .pak to write {what} into (instead of the file path)",
    )


def package_entry_property(description: str):
    """An exporter's ``package_entry``: the name in the package ``package_file`` names."""
    return StringProperty(name="Path in Package", default="", description=description)


def draw_package(layout, op) -> None:
    """The Package panel of the exporters: write into an existing .pak."""
    section(
        layout, op, "package", "Package", not op.package_file, ("package_file", "package_entry")
    )
