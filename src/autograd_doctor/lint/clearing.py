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
`def train` that clears).  A function imported from the same project
(`pyro.infer.util.zero_grads(params)`) is looked up in its file, found from
the linted file's folders, only when ADL018 is about to report
(`clears_in_project`, cached per file).
"""

from __future__ import annotations

import ast
import os
import re
from functools import lru_cache

from autograd_doctor.lint.arguments import nested_statements
from autograd_doctor.lint.walk import child_nodes

_GRAD_METHODS = frozenset({"zero_", "detach_", "fill_", "requires_grad_"})


# Text that a clearing function must contain; most files have none and are not walked.
_CLEARING_TEXT = re.compile(r"zero_grad|\.grad\s*=\s*(?:None|\S*zeros)|\.grad\.(?:zero_|detach_|fill_|requires_grad_)")


def clearing_functions(tree: ast.Module, source: str, needs_backward: bool = True) -> frozenset:
    """Names of the functions defined in ``tree`` that clear gradients."""
    if (needs_backward and "backward(" not in source) or not _CLEARING_TEXT.search(source):
        return frozenset()  # no training loop (ADL018 needs one) or nothing clears
    calls: dict = {}  # function name -> the same-file names its own body calls
    clears: set = set()
    # Definitions are statements: walking statements only, not every expression,
    # and then each function's own nodes visits every node once, not twice.
    for node in nested_statements(tree.body):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            own = list(own_nodes(node))
            if _clears(own):
                clears.add(node.name)
            calls.setdefault(node.name, set()).update(same_file_calls(own))
    return spread_to_callers(clears, calls)


def spread_to_callers(names: set, calls: dict) -> frozenset:
    """``names`` and every function that calls one of them, directly or through others;
    ``calls``: function name -> the same-file names its own body calls.  (A helper that
    calls a clearing helper clears too; one that calls a backward helper runs backward.)"""
    found = set(names)
    changed = True
    while changed:
        changed = False
        for name, called in calls.items():
            if name not in found and called & found:
                found.add(name)
                changed = True
    return frozenset(found)


def _clears(nodes) -> bool:
    for node in nodes:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            attr, recv = node.func.attr, node.func.value
            if attr == "zero_grad":
                return True
            if attr in _GRAD_METHODS and isinstance(recv, ast.Attribute) and recv.attr == "grad":
                return True
        if isinstance(node, ast.Assign) and _empty_gradient(node.value) \
                and any(isinstance(t, ast.Attribute) and t.attr == "grad" for t in node.targets):
            return True  # `p.grad = None`, `p.grad = torch.zeros_like(p.grad)`
    return False


def _empty_gradient(value) -> bool:
    if isinstance(value, ast.Constant):
        return value.value is None
    if isinstance(value, ast.Call):
        func = value.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        return name in ("zeros_like", "zeros", "new_zeros")
    return False


def clears_in_project(qualname: str, filename: str) -> bool:
    """Whether the function ``qualname`` (`pyro.infer.util.zero_grads`, as the file
    imports it) is defined in a file of the same project that shows it clearing
    gradients.  The project file is found from the linted file's folders
    (`<ancestor>/pyro/infer/util.py`); its clearing functions are cached."""
    module, _, function = qualname.rpartition(".")
    if not module or not filename or filename.startswith("<"):
        return False
    parts = module.split(".")
    folder = os.path.dirname(os.path.abspath(filename))
    while True:
        for candidate in (os.path.join(folder, *parts) + ".py",
                          os.path.join(folder, *parts, "__init__.py")):
            if os.path.isfile(candidate):
                return function in _project_file_clearing(candidate)
        parent = os.path.dirname(folder)
        if parent == folder:
            return False
        folder = parent


@lru_cache(maxsize=256)
def _project_file_clearing(path: str) -> frozenset:
    try:
        with open(path, encoding="utf-8") as f:
            source = f.read()
        tree = ast.parse(source)
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
        return frozenset()
    return clearing_functions(tree, source, needs_backward=False)


def same_file_calls(nodes) -> set:
    """The names called as `f(...)` or `self.f(...)` among ``nodes``."""
    out = set()
    for node in nodes:
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


def own_nodes(function):
    """The nodes of ``function``'s body, not of functions nested in it."""
    todo = list(function.body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        yield node
        todo.extend(child_nodes(node))
