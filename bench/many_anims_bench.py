"""Many animations in one import: an Urho3D package and many selected .ani files (issue 28).

Run with a Python that has ``bpy``; prints a Markdown table::

    .venv/bpy50/bin/python bench/many_anims_bench.py [--counts 1,100,1000] [--repeat 3]
        [--bones 32] [--keys 60]

The target: N animations in one import take at most 1.3 x N times one
animation's import. Two ways an artist brings many in at once (the IFP case is
in ``bench/anim_bench.py``):

- a package (``import_scene.urho3d_package``) holding a skeleton model and N
  walk animations; the model's own share is taken out by importing the same
  package with no animation (``0``), so an animation's cost is
  ``t(N) - t(0)``;
- N ``.ani`` files chosen together in the file browser
  (``import_anim.urho3d_ani`` with ``files``) onto the armature imported first.

Each import runs in a fresh empty scene ``--repeat`` times (up to 10 animations:
at least 10 times) in one process and the fastest counts (in brackets: the least
CPU time of any run, steadier on a shared machine), after one untimed import of a
one-animation package warms the process. Benchmarks are not tests.
"""

from __future__ import annotations

import argparse
import os
import platform
import runpy
import sys
import time
from pathlib import Path

from sections import quiet_stdout, remove_scratch, scratch_dir

ROOT = Path(__file__).resolve().parent.parent
FPS = 30


def _fastest(repeat: int, setup, call) -> tuple[float, float]:
    """The fastest run's wall seconds, and the least CPU seconds of any run."""
    best, cpu = float("inf"), float("inf")
    for _ in range(repeat):
        setup()
        t0, c0 = time.perf_counter(), time.process_time()
        if call() != {"FINISHED"}:
            raise SystemExit("an import did not finish")
        best = min(best, time.perf_counter() - t0)
        cpu = min(cpu, time.process_time() - c0)
    return best, cpu


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--counts", default="1,100,1000")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--bones", type=int, default=32)
    ap.add_argument("--keys", type=int, default=60)
    args = ap.parse_args(argv)
    counts = sorted({int(c) for c in args.counts.split(",") if c})
    os.environ.setdefault("BLENDER_USER_RESOURCES", str(scratch_dir("rigport-bench-")))
    addon = runpy.run_path(str(ROOT / "loader.py"))["package"](init=True)
    addon.register()
    import bpy

    from rigport.io_formats.urho3d import ani, mdl, package
    from rigport.samples import urho3d as samples

    tmp = scratch_dir("rigport-many-")
    skel = samples.skinned_model(
        args.bones, grid=(16, 8), morphs=0, uv_sets=1, color=False, collision=False
    )
    skel_bytes = mdl.write(skel)
    (tmp / "skel.mdl").write_bytes(skel_bytes)
    clips = []
    for i in range(max(counts)):
        anim = samples.walk_animation(skel, args.keys, (args.keys - 1) / FPS, name=f"Walk{i:04d}")
        clips.append((f"Animations/Walk{i:04d}.ani", ani.write(anim)))
        (tmp / f"Walk{i:04d}.ani").write_bytes(clips[-1][1])

    def empty() -> None:
        bpy.ops.wm.read_factory_settings(use_empty=True)
        if not hasattr(bpy.types, "IMPORT_SCENE_OT_urho3d_package"):
            addon.register()
        bpy.context.scene.render.fps = FPS

    def with_skeleton() -> None:
        empty()
        if bpy.ops.import_scene.urho3d_mdl(filepath=str(tmp / "skel.mdl")) != {"FINISHED"}:
            raise SystemExit("the skeleton did not import")
        arm = next(o for o in bpy.context.scene.objects if o.type == "ARMATURE")
        bpy.context.view_layer.objects.active = arm
        bpy.context.view_layer.update()

    pak_rows, ani_rows = [], []
    with quiet_stdout():
        # one untimed one-animation package import first: the process's first
        # import pays for its first pages and calls, and the skeleton-only package
        # (the baseline every other row subtracts) would carry that alone
        warm = package.new_package()
        warm.put("Models/Skel.mdl", skel_bytes)
        warm.put(*clips[0])
        (tmp / "warm.pak").write_bytes(package.write(warm))
        _fastest(
            1, empty, lambda: bpy.ops.import_scene.urho3d_package(filepath=str(tmp / "warm.pak"))
        )
        for n in [0, *counts]:
            # an import of a few milliseconds spreads by half its time from run to
            # run here: the small rows, the divisor of every ratio, run 10 times
            repeat = max(args.repeat, 10) if n <= 10 else args.repeat
            pkg = package.new_package()
            pkg.put("Models/Skel.mdl", skel_bytes)
            for name, data in clips[:n]:
                pkg.put(name, data)
            path = tmp / f"many{n}.pak"
            path.write_bytes(package.write(pkg))
            t = _fastest(
                repeat,
                empty,
                lambda path=path: bpy.ops.import_scene.urho3d_package(filepath=str(path)),
            )
            pak_rows.append((n, t))
            if n:
                files = [{"name": f"Walk{i:04d}.ani"} for i in range(n)]
                t = _fastest(
                    repeat,
                    with_skeleton,
                    lambda files=files: bpy.ops.import_anim.urho3d_ani(
                        directory=str(tmp), files=files, filepath=str(tmp / files[0]["name"])
                    ),
                )
                if len(bpy.data.actions) != n:
                    raise SystemExit(f"{n} .ani files made {len(bpy.data.actions)} actions")
                ani_rows.append((n, t))

    base, base_cpu = pak_rows[0][1]
    one_pak = pak_rows[1][1][0] - base
    one_ani = ani_rows[0][1][0]
    print(
        f"bpy {bpy.app.version_string}, Python {platform.python_version()}, "
        f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at the end. "
        f"Each animation: {args.bones} bones x {args.keys} keys. "
        f"Fastest of {args.repeat} (up to 10 animations: of {max(args.repeat, 10)}).\n"
    )
    print(
        "| animations | package import | per animation | x N x one "
        "| .ani files | per file | x N x one |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|")
    print(f"| 0 (the skeleton model alone) | {base:.3f} s ({base_cpu:.3f}) | | | | | |")
    for (n, (tp, cp)), (_, (ta, ca)) in zip(pak_rows[1:], ani_rows, strict=True):
        per_pak, per_ani = (tp - base) / n, ta / n
        print(
            f"| {n:,} | {tp:.3f} s ({cp:.3f}) | {per_pak * 1000:.2f} ms | {per_pak / one_pak:.2f} "
            f"| {ta:.3f} s ({ca:.3f}) | {per_ani * 1000:.2f} ms | {per_ani / one_ani:.2f} |"
        )
    return 0


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    remove_scratch()
    os._exit(code)  # bpy 4.2 can crash at interpreter exit
