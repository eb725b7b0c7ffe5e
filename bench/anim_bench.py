"""Animation import against Blender's own calls for the same keys (issue 28).

Run with any Python; the children use ``--python`` (a Python with ``bpy``)::

    python3 bench/anim_bench.py --python .venv/bpy50/bin/python [--repeat 3]
        [--sizes 100x2000,20x200] [--before OTHER_CHECKOUT]   (one line)

For each size ``BONESxKEYS`` it builds the sample armature and walk animation
(``bench/steps.py gen``), then runs, interleaved and each in a fresh process,
``rp_ani_import`` (RigPort's ``.ani`` import, the operator call) and
``floor_ani_build`` (the same F-curves and keys put in with Blender's calls
alone), ``--repeat`` times, and keeps the fastest of each: the machine is shared,
so the minimum is the figure least disturbed by other work. Prints a Markdown
table with the ratio to the floor. Benchmarks are not tests.
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
        times: dict[str, list[float]] = {"rp_ani_import": [], "floor_ani_build": []}
        if before is not None:
            times["before"] = []
        for _ in range(repeat):
            for step in times:  # the floor reads the import's anim.blend
                if step == "before":
                    t = _step(python, "rp_ani_import", w, cfg, before)["seconds"]
                else:
                    t = _step(python, step, w, cfg)["seconds"]
                times[step].append(t)
    return {"bones": bones, "keys": keys, "runs": times} | {k: min(v) for k, v in times.items()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--sizes", default="100x2000,20x200")
    ap.add_argument("--before", type=Path, help="another checkout whose import to time too")
    args = ap.parse_args(argv)
    print(f"load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print()
    cols = ["bones x keys", "RigPort import", "Blender's calls (floor)", "ratio"]
    if args.before:
        cols += ["before", "before's ratio"]
    print("| " + " | ".join(cols + ["runs (seconds)"]) + " |")
    print("|---" + "|---:" * (len(cols) - 1) + "|---|")
    for size in args.sizes.split(","):
        bones, keys = (int(x) for x in size.split("x"))
        m = measure(args.python, bones, keys, args.repeat, args.before)
        rp, floor = m["rp_ani_import"], m["floor_ani_build"]
        cells = [f"{bones} x {keys:,}", f"{rp:.3f} s", f"{floor:.3f} s", f"{rp / floor:.2f}"]
        if args.before:
            cells += [f"{m['before']:.3f} s", f"{m['before'] / floor:.2f}"]
        runs = "; ".join(f"{k}: " + ", ".join(f"{t:.3f}" for t in v) for k, v in m["runs"].items())
        print("| " + " | ".join(cells + [runs]) + " |", flush=True)
    print()
    print(f"load average at end: {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
