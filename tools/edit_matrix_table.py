"""Write the edit matrix (issue 24 item 6), edit x model: ``tests/blender/edit_matrix.md``.

Runs ``tests/blender/test_edit_matrix.py`` once with each Blender's Python (a
child pytest per version, its results read from a JUnit XML report) and writes,
per model and edit, what the export did on every version: ``pass`` (read back
equal to the edited mesh), ``warned`` (written with a sentence naming the object
and what the format cannot hold), ``refused`` (refused with such a sentence),
``xfail`` (a known failure, the reason under the table), ``FAIL`` or ``skip``.
A cell lists the versions where they differ.

Usage (from the repository root)::

    python3 tools/edit_matrix_table.py .venv/bpy42/bin/python .venv/bpy45/bin/python \\
        .venv/bpy50/bin/python .venv/bpy52/bin/python
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TEST = "tests/blender/test_edit_matrix.py"
OUT = ROOT / "tests" / "blender" / "edit_matrix.md"
CASE = re.compile(r"test_edit_matrix\[(?P<case>[^\]]+)\]")


def blender_version(python: str) -> str:
    code = "import bpy; print('%d.%d' % bpy.app.version[:2])"
    res = subprocess.run([python, "-c", code], capture_output=True, text=True, check=True)
    return res.stdout.strip().splitlines()[-1]


def run(python: str) -> dict[str, tuple[str, str]]:
    """case id -> (outcome, reason) from one pytest run of the matrix."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.xml"
        subprocess.run(
            [
                python,
                "-m",
                "pytest",
                "-p",
                "no:pytest-blender",
                "-p",
                "no:cacheprovider",
                "-q",
                TEST,
                "-k",
                "test_edit_matrix",
                f"--junitxml={report}",
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
        )
        if not report.is_file():
            sys.exit(f"{python}: pytest wrote no report")
        tree = ET.parse(report)
    out = {}
    for tc in tree.iter("testcase"):
        m = CASE.search(tc.get("name", ""))
        if m is None:
            continue
        props = {p.get("name"): p.get("value") for p in tc.iter("property")}
        skipped = tc.find("skipped")
        failed = tc.find("failure") if tc.find("failure") is not None else tc.find("error")
        if skipped is not None and skipped.get("type") == "pytest.xfail":
            out[m["case"]] = ("xfail", skipped.get("message", ""))
        elif skipped is not None:
            out[m["case"]] = ("skip", skipped.get("message", ""))
        elif failed is not None:
            out[m["case"]] = ("FAIL", (failed.get("message") or "").splitlines()[0][:200])
        else:
            out[m["case"]] = (props.get("outcome", "pass"), "")
    return out


def cell(per_version: dict[str, tuple[str, str]]) -> str:
    outcomes = {v: o for v, (o, _) in per_version.items()}
    if len(set(outcomes.values())) == 1:
        return next(iter(outcomes.values()))
    return ", ".join(f"{v}: {o}" for v, o in outcomes.items())


def table(results: dict[str, dict[str, tuple[str, str]]], models, edits) -> str:
    versions = list(results)
    lines = [
        "# The edit matrix",
        "",
        "Written by `tools/edit_matrix_table.py` from `tests/blender/test_edit_matrix.py` "
        f"on Blender {', '.join(versions)}. Each edited model is exported with default "
        "options, imported into an empty scene and compared with the edited, evaluated "
        "mesh (used vertex positions, triangulated area, shape-key offsets, weights); "
        "Urho3D files pass the engine rules, DFF files are read by librw.",
        "",
        "`pass`: read back as edited; `warned`: written with a sentence naming the object "
        "and what the format leaves out; `refused`: refused with such a sentence; "
        "`xfail`: a known failure (reasons below).",
        "",
        "| edit | " + " | ".join(models) + " |",
        "|---|" + "---|" * len(models),
    ]
    reasons = {}
    for edit in edits:
        row = []
        for model in models:
            case = f"{model}-{edit}"
            per = {v: results[v].get(case, ("missing", "")) for v in versions}
            row.append(cell(per))
            for o, why in per.values():
                if o in ("xfail", "FAIL", "skip") and why:
                    reasons[case] = f"{o}: {why}"
        lines.append(f"| {edit} | " + " | ".join(row) + " |")
    if reasons:
        lines += ["", "## Known failures", ""]
        lines += [f"- `{case}`: {why}" for case, why in reasons.items()]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pythons", nargs="+", help="a Python with bpy, one per Blender version")
    args = parser.parse_args(argv)
    results = {}
    for python in args.pythons:
        version = blender_version(python)
        print(f"Blender {version}: running the matrix", flush=True)
        results[version] = run(python)
    cases = [c for r in results.values() for c in r]
    models, edits = order(cases)
    OUT.write_text(table(results, models, edits), encoding="utf-8")
    print(f"wrote {OUT.relative_to(ROOT)}")
    return 0


def order(cases: list[str]) -> tuple[list[str], list[str]]:
    """Models and edits in the test's order, from case ids ``<model>-<edit>``
    (a model is ``<format>-<name>``; an edit may hold dashes)."""
    models, edits = [], []
    for case in cases:
        fmt, name, edit = case.split("-", 2)
        model = f"{fmt}-{name}"
        if model not in models:
            models.append(model)
        if edit not in edits:
            edits.append(edit)
    return models, edits


if __name__ == "__main__":
    sys.exit(main())
