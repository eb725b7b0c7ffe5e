"""The crash test's child process: ``python crash_child.py ROOT JOBS.json``.

Registers RigPort from ``ROOT`` (as the package ``rigport``), builds a scene that
already holds objects (a cube, an empty, and the format's host model for the
animation files), then imports every file of ``JOBS.json`` with its operator,
printing ``START name`` before and ``RESULT {json}`` after each one, so the
parent can tell which file crashed or hung the process.
"""

from __future__ import annotations

import json
import runpy
import sys
import time


def _load_rigport(root: str):
    return runpy.run_path(f"{root}/loader.py")["package"](init=True)


def _operator(bpy, path: str):
    group, name = path.split(".")
    return getattr(getattr(bpy.ops, group), name)


def snapshot(bpy) -> dict:
    """What a failed import must leave as it was."""
    layer = bpy.context.view_layer
    return {
        "objects": sorted(o.name for o in bpy.data.objects),
        "meshes": sorted(m.name for m in bpy.data.meshes),
        "armatures": sorted(a.name for a in bpy.data.armatures),
        "actions": sorted(a.name for a in bpy.data.actions),
        "materials": sorted(m.name for m in bpy.data.materials),
        "collections": sorted(c.name for c in bpy.data.collections),
        "images": sorted(i.name for i in bpy.data.images),
        "selected": sorted(o.name for o in layer.objects if o.select_get()),
        "active": layer.objects.active.name if layer.objects.active else None,
        "object_actions": sorted(
            (o.name, o.animation_data.action.name if o.animation_data.action else "")
            for o in bpy.data.objects
            if o.animation_data is not None
        ),
        "markers": sorted(m.name for m in bpy.context.scene.timeline_markers),
    }


def main() -> None:
    root, jobs_path = sys.argv[1], sys.argv[2]
    with open(jobs_path) as fh:
        jobs = json.load(fh)
    rigport = _load_rigport(root)
    import bpy

    rigport.register()
    bpy.ops.wm.read_factory_settings(use_empty=True)
    bpy.ops.mesh.primitive_cube_add()
    cube = bpy.context.active_object
    cube.name = "Existing cube"
    empty = bpy.data.objects.new("Existing empty", None)
    bpy.context.scene.collection.objects.link(empty)
    host = None
    if jobs["host"]:
        _operator(bpy, jobs["host"]["operator"])(filepath=jobs["host"]["path"])
        host = next(o for o in bpy.data.objects if o.type == "ARMATURE")
    layer = bpy.context.view_layer
    for job in jobs["files"]:
        for o in layer.objects:
            o.select_set(False)
        active = host if (job["animation"] and host is not None) else cube
        active.select_set(True)
        empty.select_set(True)
        layer.objects.active = active
        print("START", job["name"], flush=True)
        before = snapshot(bpy)
        started = time.perf_counter()
        outcome, message = "imported", ""
        try:
            _operator(bpy, job["operator"])(filepath=job["path"])
        except RuntimeError as err:  # an operator that reported an error
            message = str(err)
            # a traceback (an exception out of execute) or RigPort's bug sentence fails
            unexpected = "bug in RigPort" in message or "Traceback" in message
            outcome = "bug" if unexpected else "refused"
        except Exception as err:  # noqa: BLE001 - anything else is a failure of the test
            outcome, message = "exception", f"{type(err).__name__}: {err}"
        after = snapshot(bpy)
        result = {
            "name": job["name"],
            "outcome": outcome,
            "message": message[:2000],
            "seconds": time.perf_counter() - started,
            "scene_kept": before == after,
            "changed": {k: [before[k], after[k]] for k in before if before[k] != after[k]}
            if outcome != "imported"
            else {},
        }
        print("RESULT", json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
    sys.stdout.flush()
    import os

    os._exit(0)  # bpy 4.2 may crash at interpreter exit
