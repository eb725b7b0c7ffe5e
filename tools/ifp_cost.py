"""How an IFP import's cost grows with its number of animations (a tool, not a test).

Builds the sample ped (``samples/renderware.py``) and an IFP of N and of 8N
walk-cycle animations for it (``samples/renderware_ifp.py``), imports each into a
fresh scene holding the ped, and prints the import's wall time, the part of it
spent in ``operators/blender/actions.py: keep_actions`` (the NLA stash), and
the growth exponent log2(t(8N) / t(N)) / 3 (1 is linear, 2 quadratic; issue 26
wants at most 1.1 up to N = 4,000).

Usage (from the repository root, a Python with the ``bpy`` module)::

    .venv/bpy50/bin/python tools/ifp_cost.py            # N = 500 and 4,000
    .venv/bpy50/bin/python tools/ifp_cost.py --n 250 --frames 31 --bones 32
"""

from __future__ import annotations

import argparse
import math
import runpy
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _addon():
    """The repository as the package ``rigport`` (loader.py), registered."""
    module = runpy.run_path(str(ROOT / "loader.py"))["package"](init=True)
    module.register()
    return module


def _measure(folder: Path, n: int, frames: int, bones: int) -> tuple[float, float]:
    """(import seconds, of which in keep_actions) for an IFP of ``n`` animations."""
    import bpy

    from rigport.io_formats.renderware import dff, ifp
    from rigport.operators.renderware import ifp_importer
    from rigport.samples import renderware, renderware_ifp

    bpy.ops.wm.read_factory_settings(use_empty=True)
    ped = folder / "ped.dff"
    ped.write_bytes(dff.write(renderware.skinned_ped("SA", n_bones=bones)))
    bpy.ops.import_scene.rw_dff(filepath=str(ped))
    arm = next(o for o in bpy.data.objects if o.type == "ARMATURE")
    bpy.context.view_layer.objects.active = arm
    skeleton = renderware.ped_skeleton(bones)
    path = folder / f"n{n}.ifp"
    path.write_bytes(ifp.write(renderware_ifp.walk_package("SA", skeleton, n, frames)))
    spent = [0.0]
    keep = ifp_importer.keep_actions

    def timed_keep(*args, **kwargs):
        t = time.perf_counter()
        try:
            return keep(*args, **kwargs)
        finally:
            spent[0] += time.perf_counter() - t

    ifp_importer.keep_actions = timed_keep
    try:
        t = time.perf_counter()
        assert bpy.ops.import_anim.gta_ifp(filepath=str(path)) == {"FINISHED"}
        total = time.perf_counter() - t
    finally:
        ifp_importer.keep_actions = keep
    assert len(bpy.data.actions) == n
    return total, spent[0]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=500, help="the smaller count (the other is 8N)")
    ap.add_argument("--frames", type=int, default=4, help="keys per bone and animation")
    ap.add_argument("--bones", type=int, default=16, help="bones of the ped")
    args = ap.parse_args()
    _addon()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in (args.n, 8 * args.n):
            total, keep = _measure(Path(tmp), n, args.frames, args.bones)
            rows.append((n, total, keep))
            print(f"N={n}: import {total:.2f} s, keep_actions {keep:.2f} s", flush=True)
    (n1, t1, k1), (n8, t8, k8) = rows
    print(f"exponent import {math.log2(t8 / t1) / 3:.2f}")
    if k1 > 0:
        print(f"exponent keep_actions {math.log2(k8 / k1) / 3:.2f}")
    rest1, rest8 = t1 - k1, t8 - k8
    print(f"exponent import without keep_actions {math.log2(rest8 / rest1) / 3:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
