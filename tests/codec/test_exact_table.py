"""``tools/exact_table.py`` (issue 25's closing table): every case our writers build
is a file its format's reader takes, the corpus animations find their models, and
the table and the document's sections come out as they should. The round trips
themselves run in Blender, in the tool."""

from __future__ import annotations

from rigport.io_formats import registry
from rigport.tools import exact_table


def test_every_sample_case_builds_a_file_of_its_format():
    cases = exact_table.sample_cases()
    names = {c.name for c in cases}
    assert len(names) == len(cases)
    for c in cases:
        data = c.make()
        fmt = registry.format_of(c.name, data[: registry.SNIFF_BYTES])
        assert c.name.endswith(tuple(fmt.extensions)), c.name
        assert c.model is None or c.model in names, c.name


def test_corpus_animations_go_onto_their_models(corpus_dir):
    cases = exact_table.corpus_cases(corpus_dir)
    anis = {c.name: c.model for c in cases if c.name.endswith(".ani")}
    assert anis["urho3d/Jack_Walk.ani"].endswith("urho3d/Jack.mdl")
    assert anis["urho3d/reattiva/Tube_Wave.ani"].endswith("reattiva/Tube.mdl")
    assert not any(c.name.endswith(".pak") for c in cases)


def test_first_difference():
    assert exact_table.first_difference(b"abcd", b"abXd") == "first difference at offset 2 (0x2)"
    assert exact_table.first_difference(b"ab", b"abc") == (
        "first difference at offset 2 (0x2) (input 2 bytes, output 3)"
    )


def test_markdown_and_update(tmp_path):
    case = exact_table.Case("Unigine .anim", "nub.anim", lambda: b"")
    other = exact_table.Case("Urho3D .mdl", "Box.mdl", lambda: b"", corpus=True)
    outcomes = [
        exact_table.Outcome(case, True, ""),
        exact_table.Outcome(other, False, "first difference at offset 8 (0x8)"),
    ]
    text = exact_table.markdown(outcomes, "5.0")
    assert text.index("| Urho3D .mdl | 1 | 0 |") < text.index("| Unigine .anim | 1 | 1 |")
    assert "| **all** | **2** | **1** |" in text
    assert "- Urho3D .mdl `Box.mdl` (corpus): first difference at offset 8 (0x8)" in text
    doc = tmp_path / "exact.md"
    exact_table.update(doc, exact_table.markdown(outcomes, "5.2"))
    exact_table.update(doc, text)
    exact_table.update(doc, text.replace("| 1 | 1 |", "| 1 | 0 |"))  # a re-run replaces
    body = doc.read_text()
    assert body.startswith("# Exact round trips\n")
    assert body.count("## Blender 5.0") == 1 and body.index("## Blender 5.0") < body.index(
        "## Blender 5.2"
    )
    assert "| Unigine .anim | 1 | 0 |" in body and "| Unigine .anim | 1 | 1 |" in body
