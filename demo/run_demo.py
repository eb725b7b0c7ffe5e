"""RigPort demo: build Urho3D assets in code, take them through Blender and back.

    make demo      (= .venv/bpy50/bin/python demo/run_demo.py)

1. Writes a skinned, morphing Urho3D model with two UV sets and a walk
   animation for its skeleton (``io_formats/urho3d/samples.py``) to ``demo/out/``.
2. Imports both into an empty Blender file, exports them back to
   ``demo/out/*_roundtrip.*`` and saves ``demo/out/demo.blend``.
3. Compares the files at the codec level: vertex and index counts, positions,
   bone names, parents and bind (offset) matrices, morph names, and key times
   and values (quaternions up to sign), within 1e-5.

Prints a summary and exits 1 if any check failed.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "demo" / "out"
TOL = 1e-5

sys.path.insert(0, str(ROOT))
import batch  # noqa: E402  (the repository's command line: loads the add-on by path)


class Checks:
    def __init__(self) -> None:
        self.results: list[tuple[str, bool, str]] = []

    def add(self, name: str, ok: bool, detail: str = "") -> None:
        self.results.append((name, bool(ok), detail))
        print(f"  {'ok  ' if ok else 'FAIL'} {name}{': ' + detail if detail else ''}", flush=True)

    def close(self, name: str, a, b, tol: float = TOL) -> None:
        a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
        if a.shape != b.shape:
            self.add(name, False, f"shapes {a.shape} != {b.shape}")
            return
        err = float(np.max(np.abs(a - b) / np.maximum(1.0, np.abs(b)))) if a.size else 0.0
        self.add(name, err <= tol, f"max error {err:.2e}")

    def equal(self, name: str, a, b) -> None:
        self.add(name, a == b, "" if a == b else f"{a!r} != {b!r}")

    @property
    def failed(self) -> int:
        return sum(1 for _, ok, _ in self.results if not ok)


def compare_models(checks: Checks, src, got) -> None:
    checks.equal("vertex counts", [v.count for v in got.vertex_buffers],
                 [v.count for v in src.vertex_buffers])
    checks.equal("index counts", [len(i.indices) for i in got.index_buffers],
                 [len(i.indices) for i in src.index_buffers])
    checks.equal("vertex elements", [[e.key for e in v.elements] for v in got.vertex_buffers],
                 [[e.key for e in v.elements] for v in src.vertex_buffers])
    same_counts = [v.count for v in got.vertex_buffers] == [v.count for v in src.vertex_buffers]
    if same_counts:
        for i, (a, b) in enumerate(zip(got.vertex_buffers, src.vertex_buffers, strict=True)):
            checks.close(f"positions (buffer {i})", a.data["position0"], b.data["position0"])
    checks.equal("geometries", len(got.geometries), len(src.geometries))
    checks.equal("morph names", [m.name for m in got.morphs], [m.name for m in src.morphs])
    checks.equal("bone names", [b.name for b in got.bones], [b.name for b in src.bones])
    checks.equal("bone parents", [b.parent for b in got.bones], [b.parent for b in src.bones])
    if len(got.bones) == len(src.bones):
        checks.close("bind offset matrices", np.stack([b.offset_matrix for b in got.bones]),
                     np.stack([b.offset_matrix for b in src.bones]))


def compare_animations(checks: Checks, src, got) -> None:
    checks.equal("track names", [t.name for t in got.tracks], [t.name for t in src.tracks])
    checks.close("length", got.length, src.length)
    by_name = {t.name: t for t in got.tracks}
    worst = {"time": 0.0, "position": 0.0, "rotation": 0.0, "scale": 0.0}
    problems = []
    for t in src.tracks:
        g = by_name.get(t.name)
        if g is None:
            continue
        if len(g.keys) != len(t.keys):
            problems.append(f"{t.name}: {len(g.keys)} keys, expected {len(t.keys)}")
            continue
        for field in worst:
            if field not in t.keys.dtype.names:
                continue
            if field not in g.keys.dtype.names:
                problems.append(f"{t.name}: no {field} channel")
                continue
            a = g.keys[field].astype(np.float64)
            b = t.keys[field].astype(np.float64)
            if field == "rotation":  # q and -q are the same rotation
                sign = np.where(np.sum(a * b, axis=-1, keepdims=True) < 0, -1.0, 1.0)
                a = a * sign
            err = float(np.max(np.abs(a - b))) if a.size else 0.0
            worst[field] = max(worst[field], err)
    checks.add("key counts and channels", not problems, "; ".join(problems[:3]))
    for field, err in worst.items():
        checks.add(f"key {field}s", err <= TOL, f"max error {err:.2e}")


def main() -> int:
    t0 = time.perf_counter()
    OUT.mkdir(parents=True, exist_ok=True)
    pkg = batch.package()
    from importlib import import_module

    mdl = import_module(f"{pkg.__name__}.io_formats.urho3d.mdl")
    ani = import_module(f"{pkg.__name__}.io_formats.urho3d.ani")
    samples = import_module(f"{pkg.__name__}.io_formats.urho3d.samples")

    print("== 1. building sample assets")
    model = samples.skinned_model(n_bones=8, grid=(32, 12), morphs=2, uv_sets=2)
    anim = samples.walk_animation(model, n_keys=25, length=1.0)
    model_path, anim_path = OUT / "tentacle.mdl", OUT / "tentacle_walk.ani"
    model_path.write_bytes(mdl.write(model))
    anim_path.write_bytes(ani.write(anim))
    print(f"  {model_path.relative_to(ROOT)}: {model_path.stat().st_size} bytes, "
          f"{model.vertex_buffers[0].count} vertices, {len(model.bones)} bones, "
          f"morphs {[m.name for m in model.morphs]}")
    print(f"  {anim_path.relative_to(ROOT)}: {anim_path.stat().st_size} bytes, "
          f"{len(anim.tracks)} tracks")

    print("== 2. Blender: import, export, save")
    bl = batch.blender()
    bl.reset()
    built = bl.import_model(str(model_path), all_lods=True)
    arm, action, how = bl.import_animation(str(anim_path), built.armature)
    meshes = [o for o in built.objects if o.type == "MESH"]
    print(f"  imported {len(meshes)} mesh object(s), armature {arm.name}, "
          f"action {action.name} ({how})")
    model_out, anim_out = OUT / "tentacle_roundtrip.mdl", OUT / "tentacle_walk_roundtrip.ani"
    for w in bl.export_model(str(model_out), meshes):
        print(f"  warning: {w}")
    bl.export_animation(str(anim_out), arm, action)
    blend = OUT / "demo.blend"
    bl.bpy.ops.wm.save_as_mainfile(filepath=str(blend))
    print(f"  exported {model_out.relative_to(ROOT)} and {anim_out.relative_to(ROOT)}; "
          f"saved {blend.relative_to(ROOT)}")

    print("== 3. round trip checks")
    checks = Checks()
    checks.equal("Blender UV layers", [len(o.data.uv_layers) for o in meshes], [2] * len(meshes))
    checks.add("shape keys", all(o.data.shape_keys is not None for o in meshes))
    compare_models(checks, model, mdl.read(model_out.read_bytes()))
    compare_animations(checks, anim, ani.read(anim_out.read_bytes()))

    n, failed = len(checks.results), checks.failed
    print(f"== summary: {n - failed}/{n} checks passed in {time.perf_counter() - t0:.1f} s"
          + (f"; {failed} FAILED" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)  # the bpy module (4.2) can crash at interpreter exit
