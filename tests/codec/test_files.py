"""Atomic writes: a failed write leaves the old file as it was and no temporary file."""

from __future__ import annotations

import os

import pytest

from rigport.io_formats.codec import FormatError, read_file, write_atomic


def test_write_replaces_and_keeps_mode(tmp_path):
    target = tmp_path / "a.bin"
    target.write_bytes(b"old")
    os.chmod(target, 0o640)
    write_atomic(str(target), b"new")
    assert target.read_bytes() == b"new"
    assert os.stat(target).st_mode & 0o777 == 0o640
    assert os.listdir(tmp_path) == ["a.bin"]


def test_failing_writer_leaves_old_file(tmp_path):
    target = tmp_path / "a.bin"
    target.write_bytes(b"old")

    def broken() -> bytes:
        raise FormatError("writer failed midway")

    with pytest.raises(FormatError, match="midway"):
        write_atomic(str(target), broken)
    assert target.read_bytes() == b"old"
    assert os.listdir(tmp_path) == ["a.bin"]


def test_chunks_are_written_in_order(tmp_path):
    """A list of chunks (bytes and memoryviews of arrays) is the file they make
    joined; a function may return one too."""
    import numpy as np

    target = tmp_path / "a.bin"
    keys = np.arange(6, dtype="<f4")
    chunks = [b"head", memoryview(keys).cast("B"), bytearray(b"tail")]
    write_atomic(str(target), chunks)
    assert target.read_bytes() == b"head" + keys.tobytes() + b"tail"
    write_atomic(str(target), lambda: (b"x", b"y"))
    assert target.read_bytes() == b"xy"
    assert os.listdir(tmp_path) == ["a.bin"]


def test_missing_folder_is_a_sentence(tmp_path):
    with pytest.raises(FormatError, match="does not exist") as info:
        write_atomic(str(tmp_path / "nope" / "a.bin"), b"x")
    assert "a.bin" in str(info.value)
    with pytest.raises(FormatError, match="cannot read"):
        read_file(str(tmp_path / "missing.bin"))
