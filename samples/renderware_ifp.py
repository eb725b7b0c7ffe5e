"""IFP packages built in code (no IFP is in the corpus): a walk cycle for the
sample ped of :mod:`.samples`, and many-animation packages for benchmarks.

The keys are the ped's rest pose (its frames' local transforms) turned by a
sine per bone, so frame 0 of ``walk`` is the rest pose: an importer that gets
the IFP's conventions wrong (conjugated rotations, bone matching) moves the ped
off its rest pose there. Quirks real files have are added on request: stale
bytes after a name's NUL, the GTA III sibling layout, 2048-byte padding.
"""

from __future__ import annotations

import numpy as np

from ..io_formats.posing import quat_multiply
from ..io_formats.renderware import ifp
from ..io_formats.scene import Skeleton
from .renderware import _axis_quat, ped_skeleton

#: Key layouts per game: (IFP version, compressed, bone IDs in the ANIM).
GAMES = {
    "III": ("ANPK", False, False),
    "VC": ("ANPK", False, True),
    "SA": ("ANP3", True, True),
    "SA_float": ("ANP3", False, True),
}


def cycle_keys(skeleton: Skeleton, frames: int, phase: float = 0.0, fps: float = 30.0):
    """Per bone: times (s), rotation (w x y z) and, for the root, translation."""
    times = np.arange(frames, dtype=np.float64) / fps
    span = max(frames - 1, 1) / fps
    out = []
    for i in range(len(skeleton)):
        angle = 0.35 * np.sin(2.0 * np.pi * times / span + phase + 0.4 * i)
        angle -= angle[0]  # frame 0 is the rest pose
        axis = np.array([[np.cos(0.3 * i), np.sin(0.3 * i), 0.2]])
        turn = _axis_quat(np.repeat(axis, frames, 0), angle)
        rest = np.repeat(skeleton.local_rotation[i][None], frames, 0)
        q = quat_multiply(rest, turn)
        t = None
        if skeleton.parents[i] < 0:
            t = skeleton.local_translation[i] + np.stack(
                [np.zeros(frames), 0.8 * times, 0.02 * np.sin(4 * np.pi * times / span)], 1
            )
        out.append(ifp.Keys(times, q, t))
    return out


def walk_package(
    game: str = "SA",
    skeleton: Skeleton | None = None,
    animations: int = 1,
    frames: int = 31,
    quirks: bool = False,
    name: str = "ped",
) -> ifp.IfpFile:
    """A package whose first animation is ``walk`` (then ``anim001`` ...), every
    animation keying every bone of ``skeleton`` (the sample ped's by default)."""
    version, compressed, with_ids = GAMES[game]
    skeleton = skeleton or ped_skeleton(32)
    f = ifp.new_file(version, name)
    for k in range(animations):
        anim_name = "walk" if k == 0 else f"anim{k:03d}"
        objects = []
        for i, keys in enumerate(cycle_keys(skeleton, frames, phase=0.1 * k)):
            bone = skeleton.extras[i].get("rw_bone_id") if with_ids else None
            root = bool(skeleton.parents[i] < 0)
            objects.append(ifp.new_object(version, skeleton.names[i], keys, bone, compressed, root))
        f.animations.append(ifp.new_animation(f, anim_name, objects))
    if quirks:
        _add_quirks(f)
    return f


def _add_quirks(f: ifp.IfpFile) -> None:
    """What real packages carry: stale bytes behind NULs, an animation whose
    declared key size differs, 2048-byte padding."""
    a = f.animations[0]
    o = a.objects[-1]
    o.name_raw = o.name_raw[: len(o.name.encode()) + 1] + b"\xcd" * (
        len(o.name_raw) - len(o.name.encode()) - 1
    )
    if f.version == "ANPK":
        a.name_pad = b"\xab" * len(a.name_pad)
    else:
        a.data_size = sum(x.frames.nbytes for x in a.objects) + 64
    size = len(ifp.write(f))
    f.trailing = b"\0" * (-size % 2048)
