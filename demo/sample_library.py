"""Sample files of all five formats, made by RigPort's own writers (no bpy).

``write_library(folder, count)`` writes ``count`` files, cycling through the
formats, each a little different (size and seed vary with its number). Used
by ``bench/batch_bench.py`` and the tests as ``rigport.demo.sample_library``; it
needs the package ``rigport`` loaded (``loader.py``).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from rigport.io_formats.bonespro import structure as b_struct
from rigport.io_formats.mrtk import recording as k_rec
from rigport.io_formats.renderware import dff as r_dff
from rigport.io_formats.unigine import mesh as g_mesh
from rigport.io_formats.urho3d import ani as u_ani
from rigport.io_formats.urho3d import mdl as u_mdl
from rigport.samples import bonespro as b_samples
from rigport.samples import mrtk as k_samples
from rigport.samples import renderware as r_samples
from rigport.samples import unigine as g_samples
from rigport.samples import urho3d as u_samples

FORMATS = ("Urho3D", "Unigine", "RenderWare", "MRTK", "BonesPro")


def makers() -> list[tuple[str, str, Callable[[int], bytes]]]:
    """(format, file extension, make(i) -> bytes) for each format, in FORMATS order."""
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


def write_library(folder: Path, count: int) -> list[tuple[str, Path]]:
    """Write ``count`` sample files into ``folder`` (one subfolder per format);
    (format, path) of each, in order."""
    made = makers()
    out = []
    for i in range(count):
        name, ext, make = made[i % len(made)]
        sub = folder / name.lower()
        os.makedirs(sub, exist_ok=True)
        path = sub / f"{name.lower()}_{i // len(made):04d}{ext}"
        path.write_bytes(make(i // len(made)))
        out.append((name, path))
    return out


# Characters of a library run: (folder, model stem, bones, animation stems).
# Two folders hold a ``Hero.mdl`` and a ``Hero_Walk.ani`` of different
# skeletons; ``Clip.ani`` fits Ogre by its bones alone; ``Stray.ani`` fits none.
CHARACTERS = (
    ("a", "Hero", 5, ("Hero_Walk", "Hero_Run")),
    ("a", "Ogre", 7, ("Ogre_Walk", "Clip")),
    ("b", "Hero", 6, ("Hero_Walk",)),
)


def write_characters(folder: Path, take_name: str = "Take 001") -> dict[str, list[Path]]:
    """Urho3D characters with their animations in two subfolders of ``folder``
    (see ``CHARACTERS``), every animation named ``take_name`` inside, plus
    ``b/Stray.ani`` whose tracks name bones no model has. The animation files
    of each model, by the model's path."""
    out: dict[str, list[Path]] = {}
    for i, (sub, stem, n_bones, anims) in enumerate(CHARACTERS):
        model = u_samples.skinned_model(n_bones=n_bones, grid=(12 + i, 6), morphs=1)
        for bone in model.bones:
            bone.name = bone.name.replace("Tentacle", f"{stem}{n_bones}")
        path = folder / sub / f"{stem}.mdl"
        os.makedirs(path.parent, exist_ok=True)
        path.write_bytes(u_mdl.write(model))
        out[str(path)] = []
        for k, anim in enumerate(anims):
            clip = u_samples.walk_animation(model, n_keys=9 + k, name=take_name, cycles=1 + k)
            anim_path = folder / sub / f"{anim}.ani"
            anim_path.write_bytes(u_ani.write(clip))
            out[str(path)].append(anim_path)
    stray = u_samples.walk_animation([f"Ghost_{j}" for j in range(4)], n_keys=5, name=take_name)
    (folder / "b" / "Stray.ani").write_bytes(u_ani.write(stray))
    return out
