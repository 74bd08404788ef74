"""Same-file module classes whose ``forward`` returns a Python list.

BERT's encoder in DeepSpeedExamples (`all_encoder_layers = []`, one `append`
per layer, `return all_encoder_layers`) is called as `encoded_layers =
self.encoder(...)`, and `encoded_layers[-1] = unpad(...)` replaces an item of
that list: no tensor is written.  A module call is otherwise taken for a
tensor, so the rules need this evidence to see the list (set AF, docs/lint.md).

A class counts only when every ``return`` of its own ``forward`` gives a list:
a list display or comprehension, or a name that ``forward`` binds only to a
list display or comprehension (and changes only with list methods).  A
``forward`` with no ``return``, a ``return`` of anything else, or a name bound
to anything else on some path: no evidence, the call stays a tensor."""

from __future__ import annotations

import ast

_LIST_VALUES = (ast.List, ast.ListComp)


def list_forward_classes(tree: ast.Module) -> frozenset:
    """The names of the top-level classes of ``tree`` whose ``forward`` returns a list."""
    found = set()
    for cls in tree.body:
        if not isinstance(cls, ast.ClassDef):
            continue
        forward = next((f for f in cls.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
                        and f.name == "forward"), None)
        if forward is not None and _returns_list(forward):
            found.add(cls.name)
    return frozenset(found)


def _own_nodes(function):
    """The nodes of ``function``'s body, not those of functions or classes nested in it."""
    nested = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
    stack = [n for n in function.body if not isinstance(n, nested)]
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, nested):
                stack.append(child)


_NESTED_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _own_statements(function):
    """The statements of ``function``'s body, nested blocks included, not those of
    functions or classes defined in it: a `return` is a statement, so finding the
    returns needs no walk of every expression (lint cost)."""
    stack = [n for n in function.body if not isinstance(n, _NESTED_DEFS)]
    while stack:
        node = stack.pop()
        yield node
        for field in ("body", "orelse", "finalbody"):
            inner = getattr(node, field, None)
            if inner:
                stack.extend(n for n in inner if not isinstance(n, _NESTED_DEFS))
        for field in ("handlers", "cases"):
            for clause in getattr(node, field, None) or ():
                stack.extend(n for n in clause.body if not isinstance(n, _NESTED_DEFS))


def _returns_list(function) -> bool:
    returns = [n for n in _own_statements(function) if isinstance(n, ast.Return)]
    if not returns:
        return False
    list_names = set()
    for r in returns:
        if isinstance(r.value, _LIST_VALUES):
            continue
        if isinstance(r.value, ast.Name):
            list_names.add(r.value.id)
            continue
        return False
    if not list_names:
        return True
    arg_names = {a.arg for a in function.args.args + function.args.kwonlyargs + function.args.posonlyargs}
    if function.args.vararg:
        arg_names.add(function.args.vararg.arg)
    if function.args.kwarg:
        arg_names.add(function.args.kwarg.arg)
    if list_names & arg_names:
        return False
    # the statements' bindings first; only when each is a list can a binding inside an
    # expression (`:=`, a comprehension's target) change the answer: then every node
    return _bound_to_lists(_own_statements(function), list_names) and \
        _bound_to_lists(_own_nodes(function), list_names)


def _bound_to_lists(nodes, list_names) -> bool:
    bound = {name: 0 for name in list_names}
    for node in nodes:
        targets = []
        if isinstance(node, ast.Assign):
            for t in node.targets:
                targets.extend(_bound_names(t, node.value if isinstance(t, ast.Name) else None))
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets.extend(_bound_names(node.target, None if isinstance(node, ast.AugAssign) else node.value))
        elif isinstance(node, (ast.For, ast.AsyncFor, ast.With, ast.AsyncWith, ast.NamedExpr,
                               ast.Global, ast.Nonlocal, ast.Delete, ast.comprehension)):
            for t in _targets_of(node):
                targets.extend(_bound_names(t, None))
        for name, value in targets:
            if name not in bound:
                continue
            if isinstance(value, _LIST_VALUES):
                bound[name] += 1
            else:
                return False
    return all(count > 0 for count in bound.values())


def _targets_of(node):
    if isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
        return [node.target]
    if isinstance(node, (ast.With, ast.AsyncWith)):
        return [i.optional_vars for i in node.items if i.optional_vars is not None]
    if isinstance(node, ast.NamedExpr):
        return [node.target]
    if isinstance(node, (ast.Global, ast.Nonlocal)):
        return [ast.Name(id=n) for n in node.names]
    if isinstance(node, ast.Delete):
        return node.targets
    return []


def _bound_names(target, value):
    """``(name, value)`` for each name ``target`` binds; value None when not known."""
    if isinstance(target, ast.Name):
        return [(target.id, value)]
    if isinstance(target, (ast.Tuple, ast.List)):
        out = []
        for t in target.elts:
            out.extend(_bound_names(t, None))
        return out
    if isinstance(target, ast.Starred):
        return _bound_names(target.value, None)
    return []
