"""The edit matrix (issue 24 item 6): rigged models like the real ones × the edits an
artist makes × the formats that hold meshes. Each edit is exported with the
export operator's default options, read back into an empty scene and compared
with the edited, evaluated mesh: every used vertex position, the triangulated
surface area, the shape-key offsets and the weights. Urho3D outputs pass the
engine's rules; DFF outputs are read by librw (and, for a few edits, DragonFF).
A case a format cannot hold is refused with a sentence naming the object.

Models: the corpus's Jack (Urho3D) and clump.dff (RenderWare), and models our own
writers build with tangents, morphs, two UV sets, several geometries and LODs,
skinned to 64+ bones. BonesPro is not in the matrix: its structure files hold
no mesh, and its mesh animations only vertex tracks of an existing mesh.
``tools/edit_matrix_table.py`` runs the same cases and writes the table
``tests/blender/edit_matrix.md``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from rigport.io_formats.renderware import dff
from rigport.io_formats.unigine import mesh as gmesh
from rigport.io_formats.urho3d import engine_rules, mdl
from rigport.samples import renderware as rsamples
from rigport.samples import unigine as gsamples
from rigport.samples import urho3d as usamples
from rigport.tests import edits

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus"


@dataclass(frozen=True)
class Format:
    """How a format's files are imported and exported (operator names) and checked."""

    name: str
    ext: str
    importer: str
    exporter: str


FORMATS = {
    "urho3d": Format("urho3d", ".mdl", "urho3d_mdl", "urho3d_mdl"),
    "unigine": Format("unigine", ".mesh", "unigine_mesh", "unigine_mesh"),
    "renderware": Format("renderware", ".dff", "rw_dff", "rw_dff"),
}


@dataclass(frozen=True)
class Model:
    """A model an edit starts from: its format and its bytes (None: not present)."""

    fmt: str
    build: Callable[[], bytes | None]


def _corpus(rel: str) -> Callable[[], bytes | None]:
    def read() -> bytes | None:
        path = CORPUS / rel
        return path.read_bytes() if path.is_file() else None

    return read


#: The models of the matrix, small enough to run every edit in about a second.
MODELS = {
    "urho3d-jack": Model("urho3d", _corpus("urho3d/Jack.mdl")),
    "urho3d-sample": Model(
        "urho3d",
        lambda: mdl.write(
            usamples.skinned_model(n_bones=66, morphs=2, geometries=3, lods=2, grid=(24, 10))
        ),
    ),
    "unigine-sample": Model(
        "unigine",
        lambda: gmesh.write(
            gsamples.skinned_mesh(n_bones=64, rings=8, segments=10, surfaces=3, animations=0)
        ),
    ),
    "renderware-clump": Model("renderware", _corpus("renderware/clump.dff")),
    "renderware-ped": Model(
        "renderware",
        lambda: dff.write(
            rsamples.skinned_ped(n_bones=64, rings=12, segments=10, uv_sets=2, strips=True)
        ),
    ),
}


# -- a character: what one import made --------------------------------------


@dataclass
class Character:
    arm: object
    meshes: list  # the meshes of the first LOD (Urho3D's other LODs are in ``objects``)
    objects: list
    fmt: Format
    path: Path

    @property
    def lods(self) -> list:
        """The meshes of the other LOD levels (Urho3D), by level and name."""
        found = [o for o in self.objects if o.type == "MESH" and int(o.get("urho_lod", 0)) > 0]
        return sorted(found, key=lambda o: (int(o["urho_lod"]), o.name))

    @property
    def body(self):
        """The mesh an edit works on: the first LOD's largest."""
        return max(self.meshes, key=lambda o: (len(o.data.vertices), o.name))


def import_model(bpy, fmt: Format, path: Path) -> Character:
    before = set(bpy.data.objects)
    op = getattr(bpy.ops.import_scene, fmt.importer)
    assert op(filepath=str(path)) == {"FINISHED"}
    new = sorted((o for o in bpy.data.objects if o not in before), key=lambda o: o.name)
    meshes = [o for o in new if o.type == "MESH" and int(o.get("urho_lod", 0)) == 0]
    arm = next((o for o in new if o.type == "ARMATURE"), None)
    return Character(arm, meshes, new, fmt, path)


# -- the edits ----------------------------------------------------------------


@dataclass
class Edited:
    """What to export and what the file must hold: ``meshes`` evaluated (the
    expectation), their shape keys when ``keys``."""

    export: list
    meshes: list
    keys: bool = True


def _modifier(kind: str, **settings) -> Callable:
    def edit(bpy, ch: Character, tmp: Path) -> Edited:
        mod = ch.body.modifiers.new(kind.title(), kind)
        for k, v in settings.items():
            setattr(mod, k, v)
        ev = ch.body.evaluated_get(bpy.context.evaluated_depsgraph_get())
        assert len(ev.data.vertices) > len(ch.body.data.vertices)  # the modifier made some
        # a changed vertex count cannot carry shape keys: the export says so
        return Edited(ch.objects, ch.meshes, keys=False)

    return edit


def _bmesh(edit_bm: Callable) -> Callable:
    def edit(bpy, ch: Character, tmp: Path) -> Edited:
        edits.bm_edit(ch.body, edit_bm)
        return Edited(ch.objects, ch.meshes)

    return edit


def _merge_by_distance(bm) -> None:
    """Merge by Distance at a tenth of the shortest edge's length, after the
    first vertices were pulled together (as an artist snaps them)."""
    import bmesh

    lengths = np.array([e.calc_length() for e in bm.edges])
    dist = 0.1 * float(lengths[lengths > 0].min())
    target = bm.verts[0].co.copy()
    near = sorted(bm.verts, key=lambda v: (v.co - target).length)[1:4]
    for v in near:
        v.co = target.lerp(v.co, 0.01 * dist / max((v.co - target).length, 1e-12))
    before = len(bm.verts)
    bmesh.ops.remove_doubles(bm, verts=list(bm.verts), dist=dist)
    assert len(bm.verts) < before


def _separate(bpy, ch: Character, tmp: Path) -> Edited:
    """Half the faces separated into a new object (P > Selection)."""
    import bmesh

    body = ch.body
    for o in bpy.context.view_layer.objects:
        o.select_set(o == body)
    bpy.context.view_layer.objects.active = body
    bpy.ops.object.mode_set(mode="EDIT")
    bm = bmesh.from_edit_mesh(body.data)
    for f in bm.faces:
        f.select_set(False)
    bm.select_flush(False)
    faces = list(bm.faces)
    for f in faces[: len(faces) // 2]:
        f.select_set(True)
    bmesh.update_edit_mesh(body.data)
    before = set(bpy.data.objects)
    assert bpy.ops.mesh.separate(type="SELECTED") == {"FINISHED"}
    bpy.ops.object.mode_set(mode="OBJECT")
    new = [o for o in bpy.data.objects if o not in before]
    assert len(new) == 1
    return Edited([*ch.objects, *new], [*ch.meshes, *new])


def _join_cube(bpy, ch: Character, tmp: Path) -> Edited:
    edits.join(bpy, ch.body, edits.cube(bpy, ch.arm, ch.body))
    return Edited(ch.objects, ch.meshes)


def _add_shape_key(bpy, ch: Character, tmp: Path) -> Edited:
    """A new shape key on the body, each vertex moved by a function of where it
    is (a seam's split vertices move together, as a sculpted key moves them)."""
    body = ch.body
    if body.data.shape_keys is None:
        body.shape_key_add(name="Basis", from_mix=False)
    key = body.shape_key_add(name="smile", from_mix=False)
    n = len(body.data.vertices)
    co = np.empty(n * 3, np.float32)
    key.data.foreach_get("co", co)
    co = co.reshape(n, 3)
    co += 0.03 * np.sin(3.0 * co[:, [1, 2, 0]])
    key.data.foreach_set("co", co.ravel())
    return Edited(ch.objects, ch.meshes)


def _two_characters(bpy, ch: Character, tmp: Path) -> Edited:
    """The same model imported again (its bones have the same names) and moved
    aside; only the first character is exported."""
    other = import_model(bpy, ch.fmt, ch.path)
    for o in other.objects:
        if o.parent is None:
            o.location.x += 5.0
    edits.bm_edit(other.body, edits.delete_faces)
    return Edited(ch.objects, ch.meshes)


EDITS: dict[str, Callable] = {
    "subdivision": _modifier("SUBSURF", levels=1),
    "bevel": _modifier("BEVEL", width=0.002, segments=1, limit_method="ANGLE"),
    "extrude": _bmesh(edits.extrude),
    "dissolve-ngon": _bmesh(edits.dissolve),
    "cut-edges": _bmesh(edits.cut_edges),
    "delete-faces": _bmesh(edits.delete_faces),
    "merge-by-distance": _bmesh(_merge_by_distance),
    "separate": _separate,
    "join-new-mesh": _join_cube,
    "add-shape-key": _add_shape_key,
    "two-characters": _two_characters,
}

#: (model, edit) -> a fragment of the sentence the export refuses it with.
REFUSED: dict[tuple[str, str], str] = {}

#: (model, edit) -> a fragment of the warning the export writes the case with,
#: leaving out what the format cannot hold (the sentence names the object too).
WARNED: dict[tuple[str, str], str] = {
    ("renderware-clump", "add-shape-key"): "1 shape key left out (Shape Keys: as imported",
    ("renderware-ped", "add-shape-key"): "1 shape key left out (Shape Keys: as imported",
}

#: (model, edit) -> why the case fails today (another session's work in progress).
XFAIL: dict[tuple[str, str], str] = {}


# -- what a mesh holds ---------------------------------------------------------


def _groups(obj, me) -> tuple[list[str], np.ndarray]:
    """Group names and the dense (vertex x group) weights of ``me`` (``obj``'s groups)."""
    names = [g.name for g in obj.vertex_groups]
    w = np.zeros((len(me.vertices), len(names)), np.float64)
    for v in me.vertices:
        for g in v.groups:
            if g.group < len(names):
                w[v.index, g.group] = g.weight
    return names, w


def _weights(obj, me, bones: list[str]) -> np.ndarray:
    """(vertex x bone) weights of the groups named after bones."""
    names, w = _groups(obj, me)
    out = np.zeros((len(me.vertices), len(bones)), np.float64)
    column = {b: i for i, b in enumerate(bones)}
    for k, name in enumerate(names):
        if name in column:
            out[:, column[name]] = w[:, k]
    return out


def _state(bpy, meshes: list, bones: list[str], evaluate: bool) -> SimpleNamespace:
    """World positions, triangles, shape-key offsets and weights of ``meshes``
    taken together (evaluated: as their modifiers make them, at rest)."""
    pos, tris, weights, keyed = [], [], [], []
    base = 0
    for obj in meshes:
        if evaluate:
            # the basis through the modifiers, as the export reads it (the shape
            # keys are written as offsets from it, whatever their current values)
            saved = [(m, m.show_viewport) for m in obj.modifiers if m.type == "ARMATURE"]
            pinned = obj.show_only_shape_key, obj.active_shape_key_index
            obj.show_only_shape_key, obj.active_shape_key_index = True, 0
            for m, _ in saved:
                m.show_viewport = False
            ev = obj.evaluated_get(bpy.context.evaluated_depsgraph_get())
            me = ev.to_mesh()
        else:
            me = obj.data
        try:
            p, t = edits.surface(obj, me)
            weights.append(_weights(obj, me, bones))
        finally:
            if evaluate:
                ev.to_mesh_clear()
                for m, shown in saved:
                    m.show_viewport = shown
                obj.show_only_shape_key, obj.active_shape_key_index = pinned
        pos.append(p)
        tris.append(t + base)
        keyed.append((base, len(p), edits.offsets(obj) if len(p) == len(obj.data.vertices) else {}))
        base += len(p)
    names = sorted({k for _, _, o in keyed for k in o})
    offsets = {k: np.zeros((base, 3)) for k in names}
    for start, count, o in keyed:
        for k, v in o.items():
            offsets[k][start : start + count] = v
    return SimpleNamespace(
        pos=np.concatenate(pos),
        tris=np.concatenate(tris),
        weights=np.concatenate(weights),
        offsets=offsets,
    )


def assert_same_weights(expected: SimpleNamespace, got: SimpleNamespace, tol: float = 2e-3) -> None:
    """Each vertex read back carries the weights of the edited vertex at its place:
    the bones it keeps are a largest few of the edited vertex's (a file holds four
    or so; between equal weights either may go), their weights the edited ones
    normalised."""
    _, at = edits.nearest(got.pos, expected.pos)
    e, g = expected.weights[at], got.weights
    kept = g > 1e-6
    e_kept = np.where(kept, e, 0.0)
    total = e_kept.sum(axis=1, keepdims=True)
    assert (total[:, 0] > 0).all() or not kept.any()
    norm = np.divide(e_kept, total, out=np.zeros_like(e), where=total > 0)
    off = np.abs(g - norm).max(axis=1)
    assert off.max() <= tol, f"{int((off > tol).sum())} vertices read back other weights"
    smallest_kept = np.where(kept, e, np.inf).min(axis=1)
    largest_dropped = np.where(kept, 0.0, e).max(axis=1)
    bad = kept.any(axis=1) & (largest_dropped > smallest_kept + 1e-4)
    assert not bad.any(), f"{int(bad.sum())} vertices lost a larger weight than one they kept"
    lost = ~kept.any(axis=1) & (e.sum(axis=1) > tol)
    assert not lost.any(), f"{int(lost.sum())} weighted vertices read back unweighted"


# -- running one case ------------------------------------------------------------


@pytest.fixture
def said(monkeypatch):
    """What the export operator reported: its Result, or its failure sentence and
    the exception behind it."""
    from rigport.operators import common

    box = SimpleNamespace(result=None, failure=None, error=None)
    real_report, real_failure = common.report, common.export_failure_message

    def report(op, done, *args, **kw):
        box.result = done
        return real_report(op, done, *args, **kw)

    def failure(err, path):
        box.error = err
        box.failure = real_failure(err, path)
        return box.failure

    monkeypatch.setattr(common, "report", report)
    monkeypatch.setattr(common, "export_failure_message", failure)
    return box


def source_bytes(model: str) -> bytes:
    data = MODELS[model].build()
    if data is None:
        pytest.skip(f"{model}: ../shared/corpus not present")
    return data


def run_case(bpy, tmp_path: Path, said, model: str, edit: str) -> SimpleNamespace:
    """Import ``model``, make ``edit``, export with default options, import the
    file into an empty scene and compare. Returns what happened (for the table):
    ``outcome`` "pass" or "refused", and the export's messages."""
    from rigport.io_formats.codec import FormatError

    fmt = FORMATS[MODELS[model].fmt]
    src = tmp_path / f"in{fmt.ext}"
    src.write_bytes(source_bytes(model))
    bpy.ops.wm.read_factory_settings(use_empty=True)
    ch = import_model(bpy, fmt, src)
    bones = [b.name for b in ch.arm.data.bones] if ch.arm is not None else []
    had_keys = any(o.data.shape_keys is not None for o in ch.meshes)
    done = EDITS[edit](bpy, ch, tmp_path)
    expected = _state(bpy, done.meshes, bones, evaluate=True)

    out = tmp_path / f"out{fmt.ext}"
    said.result = None
    lods = _state(bpy, ch.lods, bones, evaluate=True) if ch.lods else None
    levels = [int(o["urho_lod"]) for o in ch.lods]
    for o in bpy.context.view_layer.objects:
        if o in done.export:
            o.hide_set(False)  # the import hides the other LODs: selected with the body
        o.select_set(o in done.export)
    bpy.context.view_layer.objects.active = done.meshes[0]
    op = getattr(bpy.ops.export_scene, fmt.exporter)
    state = op(filepath=str(out), use_selection=True)
    if said.failure is not None:
        assert isinstance(said.error, FormatError), said.failure  # never a traceback
        assert state == {"CANCELLED"}
        return SimpleNamespace(outcome="refused", text=said.failure)
    assert state == {"FINISHED"}
    messages = [m.text for m in said.result.messages] if said.result is not None else []
    if had_keys and not done.keys:
        name = ch.body.name
        assert any(name in m and "shape key" in m for m in messages), messages
    if (model, edit) in WARNED:
        fragment, name = WARNED[model, edit], ch.body.name
        assert any(fragment in m and name in m for m in messages), messages
        done.keys = False

    data = out.read_bytes()
    if fmt.name == "urho3d":
        assert engine_rules.check(mdl.read(data)) == []
    elif fmt.name == "renderware":
        dff.read(data)
        _librw_reads(out)

    bpy.ops.wm.read_factory_settings(use_empty=True)
    again = import_model(bpy, fmt, out)
    got = _state(bpy, again.meshes, bones, evaluate=False)
    edits.assert_same_surface((expected.pos, expected.tris), (got.pos, got.tris))
    if done.keys:
        edits.assert_same_offsets(expected.pos, expected.offsets, got.pos, got.offsets)
    if bones:
        assert [b.name for b in again.arm.data.bones] == bones
        assert_same_weights(expected, got)
    assert [int(o["urho_lod"]) for o in again.lods] == levels
    if lods is not None:  # the other LODs, unedited, come back as they were
        got_lods = _state(bpy, again.lods, bones, evaluate=False)
        edits.assert_same_surface((lods.pos, lods.tris), (got_lods.pos, got_lods.tris))
    outcome = "warned" if (model, edit) in WARNED else "pass"
    return SimpleNamespace(outcome=outcome, text="; ".join(messages))


def _librw_reads(path: Path) -> None:
    from rigport.tests.clients import run_rwinfo

    try:
        run_rwinfo(path)
    except pytest.skip.Exception:
        pass  # librw's sources or a compiler are missing: the codec's reading stands


CASES = [
    pytest.param(
        model,
        edit,
        id=f"{model}-{edit}",
        marks=[pytest.mark.xfail(reason=XFAIL[model, edit], strict=True)]
        if (model, edit) in XFAIL
        else [],
    )
    for model in MODELS
    for edit in EDITS
]


@pytest.mark.parametrize(("model", "edit"), CASES)
def test_edit_matrix(blank_blend, tmp_path, said, record_property, model, edit):
    done = run_case(blank_blend, tmp_path, said, model, edit)
    record_property("outcome", done.outcome)  # for tools/edit_matrix_table.py
    if (model, edit) in REFUSED:
        assert done.outcome == "refused"
        assert REFUSED[model, edit] in done.text
    else:
        assert done.outcome in ("pass", "warned"), done.text


@pytest.mark.parametrize("edit", ["extrude", "dissolve-ngon", "join-new-mesh"])
def test_dragonff_reads_the_edited_ped(blank_blend, tmp_path, said, edit):
    """DragonFF builds the edited ped: as many faces as our own import of the file."""
    from rigport.tests.clients import dragonff_import

    bpy = blank_blend
    run_case(bpy, tmp_path, said, "renderware-ped", edit)
    ours = sum(len(o.data.polygons) for o in bpy.data.objects if o.type == "MESH")
    theirs = dragonff_import(tmp_path / "out.dff")
    faces = sum(o["faces"] for o in theirs["objects"].values() if o["type"] == "MESH")
    assert faces == ours
