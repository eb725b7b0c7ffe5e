"""Unedited Blender round trips, byte for byte: the closing table of issue 25.

Every corpus file (``../shared/corpus``; an ``.ani`` goes onto the model whose
name starts it, ``Jack_Walk.ani`` onto ``Jack.mdl``, as the tests pair them;
packages are left out, ``roundtrip`` does not write them) and every file our
writers in ``samples/`` build for the issue's cases goes through
``batch.py roundtrip`` (import with defaults, export with defaults; ``--model``
for animations) in the running Python's Blender. The output is a markdown
section: per format the files and how many came back byte for byte, then each
file that did not, with its first differing offset.

Run with the Python of a bpy environment::

    .venv/bpy50/bin/python tools/exact_table.py
    .venv/bpy50/bin/python tools/exact_table.py --update docs/exact-roundtrips.md

``--update`` replaces (or appends) this Blender version's section of the file.
A case whose writer fails (a sample function another branch changed) is a row
of its own, "not built", with the reason, so the table still runs.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus"


@dataclass
class Case:
    """One input: its format's row, a name, its bytes (made lazily) and, for an
    animation, the name of the model case or corpus path it goes onto."""

    format: str
    name: str
    make: Callable[[], bytes]
    model: str | None = None
    corpus: bool = False


def _package() -> None:
    import runpy

    runpy.run_path(str(ROOT / "loader.py"))["package"]()


# -- the corpus -------------------------------------------------------------------

#: Corpus folder and extension -> the table's row.
CORPUS_ROWS = {
    ("urho3d", ".mdl"): "Urho3D .mdl",
    ("urho3d", ".ani"): "Urho3D .ani",
    ("rbfx", ".mdl"): "rbfx .mdl",
    ("rbfx", ".ani"): "rbfx .ani",
    ("renderware", ".dff"): "RenderWare .dff",
    ("renderware", ".ifp"): "GTA .ifp",
    ("renderware", ".anm"): "RenderWare .anm",
    ("mrtk", ".bin"): "MRTK .bin",
    ("bonespro", ".txt"): "BonesPro .txt",
    ("unigine", ".mesh"): "Unigine .mesh",
    ("unigine", ".anim"): "Unigine .anim",
}
#: The table's rows in this order; a row not listed follows them.
ROW_ORDER = (
    "Urho3D .mdl",
    "Urho3D .ani",
    "rbfx .mdl",
    "rbfx .ani",
    "Unigine .mesh",
    "Unigine .anim",
    "RenderWare .dff",
    "GTA .ifp",
    "RenderWare .anm",
    "MRTK .bin",
    "BonesPro .txt",
)
ANIMATION_EXTS = {".ani", ".ifp", ".anm", ".anim"}


def _corpus_model(path: Path) -> Path | None:
    """The model an animation of the corpus goes onto: ``Name.*`` for ``Name_Clip``."""
    stem = path.stem.split("_")[0]
    for p in sorted(path.parent.iterdir()):
        if p.stem == stem and p.suffix.lower() not in ANIMATION_EXTS and p.is_file():
            return p
    return None


def corpus_cases(corpus: Path) -> list[Case]:
    out = []
    for p in sorted(corpus.rglob("*")):
        if not p.is_file():
            continue
        top = p.relative_to(corpus).parts[0]
        row = CORPUS_ROWS.get((top, p.suffix.lower()))
        if row is None:
            continue
        model = None
        if p.suffix.lower() in ANIMATION_EXTS:
            found = _corpus_model(p)
            model = str(found) if found else "(no model beside it)"
        name = str(p.relative_to(corpus))
        out.append(Case(row, name, lambda p=p: p.read_bytes(), model, corpus=True))
    return out


# -- our writers, the cases --------------------------------------------------


def _urho3d_cases() -> list[Case]:
    from rigport.io_formats.urho3d import ani, mdl
    from rigport.samples import rbfx
    from rigport.samples import urho3d as u

    def unused_vertex() -> bytes:
        m = u.skinned_model(n_bones=4, grid=(8, 4), morphs=0)
        vb = m.vertex_buffers[0]
        vb.data = np.concatenate([vb.data, vb.data[-1:]])  # a vertex no triangle uses
        return mdl.write(m)

    def long_names() -> mdl.Model:
        m = u.skinned_model(n_bones=4, grid=(8, 4), morphs=0)
        m.bones[1].name = "Bip01_" + "L" * 70  # over Blender's 63 bytes
        m.bones[2].name = "Bip01_" + "L" * 69 + "X"  # the same first 63 bytes
        return m

    def with_targets(anim: ani.Animation) -> ani.Animation:
        tracks = []
        for k, t in enumerate(anim.tracks):
            tracks.append(t)
            if k % 3 == 0:  # rbfx's IK targets: bones the model lacks
                tracks.append(ani.Track(t.name + "_Target", t.mask, t.keys.copy(), 0.5))
        anim.tracks = tracks
        return anim

    cases = [
        Case("Urho3D .mdl", "tentacle.mdl", lambda: mdl.write(u.skinned_model(n_bones=6))),
        Case("Urho3D .mdl", "unused_vertex.mdl", unused_vertex),
        Case("Urho3D .mdl", "long_names.mdl", lambda: mdl.write(long_names())),
        Case(
            "Urho3D .ani",
            "long_names_walk.ani",
            lambda: ani.write(u.walk_animation(long_names())),
            "long_names.mdl",
        ),
        Case("rbfx .mdl", "umd3.mdl", lambda: mdl.write(rbfx.umd3_model())),
    ]
    for version in (1, 2, 3):
        cases.append(
            Case(
                "rbfx .ani",
                f"uan2_v{version}_targets.ani",
                lambda v=version: ani.write(
                    with_targets(rbfx.uan2_animation(rbfx.umd3_model(), v))
                ),
                "umd3.mdl",
            )
        )
    return cases


def _unigine_cases() -> list[Case]:
    from rigport.io_formats.unigine import anim, mesh
    from rigport.samples import unigine as g

    def hero() -> mesh.Mesh:
        return g.skinned_mesh(animations=0)

    return [
        Case("Unigine .mesh", "hero.mesh", lambda: mesh.write(hero())),
        Case("Unigine .mesh", "embedded.mesh", lambda: mesh.write(g.skinned_mesh())),
        Case("Unigine .mesh", "inexact.mesh", lambda: mesh.write(g.inexact_mesh())),
        Case(
            "Unigine .anim", "all_flags.anim", lambda: anim.write(g.anim_file(hero())), "hero.mesh"
        ),
        Case(
            "Unigine .anim",
            "no_scale.anim",
            lambda: anim.write(g.anim_file(hero(), 0x0F)),
            "hero.mesh",
        ),
        Case("Unigine .anim", "nub.anim", lambda: anim.write(g.nub_anim_file(hero())), "hero.mesh"),
        Case(
            "Unigine .anim",
            "nub_no_scale.anim",
            lambda: anim.write(g.nub_anim_file(hero(), anim_flag=0x0F)),
            "hero.mesh",
        ),
        Case(
            "Unigine .anim",
            "loose_boxes.anim",
            lambda: anim.write(g.loose_box_anim_file(hero())),
            "hero.mesh",
        ),
    ]


def _rounding_v(n: int, seed: int) -> np.ndarray:
    """``n`` float32 values near 0.1 that flipping twice (1 - (1 - v)) changes."""
    rng = np.random.default_rng(seed)
    v = (0.1 + rng.uniform(0.0, 1e-3, 64 * n)).astype(np.float32)
    bad = v[np.float32(1.0) - (np.float32(1.0) - v) != v]
    return np.resize(bad, n)


def _renderware_cases() -> list[Case]:
    from rigport.io_formats.renderware import anm, dff, ifp
    from rigport.io_formats.renderware.chunks import TARGETS
    from rigport.samples import renderware as r
    from rigport.samples import renderware_ifp as rifp

    def uv_rounding() -> bytes:
        f = r.static_clump(uv_sets=2)
        for k, geo in enumerate(f.clump.geometries()):
            for i, uv in enumerate(geo.uvs):
                uv[::2, 1] = _rounding_v(len(uv[::2]), 10 * k + i)
        return dff.write(f)

    def walk_anm() -> bytes:
        skeleton = r.ped_skeleton(32)
        tracks = []
        for i, k in enumerate(rifp.cycle_keys(skeleton, 9)):
            t = k.translation
            if t is None:
                t = np.tile(skeleton.local_translation[i], (len(k.times), 1))
            tracks.append((k.times.astype(np.float32).astype(np.float64), k.rotation, t))
        return anm.write(anm.from_tracks(tracks, TARGETS["SA"][2]))

    return [
        Case("RenderWare .dff", "ped_sa.dff", lambda: dff.write(r.skinned_ped("SA"))),
        Case("RenderWare .dff", "ped_vc.dff", lambda: dff.write(r.skinned_ped("VC"))),
        Case(
            "RenderWare .dff",
            "turned_ped.dff",
            lambda: dff.write(r.skinned_ped("SA", turned_frame=True)),
        ),
        Case("RenderWare .dff", "gta_ped.dff", lambda: dff.write(r.gta_ped())),
        Case(
            "RenderWare .dff",
            "unused_vertex_ped.dff",
            lambda: dff.write(r.with_unused_vertex(r.skinned_ped("SA"))),
        ),
        Case("RenderWare .dff", "uv_rounding.dff", uv_rounding),
        Case(
            "GTA .ifp",
            "walk_sa_turned.ifp",
            lambda: ifp.write(rifp.walk_package("SA", animations=2, quirks=True)),
            "turned_ped.dff",
        ),
        Case(
            "GTA .ifp",
            "walk_vc.ifp",
            lambda: ifp.write(rifp.walk_package("VC", animations=2)),
            "ped_vc.dff",
        ),
        Case("RenderWare .anm", "walk.anm", walk_anm, "ped_sa.dff"),
    ]


def _mrtk_cases() -> list[Case]:
    from rigport.io_formats.mrtk import recording
    from rigport.samples import mrtk as k

    return [
        Case("MRTK .bin", "v1_0.bin", lambda: recording.write(k.sample_recording((1, 0)))),
        Case("MRTK .bin", "v1_1_full.bin", lambda: recording.write(k.sample_recording((1, 1)))),
        Case(
            "MRTK .bin",
            "v1_1_simple.bin",
            lambda: recording.write(k.sample_recording((1, 1), layout=k.SIMPLE)),
        ),
    ]


def _bonespro_cases() -> list[Case]:
    from rigport.io_formats.bonespro import animation, structure
    from rigport.samples import bonespro as b

    def rig() -> structure.Structure:
        return b.structure(n_vertices=32, seed=3)

    return [
        Case("BonesPro .txt", "rig.txt", lambda: structure.write(rig())),
        Case("BonesPro .txt", "rig_other_writer.txt", lambda: b.decorate(structure.write(rig()))),
        Case(
            "BonesPro .txt",
            "rig_anim.txt",
            lambda: animation.write(b.animation(rig())),
            "rig.txt",
        ),
        Case(
            "BonesPro .txt",
            "rig_anim_other_writer.txt",
            lambda: b.decorate(animation.write(b.animation(rig())), seed=1),
            "rig.txt",
        ),
    ]


def sample_cases() -> list[Case]:
    out = []
    for group in (_urho3d_cases, _unigine_cases, _renderware_cases, _mrtk_cases, _bonespro_cases):
        out += group()
    return out


# -- running ---------------------------------------------------------------------------


@dataclass
class Outcome:
    case: Case
    identical: bool
    note: str  # why not, for a file that did not come back


def first_difference(a: bytes, b: bytes) -> str:
    """Where two byte strings first differ, and their sizes when they do."""
    n = min(len(a), len(b))
    x = np.frombuffer(a[:n], np.uint8) != np.frombuffer(b[:n], np.uint8)
    at = int(np.argmax(x)) if x.any() else n
    sizes = f" (input {len(a)} bytes, output {len(b)})" if len(a) != len(b) else ""
    return f"first difference at offset {at} (0x{at:x}){sizes}"


def _batch(inputs: list[Path], out: Path, model: Path | None, work: Path) -> dict[str, str]:
    """One ``batch.py roundtrip`` of ``inputs`` into the folder ``out``: each input's
    status and message, from its report."""
    report = work / f"report_{len(list(work.glob('report_*.json')))}.json"
    cmd = [sys.executable, str(ROOT / "batch.py"), "--jobs", "1", "--keep-going", "--report"]
    cmd += [str(report), "roundtrip", *map(str, inputs), str(out)]
    if model is not None:
        cmd += ["--model", str(model)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=3600)
    try:
        files = json.loads(report.read_text()).get("files", [])
    except (OSError, ValueError):
        files = []
    status = {}
    for f in files if isinstance(files, list) else []:
        status[str(f.get("item", ""))] = f"{f.get('status', '?')}: {f.get('detail', '')}"
    if not status:
        tail = (proc.stdout + proc.stderr).strip().splitlines()[-1:] or ["no output"]
        status = {str(p): f"batch.py exited {proc.returncode}: {tail[0]}" for p in inputs}
    return status


def run(cases: list[Case], work: Path) -> list[Outcome]:
    """Build every case's file under ``work``, round-trip them (models first, then the
    animations per model) and compare bytes."""
    src, out = work / "in", work / "out"
    src.mkdir(parents=True)
    out.mkdir()
    paths: dict[str, Path] = {}
    outcomes: dict[int, Outcome] = {}
    for i, c in enumerate(cases):
        p = src / f"{i:03d}_{Path(c.name).name}"
        try:
            p.write_bytes(c.make())
        except Exception as err:  # a writer another branch changed: its own row
            outcomes[i] = Outcome(c, False, f"not built: {type(err).__name__}: {err}")
            continue
        paths[c.name] = p
    groups: dict[str | None, list[int]] = {}
    for i, c in enumerate(cases):
        if i not in outcomes:
            groups.setdefault(c.model, []).append(i)
    for model, members in groups.items():
        model_path = None
        if model is not None:
            model_path = paths.get(model) or (Path(model) if Path(model).is_file() else None)
            if model_path is None:
                for i in members:
                    outcomes[i] = Outcome(cases[i], False, f"no model: {model}")
                continue
        inputs = [src / f"{i:03d}_{Path(cases[i].name).name}" for i in members]
        status = _batch(inputs, out, model_path, work)
        for i, p in zip(members, inputs, strict=True):
            result = out / p.name
            if not result.is_file():
                why = status.get(str(p), "no output written")
                outcomes[i] = Outcome(cases[i], False, f"round trip failed: {why}")
                continue
            a, b = p.read_bytes(), result.read_bytes()
            outcomes[i] = Outcome(cases[i], a == b, "" if a == b else first_difference(a, b))
    return [outcomes[i] for i in range(len(cases))]


def blender_version() -> str:
    try:
        import bpy

        return ".".join(str(v) for v in bpy.app.version[:2])
    except ImportError:
        return "no bpy"


def markdown(outcomes: list[Outcome], version: str) -> str:
    rows: dict[str, list[Outcome]] = {r: [] for r in ROW_ORDER}
    for o in outcomes:
        rows.setdefault(o.case.format, []).append(o)
    py = ".".join(map(str, sys.version_info[:2]))
    lines = [f"## Blender {version}", "", f"bpy {version}, Python {py}.", ""]
    lines += ["| format | files | byte-identical |", "|---|---:|---:|"]
    for fmt, group in rows.items():
        if group:
            lines.append(f"| {fmt} | {len(group)} | {sum(o.identical for o in group)} |")
    total = sum(o.identical for o in outcomes)
    lines.append(f"| **all** | **{len(outcomes)}** | **{total}** |")
    differ = [o for o in outcomes if not o.identical]
    lines += ["", "Files that differ:" if differ else "Every file came back byte for byte."]
    for o in differ:
        where = "corpus" if o.case.corpus else "our writer"
        lines.append(f"- {o.case.format} `{o.case.name}` ({where}): {o.note}")
    return "\n".join(lines) + "\n"


def update(doc: Path, section: str) -> None:
    """Replace the section of the same heading in ``doc`` (sections are kept in
    version order), or add it."""
    text = doc.read_text() if doc.is_file() else "# Exact round trips\n"
    head, *parts = re.split(r"(?m)^(?=## )", text)
    title = section.splitlines()[0]
    sections = {p.splitlines()[0]: p for p in parts}
    sections[title] = section + "\n"

    def key(t: str) -> tuple:
        return tuple(int(x) for x in re.findall(r"\d+", t)) or (999,)

    body = "".join(sections[t].rstrip("\n") + "\n\n" for t in sorted(sections, key=key))
    doc.write_text(head.rstrip("\n") + "\n\n" + body.rstrip("\n") + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--update", type=Path, help="a markdown file to put this section into")
    parser.add_argument("--keep", type=Path, help="keep the inputs and outputs in this folder")
    args = parser.parse_args(argv)
    _package()
    cases = corpus_cases(args.corpus) if args.corpus.is_dir() else []
    if not cases:
        print(f"(no corpus at {args.corpus}: our writers' files only)", file=sys.stderr)
    cases += sample_cases()
    work = Path(tempfile.mkdtemp(prefix="exact_table_"))
    try:
        outcomes = run(cases, work / "run")
        if args.keep:
            shutil.copytree(work / "run", args.keep, dirs_exist_ok=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    section = markdown(outcomes, blender_version())
    print(section)
    if args.update:
        update(args.update, section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
