"""Every corpus file, and every file our sample writers make, converted into every
format through Blender: import, then export with default options. Each export
either writes a file or refuses with one line (a FormatError or the operator's
sentence), never a Python traceback or a crash.

One child process per source format (a crash fails only its row); the matrix of
outcomes is printed (``pytest -s``)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from rigport.tests.support import ROOT

CORPUS = ROOT.parent / "shared" / "corpus"

#: target label -> (export operator, extension)
TARGETS = {
    "mdl": ("export_scene.urho3d_mdl", ".mdl"),
    "ani": ("export_anim.urho3d_ani", ".ani"),
    "mesh": ("export_scene.unigine_mesh", ".mesh"),
    "anim": ("export_anim.unigine_anim", ".anim"),
    "dff": ("export_scene.rw_dff", ".dff"),
    "mrtk": ("export_anim.mrtk_input", ".bin"),
    "bp-struct": ("export_scene.bonespro_structure", ".txt"),
    "bp-anim": ("export_anim.bonespro_anim", ".txt"),
}

#: Imports each source in a fresh file, exports it to every target; prints JSON.
_CHILD = textwrap.dedent(
    """
    import json, os, runpy, sys, traceback
    root, jobs_path, out_dir = sys.argv[1:4]
    rigport = runpy.run_path(os.path.join(root, "loader.py"))["package"](init=True)
    import bpy
    rigport.register()
    from rigport.io_formats.bonespro import formats as bp

    def importer(path):
        ext = os.path.splitext(path)[1].lower()
        if ext == ".txt":
            with open(path, "rb") as fh:
                head = fh.read(4096)
            kind = "structure" if bp.is_structure(head) else "anim"
            return ("import_scene.bonespro_structure" if kind == "structure"
                    else "import_anim.bonespro_anim")
        return {".mdl": "import_scene.urho3d_mdl", ".ani": "import_anim.urho3d_ani",
                ".pak": "import_scene.urho3d_package", ".mesh": "import_scene.unigine_mesh",
                ".anim": "import_anim.unigine_anim", ".dff": "import_scene.rw_dff",
                ".bin": "import_anim.mrtk_input"}[ext]

    def op(idname):
        group, name = idname.split(".")
        return getattr(getattr(bpy.ops, group), name)

    def run(call):
        try:
            result = call()
        except RuntimeError as err:
            text = str(err).strip()
            bad = "Traceback" in text or "Error: Python" in text or len(text.splitlines()) > 1
            return ("TRACEBACK" if bad else "refused"), text
        except Exception:
            return "TRACEBACK", traceback.format_exc()
        return ("ok" if result == {"FINISHED"} else str(result)), ""

    results = {}
    for job in json.load(open(jobs_path)):
        bpy.ops.wm.read_factory_settings(use_empty=True)
        row = results[job["name"]] = {}
        for path in job["files"]:
            outcome, text = run(lambda p=path: op(importer(p))(filepath=p))
            if outcome != "ok":
                row["import"] = [outcome, text]
                break
        else:
            for label, (idname, ext) in job["targets"].items():
                out = os.path.join(out_dir, job["name"].replace("/", "_") + "-" + label + ext)
                outcome, text = run(lambda: op(idname)(filepath=out))
                if outcome == "ok" and not (os.path.isfile(out) and os.path.getsize(out)):
                    outcome, text = "TRACEBACK", "FINISHED without a file"
                row[label] = [outcome, text]
        sys.stdout.write("ROW" + json.dumps({job["name"]: row}) + "\\n")
        sys.stdout.flush()
    os._exit(0)
    """
)


def _samples(folder: Path) -> dict[str, list[dict]]:
    """Files our writers make, per source format: ``{"name", "files"}`` import lists."""
    from rigport.io_formats.bonespro import animation as bp_anim
    from rigport.io_formats.bonespro import structure
    from rigport.io_formats.mrtk import recording
    from rigport.io_formats.renderware import dff
    from rigport.io_formats.unigine import anim, mesh
    from rigport.io_formats.urho3d import ani, mdl
    from rigport.samples import bonespro as bps
    from rigport.samples import mrtk as ms
    from rigport.samples import rbfx as rbfx_samples
    from rigport.samples import renderware as rws
    from rigport.samples import unigine as us
    from rigport.samples import urho3d as uss

    def put(name: str, data: bytes) -> str:
        path = folder / name
        path.write_bytes(data)
        return str(path)

    model = uss.skinned_model(n_bones=6, grid=(12, 8))
    urho = put("skinned.mdl", mdl.write(model))
    ug = us.skinned_mesh(rings=4, segments=6)
    s = bps.structure()
    rig = put("rig.txt", structure.write(s))
    return {
        "urho3d": [
            {"name": "sample skinned.mdl", "files": [urho]},
            {
                "name": "sample skinned.mdl + walk.ani",
                "files": [urho, put("walk.ani", ani.write(uss.walk_animation(model, 9)))],
            },
            {
                "name": "sample legacy.mdl",
                "files": [put("legacy.mdl", mdl.write(uss.legacy_all_bits_model()))],
            },
            {
                "name": "sample all-elements.mdl",
                "files": [put("all.mdl", mdl.write(uss.all_elements_model()))],
            },
            {
                "name": "sample rbfx UMD3.mdl + UAN2.ani",
                "files": [
                    put("umd3.mdl", mdl.write(rbfx_samples.umd3_model())),
                    put(
                        "uan2.ani",
                        ani.write(rbfx_samples.uan2_animation(rbfx_samples.umd3_model())),
                    ),
                ],
            },
            {
                "name": "sample package.pak",
                "files": [put("p.pak", rbfx_samples.sample_package(False, True))],
            },
        ],
        "unigine": [
            {"name": "sample skinned.mesh", "files": [put("skinned.mesh", mesh.write(ug))]},
            {
                "name": "sample static.mesh",
                "files": [put("static.mesh", mesh.write(us.static_mesh()))],
            },
            {
                "name": "sample skinned.mesh + take.anim",
                "files": [
                    str(folder / "skinned.mesh"),
                    put("take.anim", anim.write(us.anim_file(ug, n_frames=6))),
                ],
            },
        ],
        "renderware": [
            {
                "name": "sample ped.dff",
                "files": [
                    put("ped.dff", dff.write(rws.skinned_ped(n_bones=8, rings=6, segments=6)))
                ],
            },
            {
                "name": "sample ped (morphs, split, strips).dff",
                "files": [
                    put(
                        "ped2.dff",
                        dff.write(
                            rws.skinned_ped(
                                "VC", 8, 6, 6, morphs=2, split=True, strips=True, unknown=True
                            )
                        ),
                    )
                ],
            },
            {
                "name": "sample static.dff",
                "files": [put("static.dff", dff.write(rws.static_clump()))],
            },
        ],
        "mrtk": [
            {
                "name": "sample full.bin",
                "files": [put("full.bin", recording.write(ms.sample_recording(keys=6)))],
            },
            {
                "name": "sample simple 1.0.bin",
                "files": [
                    put(
                        "simple.bin",
                        recording.write(ms.sample_recording((1, 0), recording.SIMPLE, keys=6)),
                    )
                ],
            },
        ],
        "bonespro": [
            {"name": "sample rig.txt", "files": [rig]},
        ]
        + [
            {
                "name": f"sample rig.txt + {mode}",
                "files": [rig, put(f"anim{i}.txt", bp_anim.write(bps.animation(s, mode=mode)))],
            }
            for i, mode in enumerate(bp_anim.MODES)
        ],
    }


def _corpus() -> dict[str, list[dict]]:
    if not CORPUS.is_dir():
        return {}
    u = CORPUS / "urho3d"
    jobs = {"urho3d": [], "renderware": []}
    for p in sorted(u.glob("*.mdl")) + sorted((CORPUS / "rbfx").glob("*.mdl")):
        jobs["urho3d"].append({"name": str(p.relative_to(CORPUS)), "files": [str(p)]})
    jobs["urho3d"] += [
        {
            "name": "urho3d/Jack.mdl + Jack_Walk.ani",
            "files": [str(u / "Jack.mdl"), str(u / "Jack_Walk.ani")],
        },
        {
            "name": "urho3d/reattiva/Tube.mdl + Tube_Wave.ani",
            "files": [str(u / "reattiva" / "Tube.mdl"), str(u / "reattiva" / "Tube_Wave.ani")],
        },
        {"name": "rbfx/PackageTest.pak", "files": [str(CORPUS / "rbfx" / "PackageTest.pak")]},
    ]
    for p in sorted((CORPUS / "renderware").glob("*.dff")):
        jobs["renderware"].append({"name": str(p.relative_to(CORPUS)), "files": [str(p)]})
    return jobs


SOURCES = ["urho3d", "unigine", "renderware", "mrtk", "bonespro"]


def _print_matrix(rows: dict) -> None:
    labels = list(TARGETS)
    width = max(len(n) for n in rows) + 2
    print("\n" + "source".ljust(width) + " ".join(f"{t:>10}" for t in labels))
    for name, row in rows.items():
        if "import" in row:
            print(name.ljust(width) + f"import {row['import'][0]}: {row['import'][1][:80]}")
            continue
        print(name.ljust(width) + " ".join(f"{row[t][0]:>10}" for t in labels))
    reasons: dict[str, set[str]] = {}
    for row in rows.values():
        for target, (outcome, text) in row.items():
            if outcome == "refused":
                reasons.setdefault(target, set()).add(text.split(": ")[-1][:110])
    for target, texts in reasons.items():
        for text in sorted(texts):
            print(f"  {target} refused: {text}")


@pytest.mark.parametrize("source", SOURCES)
def test_convert_every_file_to_every_format(tmp_path, source):
    jobs = _samples(tmp_path).get(source, []) + _corpus().get(source, [])
    for job in jobs:
        job["targets"] = TARGETS
    jobs_path = tmp_path / "jobs.json"
    jobs_path.write_text(json.dumps(jobs))
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, str(ROOT), str(jobs_path), str(out_dir)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    rows = {}
    for line in proc.stdout.splitlines():
        if line.startswith("ROW"):
            rows.update(json.loads(line[3:]))
    _print_matrix(rows)
    assert proc.returncode == 0 and len(rows) == len(jobs), (
        f"the child ended with {proc.returncode} after {len(rows)} of {len(jobs)} sources "
        f"(a crash converting the next one?)\n{proc.stderr[-3000:]}"
    )
    bad = {
        f"{name} -> {target}": text
        for name, row in rows.items()
        for target, (outcome, text) in row.items()
        if outcome not in ("ok", "refused")
    }
    assert not bad, "\n\n".join(f"{k}:\n{v}" for k, v in bad.items())
