"""What RigPort's kept-data fingerprint costs a model import, per format, against glTF.

Run with a Python that has the ``bpy`` module::

    .venv/bpy50/bin/python bench/import_fixed_costs.py [--vertices N] [--bones N]
        [--repeat N] [--formats urho3d,unigine,renderware] [--root DIR]

For each format builds a skinned sample of about ``--vertices`` vertices and
``--bones`` bones with ``samples/`` (Urho3D: 2 UV sets, one morph; Unigine: two
surfaces, one morph; RenderWare: atomics of at most 60,000 vertices),
then, ``--repeat`` times each from an empty scene: the RigPort import (timed,
and inside it the time spent storing the fingerprint: ``fingerprint.store`` and
Unigine's ``mesh_keep.store``) and the glTF import of the same scene exported
once as GLB. Prints one JSON line per format with the fastest of each.
``--root`` runs another checkout's RigPort (an earlier commit, for a
before/after comparison in the same run).

Benchmarks are not tests: nothing here runs under pytest.
"""

from __future__ import annotations

import argparse
import json
import math
import runpy
import sys
import time
from pathlib import Path

from sections import quiet_stdout, scratch_dir

HERE = Path(__file__).resolve().parent


def _sample(fmt: str, n: int, tmp: Path, bones: int) -> tuple[Path, str]:
    """The sample file and the RigPort import operator's name."""
    if fmt == "urho3d":
        from rigport.io_formats.urho3d import mdl
        from rigport.samples import urho3d

        model = urho3d.skinned_model(
            bones, n_vertices=n, morphs=1, uv_sets=2, color=False, lods=1, geometries=1
        )
        path, data, op = tmp / "m.mdl", mdl.write(model), "urho3d_mdl"
    elif fmt == "unigine":
        from rigport.io_formats.unigine import mesh
        from rigport.samples import unigine

        rings = max(2, n // 1000)
        m = unigine.skinned_mesh(
            n_bones=bones, rings=rings, segments=500, surfaces=2, morphs=("bulge",), animations=0
        )
        path, data, op = tmp / "m.mesh", mesh.write(m), "unigine_mesh"
    else:
        from rigport.io_formats.renderware import dff
        from rigport.samples import renderware

        parts = max(1, math.ceil(n / 60_000))
        segments = int(math.sqrt(n / parts)) * 2
        rings = max(2, n // parts // (segments + 1))
        ped = renderware.skinned_ped("SA", bones, rings, segments, parts=parts)
        path, data, op = tmp / "m.dff", dff.write(ped), "rw_dff"
    path.write_bytes(data)
    return path, op


class _Stores:
    """Wraps the fingerprint's store functions; adds up the outermost calls' time."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.depth = 0

    def wrap(self, module, name: str) -> None:
        real = getattr(module, name)

        def timed(*args, **kwargs):
            self.depth += 1
            t = time.perf_counter()
            try:
                return real(*args, **kwargs)
            finally:
                self.depth -= 1
                if not self.depth:
                    self.seconds += time.perf_counter() - t

        setattr(module, name, timed)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vertices", type=int, default=300_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--bones", type=int, default=64)
    ap.add_argument("--formats", default="urho3d,unigine,renderware")
    ap.add_argument("--root", default=str(HERE.parent))
    args = ap.parse_args()
    import bpy

    runpy.run_path(str(Path(args.root) / "loader.py"))["package"](init=True).register()
    from rigport.operators.blender import fingerprint
    from rigport.operators.unigine import mesh_keep

    stores = _Stores()
    stores.wrap(fingerprint, "store")
    stores.wrap(mesh_keep, "store")
    tmp = scratch_dir("rp-fixed-")
    for fmt in args.formats.split(","):
        path, op = _sample(fmt, args.vertices, tmp, args.bones)
        runs = {"rp_import": [], "fingerprint": [], "gltf_import": []}
        glb = tmp / f"{fmt}.glb"
        with quiet_stdout():
            for k in range(args.repeat):
                bpy.ops.wm.read_factory_settings(use_empty=True)
                stores.seconds = 0.0
                t = time.perf_counter()
                getattr(bpy.ops.import_scene, op)(filepath=str(path))
                runs["rp_import"].append(time.perf_counter() - t)
                runs["fingerprint"].append(stores.seconds)
                if k == 0:
                    nv = sum(len(o.data.vertices) for o in bpy.data.objects if o.type == "MESH")
                    bpy.ops.export_scene.gltf(filepath=str(glb), export_format="GLB")
            for _ in range(args.repeat):
                bpy.ops.wm.read_factory_settings(use_empty=True)
                t = time.perf_counter()
                bpy.ops.import_scene.gltf(filepath=str(glb))
                runs["gltf_import"].append(time.perf_counter() - t)
        best = {key: min(v) for key, v in runs.items()}
        line = {"format": fmt, "vertices": nv, "root": args.root, **best, "runs": runs}
        print(json.dumps(line), flush=True)


if __name__ == "__main__":
    sys.exit(main())
