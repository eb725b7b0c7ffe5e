"""Mutants through Blender: each one imported by its operator in a child process
(a tool, and a small count in the suite).

``tools/mutate.py`` damages every format's seed files and runs them through
the codec path of an import without Blender. This runs its mutants (of the
suite's small seeds: a seed and index give the bytes
``tests/codec/test_mutation.py`` tries) through the whole import, one child
Python process with bpy per mutant:

1. a factory-empty scene already holding an object with an action and an
   armature with an NLA track, RigPort registered, and for animation formats
   the model the seeds animate (imported first, the active object);
2. the format's import operator on the mutant. A crash (the child's exit
   status), a hang, an error that is not one sentence naming the file (a
   traceback, RigPort's bug sentence) or a refusal that changed the scene
   (datablock names, NLA tracks, actions, selection) or took over 10 s is a
   failure;
3. after an import, the .blend is saved and reopened in a fresh child, which
   must find every image, action and material and every NLA track again.

Every failure gets a reproducer (the mutant, its ``.reason``, and the host
model or the intact ``.img`` it needs) as ``tools/mutate.py`` writes them.

Usage (from the repository root, with the bpy environment's Python)::

    python tools/mutate_blender.py --format all --count 20 --seed 1 --out /tmp/mutants/blender

``tests/blender/test_mutation_blender.py`` runs a few mutants per format.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import runpy
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HANG = 120.0  # seconds one child may take (registering, the host model, the import)
SLOW = 10.0  # seconds a refusal may take (issue 26: none of a file under 1 MB over 10 s)


# ------------------------------------------------------------------ formats
@dataclass(frozen=True)
class Spec:
    """How a format's mutants go through Blender: the import operator (``bpy.ops``
    path), and for animations the host model (file name, operator, bytes)."""

    operator: str
    host: Callable[[], tuple[str, str, bytes]] | None = None


def _mutate():
    """``tools/mutate.py`` (the targets, their seeds and the mutants)."""
    runpy.run_path(str(ROOT / "loader.py"))["package"]()
    from rigport.tools import mutate

    return mutate


@functools.cache
def seeds(key: str) -> list[tuple[str, bytes]]:
    """The seed files of a format (the suite's small ones: each mutant costs a child)."""
    return _mutate().targets()[key].seeds(True)


def specs() -> dict[str, Spec]:
    """Every format with an import operator, by its ``tools/mutate.py`` key."""
    runpy.run_path(str(ROOT / "loader.py"))["package"]()
    from rigport.io_formats.bonespro import structure as bp_structure
    from rigport.io_formats.renderware import dff
    from rigport.io_formats.unigine import mesh
    from rigport.io_formats.urho3d import mdl
    from rigport.samples import bonespro as bp_samples
    from rigport.samples import renderware as rw_samples
    from rigport.samples import unigine as ug_samples
    from rigport.samples import urho3d as u_samples

    # The models the seeds of tools/mutate.py animate.
    def urho_host():
        return "host.mdl", "import_scene.urho3d_mdl", mdl.write(u_samples.skinned_model(6))

    def unigine_host():
        m = ug_samples.skinned_mesh(4, 4, 6, 1, (), 0, 4)
        return "host.mesh", "import_scene.unigine_mesh", mesh.write(m)

    def bonespro_host():
        s = bp_samples.structure(6, names=["root", "a", "b"], parents=[-1, 0, 1])
        return "host.txt", "import_scene.bonespro_structure", bp_structure.write(s)

    def ped_host(n_bones: int):
        def host():
            ped = rw_samples.skinned_ped(n_bones=n_bones, rings=3, segments=4)
            return "host.dff", "import_scene.rw_dff", dff.write(ped)

        return host

    return {
        "urho3d.mdl": Spec("import_scene.urho3d_mdl"),
        "urho3d.ani": Spec("import_anim.urho3d_ani", urho_host),
        "urho3d.pak": Spec("import_scene.urho3d_package"),
        "unigine.mesh": Spec("import_scene.unigine_mesh"),
        "unigine.anim": Spec("import_anim.unigine_anim", unigine_host),
        "renderware.dff": Spec("import_scene.rw_dff"),
        "mrtk.input": Spec("import_anim.mrtk_input"),
        "bonespro.structure": Spec("import_scene.bonespro_structure"),
        "bonespro.animation": Spec("import_anim.bonespro_anim", bonespro_host),
        "renderware.ifp": Spec("import_anim.gta_ifp", ped_host(32)),
        "renderware.anm": Spec("import_anim.rw_anm", ped_host(3)),
        "renderware.txd": Spec("import_scene.rw_txd"),
        "renderware.img": Spec("import_scene.gta_img"),
        "renderware.dir": Spec("import_scene.gta_img"),
    }


# ------------------------------------------------------------------ the child
def _scene(bpy) -> None:
    """A factory-empty scene holding a cube with an action and an armature with
    an NLA track (what an import must leave alone)."""
    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    cube = bpy.data.objects.new("Existing cube", bpy.data.meshes.new("Existing cube"))
    scene.collection.objects.link(cube)
    for frame in (1, 10):
        cube.location.x = frame
        cube.keyframe_insert("location", frame=frame)
    rig = bpy.data.objects.new("Existing rig", bpy.data.armatures.new("Existing rig"))
    scene.collection.objects.link(rig)
    for frame in (1, 20):
        rig.rotation_euler.z = frame * 0.1
        rig.keyframe_insert("rotation_euler", frame=frame)
    clip = rig.animation_data.action
    track = rig.animation_data.nla_tracks.new()
    track.name = "Existing track"
    track.strips.new("Existing clip", 1, clip)
    rig.animation_data.action = None
    clip.name = "Existing clip"


def snapshot(bpy) -> dict:
    """What a refused import must leave as it was (names, tracks, selection)."""
    layer = bpy.context.view_layer
    data = bpy.data
    return {
        "objects": sorted(o.name for o in data.objects),
        "meshes": sorted(m.name for m in data.meshes),
        "armatures": sorted(a.name for a in data.armatures),
        "actions": sorted(a.name for a in data.actions),
        "materials": sorted(m.name for m in data.materials),
        "images": sorted(i.name for i in data.images),
        "collections": sorted(c.name for c in data.collections),
        "nla_tracks": sorted(
            [o.name, t.name, [s.action.name if s.action else "" for s in t.strips]]
            for o in data.objects
            if o.animation_data is not None
            for t in o.animation_data.nla_tracks
        ),
        "object_actions": sorted(
            [o.name, o.animation_data.action.name if o.animation_data.action else ""]
            for o in data.objects
            if o.animation_data is not None
        ),
        "selected": sorted(o.name for o in layer.objects if o.select_get()),
        "active": layer.objects.active.name if layer.objects.active else None,
    }


#: What must come back after save and reopen.
KEPT = ("objects", "actions", "materials", "images", "nla_tracks")


def _operator(bpy, path: str):
    group, name = path.split(".")
    return getattr(getattr(bpy.ops, group), name)


def sentence_problem(message: str, names: tuple[str, ...]) -> str | None:
    """Why an error report is not one sentence that names the file, or None."""
    if "Traceback" in message or "could not import" in message or "bug" in message.lower():
        return "the error is RigPort's bug sentence or a traceback"
    if "\n" in message.strip():
        return "the error has several lines"
    if not any(n in message for n in names):
        return "the error does not name the file"
    return None


def child_import(job: dict) -> dict:
    """Import ``job["path"]`` into the prepared scene; save the .blend after an import."""
    rigport = runpy.run_path(str(ROOT / "loader.py"))["package"](init=True)
    import bpy

    rigport.register()
    _scene(bpy)
    layer = bpy.context.view_layer
    layer.objects.active = bpy.data.objects["Existing cube"]
    layer.objects.active.select_set(True)
    if job["host"]:
        _operator(bpy, job["host"]["operator"])(filepath=job["host"]["path"])
        host = next(
            o for o in bpy.data.objects if o.type == "ARMATURE" and o.name != "Existing rig"
        )
        layer.objects.active = host
    before = snapshot(bpy)
    started = time.perf_counter()
    outcome, message = "imported", ""
    try:
        _operator(bpy, job["operator"])(filepath=job["path"])
    except RuntimeError as err:  # the operator reported an error
        outcome, message = "refused", str(err)
    after = snapshot(bpy)
    result = {
        "outcome": outcome,
        "message": message[:2000],
        "seconds": time.perf_counter() - started,
        "changed": {k: [before[k], after[k]] for k in before if before[k] != after[k]},
        "kept": {k: after[k] for k in KEPT},
    }
    if outcome == "imported":
        bpy.ops.wm.save_as_mainfile(filepath=job["blend"])
    return result


def child_reopen(job: dict) -> dict:
    """Open the saved .blend in a fresh process: what it still holds."""
    runpy.run_path(str(ROOT / "loader.py"))["package"](init=True).register()
    import bpy

    bpy.ops.wm.open_mainfile(filepath=job["blend"])
    after = snapshot(bpy)
    return {"kept": {k: after[k] for k in KEPT}}


# ------------------------------------------------------------------ the parent
@dataclass
class Outcome:
    """One mutant's run: how the import ended, and the failure (None: none)."""

    key: str
    index: int
    seed_file: str
    outcome: str  # imported, refused, or crash/hang for a child that did not end
    failure: str | None = None
    message: str = ""


def _child(mode: str, job: dict, folder: Path) -> tuple[dict | None, str]:
    """Run one child; its result (None when it crashed or hung) and its output's tail."""
    job_path = folder / f"{mode}.json"
    job_path.write_text(json.dumps(job))
    env = dict(os.environ, BLENDER_USER_RESOURCES=str(folder / "user"))
    try:
        proc = subprocess.run(
            [sys.executable, str(Path(__file__).resolve()), f"--{mode}", str(job_path)],
            capture_output=True,
            text=True,
            timeout=HANG,
            env=env,
        )
    except subprocess.TimeoutExpired:
        return None, f"hung: no end after {HANG:.0f} s"
    log = (proc.stdout + proc.stderr)[-3000:]
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    if proc.returncode != 0 or not lines:
        how = f"signal {-proc.returncode}" if proc.returncode < 0 else f"exit {proc.returncode}"
        return None, f"{mode} child crashed ({how}): {log}"
    return json.loads(lines[-1][7:]), log


def run_mutant(key: str, spec: Spec, seed: int, index: int, folder: Path) -> Outcome:
    """Import the ``index``-th mutant of ``key`` in a child (and reopen what it saved)."""
    target = _mutate().targets()[key]
    name, data = _mutate().mutant(seeds(key), seed, index, target.text)
    folder.mkdir(parents=True, exist_ok=True)
    stem = f"{key.replace('.', '_')}_{index}"
    path = folder / (stem + target.ext)
    path.write_bytes(data)
    names = (path.name,)
    if target.beside is not None:  # a damaged .dir: the operator opens the .img beside it
        ext, beside = target.beside()
        other = folder / (stem + ext)
        other.write_bytes(beside)
        names, path = (path.name, other.name), other
    job = {"operator": spec.operator, "path": str(path), "host": None, "blend": ""}
    job["blend"] = str(folder / (stem + ".blend"))
    if spec.host is not None:
        host_name, operator, host_data = spec.host()
        (folder / host_name).write_bytes(host_data)
        job["host"] = {"operator": operator, "path": str(folder / host_name)}
    got, log = _child("import", job, folder)
    if got is None:
        return Outcome(key, index, name, "crash", log)
    out = Outcome(key, index, name, got["outcome"], message=got["message"])
    if got["outcome"] == "refused":
        problem = sentence_problem(got["message"], names)
        if problem is None and got["changed"]:
            problem = f"the refusal changed the scene: {json.dumps(got['changed'])[:1500]}"
        if problem is None and got["seconds"] > SLOW:
            problem = f"the refusal took {got['seconds']:.1f} s"
        out.failure = problem and f"{problem}: {got['message'][:500]}"
        return out
    back, log = _child("reopen", job, folder)
    if back is None:
        out.failure = log
        return out
    lost = {}
    for k in KEPT:
        there = {json.dumps(v) for v in back["kept"][k]}
        gone = [v for v in got["kept"][k] if json.dumps(v) not in there]
        if gone:
            lost[k] = gone
    if lost:
        out.failure = f"lost on save and reopen: {json.dumps(lost)[:1500]}"
    return out


def write_reproducer(out_dir: Path, seed: int, res: Outcome, folder: Path) -> Path:
    """The mutant (and the host model or intact .img beside it) and its ``.reason``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    stem = f"{res.key.replace('.', '_')}_{res.index}"
    base = f"{res.key}-s{seed}-{res.index}-blender"
    kept = None
    for f in sorted(folder.iterdir()):
        if f.is_file() and (f.stem == stem or f.stem == "host") and f.suffix != ".blend":
            target = out_dir / (f"{base}-host{f.suffix}" if f.stem == "host" else base + f.suffix)
            target.write_bytes(f.read_bytes())
            kept = kept or (target if f.stem == stem else None)
    rerun = f"tools/mutate_blender.py --format {res.key} --seed {seed} --start {res.index}"
    (out_dir / (base + ".reason")).write_text(
        f"seed file {res.seed_file}\n{res.outcome}: {res.failure}\nrerun: {rerun} --count 1\n"
    )
    return kept or out_dir / (base + ".reason")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--format", default="all", help="a format key (urho3d.mdl ...) or all")
    ap.add_argument("--count", type=int, default=10, help="mutants per format")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--start", type=int, default=0, help="the first mutant's index")
    ap.add_argument("--minutes", type=float, default=0.0, help="stop after this long (0: never)")
    ap.add_argument("--out", default="mutants", help="folder for reproducers of failures")
    ap.add_argument("--import", dest="import_job", help=argparse.SUPPRESS)
    ap.add_argument("--reopen", dest="reopen_job", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    child = args.import_job or args.reopen_job
    if child:
        job = json.loads(Path(child).read_text())
        result = child_import(job) if args.import_job else child_reopen(job)
        print("RESULT", json.dumps(result), flush=True)
        os._exit(0)  # bpy 4.2 may crash at interpreter exit

    all_specs = specs()
    keys = list(all_specs) if args.format == "all" else args.format.split(",")
    unknown = [k for k in keys if k not in all_specs]
    if unknown:
        ap.error(f"unknown format {', '.join(unknown)}; known: {', '.join(all_specs)}")
    deadline = time.monotonic() + args.minutes * 60 if args.minutes else None
    failures = []
    counts: dict[str, dict[str, int]] = {k: {} for k in keys}
    with tempfile.TemporaryDirectory(prefix="rigport-mutate-blender-") as tmp:
        for index in range(args.start, args.start + args.count):
            for key in keys:  # round-robin: a time limit still covers every format
                if deadline is not None and time.monotonic() > deadline:
                    break
                folder = Path(tmp) / f"{key}-{index}"
                res = run_mutant(key, all_specs[key], args.seed, index, folder)
                kind = "failed" if res.failure else res.outcome
                counts[key][kind] = counts[key].get(kind, 0) + 1
                if res.failure:
                    where = write_reproducer(Path(args.out), args.seed, res, folder)
                    failures.append((res, where))
                    print(f"FAIL {key} {index}: {res.failure[:300]} ({where})", flush=True)
    for key in keys:
        print(f"{key:20} {json.dumps(counts[key])}")
    print(f"{len(failures)} failures; reproducers in {args.out if failures else '(none)'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
