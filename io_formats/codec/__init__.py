"""Shared byte-level toolkit for every RigPort format."""

from .errors import FormatError
from .files import read_file, write_atomic
from .reader import FileReader, Reader
from .writer import Writer

__all__ = ["FileReader", "FormatError", "Reader", "Writer", "read_file", "write_atomic"]
