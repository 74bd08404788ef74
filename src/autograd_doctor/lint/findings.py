"""The lint report model: a finding, its optional fix and the fix's edits.

Every output format (text, json, sarif, github, flake8) renders these objects,
so the formats never disagree.  Lines are 1-based; columns are 1-based
character columns (the AST's UTF-8 byte offsets are converted on the way in).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Edit:
    """Replace the text between two positions (1-based line, 1-based column)."""

    line: int
    column: int
    end_line: int
    end_column: int
    content: str

    def to_dict(self) -> dict:
        return {"content": self.content, "line": self.line, "column": self.column,
                "end_line": self.end_line, "end_column": self.end_column}


@dataclass(frozen=True)
class Fix:
    """A set of edits applied together.  ``safe`` fixes keep the program's meaning."""

    message: str
    edits: tuple[Edit, ...]
    safe: bool

    @property
    def applicability(self) -> str:
        return "safe" if self.safe else "unsafe"

    def to_dict(self) -> dict:
        return {"applicability": self.applicability, "message": self.message,
                "edits": [e.to_dict() for e in self.edits]}


@dataclass
class Finding:
    code: str
    message: str
    file: str
    line: int
    column: int
    end_line: int
    end_column: int
    fix: Fix | None = None
    # secondary sites: (line, column, end column on that line or 0, label)
    related: list[tuple[int, int, int, str]] = field(default_factory=list)

    def sort_key(self):
        return (self.file, self.line, self.column, self.code)

    def to_dict(self) -> dict:
        return {"code": self.code, "message": self.message, "file": self.file,
                "line": self.line, "column": self.column, "end_line": self.end_line,
                "end_column": self.end_column,
                "fix": self.fix.to_dict() if self.fix else None}


_LINE_END = re.compile(r"\r\n|\r|\n")
# What str.splitlines also splits on, and the tokenizer does not.
_OTHER_LINE_BREAKS = re.compile("[\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")


def _no_other_line_breaks(source: str) -> bool:
    """No character that str.splitlines splits on and the tokenizer does not. For ASCII text
    (almost every file) five text searches, each much faster than a regex trying every position."""
    if source.isascii():
        return not ("\x0b" in source or "\x0c" in source or "\x1c" in source or "\x1d" in source
                    or "\x1e" in source)
    return not _OTHER_LINE_BREAKS.search(source)


def split_lines(source: str) -> list[str]:
    """Split like the tokenizer (only \\n, \\r\\n, \\r end a line), keeping the ends.

    ``str.splitlines`` also splits on \\f, \\v, \\x1c and U+2028, which would
    shift every AST line number after such a character.
    """
    if _no_other_line_breaks(source):  # the usual case: the same split, in C
        return source.splitlines(keepends=True)
    lines, pos = [], 0
    for m in _LINE_END.finditer(source):
        lines.append(source[pos:m.end()])
        pos = m.end()
    if pos < len(source):
        lines.append(source[pos:])
    return lines


def line_numbers(source: str, positions) -> list[int]:
    """The line number (from 1; lines end at newlines) of each of ``positions``, in ascending
    order of position: the newlines between them counted, without a table of every line's start.

    >>> line_numbers("a\\nbc\\nd", [5, 0, 2])
    [1, 2, 3]
    """
    numbers, line, previous = [], 1, 0
    for position in sorted(positions):
        line += source.count("\n", previous, position)
        previous = position
        numbers.append(line)
    return numbers
