"""Lines Python never runs: the statements after an unconditional `raise`, `return`, `continue`
or `break` in the same block (old code kept below a `raise NotImplementedError`, a debugging
`return` left in). A finding on such a line lacks the link "the line runs", whatever the rule."""

from __future__ import annotations

import ast

_ENDS_THE_BLOCK = (ast.Raise, ast.Return, ast.Continue, ast.Break)
_STATEMENT_LISTS = ("body", "orelse", "finalbody")


def never_run_lines(tree: ast.Module, lines: set[int]) -> set[int]:
    """Those of `lines` that lie in a statement after one that ends its block unconditionally."""
    never_run: set[int] = set()
    for node in ast.walk(tree):
        for field in _STATEMENT_LISTS:
            statements = getattr(node, field, None)
            if not isinstance(statements, list):
                continue
            end = next((i for i, s in enumerate(statements) if isinstance(s, _ENDS_THE_BLOCK)), None)
            if end is None:
                continue
            for statement in statements[end + 1:]:
                first = min([statement.lineno] + [d.lineno for d in getattr(statement, "decorator_list", ())])
                never_run.update(line for line in lines if first <= line <= statement.end_lineno)
    return never_run
