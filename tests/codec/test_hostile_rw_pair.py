"""A version 1 IMG is two files written as one (issue 26, finding 12): when the
``.dir`` cannot be written, the ``.img`` is not replaced either; when its rename
fails after the ``.img``'s, the ``.img`` gets its old content back. No
temporary file is left behind. The archives come from our own writers."""

from __future__ import annotations

import os

import pytest

from rigport.io_formats.codec import FormatError, files
from rigport.io_formats.renderware import dff, img
from rigport.samples import renderware as samples
from rigport.samples import renderware_txd as txd_samples


def _archive(extra: bytes = b"") -> img.ImgArchive:
    a = img.new_archive(1)
    a.put("ped.dff", dff.write(samples.skinned_ped("SA")) + extra)
    a.put("ped.txd", txd_samples.dictionary([("ped_skin", "c8888", 8, 8)]))
    return a


def _saved(tmp_path):
    path = tmp_path / "ped.img"
    img.save_archive(str(path), _archive())
    return path, path.read_bytes(), (tmp_path / "ped.dir").read_bytes()


def test_pair_is_written_and_read_back(tmp_path):
    path, body, directory = _saved(tmp_path)
    a = img.open_archive(str(path))
    assert [e.name for e in a.entries] == ["ped.dff", "ped.txd"]
    assert sorted(os.listdir(tmp_path)) == ["ped.dir", "ped.img"]


def test_unwritable_dir_leaves_the_img_as_it_was(tmp_path):
    path = tmp_path / "ped.img"
    path.write_bytes(b"the old archive")
    (tmp_path / "ped.dir").mkdir()  # a folder where the .dir goes: it cannot be replaced
    with pytest.raises(FormatError, match="IMG directory") as err:
        img.save_archive(str(path), _archive())
    assert err.value.path.endswith("ped.dir")
    assert path.read_bytes() == b"the old archive"
    assert sorted(os.listdir(tmp_path)) == ["ped.dir", "ped.img"]


def test_failed_second_rename_restores_the_first(tmp_path, monkeypatch):
    path, body, directory = _saved(tmp_path)
    real = os.replace

    def refuse_dir(src, dst):
        if str(dst).endswith(".dir"):
            raise PermissionError(13, "Permission denied")
        return real(src, dst)

    monkeypatch.setattr(files.os, "replace", refuse_dir)
    with pytest.raises(FormatError, match="Permission denied"):
        img.save_archive(str(path), _archive(extra=b"\0" * 4096))
    monkeypatch.undo()
    assert path.read_bytes() == body
    assert (tmp_path / "ped.dir").read_bytes() == directory
    assert sorted(os.listdir(tmp_path)) == ["ped.dir", "ped.img"]


def test_failed_second_rename_removes_a_new_first(tmp_path, monkeypatch):
    real = os.replace

    def refuse_dir(src, dst):
        if str(dst).endswith(".dir"):
            raise PermissionError(13, "Permission denied")
        return real(src, dst)

    monkeypatch.setattr(files.os, "replace", refuse_dir)
    with pytest.raises(FormatError):
        img.save_archive(str(tmp_path / "ped.img"), _archive())
    assert os.listdir(tmp_path) == []


def test_failing_second_writer_replaces_nothing(tmp_path):
    first, second = tmp_path / "a.img", tmp_path / "a.dir"
    first.write_bytes(b"old img")
    second.write_bytes(b"old dir")

    def broken() -> bytes:
        raise FormatError("writer failed midway")

    with pytest.raises(FormatError, match="midway"):
        files.write_atomic_files([(str(first), b"new img", "IMG"), (str(second), broken, "DIR")])
    assert first.read_bytes() == b"old img" and second.read_bytes() == b"old dir"
    assert sorted(os.listdir(tmp_path)) == ["a.dir", "a.img"]


def test_pair_keeps_modes(tmp_path):
    path, _, _ = _saved(tmp_path)
    os.chmod(path, 0o640)
    os.chmod(tmp_path / "ped.dir", 0o604)
    img.save_archive(str(path), _archive(extra=b"\1"))
    assert os.stat(path).st_mode & 0o777 == 0o640
    assert os.stat(tmp_path / "ped.dir").st_mode & 0o777 == 0o604
    assert sorted(os.listdir(tmp_path)) == ["ped.dir", "ped.img"]
