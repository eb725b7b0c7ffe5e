"""RenderWare DFF import/export against Blender's glTF on the same skinned clump.

Run with a Python that has the ``bpy`` module::

    .venv/bpy50/bin/python bench/bench_renderware.py [--vertices N] [--bones N]

Builds a skinned ped (``samples/renderware.py``: ``--bones`` bones,
4 weights per vertex, normals, one UV set) of about ``--vertices`` vertices,
then times, each from a fresh empty scene: RigPort .dff import; RigPort .dff
export of that scene; glTF export of the same scene; glTF import of that .glb.
With ``--repeat N`` every step runs N times (each from a fresh empty scene)
and the fastest counts. Prints a Markdown table with the ratios (target:
RigPort <= 0.5 x glTF).
Benchmarks are not tests: nothing here runs under pytest.
"""

from __future__ import annotations

import argparse
import math
import os
import runpy
import sys
import time
from pathlib import Path

from sections import quiet_stdout, remove_scratch, scratch_dir

ROOT = Path(__file__).resolve().parent.parent


def _load_addon():
    """The repository as the package ``rigport`` (loader.py), registered."""
    module = runpy.run_path(str(ROOT / "loader.py"))["package"](init=True)
    module.register()
    return module


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vertices", type=int, default=500_000)
    ap.add_argument("--bones", type=int, default=32)
    ap.add_argument("--repeat", type=int, default=1, help="runs of each step; the fastest counts")
    args = ap.parse_args()
    import bpy

    _load_addon()
    from rigport.io_formats.renderware import dff
    from rigport.samples import renderware as samples

    parts = max(1, math.ceil(args.vertices / 60_000))  # a geometry holds <= 65535 vertices
    segments = int(math.sqrt(args.vertices / parts)) * 2
    rings = max(2, args.vertices // parts // (segments + 1))
    tmp = scratch_dir("rw-bench-")
    src = tmp / "ped.dff"
    t = time.perf_counter()
    data = dff.write(samples.skinned_ped("SA", args.bones, rings, segments, parts=parts))
    src.write_bytes(data)
    gen = time.perf_counter() - t
    times = {}

    def timed(key, fn):
        t0 = time.perf_counter()
        fn()
        times[key] = min(times.get(key, float("inf")), time.perf_counter() - t0)

    with quiet_stdout():
        for _ in range(args.repeat):
            bpy.ops.wm.read_factory_settings(use_empty=True)
            timed("rp_import", lambda: bpy.ops.import_scene.rw_dff(filepath=str(src)))
            meshes = [o.data for o in bpy.data.objects if o.type == "MESH"]
            nv = sum(len(m.vertices) for m in meshes)
            nf = sum(len(m.polygons) for m in meshes)
            timed("rp_export", lambda: bpy.ops.export_scene.rw_dff(filepath=str(tmp / "out.dff")))
            timed(
                "gltf_export",
                lambda: bpy.ops.export_scene.gltf(
                    filepath=str(tmp / "ped.glb"), export_format="GLB"
                ),
            )
            bpy.ops.wm.read_factory_settings(use_empty=True)
            timed("gltf_import", lambda: bpy.ops.import_scene.gltf(filepath=str(tmp / "ped.glb")))
    same = (tmp / "out.dff").read_bytes() == data
    version = ".".join(map(str, bpy.app.version))
    print(
        f"\nbpy {version}: {nv} vertices, {nf} triangles, {args.bones} bones, "
        f"4 weights, {parts} atomics"
    )
    print(f"(.dff {len(data) / 1e6:.1f} MB, generated in {gen:.1f} s; fastest of {args.repeat};")
    print(f"exported file byte-identical to the imported one: {same})\n")
    print("| step | RigPort s | glTF s | ratio |")
    print("|---|---|---|---|")
    for label, a, b in (
        ("import", "rp_import", "gltf_import"),
        ("export", "rp_export", "gltf_export"),
    ):
        print(f"| {label} | {times[a]:.2f} | {times[b]:.2f} | {times[a] / times[b]:.2f} |")
    sys.stdout.flush()
    remove_scratch()
    os._exit(0)  # bpy 4.2 can crash at interpreter exit


if __name__ == "__main__":
    main()
