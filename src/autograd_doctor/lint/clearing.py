"""Same-file functions and methods that clear gradients.

yunjey/stargan's solver clears both optimizers in a method, `def
reset_grad(self): self.g_optimizer.zero_grad(); self.d_optimizer.zero_grad()`,
and its training loop calls `self.reset_grad()` before each backward pass.
ADL018 must count that call as clearing, wherever the method is defined (before
or after the loop that calls it).  A function clears when its body calls
`zero_grad()`, sets `.grad = None`, or calls `.grad.zero_()` / `.grad.detach_()`
/ `.grad.fill_()` / `.grad.requires_grad_()`, or calls another such function.
Names are matched without resolving them: `f()` and `self.f()` are calls of
any same-file `f`; `obj.f()` is not (`model.train()` is not the file's own
`def train` that clears).
"""

from __future__ import annotations

import ast

_GRAD_METHODS = frozenset({"zero_", "detach_", "fill_", "requires_grad_"})


def clearing_functions(tree: ast.Module) -> frozenset:
    """Names of the functions defined in ``tree`` that clear gradients."""
    bodies: dict = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            bodies.setdefault(node.name, []).append(node)
    clears = {name for name, defs in bodies.items() if any(_clears(d) for d in defs)}
    changed = True
    while changed:  # a helper that calls a clearing helper clears too
        changed = False
        for name, defs in bodies.items():
            if name not in clears and any(_calls(d) & clears for d in defs):
                clears.add(name)
                changed = True
    return frozenset(clears)


def _own_nodes(function):
    """The nodes of ``function``'s body, not of functions nested in it."""
    todo = list(function.body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        yield node
        todo.extend(ast.iter_child_nodes(node))


def _clears(function) -> bool:
    for node in _own_nodes(function):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            attr, recv = node.func.attr, node.func.value
            if attr == "zero_grad":
                return True
            if attr in _GRAD_METHODS and isinstance(recv, ast.Attribute) and recv.attr == "grad":
                return True
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) \
                and node.value.value is None \
                and any(isinstance(t, ast.Attribute) and t.attr == "grad" for t in node.targets):
            return True
    return False


def _calls(function) -> set:
    out = set()
    for node in _own_nodes(function):
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name):
                out.add(func.id)
            elif is_self_call(node):
                out.add(func.attr)
    return out


def is_self_call(call: ast.Call) -> bool:
    """`self.f(...)`: a call of the class's own method ``f``."""
    func = call.func
    return isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) \
        and func.value.id == "self"
