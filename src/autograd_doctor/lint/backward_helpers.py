"""Same-file functions and methods that run a backward pass.

A training loop often hands its loss to a helper that backpropagates it
(`def policy_gradient_step(theta, ...): ...; loss.backward()`, SPiRL's
`_perform_update(loss, opt, network)`), and reads `.grad` or steps after the
call.  A function runs backward when its own body calls `.backward(...)`,
`torch.autograd.backward(...)` or `torch.autograd.grad(...)`, or calls another
such function.  Names are matched as ``clearing.py`` matches them: `f()` and
`self.f()` are calls of any same-file `f`; `obj.f()` is not (`loss.backward()`
itself, `trainer.step()` of another object).
"""

from __future__ import annotations

import ast

from autograd_doctor.lint.arguments import nested_statements
from autograd_doctor.lint.clearing import _own_nodes, is_self_call  # the same walk as clearing's

_AUTOGRAD_CALLS = frozenset({"backward", "grad"})


def backward_functions(tree: ast.Module, source: str) -> frozenset:
    """Names of the functions defined in ``tree`` that run a backward pass."""
    if "backward(" not in source and "autograd.grad(" not in source:
        return frozenset()
    calls: dict = {}  # function name -> the same-file names its own body calls
    runs: set = set()
    for node in nested_statements(tree.body):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            own = list(_own_nodes(node))
            if any(_runs_backward(n) for n in own):
                runs.add(node.name)
            calls.setdefault(node.name, set()).update(_same_file_calls(own))
    changed = True
    while changed:  # a helper that calls a backward helper runs backward too
        changed = False
        for name, called in calls.items():
            if name not in runs and called & runs:
                runs.add(name)
                changed = True
    return frozenset(runs)


def _runs_backward(node) -> bool:
    """`loss.backward()`, `torch.autograd.backward(...)`, `torch.autograd.grad(...)`."""
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
        return False
    func = node.func
    if func.attr == "backward" and not is_self_call(node):
        return True  # `loss.backward()`; `self.backward(...)` is a same-file call
    return func.attr in _AUTOGRAD_CALLS and isinstance(func.value, ast.Attribute) \
        and func.value.attr == "autograd"


def _same_file_calls(nodes) -> set:
    out = set()
    for node in nodes:
        if isinstance(node, ast.Call):
            if isinstance(node.func, ast.Name):
                out.add(node.func.id)
            elif is_self_call(node):
                out.add(node.func.attr)
    return out

