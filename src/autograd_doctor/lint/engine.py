"""Read a file, parse it once, run the checker, apply `# noqa` and selection."""

from __future__ import annotations

import ast
import gc
import io
import os
import re
import sys
import tokenize
from dataclasses import dataclass

from autograd_doctor.lint.checker import Checker
from autograd_doctor.lint.findings import Finding, split_lines
from autograd_doctor.lint.never_run import never_run_lines
from autograd_doctor.lint.option_defaults import off_by_default_lines
from autograd_doctor.lint.rules import OPT_IN_CODES

NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Za-z]+[0-9]+(?:[\s,]+[A-Za-z]+[0-9]+)*))?",
                  re.IGNORECASE)


@dataclass(frozen=True)
class Selection:
    """Which codes to report.  The most specific matching prefix wins (ruff's rule).

    Opt-in rules (advice, not hazards) are reported only when ``select`` names
    their full code, ``--select ADL,ADL007``, or is ``ALL`` (every rule, as in ruff).
    """

    select: tuple[str, ...] = ("ADL",)
    ignore: tuple[str, ...] = ()

    def __contains__(self, code: str) -> bool:
        def best(prefixes):
            lengths = [len(p) for p in prefixes if p == "ALL" or code.startswith(p)]
            return max(lengths, default=-1)

        if code in OPT_IN_CODES and code not in self.select and "ALL" not in self.select:
            return False
        return best(self.select) > best(self.ignore)

    def unselected_opt_in(self) -> frozenset[str]:
        """The opt-in rules this selection does not report (their checks need not run)."""
        return frozenset(code for code in OPT_IN_CODES if code not in self)


def read_source(data: bytes) -> str:
    """Decode like the interpreter: BOM, PEP 263 coding cookie, else UTF-8.

    Raises ``SyntaxError`` (bad cookie) or ``UnicodeDecodeError``.
    """
    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    text = data.decode(encoding)
    return text[1:] if text.startswith("\ufeff") else text


def _unparsable(filename: str, line: int, column: int, message: str) -> Finding:
    return Finding("ADL000", message, filename, max(line, 1), max(column, 1),
                   max(line, 1), max(column, 1))


# Python 3.12 syntax (PEP 695): `type X = ...`, `class C[T]:`, `def f[T](...)`.
# Projects that require 3.12 use it (huggingface/lerobot); an older interpreter
# calls it "invalid syntax", which reads as if the file were broken.
_PEP695 = re.compile(r"\s*(?:type\s+\w+\s*(?:\[.*\])?\s*=|(?:async\s+)?def\s+\w+\s*\[|class\s+\w+\s*\[)")


def _newer_syntax_hint(source: str, lineno: int | None) -> str:
    """Name the Python version a type-parameter line needs, when this one is older."""
    if sys.version_info >= (3, 12) or not lineno:
        return ""
    lines = split_lines(source)
    if lineno > len(lines) or not _PEP695.match(lines[lineno - 1]):
        return ""
    running = f"{sys.version_info.major}.{sys.version_info.minor}"
    return (f" (this line uses Python 3.12 syntax, type parameters or a `type` statement;"
            f" the linter runs on Python {running}: run it with the project's Python)")


def lint_source(source: str, filename: str = "<string>",
                selection: Selection = Selection()) -> list[Finding]:
    """Lint Python source text and return the findings in source order.

    >>> [f.code for f in lint_source("import torch\\ny = torch.sigmoid(torch.randn(3, requires_grad=True))\\ny[0] = 0\\n")]
    ['ADL001']
    """
    collecting = gc.isenabled()
    # While the check allocates, the cyclic collector would walk the file's AST nodes and
    # the facts collected from them again and again (about 40% of the time), though all of
    # them live until the file is done. Paused for this one file: the few cycles the check
    # leaves are collected by the next collection after it.
    gc.disable()
    try:
        return _lint_parsed(source, filename, selection)
    finally:
        if collecting:
            gc.enable()


def _lint_parsed(source: str, filename: str, selection: Selection) -> list[Finding]:
    try:
        tree = ast.parse(source, filename)
    except SyntaxError as e:
        message = f"syntax error: {e.msg}" + _newer_syntax_hint(source, e.lineno)
        findings = [_unparsable(filename, e.lineno or 1, e.offset or 1, message)]
    except (ValueError, RecursionError, MemoryError) as e:
        findings = [_unparsable(filename, 1, 1, f"cannot parse: {e}")]
    else:
        limit = sys.getrecursionlimit()
        try:
            # Deep expressions (long `a + b + ...` chains) parse fine but nest the
            # walk; Python-to-Python calls do not use the C stack on 3.11+.
            sys.setrecursionlimit(max(limit, 8000))
            findings = Checker(tree, source, filename, selection.unselected_opt_in()).findings
        except RecursionError:
            findings = [_unparsable(filename, 1, 1, "cannot analyse: the code nests too deeply")]
        except Exception as error:  # noqa: BLE001 - a bug of ours in one file must not end the whole run
            if os.environ.get("AUTOGRAD_DOCTOR_DEBUG"):
                raise
            findings = [_unparsable(filename, 1, 1, f"cannot analyse: the linter failed on this file "
                                    f"({type(error).__name__}: {error}); the other files are checked. Please "
                                    "report it (AUTOGRAD_DOCTOR_DEBUG=1 shows the traceback)")]
        finally:
            sys.setrecursionlimit(limit)
        findings = _without_noqa(findings, source)
        findings = _without_off_branches(findings, tree, filename)
    findings = [f for f in findings if f.code in selection]
    findings.sort(key=Finding.sort_key)
    return findings


def _without_off_branches(findings: list[Finding], tree: ast.Module, filename: str) -> list[Finding]:
    """Drop findings in a branch an option off by default keeps from running
    (``option_defaults``) and after a statement that ends its block (``never_run``): the link
    "the line runs" lacks evidence."""
    lines = {f.line for f in findings if f.code != "ADL000"}
    if not lines:
        return findings
    off = off_by_default_lines(tree, filename, lines) | never_run_lines(tree, lines)
    return [f for f in findings if f.code == "ADL000" or f.line not in off]


def _without_noqa(findings: list[Finding], source: str) -> list[Finding]:
    if not findings or "noqa" not in source.lower():
        return findings
    lines = [line.rstrip("\r\n") for line in split_lines(source)]
    kept = []
    for f in findings:
        suppressed = False
        for lineno in {f.line, f.end_line}:
            if 0 < lineno <= len(lines):
                m = NOQA.search(lines[lineno - 1])
                if m and (m.group("codes") is None or f.code in
                          {c.upper() for c in re.split(r"[\s,]+", m.group("codes"))}):
                    suppressed = True
        if not suppressed:
            kept.append(f)
    return kept


def lint_file(path: str, display: str | None = None,
              selection: Selection = Selection()) -> tuple[list[Finding], str | None]:
    """Lint one file; returns ``(findings, source)`` (source is None if unreadable)."""
    display = display or path
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        return [_unparsable(display, 1, 1, f"cannot read file: {e.strerror or e}")], None
    try:
        source = read_source(data)
    except (SyntaxError, UnicodeDecodeError, LookupError) as e:
        reason = e.msg if isinstance(e, SyntaxError) else str(e)
        line = data[: getattr(e, "start", 0)].count(b"\n") + 1 if isinstance(e, UnicodeDecodeError) else 1
        findings = [_unparsable(display, line, 1, f"cannot decode file: {reason}")]
        return [f for f in findings if f.code in selection], None
    return lint_source(source, display, selection), source
