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
