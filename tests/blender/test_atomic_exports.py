"""Every exporter writes atomically: when the format's writer fails midway, the old
file is untouched and no temporary file is left beside it."""

from __future__ import annotations

import os

import pytest

from rigport.io_formats.codec import FormatError


def _urho_model(bpy, tmp):
    from rigport.io_formats.urho3d import ani, mdl
    from rigport.samples import urho3d as samples

    model = samples.skinned_model(n_bones=4, grid=(8, 6))
    (tmp / "src.mdl").write_bytes(mdl.write(model))
    (tmp / "src.ani").write_bytes(ani.write(samples.walk_animation(model, 5)))
    bpy.ops.import_scene.urho3d_mdl(filepath=str(tmp / "src.mdl"))
    bpy.ops.import_anim.urho3d_ani(filepath=str(tmp / "src.ani"))


def _unigine(bpy, tmp):
    from rigport.io_formats.unigine import mesh
    from rigport.samples import unigine as samples

    (tmp / "src.mesh").write_bytes(mesh.write(samples.skinned_mesh(rings=4, segments=5)))
    bpy.ops.import_scene.unigine_mesh(filepath=str(tmp / "src.mesh"))
    arm = next(o for o in bpy.data.objects if o.type == "ARMATURE")
    bpy.context.view_layer.objects.active = arm


def _dff(bpy, tmp):
    from rigport.io_formats.renderware import dff
    from rigport.samples import renderware as samples

    (tmp / "src.dff").write_bytes(dff.write(samples.static_clump(atomics=1)))
    bpy.ops.import_scene.rw_dff(filepath=str(tmp / "src.dff"))


def _mrtk(bpy, tmp):
    from rigport.io_formats.mrtk import recording
    from rigport.samples import mrtk as samples

    (tmp / "src.bin").write_bytes(recording.write(samples.sample_recording(keys=4)))
    bpy.ops.import_anim.mrtk_input(filepath=str(tmp / "src.bin"))


def _bonespro(bpy, tmp):
    from rigport.io_formats.bonespro import animation, structure
    from rigport.samples import bonespro as samples

    s = samples.structure()
    (tmp / "rig.txt").write_bytes(structure.write(s))
    (tmp / "anim.txt").write_bytes(animation.write(samples.animation(s)))
    bpy.ops.import_scene.bonespro_structure(filepath=str(tmp / "rig.txt"))
    bpy.ops.import_anim.bonespro_anim(filepath=str(tmp / "anim.txt"))
    arm = next(o for o in bpy.data.objects if o.type == "ARMATURE")
    bpy.context.view_layer.objects.active = arm


#: exporter operator, scene set-up, module whose ``write`` fails, file extension
CASES = {
    "urho3d_mdl": ("export_scene.urho3d_mdl", _urho_model, "urho3d.mdl", ".mdl"),
    "urho3d_ani": ("export_anim.urho3d_ani", _urho_model, "urho3d.ani", ".ani"),
    "unigine_mesh": ("export_scene.unigine_mesh", _unigine, "unigine.mesh", ".mesh"),
    "unigine_anim": ("export_anim.unigine_anim", _unigine, "unigine.anim", ".anim"),
    "rw_dff": ("export_scene.rw_dff", _dff, "renderware.dff", ".dff"),
    "mrtk_input": ("export_anim.mrtk_input", _mrtk, "mrtk.recording", ".bin"),
    "bonespro_structure": (
        "export_scene.bonespro_structure",
        _bonespro,
        "bonespro.structure",
        ".txt",
    ),
    "bonespro_anim": ("export_anim.bonespro_anim", _bonespro, "bonespro.animation", ".txt"),
}


def _operator(bpy, idname: str):
    group, name = idname.split(".")
    return getattr(getattr(bpy.ops, group), name)


def _case_target(bpy, tmp_path, case: str, old: bytes):
    """Build ``case``'s scene and an earlier export of it, ``old``, in a folder of
    its own: ``(operator, writer module, extension, the folder, the old file)``."""
    idname, setup, module_path, ext = CASES[case]
    src = tmp_path / "src"
    src.mkdir()
    setup(bpy, src)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    target = out_dir / f"target{ext}"
    target.write_bytes(old)
    return _operator(bpy, idname), module_path, ext, out_dir, target


def _failing(monkeypatch, module_path: str, error: Exception):
    """Make ``rigport.io_formats.<module_path>``'s writer (``write_parts`` where the
    exporter writes chunks, ``write_kept`` where it writes a file's kept text, else
    ``write``) produce its bytes, then fail."""
    import importlib

    module = importlib.import_module(f"rigport.io_formats.{module_path}")
    name = next(n for n in ("write_parts", "write_kept", "write") if hasattr(module, n))
    real = getattr(module, name)
    calls = []

    def write(*args, **kwargs):
        calls.append(real(*args, **kwargs))  # the whole file made: fail at the last moment
        raise error

    monkeypatch.setattr(module, name, write)
    return calls


@pytest.mark.parametrize("case", sorted(CASES))
def test_failed_export_keeps_the_old_file(blank_blend, tmp_path, monkeypatch, case):
    old = b"the artist's previous export\n" * 3
    op, module_path, ext, out_dir, target = _case_target(blank_blend, tmp_path, case, old)
    # the export works when the writer does
    assert op(filepath=str(out_dir / f"ok{ext}")) == {"FINISHED"}
    (out_dir / f"ok{ext}").unlink()
    calls = _failing(monkeypatch, module_path, FormatError("simulated failure while writing"))
    with pytest.raises(RuntimeError, match="simulated failure"):
        op(filepath=str(target))
    assert calls, "the format's writer was not used"
    assert target.read_bytes() == old
    assert sorted(os.listdir(out_dir)) == [target.name]


def test_writer_crash_leaves_no_temporary_file(blank_blend, tmp_path, monkeypatch):
    """Any exception, not only a FormatError: the temporary file is removed."""
    bpy = blank_blend
    _urho_model(bpy, tmp_path)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    target = out_dir / "target.mdl"
    target.write_bytes(b"old")
    _failing(monkeypatch, "urho3d.mdl", MemoryError())
    with pytest.raises((RuntimeError, MemoryError)):
        bpy.ops.export_scene.urho3d_mdl(filepath=str(target))
    assert target.read_bytes() == b"old"
    assert os.listdir(out_dir) == ["target.mdl"]


def test_failed_export_into_package_keeps_the_package(blank_blend, tmp_path, monkeypatch):
    """Writing a model into an existing .pak: the package writer fails, the package
    stays as it was."""
    bpy = blank_blend
    from rigport.io_formats.urho3d import package

    _urho_model(bpy, tmp_path)
    pkg = package.new_package()
    pkg.put("Models/other.mdl", b"not a model, just bytes")
    pak = tmp_path / "Data.pak"
    old = package.write(pkg)
    pak.write_bytes(old)
    _failing(monkeypatch, "urho3d.package", FormatError("simulated failure"))
    with pytest.raises(RuntimeError, match="simulated failure"):
        bpy.ops.export_scene.urho3d_mdl(
            filepath=str(tmp_path / "x.mdl"), package_file=str(pak), package_entry="Models/x.mdl"
        )
    assert pak.read_bytes() == old
    assert not [n for n in os.listdir(tmp_path) if n.endswith(".tmp")]
    monkeypatch.undo()
    assert bpy.ops.export_scene.urho3d_mdl(
        filepath=str(tmp_path / "x.mdl"), package_file=str(pak), package_entry="Models/x.mdl"
    ) == {"FINISHED"}
    assert package.read(pak.read_bytes()).find("Models/x.mdl") is not None


@pytest.mark.parametrize("case", sorted(CASES))
def test_disk_full_midway_keeps_the_old_file(blank_blend, tmp_path, monkeypatch, case):
    """The bytes are out but the disk fills before they are safe: a sentence, the old
    file as it was, no temporary file (a plain ``open(path, "wb")`` would have
    replaced the old file already)."""
    import errno

    op, _, _, out_dir, target = _case_target(blank_blend, tmp_path, case, b"old")

    def full(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", full)
    try:
        result = op(filepath=str(target))
    except RuntimeError as err:
        assert "No space left on device" in str(err) and "Traceback" not in str(err)
    else:
        pytest.fail(f"the export reported {result} on a full disk")
    assert target.read_bytes() == b"old"
    assert sorted(os.listdir(out_dir)) == [target.name]


@pytest.mark.parametrize("case", sorted(CASES))
def test_writer_bug_is_a_sentence_naming_the_file(blank_blend, tmp_path, monkeypatch, case):
    """A writer that raises anything but a FormatError: one error sentence that names
    the file and says it is unchanged (the traceback goes to the console), never a
    raw traceback; the old file as it was, no temporary file."""
    op, module_path, _, out_dir, target = _case_target(blank_blend, tmp_path, case, b"old")
    _failing(monkeypatch, module_path, ValueError("simulated bug"))
    with pytest.raises(RuntimeError) as raised:
        op(filepath=str(target))
    message = str(raised.value)
    assert "Traceback" not in message
    assert str(target) in message and "could not write this file" in message
    assert "ValueError: simulated bug" in message and "left as it was" in message
    assert target.read_bytes() == b"old"
    assert sorted(os.listdir(out_dir)) == [target.name]


def test_interrupted_export_keeps_the_old_file(blank_blend, tmp_path, monkeypatch):
    """Ctrl+C while the file is written: the interrupt is not swallowed as an error
    sentence, and the old file stays whole."""
    op, module_path, _, out_dir, target = _case_target(blank_blend, tmp_path, "urho3d_mdl", b"old")
    _failing(monkeypatch, module_path, KeyboardInterrupt())
    with pytest.raises((RuntimeError, KeyboardInterrupt)) as raised:
        op(filepath=str(target))
    assert "could not write this file" not in str(raised.value)
    assert target.read_bytes() == b"old"
    assert sorted(os.listdir(out_dir)) == [target.name]
