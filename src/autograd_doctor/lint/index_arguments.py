"""Parameters a function uses as a tensor index: integer or boolean tensors.

PyTorch accepts only `long`/`int`/`byte`/`bool` tensors as indices
(`pts[inds, :]` with a float `inds` raises "tensors used as indices must be
long, int, byte or bool tensors"), and such a tensor can never require grad.
So a parameter that the function, on its straight-line path, uses as an index
of a subscript (`pts[inds, :]`, `h[edges[0]]`) carries no
graph whatever its callers pass: it is no graph argument of a `forward`, and
an op on it (`inds.gather(1, rows)`) records no backward node that could save
anything.  Set AL's first run (Open3D-ML's KPConv, docs/lint.md) reported an
in-place write on a `gather` index because the gathered neighbour-index
argument was taken for a graph.

Evidence required, else the parameter is left as it was: the parameter is
never rebound in the function (no store of the name anywhere in it, nested
functions included), and the subscript is a statement of the function body
itself (not inside an `if`, loop, `try` or `match`: it runs on every call that
gets that far), reading with the name (or an element of it, `edges[0]`) as
the index or one of a tuple index's parts (`pts[inds, :]`, `h[edges[0]]`).
A graph tensor used as a dictionary key would be taken for an index too; this
only removes graph evidence (a finding can go silent, none is added).
"""

from __future__ import annotations

import ast
import re

from autograd_doctor.lint.walk import child_nodes, walk_nodes

_BRANCHING = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.Try, ast.Match) + (
    (ast.TryStar,) if hasattr(ast, "TryStar") else ())
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def _indexed_name(expr) -> str | None:
    """`inds` for `inds` or `inds[0]` / `inds[:, 1]`."""
    if isinstance(expr, ast.Subscript):
        expr = expr.value
    return expr.id if isinstance(expr, ast.Name) else None


def _straight_line(body):
    """The expressions of the statements that run on every call (no branch)."""
    for statement in body:
        if isinstance(statement, _BRANCHING) or isinstance(statement, _SCOPES):
            continue
        if isinstance(statement, (ast.With, ast.AsyncWith)):
            yield from (item.context_expr for item in statement.items)
            yield from _straight_line(statement.body)
            continue
        yield statement


def _walk_no_scopes(node):
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        for child in child_nodes(n):
            if not isinstance(child, (ast.Lambda, ast.GeneratorExp, ast.ListComp, ast.SetComp, ast.DictComp)):
                stack.append(child)


_AFTER_OPENING = re.compile(r"\[(\w+)")
_BEFORE_CLOSING = re.compile(r", (\w+)\]")


def index_spellings(source: str) -> frozenset | None:
    """Every name that passes ``index_parameters``' text gate somewhere in ``source``
    (computed once per file; a function's text is part of it): the prefixes of each
    word written right after `[`, and each word written between `, ` and `]`.  None
    for a non-ASCII file (an identifier's characters and the pattern's word
    characters may differ there: every function is then gated on its own text)."""
    if not source.isascii():
        return None
    names = set(_BEFORE_CLOSING.findall(source))
    for word in set(_AFTER_OPENING.findall(source)):
        names.update(word[:end] for end in range(1, len(word) + 1))
    return frozenset(names)


def index_parameters(function, names, text: str) -> frozenset:
    """The parameters among ``names`` that ``function`` uses as a tensor index
    (see the module docstring); empty when the evidence is incomplete.
    ``text``: the function's source, which gates the walks (asked for every
    function of every file: a parameter never written after ``[`` or inside
    ``, ...]`` cannot be a subscript's first or last index part as spelled; a middle part of
    a tuple index, `pts[a, inds, b]`, is not looked for)."""
    candidates = {name for name in names if name not in ("self", "cls")
                  and ("[" + name in text or ", " + name + "]" in text)}
    if not candidates:
        return frozenset()
    found = set()
    for statement in _straight_line(function.body):
        for node in _walk_no_scopes(statement):
            if not isinstance(node, ast.Subscript) or not isinstance(node.ctx, ast.Load):
                continue
            elements = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            for e in elements:
                name = _indexed_name(e)
                if name in candidates:
                    found.add(name)
    if not found:
        return frozenset()
    positional = {a.arg for a in function.args.posonlyargs + function.args.args + function.args.kwonlyargs}
    for n in walk_nodes(function):  # a name rebound anywhere in the function (nested ones too): no evidence
        if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load) or isinstance(n, ast.arg) and n.arg not in positional:
            found.discard(n.id if isinstance(n, ast.Name) else n.arg)
    return frozenset(found)
