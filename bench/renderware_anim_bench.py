"""GTA IFP animations and TXD textures: RigPort's import speed, and DragonFF's
TXD import on the same file.

Run with a Python that has the ``bpy`` module::

    .venv/bpy50/bin/python bench/renderware_anim_bench.py [--animations N] [--megabytes M]

Builds the sample ped (``samples/renderware.py``, 32 bones), an
IFP of ``--animations`` walk-cycle animations for it (San Andreas layout,
compressed keys, 31 frames each: ``samples/renderware_ifp.py``) and a texture dictionary
of about ``--megabytes`` of 1024x1024 32-bit textures with full mipmap chains
(``samples/renderware_txd.py``). Times, each from a fresh scene with the ped imported:
the IFP codec alone; importing every animation as actions; exporting them all
back (byte-identical, checked); the TXD codec with every texture decoded;
RigPort's TXD import (packed images); DragonFF's TXD import of the same file
in a child process (its own timer around its importer, mipmaps skipped, not
packed). Prints a Markdown table. Benchmarks are not tests.
"""

from __future__ import annotations

import argparse
import os
import runpy
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from sections import remove_scratch, scratch_dir  # noqa: E402

DRAGONFF = ROOT.parent / "shared" / "clients" / "dragonff"

_DRAGONFF = r"""
import sys, time
sys.path.insert(0, sys.argv[-2])
import bpy, dragonff
dragonff.register()
from dragonff.ops import txd_importer
t = time.perf_counter()
txd_importer.import_txd({"file_name": sys.argv[-1], "skip_mipmaps": True, "pack": False})
print("DRAGONFF_SECONDS", time.perf_counter() - t, len(bpy.data.images), flush=True)
import os
os._exit(0)  # bpy 4.2 can crash at interpreter exit
"""


def _load_addon():
    """The repository as the package ``rigport`` (loader.py), registered."""
    module = runpy.run_path(str(ROOT / "loader.py"))["package"](init=True)
    module.register()
    return module


def _timed(fn) -> tuple[float, float]:
    """Wall and CPU (process) seconds of ``fn()``: CPU is the steadier on a shared machine."""
    t, c = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - t, time.process_time() - c


def _fresh_ped(bpy, dff_path: Path):
    bpy.ops.wm.read_factory_settings(use_empty=True)
    _load_addon_registered()
    assert bpy.ops.import_scene.rw_dff(filepath=str(dff_path)) == {"FINISHED"}
    return next(o for o in bpy.data.objects if o.type == "ARMATURE")


def _load_addon_registered() -> None:
    import bpy

    if not hasattr(bpy.types, "IMPORT_ANIM_OT_gta_ifp"):
        sys.modules["rigport"].register()


def dragonff_seconds(path: Path) -> tuple[float, int] | None:
    if not (DRAGONFF / "__init__.py").is_file():
        return None
    res = subprocess.run(
        [sys.executable, "-c", _DRAGONFF, str(DRAGONFF.parent), str(path)],
        capture_output=True,
        text=True,
    )
    for line in res.stdout.splitlines():
        if line.startswith("DRAGONFF_SECONDS"):
            _, seconds, images = line.split()
            return float(seconds), int(images)
    print(res.stderr[-2000:], file=sys.stderr)
    return None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--animations", type=int, default=200)
    ap.add_argument("--megabytes", type=float, default=50.0)
    ap.add_argument("--no-dragonff", action="store_true", help="skip DragonFF's TXD import")
    args = ap.parse_args()
    import bpy

    _load_addon()
    from rigport.io_formats.renderware import dff, ifp, txd
    from rigport.samples import renderware as samples
    from rigport.samples import renderware_ifp as ifp_samples
    from rigport.samples import renderware_txd as txd_samples

    tmp = scratch_dir("rw-anim-bench-")
    dff_path = tmp / "ped.dff"
    dff_path.write_bytes(dff.write(samples.skinned_ped("SA")))
    ifp_data = ifp.write(ifp_samples.walk_package("SA", animations=args.animations))
    ifp_path = tmp / "ped.ifp"
    ifp_path.write_bytes(ifp_data)
    txd_data = txd_samples.large(args.megabytes)
    txd_path = tmp / "big.txd"
    txd_path.write_bytes(txd_data)

    rows = []
    t_codec, c_codec = _timed(lambda: ifp.read(ifp_data))
    rows.append((f"IFP codec read ({args.animations} animations)", t_codec, c_codec, ""))
    arm = _fresh_ped(bpy, dff_path)
    t_import, c_import = _timed(lambda: bpy.ops.import_anim.gta_ifp(filepath=str(ifp_path)))
    n = len(bpy.data.actions)
    rows.append(
        (
            f"IFP import ({n} actions)",
            t_import,
            c_import,
            f"{t_import / max(n, 1) * 1000:.1f} ms each",
        )
    )
    out = tmp / "out.ifp"
    bpy.context.view_layer.objects.active = arm
    t_export, c_export = _timed(
        lambda: bpy.ops.export_anim.gta_ifp(filepath=str(out), replace=False)
    )
    same = out.read_bytes() == ifp_data
    note = "byte-identical" if same else "DIFFERS"
    rows.append((f"IFP export ({n} actions)", t_export, c_export, note))

    def decode_all():
        f = txd.read(txd_data)
        for tex in f.textures():
            txd.decode(tex, 0)

    mb = len(txd_data) / 1e6
    t_decode, c_decode = _timed(decode_all)
    rows.append((f"TXD codec read + decode ({mb:.1f} MB)", t_decode, c_decode, ""))
    bpy.ops.wm.read_factory_settings(use_empty=True)
    _load_addon_registered()
    t_txd, c_txd = _timed(lambda: bpy.ops.import_scene.rw_txd(filepath=str(txd_path)))
    images = len(bpy.data.images)
    rows.append((f"TXD import, packed ({images} images)", t_txd, c_txd, ""))
    theirs = None if args.no_dragonff else dragonff_seconds(txd_path)
    if theirs is not None:
        seconds, their_images = theirs
        rows.append(
            (
                f"DragonFF TXD import, not packed ({their_images} images)",
                seconds,
                None,
                f"RigPort is {seconds / t_txd:.1f}x faster",
            )
        )

    print(f"\nBlender {bpy.app.version_string}, Python {sys.version.split()[0]}\n")
    print("| step | seconds | CPU seconds | note |")
    print("|---|---:|---:|---|")
    for name, seconds, cpu, note in rows:
        shown = "" if cpu is None else f"{cpu:.3f}"
        print(f"| {name} | {seconds:.3f} | {shown} | {note} |")


if __name__ == "__main__":
    main()
    sys.stdout.flush()
    remove_scratch()
    os._exit(0)  # bpy 4.2 can crash at interpreter exit, after the report
