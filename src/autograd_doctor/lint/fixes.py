"""Apply fixes as exact text edits, show them as diffs, write files atomically."""

from __future__ import annotations

import ast
import difflib
import os
import stat
import tempfile

from autograd_doctor.lint.findings import Finding, split_lines

MAX_ROUNDS = 10


def _offsets(source: str) -> list[int]:
    starts, pos = [0], 0
    for line in split_lines(source):
        pos += len(line)
        starts.append(pos)
    return starts


def apply_edits(source: str, findings: list[Finding], unsafe: bool) -> tuple[str, int]:
    """Apply the fixes of ``findings`` that do not overlap; returns (text, fixes applied)."""
    starts = _offsets(source)

    def offset(line, column):
        return starts[min(line - 1, len(starts) - 1)] + column - 1

    chosen, taken, applied = [], [], 0
    for f in findings:
        if f.fix is None or (not f.fix.safe and not unsafe):
            continue
        spans = [(offset(e.line, e.column), offset(e.end_line, e.end_column), e.content)
                 for e in f.fix.edits]
        if any(s < te and ts < e or s == ts for s, e, _ in spans for ts, te in taken):
            continue  # overlapping fixes wait for the next round
        taken += [(s, e) for s, e, _ in spans]
        chosen += spans
        applied += 1
    text = source
    for s, e, content in sorted(chosen, key=lambda t: (t[0], t[1]), reverse=True):
        text = text[:s] + content + text[e:]
    return text, applied


def fix_source(source: str, lint, unsafe: bool) -> tuple[str, int]:
    """Lint, fix, re-lint until nothing changes.  ``lint(text) -> findings``.

    Returns the fixed text (the original if any round would not parse) and
    the number of fixes applied.
    """
    total = 0
    text = source
    for _ in range(MAX_ROUNDS):
        new, applied = apply_edits(text, lint(text), unsafe)
        if not applied or new == text:
            break
        try:
            ast.parse(new)
        except (SyntaxError, ValueError):
            break  # never write code that does not parse
        text, total = new, total + applied
    return text, total


def unified_diff(path: str, before: str, after: str) -> str:
    return "".join(difflib.unified_diff(split_lines(before),
                                        split_lines(after),
                                        fromfile=f"a/{path}", tofile=f"b/{path}"))


def write_atomically(path: str, text: str, encoding: str = "utf-8") -> None:
    """Write via a temp file in the same directory and ``os.replace``; keep the mode."""
    directory = os.path.dirname(os.path.abspath(path))
    mode = stat.S_IMODE(os.stat(path).st_mode)
    fd, tmp = tempfile.mkstemp(prefix=".adl-", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding=encoding, newline="") as f:
            f.write(text)
        os.chmod(tmp, mode)
        os.replace(tmp, os.path.realpath(path))
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
