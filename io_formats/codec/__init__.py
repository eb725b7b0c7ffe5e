"""Shared byte-level toolkit for every RigPort format."""

from .errors import FormatError
from .reader import Reader
from .writer import Writer

__all__ = ["FormatError", "Reader", "Writer"]
