"""The one error type every codec raises for bad input."""

from __future__ import annotations


class FormatError(ValueError):
    """A file that does not follow its format: says where and what was expected."""

    def __init__(self, message: str, offset: int | None = None, path: str | None = None):
        self.message = message
        self.offset = offset
        self.path = path
        super().__init__(self._text())

    def _text(self) -> str:
        where = []
        if self.path:
            where.append(str(self.path))
        if self.offset is not None:
            where.append(f"offset {self.offset} (0x{self.offset:X})")
        return f"{': '.join(where)}: {self.message}" if where else self.message

    def with_path(self, path: str) -> FormatError:
        """Return the same error naming the file it came from."""
        self.path = str(path)
        self.args = (self._text(),)
        return self

    def __str__(self) -> str:
        return self._text()


# Plurals the s/es/ies rules get wrong, for the last word of a noun.
_IRREGULAR = {
    "vertex": "vertices",
    "index": "indices",
    "matrix": "matrices",
    "axis": "axes",
    "child": "children",
    "fps": "fps",
    "bytes": "bytes",
    "data": "data",
}


def plural_of(noun: str) -> str:
    """The plural of ``noun`` (its last word: "shape key" → "shape keys",
    "mesh" → "meshes", "geometry" → "geometries", "vertex" → "vertices")."""
    head, _, last = noun.rpartition(" ")
    lower = last.lower()
    if lower in _IRREGULAR:
        many = _IRREGULAR[lower]
        many = many.upper() if last.isupper() and len(last) > 1 else many
    elif last.isupper() and len(last) > 1:
        many = last + "s"  # LOD → LODs
    elif lower.endswith(("s", "x", "z", "ch", "sh")):
        many = last + "es"
    elif lower.endswith("y") and lower[-2:-1] not in ("a", "e", "i", "o", "u", ""):
        many = last[:-1] + "ies"
    else:
        many = last + "s"
    return f"{head} {many}" if head else many


def noun_for(count: int, noun: str, many: str | None = None) -> str:
    """``noun`` when ``count`` is one (or minus one), else its plural (``many``
    when the rules would get it wrong)."""
    return noun if abs(count) == 1 else (many or plural_of(noun))


def counted(count: int, noun: str, many: str | None = None, *, thousands: bool = False) -> str:
    """A count and the noun that fits it: ``counted(1, "key")`` → "1 key",
    ``counted(3, "mesh")`` → "3 meshes", ``counted(4642, "vertex",
    thousands=True)`` → "4,642 vertices". Every message that counts something
    builds its words here, so no message says "1 keys" or "2 meshs"."""
    number = f"{int(count):,}" if thousands else str(int(count))
    return f"{number} {noun_for(int(count), noun, many)}"
