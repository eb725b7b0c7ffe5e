"""One message type and one result type for every import and export.

An importer or exporter returns a :class:`Result`: what it made (objects, the
armature, actions), the :class:`Message` lines it has for the artist, each with
a level, and the ``undo`` callables that take an import back. Operators turn a
result into Blender reports (:func:`report`), ``batch.py`` into a line and
JSON (:meth:`Result.line`, :attr:`Result.warnings`). Nobody parses a message's
text to learn its level.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from ..io_formats.codec.errors import counted, noun_for

__all__ = ["Level", "Message", "Result", "counted", "noun_for", "report"]


class Level(enum.Enum):
    """How much a message matters; the values are Blender's report types."""

    INFO = "INFO"
    WARNING = "WARNING"
    ERROR = "ERROR"


@dataclass(frozen=True)
class Message:
    level: Level
    text: str


@dataclass
class Result:
    """What one import or export did.

    ``summary`` is the one line batch prints for it (for an export, what was
    written); ``messages`` every line for the artist, in order; ``objects``,
    ``armature`` and ``actions`` what an import made; ``undo`` what takes an
    import back (called in reverse order); ``counts`` extra numbers for the
    batch report (keys, bones ...)."""

    summary: str = ""
    messages: list[Message] = field(default_factory=list)
    objects: list[Any] = field(default_factory=list)
    armature: Any = None
    actions: list[Any] = field(default_factory=list)
    undo: list[Callable[[], None]] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)

    def info(self, text: str) -> Result:
        self.messages.append(Message(Level.INFO, text))
        return self

    def warn(self, *texts: str) -> Result:
        """Add each of ``texts`` (empty ones skipped) as a warning."""
        self.messages.extend(Message(Level.WARNING, t) for t in texts if t)
        return self

    def warn_all(self, texts: Iterable[str]) -> Result:
        return self.warn(*texts)

    @property
    def warnings(self) -> list[str]:
        return [m.text for m in self.messages if m.level is Level.WARNING]

    @property
    def infos(self) -> list[str]:
        return [m.text for m in self.messages if m.level is Level.INFO]

    def merge(self, other: Result) -> Result:
        """Take ``other``'s messages, made data and undo after this one's."""
        self.messages.extend(other.messages)
        self.objects.extend(other.objects)
        self.actions.extend(other.actions)
        self.undo.extend(other.undo)
        if other.armature is not None:
            self.armature = other.armature
        for key, value in other.counts.items():
            self.counts[key] = self.counts.get(key, 0) + value
        return self

    def take_back(self) -> None:
        """Call every ``undo`` in reverse order (a failed multi-file import)."""
        for undo in reversed(self.undo):
            undo()
        self.undo.clear()

    def line(self) -> str:
        """batch's line: the summary, then each warning after ``; warning: ``."""
        return self.summary + "".join(f"; warning: {w}" for w in self.warnings)


def report(op, result: Result, prefix: str = "", name: Callable[[str], str] = str) -> None:
    """Report every message of ``result`` on the operator ``op``, each after
    ``prefix`` (a file's name when there are several); ``name`` makes a text
    Blender can show (``guard.blender_name``)."""
    for message in result.messages:
        op.report({message.level.value}, name(prefix + message.text))
