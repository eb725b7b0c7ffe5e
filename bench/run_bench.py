"""RigPort benchmark: Urho3D import/export against Blender's own importers on the same content.

Run with a Python that has the ``bpy`` module (``make bench`` uses bpy 5.0)::

    .venv/bpy50/bin/python bench/run_bench.py [--vertices N] [--bones N]
        [--anim-bones N] [--keys N] [--quick] [--out BENCHMARKS.md]

What it does, each measured step in its own child process (so every step
starts from a fresh Blender and its peak RSS is its own):

1. ``gen``: build a skinned model (``--vertices``, ``--bones``, 4 weights per
   vertex, 2 UV sets, normals, tangents, one morph) and a skeleton of
   ``--anim-bones`` bones with a ``--keys``-key animation, with the sample
   builders in ``samples/urho3d.py``; write ``.mdl`` / ``.ani``.
2. Model: RigPort import of the ``.mdl`` (timed; the scene is saved to a
   ``.blend``), RigPort export of that scene (timed), glTF export of that
   scene to ``.glb`` (timed: the reference), glTF import of the ``.glb`` into
   an empty scene (timed: the reference).
3. Animation: RigPort import of the skeleton, then of the ``.ani`` onto it
   (only the ``.ani`` is timed; saved to a ``.blend``), RigPort ``.ani`` export
   (timed), glTF export of the armature with that action (timed), glTF import
   of that ``.glb`` (timed).
4. The fastest importers Blender has, on the same content: the model exported
   with Blender's FBX exporter and imported with the C++ FBX importer
   (``wm.fbx_import``, 4.5+), and a static model of the same size
   (``static.mdl``, no skin, one UV set) against the C++ OBJ importer
   (``wm.obj_import``) on the same mesh written by ``wm.obj_export``.
5. Targets (issue 16): model import <= 0.25 x glTF and <= 0.6 x C++ FBX; model
   export <= 0.15 x glTF; static import <= 1.0 x C++ OBJ; animation import and
   export <= 0.25 x glTF; peak memory during the model import <= 1.2 x glTF's.
   Every RigPort step is also run once under cProfile: how its time splits
   between RigPort's own Python, Blender's API calls, numpy and the rest, and
   its top functions go into the report.

Peak memory: every child reports ``ru_maxrss`` of its whole life (Blender
start-up and scene set-up included) and, on Linux, the peak during the timed
call alone (``VmHWM`` after resetting it through ``/proc/self/clear_refs``).

Benchmarks are not tests: nothing here runs under pytest.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from sections import replace_section

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
MODEL_STEPS = (
    "rp_mdl_import",
    "rp_mdl_build",
    "rp_mdl_export",
    "gltf_mdl_export",
    "gltf_mdl_import",
    "fbx_mdl_export",
    "fbx_mdl_import",
)
STATIC_STEPS = ("rp_static_import", "rp_static_build", "obj_static_export", "obj_static_import")
ANIM_STEPS = (
    "rp_ani_import",
    "floor_ani_build",
    "rp_ani_export",
    "gltf_ani_export",
    "gltf_ani_import",
)
STEPS = ("gen", *MODEL_STEPS, *STATIC_STEPS, *ANIM_STEPS)
RIGPORT_STEPS = tuple(s for s in STEPS if s.startswith("rp_") and not s.endswith("_build"))
BUILDS = (
    ("Model import", "rp_mdl_import", "rp_mdl_build"),
    ("Static model import", "rp_static_import", "rp_static_build"),
    ("Animation import", "rp_ani_import", "floor_ani_build"),
)
PAIRS = (  # (label, RigPort step, reference step, reference name, target ratio)
    ("Model import", "rp_mdl_import", "gltf_mdl_import", "glTF", 0.25),
    ("Model import", "rp_mdl_import", "fbx_mdl_import", "FBX (C++)", 0.6),
    ("Model export", "rp_mdl_export", "gltf_mdl_export", "glTF", 0.15),
    ("Static model import", "rp_static_import", "obj_static_import", "OBJ (C++)", 1.0),
    ("Animation import", "rp_ani_import", "gltf_ani_import", "glTF", 0.25),
    ("Animation import, Blender's calls alone", "floor_ani_build", "gltf_ani_import", "glTF", 0.25),
    ("Animation export", "rp_ani_export", "gltf_ani_export", "glTF", 0.25),
)
MEMORY_TARGET = 1.2  # peak RSS during RigPort's model import / glTF's


def run_child(
    python: str,
    step: str,
    workdir: Path,
    config: dict,
    profile: bool = False,
    timeout: float = 900.0,
) -> dict:
    out = workdir / f"{step}{'.prof' if profile else ''}.json"
    if out.exists():
        out.unlink()
    cmd = [python, str(HERE / "steps.py"), step, str(workdir), json.dumps(config)]
    if profile:
        cmd.append("--profile")
    env = dict(os.environ)
    env.setdefault("BLENDER_USER_RESOURCES", str(workdir / "blender-user"))
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    wall = time.perf_counter() - t0
    if proc.returncode != 0 or not out.exists():
        sys.stderr.write(proc.stdout[-4000:] + proc.stderr[-4000:])
        raise SystemExit(f"step {step} failed (exit {proc.returncode})")
    result = json.loads(out.read_text())
    result["wall"] = wall
    return result


def machine_info(python: str) -> dict:
    code = (
        "import bpy, sys, platform, numpy;"
        "print(bpy.app.version_string);print(sys.version.split()[0]);print(numpy.__version__)"
    )
    lines = subprocess.run([python, "-c", code], capture_output=True, text=True).stdout.split("\n")
    cpu = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = ""
    try:
        kb = int(Path("/proc/meminfo").read_text().split("\n")[0].split()[1])
        mem = f"{kb / 1024 / 1024:.1f} GiB"
    except (OSError, ValueError, IndexError):
        pass
    return {
        "nproc": os.cpu_count(),
        "cpu": cpu,
        "memory": mem,
        "os": platform.platform(),
        "bpy": lines[0].strip() if lines else "?",
        "python": lines[1].strip() if len(lines) > 1 else "?",
        "numpy": lines[2].strip() if len(lines) > 2 else "?",
    }


def memory_ratio(res: dict) -> float | None:
    """Peak RSS during RigPort's model import over glTF's (None where not measured)."""
    a = res.get("rp_mdl_import", {}).get("hwm_call_kb")
    b = res.get("gltf_mdl_import", {}).get("hwm_call_kb")
    return a / b if a and b else None


def mib(kb: float | None) -> str:
    return "n/a" if kb is None else f"{kb / 1024:.0f}"


def all_s(r: dict) -> str:
    return ", ".join(f"{x:.2f}" for x in r.get("all_seconds", [r["seconds"]]))


def write_report(out: str, report: str) -> None:
    """The report as BENCHMARKS.md's Urho3D section (the other formats' stay)."""
    lines = report.splitlines()[1:]  # without "# RigPort benchmarks"
    demoted = ["#" + line if line.startswith("#") else line for line in lines]
    replace_section(Path(out), "urho3d", "\n".join(demoted), "Urho3D models and animations")
    print(f"wrote the Urho3D section of {out}")


def fmt_report(runs: list[dict], config: dict, extra: list[str] = ()) -> str:
    gen = runs[0]["results"]["gen"]
    out = ["# RigPort benchmarks", ""]
    out.append(
        "Generated by `bench/run_bench.py` (`make bench`). RigPort's Urho3D operators "
        "against Blender's bundled glTF importer and exporter on the same content, "
        "in the same run; every step runs in its own fresh process, several times "
        "(`--repeat`, the fastest counts: the first run of a step that allocates "
        "gigabytes is often slower on this VM). Times are of "
        "the operator call alone (scene set-up excluded). The references are the "
        "fastest importers each Blender has: glTF (Python), the C++ FBX importer "
        "(`wm.fbx_import`, 4.5+) and the C++ OBJ importer (`wm.obj_import`). "
        "Targets are ratios of RigPort's time to the reference's in the same run."
    )
    out.append("")
    out.append("## Content")
    out.append("")
    out.append(
        f"- Model: {gen['vertices']:,} vertices, {gen['triangles']:,} triangles, "
        f"{gen['bones']} bones, 4 weights per vertex, 2 UV sets, normals, tangents, "
        f"{gen['morphs']} morph ({gen['morph_vertices']:,} vertices), UMD2, "
        f"{gen['mdl_bytes'] / 1e6:.1f} MB .mdl."
    )
    out.append(
        f"- Animation: {gen['anim_bones']} bones x {gen['keys']:,} keys "
        f"(position + rotation every bone, scale every 4th), {gen['ani_bytes'] / 1e6:.1f} MB "
        f".ani; keys on whole frames at the scene rate; applied to a {gen['anim_bones']}-bone "
        "skeleton imported with RigPort (small mesh, deleted before the glTF export)."
    )
    if "static_vertices" in gen:
        out.append(
            f"- Static model: {gen['static_vertices']:,} vertices, "
            f"{gen['static_triangles']:,} triangles, one UV set, normals, no skin, "
            f"{gen['static_bytes'] / 1e6:.1f} MB .mdl; the OBJ reference is the "
            "RigPort-imported mesh written by `wm.obj_export` (normals, UVs)."
        )
    out.append(
        "- FBX reference file: the RigPort-imported model written by Blender's "
        "FBX exporter (no leaf bones, no animation), imported with `wm.fbx_import`."
    )
    out.append(
        "- glTF reference files: the RigPort-imported scene exported with "
        "`export_scene.gltf(export_format='GLB')`, skins, morphs, normals, tangents, "
        "UVs on (model, no animation) / animations on (armature only, default "
        "sampling); imported with `import_scene.gltf` defaults into an empty scene."
    )
    out.append("")
    for run in runs:
        m = run["machine"]
        res = run["results"]
        out.append(f"## bpy {m['bpy']}")
        out.append("")
        out.append(
            f"Machine: {m['nproc']} CPUs ({m['cpu']}), {m['memory']} RAM, {m['os']}; "
            f"Python {m['python']}, bpy {m['bpy']}, numpy {m['numpy']}."
        )
        out.append("")
        out.append("| operation | RigPort s | reference | reference s | ratio | target | met |")
        out.append("|---|---:|---|---:|---:|---:|:---:|")
        for label, rp, ref, ref_name, target in PAIRS:
            if rp not in res or ref not in res:
                continue
            if "skipped" in res[ref]:
                out.append(
                    f"| {label} | {res[rp]['seconds']:.2f} | {ref_name} | n/a | n/a | "
                    f"<= {target} | ({res[ref]['skipped']}) |"
                )
                continue
            a, b = res[rp]["seconds"], res[ref]["seconds"]
            ratio = a / b if b else float("inf")
            met = "yes" if ratio <= target else "**no**"
            out.append(
                f"| {label} | {a:.2f} | {ref_name} | {b:.2f} | {ratio:.2f} | <= {target} | {met} |"
            )
        mem = memory_ratio(res)
        if mem is not None:
            a, b = res["rp_mdl_import"]["hwm_call_kb"], res["gltf_mdl_import"]["hwm_call_kb"]
            met = "yes" if mem <= MEMORY_TARGET else "**no**"
            out.append(
                f"| Model import, peak memory (MiB) | {mib(a)} | glTF | {mib(b)} | {mem:.2f} | "
                f"<= {MEMORY_TARGET} | {met} |"
            )
        out.append("")
        rows = [
            (label, res[full]["seconds"], res[build]["seconds"])
            for label, full, build in BUILDS
            if full in res and build in res and "skipped" not in res[build]
        ]
        if rows:
            out.append(
                "Where an import's time goes: reading and converting the file (pure "
                "Python and numpy, RigPort's own) against building the Blender data "
                "from the ready neutral scene (`build_scene`: almost all of it is "
                "Blender's own calls on ready arrays, the floor for any importer "
                "that creates the same data; for the animation, `floor_ani_build`: "
                "the same F-curves and keys put in with Blender's calls alone, "
                "new F-curve, `keyframe_points.add`, `foreach_set` of `co` and "
                "`interpolation`, `update`, as the glTF importer does, then the "
                "view-layer update that `bpy.ops` makes after every operator, "
                "RigPort's and glTF's alike)."
            )
            out.append("")
            out.append(
                "| import | total s | read + convert s | build Blender data s | build share |"
            )
            out.append("|---|---:|---:|---:|---:|")
            for label, total, build in rows:
                out.append(
                    f"| {label} | {total:.2f} | {max(total - build, 0.0):.2f} | {build:.2f} | "
                    f"{100 * build / total:.0f}% |"
                )
            out.append("")
        out.append(
            "Peak resident memory per step (MiB): the whole child process "
            "(Blender start-up and scene set-up included) and the timed call alone "
            "(VmHWM reset just before it)."
        )
        out.append("")
        out.append(
            "| step | seconds (fastest) | every run | peak RSS process | peak RSS during call "
            "| RSS before call |"
        )
        out.append("|---|---:|---|---:|---:|---:|")
        for step in STEPS:
            r = res.get(step)
            if r is None or "skipped" in r:
                continue
            out.append(
                f"| {step} | {r['seconds']:.2f} | {all_s(r)} | {mib(r['maxrss_kb'])} | "
                f"{mib(r.get('hwm_call_kb'))} | {mib(r.get('rss_before_kb'))} |"
            )
        out.append("")
        checks = []
        for step in (
            "rp_mdl_import",
            "gltf_mdl_import",
            "fbx_mdl_import",
            "rp_static_import",
            "obj_static_import",
            "rp_ani_import",
            "gltf_ani_import",
        ):
            sc = res.get(step, {}).get("scene")
            if not sc or "error" in sc:
                continue
            parts = [
                f"mesh {m_['vertices']:,} v / {m_['polygons']:,} faces / {m_['uv_layers']} UV / "
                f"{m_['vertex_groups']} groups / {m_['shape_keys']} shape keys"
                for m_ in sc["meshes"]
            ]
            parts += [f"armature {a['bones']} bones" for a in sc["armatures"]]
            parts += [f"action {a['name']} {a['keys']:,} keyframes" for a in sc["actions"]]
            checks.append(f"- after `{step}`: " + "; ".join(parts))
        if checks:
            out.append(
                "What each import left in the scene (a check that both sides carry "
                "the same content):"
            )
            out.append("")
            out.extend(checks)
            out.append("")
        profiles = run.get("profiles", {})
        if profiles:
            out.append(f"### Where the time goes (bpy {m['bpy']})")
            out.append("")
            out.append(
                "cProfile around the operator call of each RigPort step (a separate, "
                "profiled run; the overhead makes it slower than the timed run). "
                "Own time by where it is spent: RigPort's Python code, Blender's API "
                "as cProfile sees it (`foreach_set`/`foreach_get`, operators, "
                "mathutils), numpy, and the rest (Python itself). cProfile cannot "
                "see RNA functions such as `mesh.update()` or `vertices.add()`: "
                "their time counts in the RigPort function that calls them, so the "
                "RigPort share is an upper bound (the build table above measures "
                "the Blender half directly)."
            )
            out.append("")
            out.append("| step | profiled s | RigPort | Blender API | numpy | other |")
            out.append("|---|---:|---:|---:|---:|---:|")
            order = list(RIGPORT_STEPS)
            ordered = sorted(profiles.items(), key=lambda kv: order.index(kv[0]))
            for step, prof in ordered:
                split = prof.get("split", {})
                total = sum(split.values()) or 1.0
                shares = " | ".join(
                    f"{100 * split.get(k, 0.0) / total:.0f}% ({split.get(k, 0.0):.2f} s)"
                    for k in ("rigport", "blender", "numpy", "other")
                )
                out.append(f"| {step} | {prof['total']:.2f} | {shares} |")
            out.append("")
            out.append(
                "Top 5 functions by own time, then top RigPort functions by cumulative time:"
            )
            out.append("")
            for step, prof in ordered:
                out.append(f"#### {step} (profiled total {prof['total']:.2f} s)")
                out.append("")
                out.append("| function | calls | own s | cumulative s |")
                out.append("|---|---:|---:|---:|")
                for row in prof["tottime"]:
                    out.append(
                        f"| `{row['func']}` | {row['calls']} | {row['tottime']:.2f} | "
                        f"{row['cumtime']:.2f} |"
                    )
                out.append("")
                out.append("| RigPort function (cumulative) | calls | own s | cumulative s |")
                out.append("|---|---:|---:|---:|")
                for row in prof["cumtime"]:
                    out.append(
                        f"| `{row['func']}` | {row['calls']} | {row['tottime']:.2f} | "
                        f"{row['cumtime']:.2f} |"
                    )
                out.append("")
    for text in extra:
        out.append(text.rstrip())
        out.append("")
    out.append("## How to run")
    out.append("")
    out.append("```")
    out.append("make bench                     # every version, full size, rewrites BENCHMARKS.md")
    out.append(".venv/bpy45/bin/python bench/run_bench.py --out BENCHMARKS.md   # bpy 4.5 only")
    out.append(".venv/bpy50/bin/python bench/run_bench.py --quick --out /tmp/b.md  # small, fast")
    out.append("```")
    out.append("")
    out.append(
        "Several `--python` values run the same content on several bpy versions "
        "into one report. Options: `--vertices`, `--bones`, `--anim-bones`, `--keys`, "
        "`--repeat`, `--no-profile`, `--keep` (keep the temporary folder; "
        "`bench/line_times.py STEP FOLDER/py0` then traces a step line by line), "
        "`--json` / `--include` / `--report-only` (merge the runs of several "
        "invocations into one report), `--extra` (a Markdown file of notes, "
        "added before this section)."
    )
    out.append("")
    out.append(f"Configuration of this run: `{json.dumps(config)}`")
    out.append("")
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--vertices", type=int, default=1_000_000)
    ap.add_argument("--bones", type=int, default=64)
    ap.add_argument("--anim-bones", type=int, default=100)
    ap.add_argument("--keys", type=int, default=2000)
    ap.add_argument("--quick", action="store_true", help="small sizes (a quick smoke run)")
    ap.add_argument("--out", default=str(ROOT / "BENCHMARKS.md"))
    ap.add_argument(
        "--python",
        action="append",
        help="Python with bpy for the children (repeatable; default: this one)",
    )
    ap.add_argument(
        "--repeat",
        type=int,
        default=2,
        help="run each step this many times in fresh processes and keep the fastest",
    )
    ap.add_argument("--no-profile", action="store_true")
    ap.add_argument("--keep", action="store_true", help="keep the temporary folder")
    ap.add_argument(
        "--from-kept",
        metavar="DIR",
        help="no run: rebuild the report from a folder kept with --keep (pass --python "
        "for the machine line when the folder has no machine.json)",
    )
    ap.add_argument(
        "--extra",
        action="append",
        default=[],
        help="markdown file to add before 'How to run' (e.g. bench/line_times.py --md output)",
    )
    ap.add_argument(
        "--report-only",
        action="store_true",
        help="no run: write the report from the --include files",
    )
    ap.add_argument("--json", help="also write the measured runs to this JSON file")
    ap.add_argument(
        "--include",
        action="append",
        default=[],
        help="JSON file from an earlier --json run (same content) to add to the report",
    )
    args = ap.parse_args(argv)
    if args.quick:
        args.vertices, args.keys = 20_000, 200
    config = {
        "vertices": args.vertices,
        "bones": args.bones,
        "anim_bones": args.anim_bones,
        "keys": args.keys,
    }
    pythons = args.python or [sys.executable]
    extras = [Path(p).read_text() for p in args.extra]
    if args.report_only:
        write_report(args.out, fmt_report(collect_earlier(args.include, config), config, extras))
        return 0
    if args.from_kept:
        runs = load_kept(Path(args.from_kept), pythons[0])
        if args.json:
            Path(args.json).write_text(json.dumps({"config": config, "runs": runs}, indent=1))
        write_report(
            args.out, fmt_report(collect_earlier(args.include, config) + runs, config, extras)
        )
        return 0

    runs = []
    with tempfile.TemporaryDirectory(prefix="rigport-bench-") as tmp:
        root = Path(tmp)
        for python in pythons:
            workdir = root / f"py{len(runs)}"
            workdir.mkdir()
            machine = machine_info(python)
            (workdir / "machine.json").write_text(json.dumps(machine))
            print(f"== bpy {machine['bpy']} ({python})", flush=True)
            results = {}
            for step in STEPS:
                tries = [run_child(python, step, workdir, config) for _ in range(args.repeat)]
                if "skipped" in tries[0]:
                    results[step] = tries[0]
                    print(f"  {step:16s} skipped: {tries[0]['skipped']}", flush=True)
                    continue
                r = min(tries, key=lambda t: t["seconds"])
                r["all_seconds"] = [t["seconds"] for t in tries]
                results[step] = r
                print(
                    f"  {step:16s} {r['seconds']:8.2f} s   peak {mib(r['maxrss_kb']):>6s} MiB"
                    f"   (child {r['wall']:.1f} s)",
                    flush=True,
                )
            profiles = {}
            if not args.no_profile:
                for rp in RIGPORT_STEPS:
                    print(f"  profiling {rp}", flush=True)
                    profiles[rp] = run_child(python, rp, workdir, config, profile=True)["profile"]
            runs.append({"machine": machine, "results": results, "profiles": profiles})
            for label, rp, ref, ref_name, target in PAIRS:
                if "skipped" in results[ref]:
                    continue
                a, b = results[rp]["seconds"], results[ref]["seconds"]
                print(
                    f"  {label:20s} RigPort {a:7.2f} s  {ref_name:10s} {b:7.2f} s  "
                    f"ratio {a / b:.2f} (target {target})",
                    flush=True,
                )
        if args.keep:
            keep = Path(tempfile.mkdtemp(prefix="rigport-bench-kept-"))
            subprocess.run(["cp", "-r", str(root) + "/.", str(keep)], check=False)
            print(f"kept {keep}")
    if args.json:
        Path(args.json).write_text(json.dumps({"config": config, "runs": runs}, indent=1))
    write_report(args.out, fmt_report(collect_earlier(args.include, config) + runs, config, extras))
    return 0


def load_kept(folder: Path, python: str) -> list[dict]:
    """Runs from a folder kept with --keep (one py<N> folder per bpy)."""
    runs = []
    for workdir in sorted(folder.glob("py*")):
        results = {
            p.stem: json.loads(p.read_text())
            for p in workdir.glob("*.json")
            if not p.name.endswith(".prof.json") and p.name != "machine.json"
        }
        profiles = {
            p.name[: -len(".prof.json")]: json.loads(p.read_text())["profile"]
            for p in workdir.glob("*.prof.json")
        }
        m = workdir / "machine.json"
        machine = json.loads(m.read_text()) if m.exists() else machine_info(python)
        runs.append({"machine": machine, "results": results, "profiles": profiles})
    return runs


def collect_earlier(paths: list[str], config: dict) -> list[dict]:
    earlier = []
    for path in paths:
        saved = json.loads(Path(path).read_text())
        if saved["config"] != config:
            raise SystemExit(f"{path}: other content {saved['config']} than {config}")
        earlier.extend(saved["runs"])
    return earlier


if __name__ == "__main__":
    raise SystemExit(main())
