"""MRTK input recording benchmark: a long recording through the codec and Blender.

Run with a Python that has the ``bpy`` module::

    .venv/bpy50/bin/python bench/mrtk_bench.py [--minutes 10] [--rate 60]

It builds a recording with the camera, both hands (27 joints each) and eye
gaze at ``--rate`` keys per second for ``--minutes`` (10 min at 60 Hz: 395
float curves of 36,000 keys), in the simple 1.1 layout (what MRTK writes) and
the full-keyframe layout, and times: codec read and write, import into
Blender (``import_anim.mrtk_input``), export in the same layout (byte-exact),
and export of the full-keyframe import to the simple layout (sampling).
Benchmarks are not tests: nothing here runs under pytest.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _package():
    spec = importlib.util.spec_from_file_location(
        "rigport", ROOT / "__init__.py", submodule_search_locations=[str(ROOT)]
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules["rigport"] = module
    spec.loader.exec_module(module)
    return module


def _timed(fn, *args, **kwargs):
    t0 = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - t0


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--minutes", type=float, default=10.0)
    p.add_argument("--rate", type=float, default=60.0)
    args = p.parse_args()
    os.environ.setdefault("BLENDER_USER_RESOURCES", tempfile.mkdtemp(prefix="rigport-bench-"))
    import bpy

    rigport = _package()
    rigport.register()
    from rigport.io_formats.mrtk import recording, samples

    tmp = Path(tempfile.mkdtemp(prefix="rigport-mrtk-"))
    print(f"bpy {bpy.app.version_string}, {args.minutes} min at {args.rate} Hz")
    for layout in (recording.SIMPLE, recording.FULL):
        rec, dt = _timed(samples.long_recording, args.minutes, args.rate, layout)
        n_curves = len(list(rec.float_curves()))
        n_keys = sum(len(c.keys) for _, c in rec.float_curves())
        data, t_write = _timed(recording.write, rec)
        _, t_read = _timed(recording.read, data)
        src = tmp / f"{layout}.bin"
        src.write_bytes(data)
        bpy.ops.wm.read_factory_settings(use_empty=True)
        bpy.context.scene.render.fps = int(args.rate)
        _, t_import = _timed(bpy.ops.import_anim.mrtk_input, filepath=str(src))
        out = tmp / f"{layout}_out.bin"
        _, t_export = _timed(bpy.ops.export_anim.mrtk_input, filepath=str(out))
        same = out.read_bytes() == data
        print(
            f"{layout}: {n_curves} float curves, {n_keys} keys, {len(data) / 1e6:.1f} MB; "
            f"generate {dt:.2f} s, codec read {t_read:.2f} s, write {t_write:.2f} s; "
            f"Blender import {t_import:.2f} s, export {t_export:.2f} s, bytes equal: {same}"
        )
        if layout == recording.FULL:
            simple = tmp / "sampled.bin"
            _, t_sample = _timed(
                bpy.ops.export_anim.mrtk_input,
                filepath=str(simple),
                version="V11_SIMPLE",
                tolerance=1e-4,
            )
            back = recording.read(simple.read_bytes())
            n_out = sum(len(c.keys) for _, c in back.float_curves())
            print(
                f"full -> simple export (tolerance 1e-4): {t_sample:.2f} s, "
                f"{n_out} keys ({n_out / n_keys:.2f} per original key)"
            )


if __name__ == "__main__":
    main()
    sys.stdout.flush()
    os._exit(0)  # bpy 4.2 can crash at interpreter exit
