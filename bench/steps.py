"""One benchmark step per process: ``python bench/steps.py STEP WORKDIR CONFIG_JSON [--profile]``.

Started by ``bench/run_bench.py``; writes ``WORKDIR/STEP.json`` (or
``STEP.prof.json``) with the seconds of the timed call and memory figures.
Each step loads what it needs from files the earlier steps left in WORKDIR:

- ``gen``: model.mdl, skel.mdl, walk.ani (no bpy)
- ``rp_mdl_import``: model.mdl -> model.blend;  ``rp_mdl_export``: model.blend -> out.mdl
- ``rp_mdl_build`` / ``rp_static_build``: only the Blender half of the import (the
  neutral scene is read and converted untimed, then built, then the view layer
  updated as bpy.ops does after any operator): import minus this is the time
  spent reading and converting the file
- ``rp_mdl_phases``: model.mdl, the import with its phases timed (:data:`PHASES`)
- ``gltf_mdl_export``: model.blend -> model.glb;  ``gltf_mdl_import``: model.glb
- ``rp_ani_import``: skel.mdl (untimed) + walk.ani -> anim.blend, and the keys it
  gave Blender -> curves.npz + curves.json (the floor's ``floor_ani_build`` input)
- ``floor_ani_build``: those keys put in with Blender's calls alone, then the
  view-layer update;  ``floor_ani_op``: the same calls as an operator with the
  importers' bl_options, called through bpy.ops as the import is (the operator
  call and its view-layer updates; the bpy module pushes no undo step)
- ``rp_ani_export``: anim.blend -> out.ani
- ``gltf_ani_export``: anim.blend -> anim.glb;  ``gltf_ani_import``: anim.glb
- ``fbx_mdl_export``: model.blend -> model.fbx (Blender's Python FBX exporter: the
  reference file);  ``fbx_mdl_import``: model.fbx with the C++ FBX importer
  ``wm.fbx_import`` (4.5+; skipped where the version has none)
- ``rp_static_import``: static.mdl -> static.blend;  ``obj_static_export``:
  static.blend -> static.obj;  ``obj_static_import``: static.obj with the C++
  OBJ importer ``wm.obj_import``

A step whose operator this Blender lacks writes ``{"skipped": reason}``.
"""

from __future__ import annotations

import json
import os
import resource
import runpy
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FPS = 24


# --------------------------------------------------------------------------
# memory


def _status_kb(field: str) -> int | None:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return None


def _reset_hwm() -> bool:
    """Reset VmHWM (Linux: write 5 to clear_refs); False where unsupported."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


# --------------------------------------------------------------------------
# the package


def install_package():
    """The repository as the package ``rigport`` (loader.py)."""
    return runpy.run_path(str(ROOT / "loader.py"))["package"]()


def load_addon():
    module = runpy.run_path(str(ROOT / "loader.py"))["package"](init=True)
    module.register()
    return module


# --------------------------------------------------------------------------
# content


def gen(workdir: Path, cfg: dict) -> dict:
    install_package()
    from rigport.io_formats.urho3d import ani, mdl
    from rigport.samples import urho3d as samples

    model = samples.skinned_model(
        cfg["bones"],
        n_vertices=cfg["vertices"],
        morphs=1,
        uv_sets=2,
        color=False,
        lods=1,
        geometries=1,
    )
    data = mdl.write(model)
    (workdir / "model.mdl").write_bytes(data)
    skel = samples.skinned_model(
        cfg["anim_bones"], grid=(64, 8), morphs=0, uv_sets=1, color=False, collision=False
    )
    (workdir / "skel.mdl").write_bytes(mdl.write(skel))
    keys = cfg["keys"]
    anim = samples.walk_animation(skel, keys, (keys - 1) / FPS, name="Walk")
    ani_data = ani.write(anim)
    (workdir / "walk.ani").write_bytes(ani_data)
    static = samples.skinned_model(
        0, n_vertices=cfg["vertices"], morphs=0, uv_sets=1, color=False, lods=1, geometries=1
    )
    static_data = mdl.write(static)
    (workdir / "static.mdl").write_bytes(static_data)
    vb = model.vertex_buffers[0]
    return {
        "static_vertices": int(len(static.vertex_buffers[0].data)),
        "static_triangles": int(
            sum(lod.index_count for g in static.geometries for lod in g.lods[:1]) // 3
        ),
        "static_bytes": len(static_data),
        "vertices": int(len(vb.data)),
        "triangles": int(sum(lod.index_count for g in model.geometries for lod in g.lods[:1]) // 3),
        "bones": len(model.bones),
        "morphs": len(model.morphs),
        "morph_vertices": int(sum(len(b.data) for m in model.morphs for b in m.buffers)),
        "elements": list(vb.data.dtype.names),
        "mdl_bytes": len(data),
        "anim_bones": len(skel.bones),
        "keys": keys,
        "ani_bytes": len(ani_data),
    }


# --------------------------------------------------------------------------
# Blender helpers


def _empty_scene():
    import bpy

    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    scene.render.fps = FPS
    scene.render.fps_base = 1.0


def _open(path: Path):
    import bpy

    bpy.ops.wm.open_mainfile(filepath=str(path))


def _save(path: Path):
    import bpy

    bpy.ops.wm.save_as_mainfile(filepath=str(path), compress=False)


def _skeleton_scene(w: Path):
    """The scene an animation import starts from: skel.mdl imported, its armature active."""
    import bpy

    _empty_scene()
    _check(bpy.ops.import_scene.urho3d_mdl(filepath=str(w / "skel.mdl")), "skel import")
    _armature()


def _save_curves(w: Path):
    """Every F-curve the import made, as (path, index, group) in curves.json and its
    keys' co in curves.npz: what the floor gives Blender."""
    import bpy
    import numpy as np

    from rigport.operators.blender import compat

    action = bpy.context.view_layer.objects.active.animation_data.action
    meta, arrays = [], {}
    for i, fc in enumerate(compat.fcurves(action)):
        co = np.empty(2 * len(fc.keyframe_points), np.float32)
        fc.keyframe_points.foreach_get("co", co)
        meta.append([fc.data_path, fc.array_index, fc.group.name if fc.group else ""])
        arrays[f"c{i}"] = co
    np.savez(w / "curves.npz", **arrays)
    (w / "curves.json").write_text(json.dumps(meta))


def _load_curves(w: Path) -> list:
    import numpy as np

    meta = json.loads((w / "curves.json").read_text())
    with np.load(w / "curves.npz") as z:
        return [(p, i, g, z[f"c{n}"]) for n, (p, i, g) in enumerate(meta)]


def _armature():
    import bpy

    arms = [o for o in bpy.context.scene.objects if o.type == "ARMATURE"]
    if len(arms) != 1:
        raise RuntimeError(f"expected one armature, found {len(arms)}")
    arm = arms[0]
    bpy.context.view_layer.objects.active = arm
    for o in bpy.context.scene.objects:
        o.select_set(o is arm)
    return arm


def _gltf_options(op, **wanted) -> dict:
    """Keep the options this glTF exporter/importer version knows."""
    names = set(op.get_rna_type().properties.keys())
    return {k: v for k, v in wanted.items() if k in names}


def _check(result, what):
    if "FINISHED" not in result:
        raise RuntimeError(f"{what} returned {result}")


# --------------------------------------------------------------------------
# steps: each returns (set-up callable, timed callable)


#: What ``rp_mdl_phases`` times inside the model import: (phase, module, function).
#: RigPort's own work first, then the functions that are Blender's calls (the mesh's
#: few numpy copies aside).
PHASES = (
    ("read", "rigport.operators.urho3d.model_importer", "parse_file"),
    ("convert", "rigport.operators.urho3d.model_importer", "import_model"),
    ("guard", "rigport.operators.blender.guard", "guard_mesh"),
    ("fingerprint", "rigport.operators.blender.fingerprint", "store"),
    ("armature", "rigport.operators.blender.build", "build_armature"),
    ("mesh", "rigport.operators.blender.build", "_fill_mesh"),
    ("vertex groups", "rigport.operators.blender.build", "assign_vertex_groups"),
    # inside "vertex groups": RigPort's sort of the skin's entries into runs
    ("skin sort", "rigport.operators.blender.weights", "_bone_entries"),
    ("skin sort", "rigport.operators.blender.weights", "_sorted_entries"),
    ("shape keys", "rigport.operators.blender.build", "shape_keys"),
)
#: Seconds per phase of the last ``rp_mdl_phases`` call.
PHASE_SECONDS: dict[str, float] = {}


def _timed_phases(w: Path):
    """The model import with each of :data:`PHASES` timed (plain wrappers: no
    profiler, so Blender's calls count where they run)."""
    import importlib

    import bpy

    def timed(label, fn):
        def run(*args, **kwargs):
            t0 = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                PHASE_SECONDS[label] = PHASE_SECONDS.get(label, 0.0) + time.perf_counter() - t0

        return run

    for label, module, name in PHASES:
        mod = importlib.import_module(module)
        setattr(mod, name, timed(label, getattr(mod, name)))

    def call():
        PHASE_SECONDS.clear()
        return bpy.ops.import_scene.urho3d_mdl(filepath=str(w / "model.mdl"))

    return call


def _floor_keys(context, curves: list) -> None:
    """The floor's calls: an action with ``curves`` (``_load_curves``) put in with
    Blender's own calls alone (new F-curve, ``keyframe_points.add``, ``foreach_set``
    of co and interpolation, update), assigned to the active armature."""
    import bpy
    import numpy as np

    from rigport.operators.blender import compat

    arm = context.view_layer.objects.active
    action = bpy.data.actions.new("Walk")
    linear = compat.enum_value(bpy.types.Keyframe, "interpolation", "LINEAR")
    make_fcurve = compat.fcurve_maker(action)
    for path, index, group, co in curves:
        fc = make_fcurve(path, index, group)
        fc.keyframe_points.add(len(co) // 2)
        fc.keyframe_points.foreach_set("co", co)
        fc.keyframe_points.foreach_set("interpolation", np.full(len(co) // 2, linear, np.uint8))
        fc.update()
    compat.assign_action(arm, action)


def step_setup_and_call(step: str, workdir: Path):
    import bpy

    w = workdir
    if step == "rp_mdl_import":
        return (
            _empty_scene,
            lambda: bpy.ops.import_scene.urho3d_mdl(filepath=str(w / "model.mdl")),
            lambda: _save(w / "model.blend"),
        )
    if step in ("rp_mdl_build", "rp_static_build"):
        scene = {}

        def setup():
            from rigport.io_formats.urho3d import mdl
            from rigport.io_formats.urho3d.model_import import import_model

            _empty_scene()
            name = "model" if step == "rp_mdl_build" else "static"
            scene["s"] = import_model(mdl.read((w / f"{name}.mdl").read_bytes()), name)

        def call():
            from rigport.operators.blender.build import build_scene

            build_scene(bpy.context, scene["s"])
            # what bpy.ops does after every operator (any importer's, glTF's and
            # FBX's alike): evaluate the view layer, here the new skinned mesh
            bpy.context.view_layer.update()
            return {"FINISHED"}

        return setup, call, None
    if step == "rp_mdl_phases":
        return _empty_scene, _timed_phases(w), None
    if step == "rp_mdl_export":
        return (
            lambda: _open(w / "model.blend"),
            lambda: bpy.ops.export_scene.urho3d_mdl(filepath=str(w / "out.mdl")),
            None,
        )
    if step == "gltf_mdl_export":
        op = bpy.ops.export_scene.gltf
        opts = _gltf_options(
            op,
            filepath=str(w / "model.glb"),
            export_format="GLB",
            export_skins=True,
            export_morph=True,
            export_morph_normal=True,
            export_morph_tangent=True,
            export_tangents=True,
            export_normals=True,
            export_texcoords=True,
            export_animations=False,
            export_apply=False,
            export_materials="NONE",
        )
        return lambda: _open(w / "model.blend"), lambda: op(**opts), None
    if step == "gltf_mdl_import":
        return (
            _empty_scene,
            lambda: bpy.ops.import_scene.gltf(filepath=str(w / "model.glb")),
            None,
        )
    if step == "rp_ani_import":

        def after():
            _save(w / "anim.blend")
            _save_curves(w)

        return (
            lambda: _skeleton_scene(w),
            lambda: bpy.ops.import_anim.urho3d_ani(filepath=str(w / "walk.ani")),
            after,
        )
    if step == "floor_ani_op":
        # The same floor inside an operator with an importer's bl_options, called
        # through bpy.ops as the import is: the operator call and the view-layer
        # updates bpy.ops makes (the bpy module keeps no undo stack: no undo step).
        curves = []

        def setup():
            _skeleton_scene(w)
            curves.extend(_load_curves(w))
            from sections import floor_operator

            floor_operator(
                "rigport_bench.floor_ani", "Animation floor", lambda c: _floor_keys(c, curves)
            )

        return setup, lambda: bpy.ops.rigport_bench.floor_ani(), None
    if step == "floor_ani_build":
        # The animation import's floor: the same F-curves and keys put in with
        # Blender's calls alone (new F-curve, keyframe_points.add, foreach_set of
        # co and interpolation, update, then the view-layer update bpy.ops makes
        # after any operator), from the arrays the RigPort import gave Blender
        # (curves.npz, saved after it). The scene is the import's own, made the
        # same way: opening anim.blend instead would leave the allocator holding
        # the freed memory of a file with the same keys, and the timed build would
        # reuse it where the import has to fault in new pages (at 100 x 2,000 on
        # 5.0 the floor took 0.19 s that way against 0.25 s in the import's state).
        curves = []

        def setup():
            _skeleton_scene(w)
            curves.extend(_load_curves(w))

        def call():
            _floor_keys(bpy.context, curves)
            # What bpy.ops does after every operator (and the UI at its next redraw):
            # evaluate the view layer, here the armature posed by the new action.
            bpy.context.view_layer.update()
            return {"FINISHED"}

        return setup, call, None
    if step == "rp_ani_export":

        def setup():
            _open(w / "anim.blend")
            _armature()

        return setup, lambda: bpy.ops.export_anim.urho3d_ani(filepath=str(w / "out.ani")), None
    if step == "gltf_ani_export":
        op = bpy.ops.export_scene.gltf

        def setup():
            _open(w / "anim.blend")
            for o in list(bpy.context.scene.objects):
                if o.type != "ARMATURE":
                    bpy.data.objects.remove(o)
            _armature()

        opts = _gltf_options(
            op,
            filepath=str(w / "anim.glb"),
            export_format="GLB",
            export_skins=True,
            export_animations=True,
            export_materials="NONE",
        )
        return setup, lambda: op(**opts), None
    if step == "gltf_ani_import":
        return (_empty_scene, lambda: bpy.ops.import_scene.gltf(filepath=str(w / "anim.glb")), None)
    if step == "fbx_mdl_export":
        op = bpy.ops.export_scene.fbx
        opts = _gltf_options(
            op,
            filepath=str(w / "model.fbx"),
            add_leaf_bones=False,
            bake_anim=False,
            use_tspace=False,
            mesh_smooth_type="OFF",
        )
        return lambda: _open(w / "model.blend"), lambda: op(**opts), None
    if step == "fbx_mdl_import":
        if "fbx_import" not in dir(bpy.ops.wm):
            return None
        return _empty_scene, lambda: bpy.ops.wm.fbx_import(filepath=str(w / "model.fbx")), None
    if step == "rp_static_import":
        return (
            _empty_scene,
            lambda: bpy.ops.import_scene.urho3d_mdl(filepath=str(w / "static.mdl")),
            lambda: _save(w / "static.blend"),
        )
    if step == "obj_static_export":
        op = bpy.ops.wm.obj_export
        opts = _gltf_options(
            op,
            filepath=str(w / "static.obj"),
            export_materials=False,
            export_normals=True,
            export_uv=True,
        )
        return lambda: _open(w / "static.blend"), lambda: op(**opts), None
    if step == "obj_static_import":
        return _empty_scene, lambda: bpy.ops.wm.obj_import(filepath=str(w / "static.obj")), None
    raise SystemExit(f"unknown step {step}")


def _category(fname: str, name: str) -> str:
    """Where a profiled function's own time goes: RigPort's Python, Blender's API
    (RNA calls, operators, mathutils), numpy, or the rest (Python itself)."""
    if fname == "~":
        if "bpy" in name or "mathutils" in name or "Matrix" in name:
            return "blender"
        if "numpy" in name or "ndarray" in name:
            return "numpy"
        return "other"
    parts = Path(fname).parts
    if "numpy" in parts:
        return "numpy"
    if "bpy" in parts or "bpy_extras" in parts or "addons_core" in parts:
        return "blender"
    try:
        rel = Path(fname).resolve().relative_to(ROOT)
    except (ValueError, OSError):
        return "other"
    return "other" if str(rel).startswith(("bench", ".venv")) else "rigport"


def _profile_rows(prof, top: int = 5) -> dict:
    import pstats

    st = pstats.Stats(prof)
    rows = []
    for (fname, line, name), (_cc, nc, tt, ct, _callers) in st.stats.items():
        ours = False
        if fname == "~" or fname.startswith("<"):
            label = name if fname == "~" else f"{fname}({name})"
        else:
            try:
                rel = str(Path(fname).resolve().relative_to(ROOT))
                ours = not rel.startswith(("bench", ".venv"))
            except (ValueError, OSError):
                rel = "/".join(Path(fname).parts[-2:])
            if rel.startswith(".venv"):
                rel = "/".join(Path(fname).parts[-2:])
            label = f"{rel}:{line}({name})"
        rows.append({"func": label, "calls": nc, "tottime": tt, "cumtime": ct, "ours": ours})
    split: dict[str, float] = {}
    for (fname, _line, name), (_cc, _nc, tt, _ct, _callers) in st.stats.items():
        cat = _category(fname, name)
        split[cat] = split.get(cat, 0.0) + tt
    by_tot = sorted(rows, key=lambda r: -r["tottime"])[:top]
    ours = [r for r in rows if r["ours"]]
    by_cum = sorted(ours, key=lambda r: -r["cumtime"])[: top + 3]
    total = max((r["cumtime"] for r in rows), default=0.0)
    return {"total": total, "tottime": by_tot, "cumtime": by_cum, "split": split}


def scene_summary() -> dict:
    """What the step left in the scene: a check that both sides carry the same content."""
    import bpy

    out = {"meshes": [], "armatures": [], "actions": []}
    for o in bpy.context.scene.objects:
        if o.type == "MESH":
            me = o.data
            out["meshes"].append(
                {
                    "vertices": len(me.vertices),
                    "polygons": len(me.polygons),
                    "uv_layers": len(me.uv_layers),
                    "vertex_groups": len(o.vertex_groups),
                    "shape_keys": len(me.shape_keys.key_blocks) if me.shape_keys else 0,
                }
            )
        elif o.type == "ARMATURE":
            out["armatures"].append({"bones": len(o.data.bones)})
    for a in bpy.data.actions:
        try:
            n = sum(len(fc.keyframe_points) for fc in a.fcurves)  # 4.2 .. 4.5
        except AttributeError:
            n = sum(
                len(fc.keyframe_points)
                for layer in a.layers
                for strip in layer.strips
                for bag in strip.channelbags
                for fc in bag.fcurves
            )
        out["actions"].append({"name": a.name, "keys": n})
    return out


def run_step(step: str, workdir: Path, cfg: dict, profile: bool) -> dict:
    if step == "gen":
        t0 = time.perf_counter()
        info = gen(workdir, cfg)
        return {"seconds": time.perf_counter() - t0, **info}
    import bpy

    load_addon()
    steps = step_setup_and_call(step, workdir)
    if steps is None:
        return {"skipped": f"Blender {bpy.app.version_string} has no operator for {step}"}
    setup, call, after = steps
    setup()
    # bpy.ops updates the view layer before an operator: do it for the set-up's changes
    # here, untimed, so that the timed call pays only for its own (the same for every step).
    bpy.context.view_layer.update()
    rss_before = _status_kb("VmRSS")
    # resetting VmHWM resets ru_maxrss too: keep the set-up peak first
    peak_setup = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    hwm_ok = _reset_hwm()
    prof = None
    if profile:
        import cProfile

        prof = cProfile.Profile()
        prof.enable()
    t0 = time.perf_counter()
    result = call()
    seconds = time.perf_counter() - t0
    if prof is not None:
        prof.disable()
    _check(result, step)
    hwm = _status_kb("VmHWM") if hwm_ok else None
    out = {
        "seconds": seconds,
        "rss_before_kb": rss_before,
        "hwm_call_kb": hwm,
        "peak_setup_kb": peak_setup,
    }
    if prof is not None:
        out["profile"] = _profile_rows(prof)
    if step == "rp_mdl_phases":
        out["phases"] = dict(PHASE_SECONDS)
    if not profile:
        try:
            out["scene"] = scene_summary()
        except Exception as exc:  # a summary is a check, never a failure
            out["scene"] = {"error": f"{type(exc).__name__}: {exc}"}
    if after is not None and not profile:
        after()
    return out


def main() -> None:
    step, workdir, cfg = sys.argv[1], Path(sys.argv[2]), json.loads(sys.argv[3])
    profile = "--profile" in sys.argv[4:]
    out = run_step(step, workdir, cfg, profile)
    out["maxrss_kb"] = max(
        resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, out.get("peak_setup_kb", 0)
    )
    name = f"{step}{'.prof' if profile else ''}.json"
    (workdir / name).write_text(json.dumps(out))
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)  # bpy 4.2 can crash at interpreter exit


if __name__ == "__main__":
    main()
