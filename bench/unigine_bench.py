"""Unigine MESH import/export against Blender's glTF on the same content.

    .venv/bpy50/bin/python bench/unigine_bench.py [--rings 1000] [--segments 500]
        [--bones 64] [--repeat 2] [--workdir DIR]

Builds a skinned ms11 mesh with ``samples/unigine.py`` (two
surfaces of ``rings x segments`` coordinate vertices each: 1M by default; a UV
seam per surface, tangent quaternions, one morph target, 1 to 4 weights per
vertex), then times, each in a fresh process and fastest of ``--repeat``: the
RigPort import (scene saved), the RigPort export of that scene, the glTF export
of that scene (GLB, skins, morphs, normals, tangents, UVs) and the glTF import
of that GLB into an empty scene. Prints a Markdown table with the ratios.
Benchmarks are not tests: nothing here runs under pytest.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import steps  # noqa: E402  (the shared helpers of bench/steps.py)
from sections import scratch_dir  # noqa: E402

STEPS = ("rp_import", "rp_export", "gltf_export", "gltf_import")


def gen(workdir: Path, cfg: dict) -> dict:
    steps.install_package()
    from rigport.io_formats.unigine import mesh
    from rigport.samples import unigine as samples

    m = samples.skinned_mesh(
        n_bones=cfg["bones"],
        rings=cfg["rings"],
        segments=cfg["segments"],
        surfaces=2,
        morphs=("bulge",),
        animations=0,
    )
    data = mesh.write(m)
    (workdir / "model.mesh").write_bytes(data)
    return {
        "coordinate_vertices": sum(s.n_coords for s in m.surfaces),
        "surface_vertices": sum(s.n_vertices for s in m.surfaces),
        "triangles": sum(len(s.tris) // 3 for s in m.surfaces),
        "bones": len(m.bones),
        "bytes": len(data),
    }


def step(name: str, workdir: Path) -> float:
    import bpy

    steps.load_addon()
    w = workdir
    if name == "rp_import":
        steps._empty_scene()
        t = time.perf_counter()
        steps._check(bpy.ops.import_scene.unigine_mesh(filepath=str(w / "model.mesh")), name)
        took = time.perf_counter() - t
        steps._save(w / "model.blend")
        return took
    steps._open(w / "model.blend") if name != "gltf_import" else steps._empty_scene()
    t = time.perf_counter()
    if name == "rp_export":
        steps._check(bpy.ops.export_scene.unigine_mesh(filepath=str(w / "out.mesh")), name)
    elif name == "gltf_export":
        op = bpy.ops.export_scene.gltf
        opts = steps._gltf_options(
            op,
            filepath=str(w / "model.glb"),
            export_format="GLB",
            export_skins=True,
            export_morph=True,
            export_tangents=True,
            export_normals=True,
            export_texcoords=True,
            export_animations=False,
            export_materials="NONE",
        )
        steps._check(op(**opts), name)
    elif name == "gltf_import":
        steps._check(bpy.ops.import_scene.gltf(filepath=str(w / "model.glb")), name)
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rings", type=int, default=1000)
    ap.add_argument("--segments", type=int, default=500)
    ap.add_argument("--bones", type=int, default=64)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--workdir")
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        name, workdir = args.child
        workdir = Path(workdir)
        if name == "gen":
            cfg = json.loads((workdir / "cfg.json").read_text())
            out = gen(workdir, cfg)
        else:
            out = {"seconds": step(name, workdir)}
        (workdir / f"{name}.json").write_text(json.dumps(out))
        sys.stdout.flush()
        os._exit(0)  # bpy 4.2 can crash at interpreter exit after a good run
    workdir = Path(args.workdir) if args.workdir else scratch_dir("rigport-unigine-bench-")
    workdir.mkdir(parents=True, exist_ok=True)
    cfg = {"rings": args.rings, "segments": args.segments, "bones": args.bones}
    (workdir / "cfg.json").write_text(json.dumps(cfg))

    def child(name: str) -> dict:
        cmd = [sys.executable, __file__, "--child", name, str(workdir)]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
        if proc.returncode:
            sys.exit(proc.stdout[-3000:] + proc.stderr[-3000:])
        return json.loads((workdir / f"{name}.json").read_text())

    content = child("gen")
    times = {s: [] for s in STEPS}
    for _ in range(args.repeat):
        for s in STEPS:
            times[s].append(child(s)["seconds"])
    best = {s: min(v) for s, v in times.items()}
    import bpy

    print(f"Content: {json.dumps(content)}; bpy {bpy.app.version_string}\n")
    print("| operation | RigPort s | glTF s | RigPort / glTF | target | met |")
    print("|---|---:|---:|---:|---:|:---:|")
    for label, rp, gl in (
        ("Mesh import", "rp_import", "gltf_import"),
        ("Mesh export", "rp_export", "gltf_export"),
    ):
        ratio = best[rp] / best[gl]
        met = "yes" if ratio <= 0.5 else "**no**"
        print(f"| {label} | {best[rp]:.2f} | {best[gl]:.2f} | {ratio:.2f} | <= 0.5 | {met} |")
    print("\nEvery run (s): " + json.dumps({s: [round(x, 2) for x in v] for s, v in times.items()}))


if __name__ == "__main__":
    main()
