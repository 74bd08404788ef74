"""ADL007 (opt-in advice): `.clone().detach()` instead of `.detach().clone()`."""

from __future__ import annotations

import ast

from autograd_doctor.lint.findings import Fix
from autograd_doctor.lint.rules.base import Rule

RULE = Rule(
    code="ADL007", name="clone-then-detach", default=False,
    summary="`x.clone().detach()`; write `x.detach().clone()`.",
    what_it_does="Finds `.clone().detach()` chains.",
    why_bad="""`clone()` first records a copy in the autograd graph that `detach()`
immediately throws away: wasted work and memory.  PyTorch's own warning
recommends `detach().clone()`.""",
    example="y = x.clone().detach()",
    use_instead="y = x.detach().clone()",
    fix_safety="Safe: both give an independent copy with `requires_grad=False`.",
    known_problems="None known.",
)


def on_method_call(checker, node, func) -> None:
    """`x.clone().detach()` (no arguments to either) where `x` may carry a graph."""
    recv = func.value
    if func.attr != "detach" or node.args or not isinstance(recv, ast.Call) or \
            not isinstance(recv.func, ast.Attribute) or recv.func.attr != "clone" or recv.args:
        return
    inner = recv.func.value
    if checker.is_const(inner) or checker.scope.grad_off:
        return
    checker.scope.note("ADL007", (node, inner))


def _fix(checker, node):
    """`x.clone(memory_format=...).detach()` -> `x.detach().clone(memory_format=...)`."""
    clone = node.func.value
    head = checker.text(clone.func)
    head = head[:head.rfind("clone")].rstrip()
    clone_args = checker.text(clone)[len(checker.text(clone.func)):]
    if not (head.endswith(".") and clone_args.startswith("(")):
        return None
    return Fix("call `.detach()` before `.clone()`",
               (checker.edit(node, head[:-1].rstrip() + ".detach().clone" + clone_args),), safe=True)


def check_scope(checker, scope) -> None:
    for node, inner in scope.noted("ADL007"):
        checker.report("ADL007", node, f"`.clone().detach()` copies `{checker.text(inner)}` inside "
                       "the graph first; `.detach().clone()` copies only the values", _fix(checker, node))
