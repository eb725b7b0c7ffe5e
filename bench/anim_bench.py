"""Animation import against Blender's own calls for the same keys (issue 28).

Run with any Python; the children use ``--python`` (a Python with ``bpy``)::

    python3 bench/anim_bench.py --python .venv/bpy50/bin/python [--repeat 3]
        [--sizes 100x2000,20x200] [--before OTHER_CHECKOUT]   (one line)

For each size ``BONESxKEYS`` it builds the sample armature and walk animation
(``bench/steps.py gen``), then runs, interleaved and each in a fresh process,
``rp_ani_import`` (RigPort's ``.ani`` import, the operator call),
``floor_ani_build`` (the same F-curves and keys put in with Blender's calls
alone, in the same scene as the import) and ``floor_ani_op`` (those calls as an
operator with the importers' bl_options, through bpy.ops as the import: the
operator call and its view-layer updates; the bpy module pushes no undo step),
``--repeat`` times, and keeps the
fastest of each: the machine is shared, so the minimum is the figure least
disturbed by other work. Prints a Markdown table with the ratio to the floor.
Benchmarks are not tests.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _step(python: str, step: str, workdir: Path, cfg: dict, root: Path = ROOT) -> dict:
    subprocess.run(
        [python, str(root / "bench" / "steps.py"), step, str(workdir), json.dumps(cfg)],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return json.loads((workdir / f"{step}.json").read_text())


def measure(python: str, bones: int, keys: int, repeat: int, before: Path | None) -> dict:
    """The fastest of ``repeat`` interleaved runs of the import and its floor (and
    of the import from the ``before`` tree, another checkout, when given)."""
    cfg = {"vertices": 2000, "bones": 4, "anim_bones": bones, "keys": keys}
    with tempfile.TemporaryDirectory(prefix="rp_anim_bench_") as tmp:
        w = Path(tmp)
        _step(python, "gen", w, cfg)
        times: dict[str, list[float]] = {
            "rp_ani_import": [],
            "floor_ani_build": [],
            "floor_ani_op": [],
        }
        if before is not None:
            times["before"] = []
        for _ in range(repeat):
            for step in times:  # the floor reads the keys the import gave Blender
                if step == "before":
                    t = _step(python, "rp_ani_import", w, cfg, before)["seconds"]
                else:
                    t = _step(python, step, w, cfg)["seconds"]
                times[step].append(t)
    return {"bones": bones, "keys": keys, "runs": times} | {k: min(v) for k, v in times.items()}


#: Child script: import an IFP of N walk animations onto the sample SA ped, in a
#: fresh scene, ``repeat`` times; prints the fastest import's seconds.
_MANY = r"""
import runpy, sys, tempfile, time
from pathlib import Path
root, n, repeat = Path(sys.argv[-3]), int(sys.argv[-2]), int(sys.argv[-1])
addon = runpy.run_path(str(root / "loader.py"))["package"](init=True)
addon.register()
import bpy
from rigport.io_formats.renderware import dff, ifp
from rigport.samples import renderware, renderware_ifp
tmp = Path(tempfile.mkdtemp(prefix="rp_many_"))
(tmp / "ped.dff").write_bytes(dff.write(renderware.skinned_ped("SA")))
(tmp / "a.ifp").write_bytes(ifp.write(renderware_ifp.walk_package("SA", animations=n)))
best = None
for _ in range(repeat):
    bpy.ops.wm.read_factory_settings(use_empty=True)
    if not hasattr(bpy.types, "IMPORT_ANIM_OT_gta_ifp"):
        addon.register()
    assert bpy.ops.import_scene.rw_dff(filepath=str(tmp / "ped.dff")) == {"FINISHED"}
    t = time.perf_counter()
    assert bpy.ops.import_anim.gta_ifp(filepath=str(tmp / "a.ifp")) == {"FINISHED"}
    t = time.perf_counter() - t
    assert len(bpy.data.actions) == n
    best = t if best is None else min(best, t)
print("MANY_SECONDS", best, flush=True)
import os, shutil
shutil.rmtree(tmp, ignore_errors=True)
os._exit(0)
"""


def many_seconds(python: str, n: int, repeat: int) -> float:
    """The fastest of ``repeat`` imports of an IFP of ``n`` animations (own process)."""
    res = subprocess.run(
        [python, "-c", _MANY, str(ROOT), str(n), str(repeat)], capture_output=True, text=True
    )
    for line in res.stdout.splitlines():
        if line.startswith("MANY_SECONDS"):
            return float(line.split()[1])
    raise SystemExit(f"the {n}-animation import failed:\n{res.stderr[-2000:]}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--sizes", default="100x2000,20x200")
    ap.add_argument("--before", type=Path, help="another checkout whose import to time too")
    ap.add_argument(
        "--many",
        default="1,100,1000",
        help="IFP sizes (animations) for the growth table; empty: none",
    )
    args = ap.parse_args(argv)
    print(f"load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print()
    cols = ["bones x keys", "RigPort import", "Blender's calls (floor)", "ratio"]
    cols += ["the floor as an import operator", "ratio to it"]
    if args.before:
        cols += ["before", "before's ratio"]
    sizes = [size for size in args.sizes.split(",") if size]
    if sizes:
        print("| " + " | ".join(cols + ["runs (seconds)"]) + " |")
        print("|---" + "|---:" * (len(cols) - 1) + "|---|")
    for size in sizes:
        bones, keys = (int(x) for x in size.split("x"))
        m = measure(args.python, bones, keys, args.repeat, args.before)
        rp, floor, op = m["rp_ani_import"], m["floor_ani_build"], m["floor_ani_op"]
        cells = [f"{bones} x {keys:,}", f"{rp:.3f} s", f"{floor:.3f} s", f"{rp / floor:.2f}"]
        cells += [f"{op:.3f} s", f"{rp / op:.2f}"]
        if args.before:
            cells += [f"{m['before']:.3f} s", f"{m['before'] / floor:.2f}"]
        runs = "; ".join(f"{k}: " + ", ".join(f"{t:.3f}" for t in v) for k, v in m["runs"].items())
        print("| " + " | ".join(cells + [runs]) + " |", flush=True)
    counts = [int(x) for x in args.many.split(",") if x]
    if counts:
        print()
        print("| animations in one IFP | import | per animation | x (N x one animation's import) |")
        print("|---:|---:|---:|---:|")
        one = None
        for n in counts:
            t = many_seconds(args.python, n, args.repeat)
            one = t if one is None and n == 1 else one
            ratio = f"{t / (n * one):.2f}" if one else ""
            print(f"| {n:,} | {t:.3f} s | {t / n * 1000:.2f} ms | {ratio} |", flush=True)
    print()
    print(f"load average at end: {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
