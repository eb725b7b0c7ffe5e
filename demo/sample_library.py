"""Sample files of all five formats, made by RigPort's own writers (no bpy).

``write_library(folder, count)`` writes ``count`` files, cycling through the
formats, each a little different (size and seed vary with its number); the
first five are the demo's assets. Used by ``demo/run_demo.py`` and
``bench/batch_bench.py``.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from pathlib import Path

FORMATS = ("Urho3D", "Unigine", "RenderWare", "MRTK", "BonesPro")


def _modules(pkg: str):
    def m(name: str):
        return importlib.import_module(f"{pkg}.{name}")

    return m


def makers(pkg: str) -> list[tuple[str, str, Callable[[int], bytes]]]:
    """(format, file extension, make(i) -> bytes) for each format, in FORMATS order."""
    m = _modules(pkg)
    u_samples, u_mdl = m("samples.urho3d"), m("io_formats.urho3d.mdl")
    g_samples, g_mesh = m("samples.unigine"), m("io_formats.unigine.mesh")
    r_samples, r_dff = m("samples.renderware"), m("io_formats.renderware.dff")
    k_samples, k_rec = m("samples.mrtk"), m("io_formats.mrtk.recording")
    b_samples, b_struct = m("samples.bonespro"), m("io_formats.bonespro.structure")
    return [
        (
            "Urho3D",
            ".mdl",
            lambda i: u_mdl.write(
                u_samples.skinned_model(n_bones=4 + i % 5, grid=(16 + i % 9, 8), morphs=1 + i % 2)
            ),
        ),
        (
            "Unigine",
            ".mesh",
            lambda i: g_mesh.write(
                g_samples.skinned_mesh(n_bones=4 + i % 4, rings=6 + i % 5, n_frames=4 + i % 4)
            ),
        ),
        (
            "RenderWare",
            ".dff",
            lambda i: r_dff.write(
                r_samples.skinned_ped(("III", "VC", "SA")[i % 3], n_bones=6 + i % 5, rings=6)
            ),
        ),
        (
            "MRTK",
            ".bin",
            lambda i: k_rec.write(k_samples.sample_recording(keys=6 + i % 7, seed=i)),
        ),
        (
            "BonesPro",
            ".txt",
            lambda i: b_struct.write(b_samples.structure(n_vertices=24 + i % 17, seed=i)),
        ),
    ]


def write_library(folder: Path, count: int, pkg: str = "rigport") -> list[tuple[str, Path]]:
    """Write ``count`` sample files into ``folder`` (one subfolder per format);
    (format, path) of each, in order."""
    made = makers(pkg)
    out = []
    for i in range(count):
        name, ext, make = made[i % len(made)]
        sub = folder / name.lower()
        os.makedirs(sub, exist_ok=True)
        path = sub / f"{name.lower()}_{i // len(made):04d}{ext}"
        path.write_bytes(make(i // len(made)))
        out.append((name, path))
    return out
