"""MRTK input recording benchmark: 10-minute 60 Hz recordings through the codec and Blender.

Run with a Python that has the ``bpy`` module; it prints a Markdown section::

    .venv/bpy50/bin/python bench/mrtk_bench.py [--minutes 10] [--rate 60] \\
        | python bench/sections.py BENCHMARKS.md mrtk-50 "MRTK input recordings, bpy 5.0"

Recordings (camera, both hands with 27 joints, eye gaze in 1.1; 385 to 391
float curves of 36,000 keys, 14 million keys):
- ``1.0 recorder``: what MRTK's recorder writes (linear keys: weighted mode
  Both, tangents and weights 0, at game-loop frame times), the issue's
  10-minute case;
- ``1.1 simple``: what MRTK 2.x writes (time and value per key);
- ``1.1 full``: the documented layout (tangents and weights).

For each: codec read and write, Blender import (``import_anim.mrtk_input``)
and export with default options (byte-exact is checked), wall and CPU time,
and the floor: Blender's own calls alone on the same arrays (the calls the
import makes: actions, F-curves, ``keyframe_points.add``, the ``foreach_set``
calls, the objects playing the actions and the view-layer update that ends the
operator), the same calls as an operator with the importers' bl_options called
through bpy.ops as the import is (the operator call and its view-layer updates;
the bpy module pushes no undo step), and
``foreach_get`` of the same properties for export. The floor's
builds and the imports alternate, each in a fresh scene, so both find the
allocator in the same state. The export
also pays for writing the file durably (``write_atomic``: the bytes, then
``fsync`` before the rename), timed alone on the same bytes. Imports, exports
and floors run ``--repeat`` times (the fastest counts). The machine may be
shared: CPU time is the steadier number there. Not a test.
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import runpy
import sys
import time
from functools import partial
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from sections import floor_operator, quiet_stdout, remove_scratch, scratch_dir  # noqa: E402


def _package():
    """The repository as the package ``rigport``, its ``__init__.py`` run (loader.py)."""
    return runpy.run_path(str(ROOT / "loader.py"))["package"](init=True)


def _timed(fn, *args, **kwargs):
    """(result, wall seconds, CPU seconds)."""
    gc.collect()
    t0, c0 = time.perf_counter(), time.process_time()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - t0, time.process_time() - c0


def _fastest(repeat: int, fn, *args, **kwargs):
    """:func:`_timed` ``repeat`` times; the run with the least wall time (the first
    run that allocates gigabytes is often slower on a virtual machine)."""
    return min((_timed(fn, *args, **kwargs) for _ in range(repeat)), key=lambda r: r[1])


def _floor_build(bpy, plan, fps: float):
    """Blender's own calls alone for the import's F-curves: a callable that makes
    them in the current scene.

    The same calls the import makes on the same arrays: an action per object,
    its F-curves, ``keyframe_points.add`` and ``foreach_set`` of co and
    interpolation, plus both handles and handle types on curves with Bezier
    keys; the objects that play the actions and the view-layer update that
    ends every operator (Blender copies each action for evaluation).
    """
    from rigport.operators.blender import compat
    from rigport.operators.mrtk.build import _enum, interpolation_codes

    codes = interpolation_codes()
    free_code = _enum("FREE", "handle_left_type")
    arrays = []
    for c in plan.curves:
        co, hl, hr, interp = c.frames(fps)
        bez = hl is not None
        arrays.append(
            (c, co.ravel(), hl.ravel() if bez else None, hr.ravel() if bez else None, codes[interp])
        )

    def build(_context=None):
        actions, makers = {}, {}
        for c, co, hl, hr, ic in arrays:
            action = actions.get(c.target)
            if action is None:
                action = actions[c.target] = bpy.data.actions.new("floor")
                makers[c.target] = compat.fcurve_maker(action)
            fc = makers[c.target](c.data_path, c.index, c.target)
            kp = fc.keyframe_points
            kp.add(len(ic))
            kp.foreach_set("co", co)
            kp.foreach_set("interpolation", ic)
            if hl is not None:
                kp.foreach_set("handle_left", hl)
                kp.foreach_set("handle_right", hr)
                free = np.full(len(ic), free_code, np.uint8)
                kp.foreach_set("handle_left_type", free)
                kp.foreach_set("handle_right_type", free)
        scene = bpy.context.scene
        for target, action in actions.items():
            obj = bpy.data.objects.new(target, None)
            scene.collection.objects.link(obj)
            compat.assign_action(obj, action)

    def build_and_update():
        build()
        bpy.context.view_layer.update()

    return build_and_update, build


def _read_floor(bpy) -> None:
    """The export's floor: ``foreach_get`` of co and interpolation of every F-curve
    in the file, and of the handles where some key is Bezier."""
    from rigport.io_formats.mrtk import keys as kc
    from rigport.operators.blender import compat
    from rigport.operators.mrtk.build import interpolation_codes

    bezier = interpolation_codes()[kc.BEZIER]
    for action in bpy.data.actions:
        for fc in compat.fcurves(action):
            kp = fc.keyframe_points
            k = len(kp)
            kp.foreach_get("co", np.empty(2 * k, np.float32))
            interp = np.empty(k, np.uint8)
            kp.foreach_get("interpolation", interp)
            if np.any(interp == bezier):
                kp.foreach_get("handle_left", np.empty(2 * k, np.float32))
                kp.foreach_get("handle_right", np.empty(2 * k, np.float32))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--minutes", type=float, default=10.0)
    p.add_argument("--rate", type=float, default=60.0)
    p.add_argument(
        "--repeat", type=int, default=2, help="imports, exports and their floors: keep the fastest"
    )
    args = p.parse_args()
    os.environ.setdefault("BLENDER_USER_RESOURCES", str(scratch_dir("rigport-bench-")))
    import bpy

    rigport = _package()
    rigport.register()
    from rigport.io_formats.codec.files import write_atomic
    from rigport.io_formats.mrtk import convert, recording
    from rigport.samples import mrtk as samples

    tmp = scratch_dir("rigport-mrtk-")
    cases = (
        ("1.0 recorder", lambda: samples.recorder_recording(args.minutes, args.rate)),
        ("1.1 simple", lambda: samples.long_recording(args.minutes, args.rate, recording.SIMPLE)),
        ("1.1 full", lambda: samples.long_recording(args.minutes, args.rate, recording.FULL)),
    )
    rows = []
    for name, make in cases:
        rec = make()
        n_curves = len(list(rec.float_curves()))
        n_keys = sum(len(c.keys) for _, c in rec.float_curves())
        data, _, t_write = _timed(recording.write, rec)
        del rec
        back, _, t_read = _timed(recording.read, data)
        plan = convert.import_recording(back)
        del back
        src = tmp / "take.bin"
        src.write_bytes(data)
        bpy.ops.wm.read_factory_settings(use_empty=True)
        bpy.context.scene.render.fps = int(args.rate)
        with quiet_stdout():
            build, build_calls = _floor_build(bpy, plan, float(args.rate))
            # unregistered after its runs: it holds the floor's arrays
            drop_floor = floor_operator("rigport_bench.mrtk_floor", "MRTK floor", build_calls)

            def fresh(call) -> tuple[float, float]:
                bpy.ops.wm.read_factory_settings(use_empty=True)
                bpy.context.scene.render.fps = int(args.rate)
                gc.collect()
                t0, c0 = time.perf_counter(), time.process_time()
                call()
                return time.perf_counter() - t0, time.process_time() - c0

            # Interleaved, each in a fresh scene: the first build of a process
            # faults in new memory and later ones reuse what the allocator kept,
            # so the floor's runs and the import's alternate (the import last,
            # its scene is the one exported).
            floors, op_floors, imports = [], [], []
            load = partial(bpy.ops.import_anim.mrtk_input, filepath=str(src))
            for _ in range(args.repeat):
                floors.append(fresh(build))
                op_floors.append(fresh(bpy.ops.rigport_bench.mrtk_floor))
                imports.append(fresh(load))
            drop_floor()
            del build, build_calls, plan
            floor_set = min(floors)
            w_op, c_op = min(op_floors)
            wi, ci = min(imports)
            _, wg, cg = _fastest(args.repeat, _read_floor, bpy)
            floor = (*floor_set, wg, cg)
            out = tmp / "out.bin"
            _, we, ce = _fastest(args.repeat, bpy.ops.export_anim.mrtk_input, filepath=str(out))
        same = out.read_bytes() == data
        _, w_file, c_file = _fastest(args.repeat, write_atomic, str(tmp / "copy.bin"), data)
        rows.append(
            f"| {name} | {n_curves} | {n_keys / 1e6:.1f} M | {len(data) / 1e6:.0f} MB "
            f"| {t_read:.2f} / {t_write:.2f} | {wi:.2f} ({ci:.2f}) "
            f"| {floor[0]:.2f} ({floor[1]:.2f}) | {w_op:.2f} ({c_op:.2f}) | {we:.2f} ({ce:.2f}) "
            f"| {floor[2]:.2f} ({floor[3]:.2f}) | {w_file:.2f} ({c_file:.2f}) "
            f"| {'yes' if same else 'NO'} |"
        )
        del data
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"bpy {bpy.app.version_string}, Python {platform.python_version()}, "
        f"{platform.machine()} {os.cpu_count()} CPUs, load average {load:.1f} at the end; "
        f"{args.minutes:g} min at {args.rate:g} Hz. Seconds, wall (CPU); codec CPU.\n"
    )
    print(
        "| recording | float curves | keys | file | codec read / write | import "
        "| import floor (Blender calls) | import floor as an operator | export "
        "| export floor (foreach_get) | file write (write + fsync) | bytes equal |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
    sys.stdout.flush()
    remove_scratch()
    os._exit(0)  # bpy 4.2 can crash at interpreter exit
