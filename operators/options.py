"""Options dataclasses built from an operator's properties or from batch's arguments.

Each import and export has one frozen dataclass of the options it needs (its
fields named as the operator's properties). The operator builds it with
:func:`from_operator`, ``batch.py`` with :func:`from_mapping`; the logic that
takes it never sees an operator. Fields a source does not have keep their
defaults.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from typing import Any, TypeVar

T = TypeVar("T")


def from_operator(cls: type[T], op: Any, **overrides: Any) -> T:
    """``cls`` from the properties of ``op`` that match its fields, then ``overrides``."""
    values = {f.name: getattr(op, f.name) for f in fields(cls) if hasattr(op, f.name)}
    values.update(overrides)
    return cls(**values)


def from_mapping(cls: type[T], mapping: Mapping[str, Any], **overrides: Any) -> T:
    """``cls`` from the keys of ``mapping`` that match its fields (batch's
    command line as a dict), then ``overrides``; None values keep the default."""
    names = {f.name for f in fields(cls)}
    values = {k: v for k, v in mapping.items() if k in names and v is not None}
    values.update(overrides)
    return cls(**values)
