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


def singular_of(word: str) -> str:
    """The singular of a plural ``word`` (:func:`plural_of` backwards)."""
    lower = word.lower()
    for one, many in _IRREGULAR.items():
        if lower == many and one != many:
            return one
    if lower.endswith("ies"):
        return word[:-3] + "y"
    if lower.endswith(("ches", "shes", "sses", "xes", "zes")):
        return word[:-2]
    return word[:-1] if lower.endswith("s") and not lower.endswith("ss") else word


#: Words after a head noun made singular that agree with it.
_AGREE = {"are": "is", "were": "was", "have": "has", "their": "its", "them": "it"}


def counted_phrase(count: int, phrase: str) -> str:
    """A count and a plural noun phrase that fits it: for one, the phrase's head noun
    (its first plural word) made singular and the verbs after it agreeing:
    ``counted_phrase(1, "bones with a NaN rest")`` → "1 bone with a NaN rest",
    ``counted_phrase(1, "duplicate faces")`` →
    "1 duplicate face", ``counted_phrase(1, "bones that are their own parent")`` →
    "1 bone that is its own parent"."""
    if abs(int(count)) != 1:
        return f"{int(count)} {phrase}"
    words = phrase.split(" ")
    for i, word in enumerate(words):
        if word.isalpha() and word.lower().endswith("s") and singular_of(word) != word:
            words[i] = singular_of(word)
            words[i + 1 :] = [_AGREE.get(w, w) for w in words[i + 1 :]]
            break
    return f"{int(count)} {' '.join(words)}"
