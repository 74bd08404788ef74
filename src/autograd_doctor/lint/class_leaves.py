"""Attribute leaves of a class: `self.w = torch.zeros(n, requires_grad=True)` in
`__init__`, bound nowhere else in the class and never unflagged.  Used as graph
evidence for `self.w` in the class's methods (checker) and by ADL014."""

from __future__ import annotations

import ast

from autograd_doctor.lint import names as N


def attribute_leaves(checker, cls) -> set:
    """`self.<attr>` bound in `__init__` to a torch factory called with
    `requires_grad=True`, and bound nowhere else in the class, its flag never
    turned off."""
    init = next((f for f in cls.body if isinstance(f, ast.FunctionDef) and f.name == "__init__"), None)
    if init is None:
        return set()
    leaves, bound = set(), {}
    for stmt in init.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and self_attr(stmt.targets[0]) and \
                isinstance(stmt.value, ast.Call) and grad_factory(checker, stmt.value):
            leaves.add(stmt.targets[0].attr)
    if not leaves:
        return leaves  # most classes: no walk of the whole class
    for node in ast.walk(cls):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] \
            if isinstance(node, (ast.AnnAssign, ast.AugAssign)) else []
        for t in targets:
            for elt in (t.elts if isinstance(t, ast.Tuple) else [t]):
                if self_attr(elt):
                    bound[elt.attr] = bound.get(elt.attr, 0) + (0 if isinstance(node, ast.AugAssign) else 1)
                elif isinstance(elt, ast.Attribute) and elt.attr == "requires_grad" and self_attr(elt.value):
                    bound[elt.value.attr] = 99  # `self.w.requires_grad = False`: it may be frozen
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                node.func.attr == "requires_grad_" and self_attr(node.func.value):
            bound[node.func.value.attr] = 99
    return {a for a in leaves if bound.get(a) == 1}


def grad_factory(checker, call) -> bool:
    q = checker.qualname(call.func) or ""
    return q.startswith("torch.") and q.rsplit(".", 1)[-1] in N.FACTORIES and any(
        k.arg == "requires_grad" and isinstance(k.value, ast.Constant) and k.value.value is True
        for k in call.keywords)


def self_attr(node) -> bool:
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self"


def classes_in(tree) -> list:
    """Every class definition reached through statements only (module level, nested in classes,
    `if`/`try`/`with` blocks; not inside functions, where a class is local to one call): no walk
    of the expressions, which hold none."""
    found, pending = [], list(getattr(tree, "body", ()))
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        if isinstance(node, ast.ClassDef):
            found.append(node)
        for field in ("body", "orelse", "finalbody", "handlers"):
            inner = getattr(node, field, None)
            if isinstance(inner, list):
                pending.extend(inner)
    found.sort(key=lambda cls: (cls.lineno, cls.col_offset))
    return found
