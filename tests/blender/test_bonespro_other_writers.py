"""BonesPro text from another writer through Blender: an unedited round trip gives
the file back byte for byte (its number formatting, ``-0.000000``, exponents,
comments, tabs, CRLF); an edit is written in RigPort's formatting and nothing
else changes. The texts are built by ``samples.other_writer`` and
``samples.decorate`` from RigPort's own sample rig and animations."""

from __future__ import annotations

import numpy as np
import pytest

from rigport.io_formats.bonespro import animation as A
from rigport.io_formats.bonespro import structure
from rigport.io_formats.bonespro.text import split_text
from rigport.samples import bonespro as samples

STYLES = sorted(samples.OTHER_FORMATS)


def _rig() -> structure.Structure:
    s = samples.structure(n_vertices=30)
    s.positions[0, 2] = -1e-9  # "-0.000000" in C's %f
    return s


def _other(data: bytes, style: str, seed: int = 1) -> bytes:
    return samples.decorate(samples.other_writer(data, style), seed)


def _import_structure(bpy, tmp_path, style: str) -> bytes:
    data = _other(structure.write(_rig()), style)
    path = tmp_path / "rig.txt"
    path.write_bytes(data)
    assert bpy.ops.import_scene.bonespro_structure(filepath=str(path)) == {"FINISHED"}
    return data


def _changed_tokens(a: bytes, b: bytes) -> list[int]:
    ta, ga = split_text(a.decode())
    tb, gb = split_text(b.decode())
    assert len(ta) == len(tb) and ga == gb  # the same whitespace and comments
    return [i for i, (x, y) in enumerate(zip(ta, tb, strict=True)) if x != y]


@pytest.mark.parametrize("style", STYLES)
def test_structure_comes_back_byte_for_byte(blank_blend, tmp_path, style) -> None:
    bpy = blank_blend
    data = _import_structure(bpy, tmp_path, style)
    assert style != "fixed" or b"-0.000000" in data
    out = tmp_path / "out.txt"
    assert bpy.ops.export_scene.bonespro_structure(filepath=str(out)) == {"FINISHED"}
    assert out.read_bytes() == data


@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize(
    "system,representation",
    [(A.ABSOLUTE, A.MATRIX), (A.RELATIVE, A.EULER)],
)
def test_bones_animation_comes_back_byte_for_byte(
    blank_blend, tmp_path, style, system, representation
) -> None:
    bpy = blank_blend
    _import_structure(bpy, tmp_path, style)
    a = samples.animation(_rig(), A.BONES, system, representation, n_frames=5)
    data = _other(A.write(a), style, 2)
    path = tmp_path / "anim.txt"
    path.write_bytes(data)
    assert bpy.ops.import_anim.bonespro_anim(filepath=str(path)) == {"FINISHED"}
    out = tmp_path / "out.txt"
    assert bpy.ops.export_anim.bonespro_anim(filepath=str(out)) == {"FINISHED"}
    assert out.read_bytes() == data


@pytest.mark.parametrize("style", STYLES)
def test_mesh_animation_comes_back_byte_for_byte(blank_blend, tmp_path, style) -> None:
    bpy = blank_blend
    _import_structure(bpy, tmp_path, style)
    a = samples.animation(_rig(), A.MESH_ABSOLUTE, n_frames=3)
    data = _other(A.write(a), style, 3)
    path = tmp_path / "mesh.txt"
    path.write_bytes(data)
    assert bpy.ops.import_anim.bonespro_anim(filepath=str(path)) == {"FINISHED"}
    obj = next(o for o in bpy.data.objects if o.name.endswith("mesh animation"))
    bpy.context.view_layer.objects.active = obj
    out = tmp_path / "out.txt"
    assert bpy.ops.export_anim.bonespro_anim(filepath=str(out)) == {"FINISHED"}
    assert out.read_bytes() == data


def test_an_edited_vertex_is_written_our_way_and_the_rest_unchanged(blank_blend, tmp_path) -> None:
    bpy = blank_blend
    data = _import_structure(bpy, tmp_path, "fixed")
    mesh = next(o for o in bpy.data.objects if o.type == "MESH")
    mesh.data.vertices[7].co.x += 0.5
    out = tmp_path / "out.txt"
    assert bpy.ops.export_scene.bonespro_structure(filepath=str(out)) == {"FINISHED"}
    changed = _changed_tokens(data, out.read_bytes())
    assert len(changed) == 1
    got = structure.read(out.read_bytes())
    want = structure.read(data)
    token = split_text(out.read_bytes().decode())[0][changed[0]]
    assert token == f"{got.positions[7, 0]:.9g}"
    assert abs(got.positions[7, 0] - want.positions[7, 0] - 0.5) < 1e-5


def test_an_edited_key_is_written_our_way_and_the_rest_unchanged(blank_blend, tmp_path) -> None:
    """A leaf bone's location at one frame: only that frame's values for it change."""
    bpy = blank_blend
    _import_structure(bpy, tmp_path, "exponent")
    a = samples.animation(_rig(), A.BONES, A.ABSOLUTE, A.MATRIX, n_frames=5)
    data = _other(A.write(a), "exponent", 2)
    path = tmp_path / "anim.txt"
    path.write_bytes(data)
    assert bpy.ops.import_anim.bonespro_anim(filepath=str(path)) == {"FINISHED"}
    arm = next(o for o in bpy.data.objects if o.type == "ARMATURE")
    from rigport.operators.blender import compat

    leaf = "Bip01 Spine"
    fc = next(
        f
        for f in compat.fcurves(arm.animation_data.action)
        if f.data_path == f'pose.bones["{leaf}"].location' and f.array_index == 0
    )
    key = fc.keyframe_points[2]
    key.co.y += 0.25
    key.handle_left.y += 0.25
    key.handle_right.y += 0.25
    fc.update()
    out = tmp_path / "out.txt"
    assert bpy.ops.export_anim.bonespro_anim(filepath=str(out)) == {"FINISHED"}
    changed = _changed_tokens(data, out.read_bytes())
    assert changed
    # after the header (3 counts, 5 one-word settings, 3 interval numbers) each frame
    # has per bone a box and two matrices: the edit is frame 2 of bone 2 alone
    header, per_bone, bones = 3 + 5 + 3, 3 + 12 + 12, a.bone_count
    at = {((i - header) // per_bone // bones, (i - header) // per_bone % bones) for i in changed}
    assert at == {(2, 2)}
    got = A.read(out.read_bytes())
    assert abs(got.bone_values[2, 2, 9] - a.bone_values[2, 2, 9]) > 0.1  # T moved


def test_other_settings_write_our_text_without_a_warning(blank_blend, tmp_path) -> None:
    """Euler angles asked of a matrix file: another file, the kept text does not apply."""
    bpy = blank_blend
    _import_structure(bpy, tmp_path, "fixed")
    a = samples.animation(_rig(), A.BONES, A.ABSOLUTE, A.MATRIX, n_frames=3)
    path = tmp_path / "anim.txt"
    path.write_bytes(_other(A.write(a), "fixed", 2))
    assert bpy.ops.import_anim.bonespro_anim(filepath=str(path)) == {"FINISHED"}
    from rigport.operators.bonespro.exporter import AnimationExportOptions, export_animation

    out = tmp_path / "euler.txt"
    options = AnimationExportOptions(representation="EULER")
    done = export_animation(bpy.context, str(out), options)
    assert not any("kept" in w or "formatting" in w for w in done.warnings + done.infos)
    data = out.read_bytes()
    assert A.read(data).representation == A.EULER
    assert A.write(A.read(data)) == data and b"//" not in data


@pytest.mark.parametrize("style", STYLES)
def test_batch_roundtrip_gives_the_structure_back(tmp_path, style) -> None:
    from rigport.tests.support import run_batch

    src = tmp_path / "rig.txt"
    src.write_bytes(_other(structure.write(_rig()), style))
    out = tmp_path / "out.txt"
    res = run_batch("roundtrip", src, out, "--jobs", "1")
    assert res.returncode == 0, res.stdout + res.stderr
    assert out.read_bytes() == src.read_bytes()


# ------------------------------------------------------------------ RigPort's own text
# Our writer's samples hold float64 values ("-1.808647", matrices composed in float64):
# Blender keeps float32, so the import keeps the text and the export gives it back.
OWN_MODES = [
    (A.BONES, A.ABSOLUTE, A.MATRIX),
    (A.BONES, A.RELATIVE, A.EULER),
    (A.MESH_ABSOLUTE, A.ABSOLUTE, A.MATRIX),
    (A.MESH_BONES, A.ABSOLUTE, A.MATRIX),
]


def _own_rig() -> structure.Structure:
    return samples.structure(n_vertices=32, seed=3)


def _own_import(bpy, tmp_path, data: bytes, name: str, op) -> None:
    path = tmp_path / name
    path.write_bytes(data)
    assert op(filepath=str(path)) == {"FINISHED"}


def _export_animation(bpy, out) -> bytes:
    mesh_anim = [o for o in bpy.data.objects if o.name.endswith("mesh animation")]
    if mesh_anim:
        bpy.context.view_layer.objects.active = mesh_anim[0]
    else:
        bpy.context.view_layer.objects.active = next(
            o for o in bpy.data.objects if o.type == "ARMATURE"
        )
    assert bpy.ops.export_anim.bonespro_anim(filepath=str(out)) == {"FINISHED"}
    return out.read_bytes()


def test_our_structure_comes_back_byte_for_byte(blank_blend, tmp_path) -> None:
    bpy = blank_blend
    data = structure.write(_own_rig())
    assert structure.foreign_text(structure.read(data)) == data  # not float32-exact
    _own_import(bpy, tmp_path, data, "rig.txt", bpy.ops.import_scene.bonespro_structure)
    out = tmp_path / "out.txt"
    assert bpy.ops.export_scene.bonespro_structure(filepath=str(out)) == {"FINISHED"}
    assert out.read_bytes() == data


@pytest.mark.parametrize("mode,system,representation", OWN_MODES)
def test_our_animation_comes_back_byte_for_byte(
    blank_blend, tmp_path, mode, system, representation
) -> None:
    bpy = blank_blend
    rig = _own_rig()
    _own_import(
        bpy, tmp_path, structure.write(rig), "rig.txt", bpy.ops.import_scene.bonespro_structure
    )
    if mode == A.MESH_BONES:  # vertices in the frames of the bones: their pose first
        bones = A.write(samples.animation(rig))
        _own_import(bpy, tmp_path, bones, "pose.txt", bpy.ops.import_anim.bonespro_anim)
    data = A.write(samples.animation(rig, mode, system, representation))
    _own_import(bpy, tmp_path, data, "anim.txt", bpy.ops.import_anim.bonespro_anim)
    assert _export_animation(bpy, tmp_path / "out.txt") == data


def test_an_edited_vertex_of_our_text_is_written(blank_blend, tmp_path) -> None:
    bpy = blank_blend
    data = structure.write(_own_rig())
    _own_import(bpy, tmp_path, data, "rig.txt", bpy.ops.import_scene.bonespro_structure)
    mesh = next(o for o in bpy.data.objects if o.type == "MESH")
    mesh.data.vertices[5].co.y -= 0.25
    out = tmp_path / "out.txt"
    assert bpy.ops.export_scene.bonespro_structure(filepath=str(out)) == {"FINISHED"}
    assert len(_changed_tokens(data, out.read_bytes())) == 1
    got, want = structure.read(out.read_bytes()), structure.read(data)
    assert abs(got.positions[5, 1] - want.positions[5, 1] + 0.25) < 1e-5
    others = np.arange(len(want.positions)) != 5
    assert np.array_equal(got.positions[others], want.positions[others])


@pytest.mark.parametrize("which", ["rig.txt", "rig_anim.txt"])
def test_batch_roundtrip_gives_our_files_back(tmp_path, which) -> None:
    from rigport.tests.support import run_batch

    rig = _own_rig()
    (tmp_path / "rig.txt").write_bytes(structure.write(rig))
    (tmp_path / "rig_anim.txt").write_bytes(A.write(samples.animation(rig)))
    src = tmp_path / which
    out = tmp_path / f"out_{which}"
    model = ("--model", str(tmp_path / "rig.txt")) if which != "rig.txt" else ()
    res = run_batch("roundtrip", src, out, "--jobs", "1", *model)
    assert res.returncode == 0, res.stdout + res.stderr
    assert out.read_bytes() == src.read_bytes()


@pytest.mark.parametrize("mode,system,representation", OWN_MODES)
def test_float32_animation_comes_back_byte_for_byte(
    blank_blend, tmp_path, mode, system, representation
) -> None:
    """Values Blender wrote (float32) still move through the pose: the text is kept."""
    bpy = blank_blend
    rig = _own_rig()
    _own_import(
        bpy, tmp_path, structure.write(rig), "rig.txt", bpy.ops.import_scene.bonespro_structure
    )
    if mode == A.MESH_BONES:
        bones = A.write(samples.animation(rig))
        _own_import(bpy, tmp_path, bones, "pose.txt", bpy.ops.import_anim.bonespro_anim)
    a = samples.animation(rig, mode, system, representation)
    for k in ("boxes", "bone_values", "node_values", "positions", "block_positions"):
        if (v := getattr(a, k)) is not None:
            setattr(a, k, v.astype(np.float32).astype(np.float64))
    data = A.write(a)
    kept = A.foreign_text(A.read(data))
    assert kept == (None if mode == A.MESH_ABSOLUTE else data)
    _own_import(bpy, tmp_path, data, "anim.txt", bpy.ops.import_anim.bonespro_anim)
    assert _export_animation(bpy, tmp_path / "out.txt") == data
