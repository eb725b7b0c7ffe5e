"""Extension chunks: plugin data attached to a section, known plugins parsed.

An extension holds any number of plugin chunks. The ones a section knows are
parsed (frame names, HAnim, Bin Mesh, Skin); every other one stays a
:class:`RawChunk`. Items keep their order, so a rewrite puts each plugin back
where it was.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..codec import Reader
from .chunks import EXTENSION, RawChunk, chunk_bytes, expect_chunk, read_chunk

Parser = Callable[[Reader, int], Any]


@dataclass
class Extension:
    stamp: int
    items: list[Any] = field(default_factory=list)

    def find(self, kind: type) -> Any | None:
        return next((i for i in self.items if isinstance(i, kind)), None)

    def to_bytes(self) -> bytes:
        return chunk_bytes(EXTENSION, self.stamp, b"".join(i.to_bytes() for i in self.items))


def read_extension(r: Reader, what: str, parsers: dict[int, Parser] | None = None) -> Extension:
    """The next chunk as an extension; ``parsers`` maps plugin types to readers
    called with the plugin's payload reader and stamp."""
    stamp, sub = expect_chunk(r, EXTENSION, f"{what} extension")
    return extension_from(sub, stamp, what, parsers)


def extension_from(
    sub: Reader, stamp: int, what: str, parsers: dict[int, Parser] | None = None
) -> Extension:
    """An extension from its payload reader (the header already read)."""
    ext = Extension(stamp)
    while not sub.at_end():
        kind, pstamp, payload = read_chunk(sub, f"{what} extension")
        parse = (parsers or {}).get(kind)
        if parse is None:
            ext.items.append(RawChunk(kind, pstamp, payload.rest()))
        else:
            ext.items.append(parse(payload, pstamp))
    return ext
