"""Project helpers whose result keeps no graph: a function of the linted file, or
imported from another file of the same repository, whose every `return` gives its
value through `.detach()` / `.item()` / `.numpy()` / `.tolist()` / `.data`
(`def to_np(x): return x.cpu().detach().numpy()`), or hands back a list or tuple of
such values built by calling itself on the parts of a nested container
(`return [list_detach(x) for x in element]` beside `return element.detach()`).

ADL031 reads it for what an evaluation loop keeps (set AL), ADL028 for what a
training step returns to its caller (set AS)."""

from __future__ import annotations

import ast
from functools import lru_cache

from autograd_doctor.lint.clearing import module_file_in_project, parsed_file
from autograd_doctor.lint.project_factories import own_returns

RELEASING_METHODS = frozenset({"item", "detach", "tolist", "numpy"})


def calls_releasing_helper(checker, value) -> bool:
    """``value`` contains a call of a project function whose result keeps no graph."""
    return any(isinstance(node, ast.Call) and is_releasing_call(checker, node) for node in ast.walk(value))


def is_releasing_call(checker, call: ast.Call) -> bool:
    """``call`` calls a function of this file, or one imported from another file of
    the repository, whose every `return` releases its value (see the module)."""
    func = call.func
    qualname = checker.qualname(func)
    if qualname and "." in qualname:
        module, _, name = qualname.rpartition(".")
        path = module_file_in_project(module, checker.filename) if checker.filename else None
        return bool(path) and _releasing_function(path, name)
    if isinstance(func, ast.Name) and not qualname and checker.tree is not None:
        defs = [n for n in checker.tree.body if isinstance(n, ast.FunctionDef) and n.name == func.id]
        return len(defs) == 1 and returns_released(defs[0])
    return False


@lru_cache(maxsize=1024)
def _releasing_function(path: str, name: str) -> bool:
    tree = parsed_file(path)
    if tree is None:
        return False
    defs = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name]
    return len(defs) == 1 and returns_released(defs[0])


def returns_released(function) -> bool:
    """Every `return` of ``function`` (not of a nested one) ends a method chain that
    passes through a releasing method or `.data`, or is a list, tuple or
    comprehension (`list(...)` / `tuple(...)` of one, items unpacked with `*`) whose
    every element is such a chain or a call of ``function`` itself (the recursion over a nested container); at least one `return` releases
    without the recursion, so the recursion ends in a released value."""
    returns = [r.value for r in own_returns(function)]
    if not returns or any(r is None or not _released_part(r, function.name) for r in returns):
        return False
    return any(_chain_released(r) for r in returns)


def _released_part(node, own_name: str) -> bool:
    if _chain_released(node):
        return True
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == own_name:
        return True  # the recursion: what it gives back is released by the other returns
    if isinstance(node, (ast.ListComp, ast.GeneratorExp, ast.SetComp)):
        return _released_part(node.elt, own_name)
    if isinstance(node, (ast.List, ast.Tuple)):
        return bool(node.elts) and all(_released_part(e, own_name) for e in node.elts)
    if isinstance(node, ast.Starred):
        return _released_part(node.value, own_name)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("list", "tuple") \
            and len(node.args) == 1 and not node.keywords:
        return _released_part(node.args[0], own_name)  # `tuple(detach_all(v) for v in value)`
    return False


def _chain_released(node) -> bool:
    while isinstance(node, (ast.Call, ast.Attribute)):
        if isinstance(node, ast.Call):
            node = node.func
            continue
        if node.attr in RELEASING_METHODS or node.attr == "data":
            return True
        node = node.value
    return False
