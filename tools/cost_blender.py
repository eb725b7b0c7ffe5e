"""How a Blender import's cost grows with the sizes an attacker controls (a tool,
not a test: it takes minutes).

For each case a file with N items and one with 8N are built by our own writers
and imported into an empty scene, each in a fresh child process so one run
does not pay for the last. The growth exponent is log2(t(8N) / t(N)) / 3: 1 is
linear, 2 quadratic; issue 26 wants at most 1.1 up to N = 4,000.

Cases:

* ``package``: an Urho3D package holding one small model and N short
  animations, all imported (each animation was stashed with a scan of every NLA
  track and a dependency graph update);
* ``morphs``: an Urho3D model with N sparse one-vertex morphs; also reports
  the peak resident memory of the import.

Usage (from the repository root)::

    .venv/bpy50/bin/python tools/cost_blender.py                 # N = 500 and 4,000
    .venv/bpy50/bin/python tools/cost_blender.py --case package --n 250

The exit status is 1 when an exponent is above ``--limit``.
"""

from __future__ import annotations

import argparse
import json
import math
import resource
import runpy
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent


def package_file(n: int) -> bytes:
    """A package of one small skinned model and ``n`` two-key animations of it."""
    from rigport.io_formats.urho3d import ani, mdl, package
    from rigport.samples import urho3d as u3

    model = u3.skinned_model(n_bones=4, grid=(8, 6), morphs=0)
    pkg = package.new_package()
    pkg.entries.append(package.Entry("Models/Thing.mdl", mdl.write(model)))
    for i in range(n):
        anim = u3.walk_animation(model, n_keys=2, name=f"Anim{i:05d}")
        pkg.entries.append(package.Entry(f"Models/Anim{i:05d}.ani", ani.write(anim)))
    return package.write(pkg)


def morph_file(n: int, vertices: int = 2000) -> bytes:
    """A model of about ``vertices`` vertices with ``n`` morphs, each moving one vertex."""
    from rigport.io_formats.urho3d import mdl
    from rigport.io_formats.urho3d.vertex_layout import MASK_POSITION
    from rigport.samples import urho3d as u3

    model = u3.skinned_model(n_bones=4, n_vertices=vertices, morphs=0)
    vb = model.vertex_buffers[0]
    count = len(vb.data)
    for i in range(n):
        data = np.zeros(1, mdl.morph_dtype(MASK_POSITION))
        data["index"] = i % count
        data["position"] = (0.0, 0.0, 0.1)
        model.morphs.append(mdl.Morph(f"Sparse{i:05d}", [mdl.MorphBuffer(0, MASK_POSITION, data)]))
    vb.morph_start, vb.morph_count = 0, min(n, count)
    return mdl.write(model)


CASES = {
    "package": (package_file, ".pak", "urho3d_package"),
    "morphs": (morph_file, ".mdl", "urho3d_mdl"),
}


def _child(case: str, path: str) -> None:
    """In the child: import ``path`` into an empty scene; print seconds and peak MiB."""
    runpy.run_path(str(ROOT / "loader.py"))["package"](init=True).register()
    import bpy

    bpy.ops.wm.read_factory_settings(use_empty=True)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    done = getattr(bpy.ops.import_scene, CASES[case][2])(filepath=path)
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(
        json.dumps(
            {
                "done": sorted(done),
                "seconds": seconds,
                "rss": peak / 1024,
                "grew": (peak - before) / 1024,
            }
        )
    )


def measure(case: str, n: int, folder: Path) -> dict:
    """Build the case's file with ``n`` items and import it in a child process."""
    make, suffix, _ = CASES[case]
    path = folder / f"{case}_{n}{suffix}"
    path.write_bytes(make(n))
    out = subprocess.run(
        [sys.executable, __file__, "--child", case, str(path)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    row = json.loads(out.strip().splitlines()[-1])
    row["bytes"] = path.stat().st_size
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--case", choices=sorted(CASES), action="append")
    parser.add_argument("--n", type=int, default=500)
    parser.add_argument("--limit", type=float, default=1.1)
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    runpy.run_path(str(ROOT / "loader.py"))["package"]()
    if args.child:
        _child(*args.child)
        return 0
    worst = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        for case in args.case or sorted(CASES):
            small = measure(case, args.n, Path(tmp))
            large = measure(case, 8 * args.n, Path(tmp))
            exponent = math.log2(large["seconds"] / small["seconds"]) / 3
            worst = max(worst, exponent)
            for n, row in ((args.n, small), (8 * args.n, large)):
                print(
                    f"{case} N={n}: {row['bytes']} B, {row['seconds']:.2f} s, "
                    f"peak {row['rss']:.0f} MiB (import grew it {row['grew']:.0f} MiB)"
                )
            print(f"{case}: exponent {exponent:.2f}")
    return 1 if worst > args.limit else 0


if __name__ == "__main__":
    sys.exit(main())
