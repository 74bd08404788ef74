"""flake8 plugin (entry point ``ADL``): the same rules inside flake8.

flake8 parses the file and hands us the tree; we run the same single pass.
flake8 handles ``# noqa`` and ``--select``/``--extend-ignore`` itself; the
opt-in advice rules are not reported through flake8 (flake8 would report them
by default).
Columns are 0-based for flake8 (it adds one when printing).
"""

from __future__ import annotations

import ast

from autograd_doctor.lint.checker import Checker
from autograd_doctor.lint.rules import OPT_IN_CODES


def _version() -> str:
    try:
        from importlib.metadata import version
        return version("autograd-doctor")
    except Exception:  # noqa: BLE001
        return "0.0.0"


class Flake8Plugin:
    name = "autograd-doctor"
    version = _version()

    def __init__(self, tree: ast.AST, filename: str = "<unknown>", lines=None):
        self.tree = tree
        self.filename = filename
        self.lines = lines

    def run(self):
        if self.lines is not None:
            source = "".join(self.lines)
        else:
            try:
                with open(self.filename, encoding="utf-8") as f:
                    source = f.read()
            except (OSError, UnicodeDecodeError):
                source = ""
        try:
            findings = Checker(self.tree, source, self.filename).findings
        except RecursionError:
            return
        findings = [f for f in findings if f.code not in OPT_IN_CODES]
        for f in sorted(findings, key=lambda f: (f.line, f.column, f.code)):
            yield f.line, f.column - 1, f"{f.code} {f.message}", type(self)
