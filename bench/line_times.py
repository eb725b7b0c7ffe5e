"""Seconds per source line inside chosen functions, for one benchmark step.

cProfile does not see Blender's RNA calls (``mesh.update``,
``normals_split_custom_set``, ``calc_tangents``, ...): their time lands in the
calling Python function's own time. This traces lines instead, so such a call
shows up as its line::

    python bench/line_times.py STEP WORKDIR [FUNC ...] [--top N] [--min S] [--md FILE]

WORKDIR is a folder kept by ``run_bench.py --keep`` (``py0``, ...), so the
step's inputs are there. FUNC names functions (``_fill_mesh``, ``extract_mesh``);
time spent in functions they call is counted on the calling line.
"""

from __future__ import annotations

import argparse
import linecache
import sys
import time
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import steps  # noqa: E402

DEFAULT_FUNCS = {
    "rp_mdl_import": ["_fill_mesh", "mesh_from_lod", "build_mesh_object", "import_mdl"],
    "rp_mdl_export": [
        "extract_mesh",
        "_skin",
        "export_model",
        "_draw_candidates",
        "export_mdl",
    ],
}


def trace(call, names: set[str]):
    spent: dict[tuple[str, str, int], float] = defaultdict(float)
    state: dict[int, tuple[int, float]] = {}

    def local(frame, event, _arg):
        now = time.perf_counter()
        fid = id(frame)
        prev = state.get(fid)
        if prev is not None:
            spent[(frame.f_code.co_filename, frame.f_code.co_name, prev[0])] += now - prev[1]
        if event == "return":
            state.pop(fid, None)
        else:
            state[fid] = (frame.f_lineno, time.perf_counter())
        return local

    def glob(frame, event, _arg):
        if event == "call" and frame.f_code.co_name in names:
            state[id(frame)] = (frame.f_lineno, time.perf_counter())
            return local
        return None

    sys.settrace(glob)
    try:
        t0 = time.perf_counter()
        result = call()
        total = time.perf_counter() - t0
    finally:
        sys.settrace(None)
    return result, total, spent


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("step")
    ap.add_argument("workdir")
    ap.add_argument("funcs", nargs="*")
    ap.add_argument("--top", type=int, default=6)
    ap.add_argument("--min", type=float, default=0.05, help="seconds a line must take to be listed")
    ap.add_argument("--md", help="write a markdown table here")
    args = ap.parse_args()
    names = set(args.funcs or DEFAULT_FUNCS.get(args.step, []))
    import bpy  # noqa: F401

    steps.load_addon()
    setup, call, _after = steps.step_setup_and_call(args.step, Path(args.workdir))
    setup()
    _result, total, spent = trace(call, names)
    lines = [f"#### {args.step}: seconds per line (traced total {total:.2f} s)", ""]
    lines += ["| function | line | seconds | source |", "|---|---:|---:|---|"]
    places = 2 if args.min >= 0.01 else 4  # a line of a fast step: tenths of a ms
    by_func = defaultdict(list)
    for (fname, func, lineno), sec in spent.items():
        by_func[(fname, func)].append((sec, lineno))
    for (fname, func), rows in sorted(by_func.items(), key=lambda kv: -sum(s for s, _ in kv[1])):
        try:
            rel = str(Path(fname).resolve().relative_to(steps.ROOT))
        except ValueError:
            rel = fname
        for sec, lineno in sorted(rows, reverse=True)[: args.top]:
            if sec < args.min:
                continue
            src = linecache.getline(fname, lineno).strip().replace("|", "\\|")[:90]
            lines.append(f"| `{func}` | {rel}:{lineno} | {sec:.{places}f} | `{src}` |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.md:
        Path(args.md).write_text(text)
    sys.stdout.flush()
    import os

    os._exit(0)


if __name__ == "__main__":
    main()
