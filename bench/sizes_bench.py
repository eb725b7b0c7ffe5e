"""Model import and export at several sizes against glTF and the C++ FBX importer (issue 28).

Run with any Python; the children use each ``--python`` (a Python with ``bpy``)::

    python3 bench/sizes_bench.py --python .venv/bpy45/bin/python --python .venv/bpy50/bin/python
        [--sizes 100000,300000,1000000] [--repeat 3] [--json runs.json]
        [--plot bench/import-vs-size.png --plot-python .venv/plot/bin/python]   (one line)

For every bpy and every size it generates the Urho3D content of
``bench/run_bench.py`` (64 bones, 4 weights, 2 UV sets, normals, tangents, one
morph) and runs the model steps of ``bench/steps.py``, each in a fresh process:
RigPort's import, the Blender half of it alone (``rp_mdl_build``, the floor: the
neutral scene is read untimed, then built with Blender's calls), RigPort's export
of the unedited import, glTF's export and import of the same scene, and the C++
FBX importer (``wm.fbx_import``, 4.5+) on the same scene written by Blender's FBX
exporter. The timed steps run ``--repeat`` times, interleaved (every step once,
then again), and the fastest of each counts: the machine is shared, so the
minimum is the figure least disturbed. Peak memory is the resident high-water
mark during the timed call alone, less the process's resident memory just before
it (both importers start from the same empty scene, whose Blender takes about 260
MiB: counting it would pull every small import's ratio towards 1).

Writes the ``sizes`` section of BENCHMARKS.md: per bpy version a table per size,
the targets' ratios, and (``--plot``) a PNG of import time against size. The
plot needs matplotlib: ``--plot-python`` names a Python that has it (``make
bench`` makes ``.venv/plot``). Benchmarks are not tests.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from run_bench import machine_info, run_child
from sections import replace_section

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

#: Timed on every pass, in this order (each step reads what the one before left).
TIMED = ("rp_mdl_import", "rp_mdl_build", "rp_mdl_export", "gltf_mdl_export", "gltf_mdl_import")
#: Run once per size: writes the FBX file the C++ importer reads (not a target).
FBX_EXPORT = "fbx_mdl_export"
FBX_IMPORT = "fbx_mdl_import"

#: (label, RigPort step, reference step, reference, target, 4.2's target)
TARGETS = (
    ("Model import", "rp_mdl_import", "gltf_mdl_import", "glTF", 0.25, 0.3),
    ("Model import", "rp_mdl_import", FBX_IMPORT, "C++ FBX", 0.5, None),
    ("Model export", "rp_mdl_export", "gltf_mdl_export", "glTF", 0.15, 0.15),
)
MEMORY_TARGET = 0.8


def content(vertices: int) -> dict:
    """The run_bench.py model at this size; the animation part kept tiny (not timed here)."""
    return {"vertices": vertices, "bones": 64, "anim_bones": 4, "keys": 10}


#: Profiled once per size (cProfile): where RigPort's time goes.
PROFILED = ("rp_mdl_import", "rp_mdl_export")
#: The import with its phases timed (``steps.PHASES``), ``--repeat`` times: the
#: fastest run's phases say what is RigPort's own and what Blender's calls.
PHASED = "rp_mdl_phases"
#: Its phases, RigPort's own first (the rest of the call: the operator's own
#: path and the view-layer update bpy.ops makes after it).
OWN_PHASES = ("read", "convert", "guard", "fingerprint")
BLENDER_PHASES = ("armature", "mesh", "vertex groups", "shape keys")
#: RigPort's own work timed inside "vertex groups" (its skin sorted into runs of one
#: bone and weight, for one ``VertexGroup.add`` each): counted as RigPort's own.
NESTED_OWN = "skin sort"


def measure(python: str, vertices: int, repeat: int, root: Path, profile: bool) -> dict:
    """Every step's runs at one size on one bpy: {step: [result, ...]} (and with
    ``profile``, ``"profiles"``: each RigPort step's cProfile split)."""
    workdir = root / f"v{vertices}"
    workdir.mkdir()
    cfg = content(vertices)
    runs: dict[str, list[dict]] = {"gen": [run_child(python, "gen", workdir, cfg)]}
    for n in range(repeat):
        for step in TIMED:
            runs.setdefault(step, []).append(run_child(python, step, workdir, cfg))
        if n == 0:
            runs[FBX_EXPORT] = [run_child(python, FBX_EXPORT, workdir, cfg)]
        if not any("skipped" in r for r in runs.get(FBX_IMPORT, [])):
            runs.setdefault(FBX_IMPORT, []).append(run_child(python, FBX_IMPORT, workdir, cfg))
    if profile:
        runs["profiles"] = {
            step: run_child(python, step, workdir, cfg, profile=True)["profile"]
            for step in PROFILED
        }
        runs["phases"] = [run_child(python, PHASED, workdir, cfg) for _ in range(repeat)]
    return runs


def fastest(runs: list[dict]) -> dict | None:
    """The fastest run, with every run's seconds and the lowest peak (None: skipped)."""
    if not runs or "skipped" in runs[0]:
        return None
    best = dict(min(runs, key=lambda r: r["seconds"]))
    best["all_seconds"] = [r["seconds"] for r in runs]
    peaks = [r["hwm_call_kb"] for r in runs if r.get("hwm_call_kb")]
    best["peak_kb"] = min(peaks) if peaks else None
    grown = [r["hwm_call_kb"] - r["rss_before_kb"] for r in runs if r.get("hwm_call_kb")]
    best["grown_kb"] = min(grown) if grown else None
    return best


def summarize(runs: dict[str, list[dict]]) -> dict:
    return {"gen": runs["gen"][0]} | {
        step: fastest(r) for step, r in runs.items() if step not in ("gen", "profiles", "phases")
    }


def _seconds(summary: dict, step: str) -> float | None:
    r = summary.get(step)
    return None if r is None else r["seconds"]


def ratios(summary: dict, old_blender: bool) -> list[tuple[str, float | None, float | None]]:
    """(what, ratio, target) for every target at one size on one bpy."""
    out = []
    for label, rp, ref, name, target, target42 in TARGETS:
        a, b = _seconds(summary, rp), _seconds(summary, ref)
        goal = target42 if old_blender else target
        out.append((f"{label} / {name}", a / b if a and b else None, goal))
    mem_a = (summary.get("rp_mdl_import") or {}).get("grown_kb")
    mem_b = (summary.get("gltf_mdl_import") or {}).get("grown_kb")
    mem = mem_a / mem_b if mem_a and mem_b else None
    out.append(("Peak memory of the import / glTF's", mem, MEMORY_TARGET))
    return out


def _cell(ratio: float | None, target: float | None) -> str:
    if ratio is None:
        return "n/a"
    if target is None:
        return f"{ratio:.2f}"
    return f"{ratio:.2f}" if ratio <= target else f"**{ratio:.2f}**"


def _secs(summary: dict, step: str) -> str:
    r = summary.get(step)
    return "n/a" if r is None else f"{r['seconds']:.2f}"


def _mib(summary: dict, step: str) -> str:
    """Peak resident memory during the call: above the process's before it (and in all)."""
    r = summary.get(step)
    if r is None or not r.get("peak_kb"):
        return "n/a"
    return f"{r['grown_kb'] / 1024:.0f} ({r['peak_kb'] / 1024:.0f})"


def summaries(run: dict) -> dict[str, dict]:
    """A run's sizes, each summarized (the runs hold every step's raw results)."""
    return {size: summarize(raw) for size, raw in run["sizes"].items()}


def version_table(run: dict) -> list[str]:
    """One bpy version: seconds and peak memory per size, then the ratios."""
    by_size = summaries(run)
    sizes = sorted(by_size, key=int)
    old = run["machine"]["bpy"].startswith("4.2")
    out = [
        f"### bpy {run['machine']['bpy']}",
        "",
        f"Python {run['machine']['python']}, numpy {run['machine']['numpy']}; "
        f"measured {run['started']} to {run['ended']} UTC, load average "
        f"{run['load'][0]:.2f} before and {run['load'][1]:.2f} after.",
        "",
        "| vertices | RigPort import s | Blender's calls alone s | glTF import s "
        "| C++ FBX import s | RigPort export s | glTF export s | import memory MiB "
        "| glTF import memory MiB |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for size in sizes:
        s = by_size[size]
        cells = [f"{s['gen']['vertices']:,}"]
        cells += [_secs(s, step) for step in (*TIMED[:2], "gltf_mdl_import", FBX_IMPORT)]
        cells += [_secs(s, "rp_mdl_export"), _secs(s, "gltf_mdl_export")]
        cells += [_mib(s, "rp_mdl_import"), _mib(s, "gltf_mdl_import")]
        out.append("| " + " | ".join(cells) + " |")
    out += ["", "| ratio (target) | " + " | ".join(f"{int(z):,}" for z in sizes) + " |"]
    out.append("|---|" + "---:|" * len(sizes))
    rows: dict[str, list[str]] = {}
    for size in sizes:
        for what, ratio, target in ratios(by_size[size], old):
            key = what + (f" (<= {target})" if target is not None else "")
            rows.setdefault(key, []).append(_cell(ratio, target))
    out += [f"| {k} | " + " | ".join(v) + " |" for k, v in rows.items()]
    out.append("")
    out += phases_table(run)
    out += profile_table(run)
    out.append(
        "Every run, in seconds (fastest first counts): "
        + "; ".join(
            f"{int(z):,}: "
            + ", ".join(
                f"{step} {'/'.join(f'{x:.2f}' for x in r['all_seconds'])}"
                for step, r in by_size[z].items()
                if step != "gen" and r is not None
            )
            for z in sizes
        )
    )
    out.append("")
    return out


def profile_table(run: dict) -> list[str]:
    """Where each profiled RigPort step's time went, by whose code ran (cProfile's own
    time per function, summed: a Blender call made through RNA counts for its Python
    caller, so "RigPort" holds some of Blender's time too)."""
    rows = []
    for size in sorted(run["sizes"], key=int):
        for step, prof in run["sizes"][size].get("profiles", {}).items():
            split = prof["split"]
            total = sum(split.values()) or 1.0
            top = ", ".join(
                f"`{r['func'].split('(')[-1].rstrip(')')}` {r['tottime']:.2f}"
                for r in prof["tottime"][:3]
            )
            cells = [f"{int(size):,}", step, f"{prof['total']:.2f}"]
            cells += [
                f"{100 * split.get(k, 0.0) / total:.0f} %"
                for k in ("rigport", "blender", "numpy", "other")
            ]
            rows.append("| " + " | ".join([*cells, top]) + " |")
    if not rows:
        return []
    return [
        "cProfile of one run per size (the profiler slows it): the share of each step's "
        "own time in RigPort's Python, Blender's API, numpy and the rest, and the three "
        "functions with the most own time, in seconds.",
        "",
        "| vertices | step | profiled s | RigPort | Blender | numpy | other | most own time |",
        "|---:|---|---:|---:|---:|---:|---:|---|",
        *rows,
        "",
    ]


def phases_table(run: dict) -> list[str]:
    """Where the fastest phased import's time went (``rp_mdl_phases``), by phase."""
    rows = []
    for size in sorted(run["sizes"], key=int):
        phased = run["sizes"][size].get("phases")
        if not phased:
            continue
        best = min(phased, key=lambda r: r["seconds"])
        p = dict(best["phases"])
        nested = p.get(NESTED_OWN, 0.0)
        p["vertex groups"] = p.get("vertex groups", 0.0) - nested
        own = sum(p.get(k, 0.0) for k in OWN_PHASES) + nested
        blender = sum(p.get(k, 0.0) for k in BLENDER_PHASES)
        rest = best["seconds"] - own - blender
        cells = [f"{int(size):,}", f"{best['seconds']:.2f}"]
        cells += [f"{p.get(k, 0.0):.3f}" for k in (*OWN_PHASES, NESTED_OWN)]
        cells += [f"**{own:.2f}**"]
        cells += [f"{p.get(k, 0.0):.3f}" for k in BLENDER_PHASES]
        cells += [f"{rest:.3f}", f"**{blender + rest:.2f}**"]
        rows.append("| " + " | ".join(cells) + " |")
    if not rows:
        return []
    return [
        "Where the import's time goes: the fastest of the phased runs per size (each in "
        "a fresh process, its phases timed by plain wrappers, no profiler). RigPort's own "
        "work: reading the file, converting it to the neutral scene, the guard, the "
        "fingerprint, and the skin's sort into runs of one bone and weight (timed inside "
        "the vertex groups and taken out of them here). Blender's calls: the armature, "
        "the mesh (its few numpy copies aside), the vertex groups (one "
        "`VertexGroup.add` per run, with the Python list of vertices each takes), the "
        "shape keys, and the rest of the call (the operator's own path and the "
        "view-layer update bpy.ops makes), in seconds.",
        "",
        "| vertices | import s | read | convert | guard | fingerprint | skin sort "
        "| RigPort's own | armature | mesh | vertex groups | shape keys | rest "
        "| Blender's calls |",
        "|---:|" + "---:|" * 13,
        *rows,
        "",
    ]


def overview(runs: list[dict]) -> list[str]:
    """Every target at every size, one column per bpy version."""
    head = [r["machine"]["bpy"].split()[0] for r in runs]
    out = ["| target | vertices | " + " | ".join(head) + " |", "|---|---:|" + "---:|" * len(runs)]
    sizes = sorted({int(z) for r in runs for z in r["sizes"]})
    labels = [f"{t[0]} <= {t[4]} x {t[3]}" for t in TARGETS] + [
        f"Peak memory of the import <= {MEMORY_TARGET} x glTF's"
    ]
    for i, label in enumerate(labels):
        for size in sizes:
            cells = []
            for r in runs:
                raw = r["sizes"].get(str(size))
                if raw is None:
                    cells.append("")
                    continue
                old = r["machine"]["bpy"].startswith("4.2")
                _, ratio, target = ratios(summarize(raw), old)[i]
                cell = _cell(ratio, target)
                cells.append(f"({cell})" if old else cell)
            out.append(f"| {label} | {size:,} | " + " | ".join(cells) + " |")
    return out


def report(runs: list[dict], plot: str | None) -> str:
    m = runs[0]["machine"]
    gen = next(iter(runs[0]["sizes"].values()))["gen"][0]
    out = [
        "Generated by `bench/sizes_bench.py` (`make bench`). The Urho3D model of "
        "`bench/run_bench.py` at each size: "
        f"{gen['bones']} bones, 4 weights per vertex, 2 UV sets, normals, tangents, one morph. "
        "Every step in a fresh process, the timed steps interleaved and repeated, the "
        'fastest counting; times are of the operator call alone. "Blender\'s calls alone" '
        "builds the same Blender data from the ready neutral scene (the file read and "
        "converted untimed): the floor for any importer of this content. Ratios above "
        "their target are in bold; 4.2's in brackets (its import target is 0.3 x glTF, and "
        "it has no C++ FBX importer). Memory: the peak resident memory during the call "
        "above the process's just before it (in brackets the process's peak).",
        "",
        f"Machine: {m['nproc']} CPUs ({m['cpu']}), {m['memory']} RAM, {m['os']}.",
        "",
        *overview(runs),
        "",
    ]
    if plot:
        out += [f"![Import time against size on bpy 5.2]({plot})", ""]
    for run in runs:
        out += version_table(run)
    return "\n".join(out)


def plot_data(runs: list[dict]) -> dict:
    """The series the plot draws: bpy 5.2's import times per size (else the last
    run's version), each point the fastest of every run of that version (two
    invocations joined with ``--include`` are two runs)."""
    want = next((r for r in runs if r["machine"]["bpy"].startswith("5.2")), runs[-1])
    chosen = [r for r in runs if r["machine"]["bpy"] == want["machine"]["bpy"]]
    by_size = [summaries(r) for r in chosen]
    sizes = sorted(by_size[0], key=int)
    series = {
        "RigPort": "rp_mdl_import",
        "glTF": "gltf_mdl_import",
        "C++ FBX": FBX_IMPORT,
        "Blender's calls alone (floor)": "rp_mdl_build",
    }

    def best(size: str, step: str) -> float | None:
        times = [_seconds(b[size], step) for b in by_size if size in b]
        times = [t for t in times if t is not None]
        return min(times) if times else None

    runs_said = f", fastest of {len(chosen)} runs" if len(chosen) > 1 else ""
    return {
        "title": f"Skinned model import, bpy {want['machine']['bpy']}{runs_said}",
        "x": [by_size[0][z]["gen"]["vertices"] for z in sizes],
        "series": {k: [best(z, v) for z in sizes] for k, v in series.items()},
    }


def load_average() -> float:
    try:
        return float(Path("/proc/loadavg").read_text().split()[0])
    except (OSError, ValueError):
        return float("nan")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--python", action="append", help="Python with bpy (repeatable)")
    ap.add_argument("--sizes", default="100000,300000,1000000")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", default=str(ROOT / "BENCHMARKS.md"))
    ap.add_argument("--json", help="also write the runs here")
    ap.add_argument("--no-profile", action="store_true", help="no cProfile run per size")
    ap.add_argument("--include", action="append", default=[], help="runs from an earlier --json")
    ap.add_argument(
        "--plot", help="PNG path, relative to the report (e.g. bench/import-vs-size.png)"
    )
    ap.add_argument("--plot-python", help="a Python with matplotlib for --plot")
    args = ap.parse_args(argv)
    runs = []
    for path in args.include:
        runs += json.loads(Path(path).read_text())["runs"]
    sizes = [int(s) for s in args.sizes.split(",") if s]
    for python in args.python or []:
        machine = machine_info(python)
        print(f"== bpy {machine['bpy']} ({python})", flush=True)
        run = {
            "machine": machine,
            "started": time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
            "sizes": {},
        }
        before = load_average()
        with tempfile.TemporaryDirectory(prefix="rigport-sizes-") as tmp:
            for size in sizes:
                raw = measure(python, size, args.repeat, Path(tmp), not args.no_profile)
                run["sizes"][str(size)] = raw
                summary = summarize(raw)
                for what, ratio, target in ratios(summary, machine["bpy"].startswith("4.2")):
                    shown = "n/a" if ratio is None else f"{ratio:.3f}"
                    print(f"  {size:>9,}  {what:40s} {shown} (target {target})", flush=True)
        run["ended"] = time.strftime("%H:%M", time.gmtime())
        run["load"] = (before, load_average())
        runs.append(run)
        if args.json:
            Path(args.json).write_text(json.dumps({"runs": runs}, indent=1))
    if not runs:
        raise SystemExit("nothing measured: give --python or --include")
    if args.plot:
        if not args.plot_python:
            raise SystemExit("--plot needs --plot-python (a Python with matplotlib)")
        data = json.dumps(plot_data(runs))
        target = Path(args.out).parent / args.plot
        subprocess.run(
            [args.plot_python, str(HERE / "plot_sizes.py"), str(target)],
            input=data,
            text=True,
            check=True,
        )
    replace_section(
        Path(args.out), "sizes", report(runs, args.plot), "Model import and export at every size"
    )
    print(f"wrote the sizes section of {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
