"""BonesPro benchmark: a 200k-vertex structure file and a 100-bone x 5,000-frame
Bones-mode animation, codec and Blender import/export times.

    .venv/bpy50/bin/python bench/bonespro_bench.py [--vertices N] [--bones N] [--frames N]

Prints a Markdown table (fastest of ``--repeat`` runs per step). Not a test.
"""

from __future__ import annotations

import argparse
import os
import platform
import runpy
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from sections import remove_scratch, scratch_dir  # noqa: E402


def _package():
    """The repository as the package ``rigport``, its ``__init__.py`` run (loader.py)."""
    return runpy.run_path(str(ROOT / "loader.py"))["package"](init=True)


def _best(fn, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--vertices", type=int, default=200_000)
    ap.add_argument("--bones", type=int, default=100)
    ap.add_argument("--frames", type=int, default=5_000)
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()
    rigport = _package()
    from rigport.io_formats.bonespro import animation as A
    from rigport.io_formats.bonespro import structure
    from rigport.samples import bonespro as samples

    names = [f"Bone {i:03d}" for i in range(args.bones)]
    parents = [-1] + [(i - 1) // 3 for i in range(1, args.bones)]
    work = scratch_dir("bonespro-bench-")
    rows = []
    t = time.perf_counter()
    rig = samples.structure(args.vertices, names=names, parents=parents, scaled=False)
    anim = samples.animation(rig, A.BONES, A.RELATIVE, A.MATRIX, n_frames=args.frames)
    print(f"generated in {time.perf_counter() - t:.1f} s", file=sys.stderr)
    rig_path, anim_path = work / "rig.txt", work / "anim.txt"
    rig_bytes, anim_bytes = structure.write(rig), A.write(anim)
    rig_path.write_bytes(rig_bytes)
    anim_path.write_bytes(anim_bytes)
    label_s = f"structure, {args.vertices} vertices, {args.bones} bones"
    label_a = f"animation, {args.bones} bones x {args.frames} frames (Matrix)"
    rows.append((label_s, "file size", f"{len(rig_bytes) / 1e6:.1f} MB"))
    rows.append((label_a, "file size", f"{len(anim_bytes) / 1e6:.1f} MB"))
    rows.append(
        (label_s, "codec read", f"{_best(lambda: structure.read(rig_bytes), args.repeat):.2f} s")
    )
    rows.append(
        (label_s, "codec write", f"{_best(lambda: structure.write(rig), args.repeat):.2f} s")
    )
    rows.append((label_a, "codec read", f"{_best(lambda: A.read(anim_bytes), args.repeat):.2f} s"))
    rows.append((label_a, "codec write", f"{_best(lambda: A.write(anim), args.repeat):.2f} s"))

    import bpy

    rigport.register()
    from rigport.operators.bonespro.exporter import (
        AnimationExportOptions,
        write_animation,
        write_structure,
    )
    from rigport.operators.bonespro.importer import (
        AnimationImportOptions,
        StructureImportOptions,
        import_animation,
        import_structure,
    )

    def fresh():
        bpy.ops.wm.read_factory_settings(use_empty=True)

    def import_rig():
        fresh()
        import_structure(bpy.context, str(rig_path), StructureImportOptions(weights_to="NEW"))

    rows.append((label_s, "Blender import", f"{_best(import_rig, args.repeat):.2f} s"))
    arm = next(o for o in bpy.data.objects if o.type == "ARMATURE")
    mesh = next(o for o in bpy.data.objects if o.type == "MESH")
    out = work / "out_rig.txt"
    t_export = _best(lambda: write_structure(bpy.context, str(out), arm, mesh), args.repeat)
    rows.append((label_s, "Blender export", f"{t_export:.2f} s"))

    def import_anim():
        if arm.animation_data is not None:
            old = arm.animation_data.action
            arm.animation_data.action = None
            bpy.data.actions.remove(old)
        import_animation(bpy.context, str(anim_path), AnimationImportOptions(), arm)

    rows.append((label_a, "Blender import", f"{_best(import_anim, args.repeat):.2f} s"))
    out = work / "out_anim.txt"
    t_export = _best(
        lambda: write_animation(bpy.context, str(out), arm, None, AnimationExportOptions()),
        args.repeat,
    )
    rows.append((label_a, "Blender export", f"{t_export:.2f} s"))
    print(
        f"bpy {bpy.app.version_string}, Python {platform.python_version()}, "
        f"fastest of {args.repeat}\n"
    )
    print("| file | step | result |\n|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
    sys.stdout.flush()
    remove_scratch()
    os._exit(0)  # bpy 4.2 can crash at interpreter exit, after the report
