"""ADL006: `copy.deepcopy` of a tensor that is part of a graph (fails)."""

from __future__ import annotations

import ast

from autograd_doctor.lint.findings import Fix
from autograd_doctor.lint.rules.base import Rule

RULE = Rule(
    code="ADL006", name="deepcopy-of-graph-tensor",
    summary="`copy.deepcopy` of a tensor that has a `grad_fn`; use `.detach().clone()`.",
    what_it_does="""Finds `copy.deepcopy(t)` where `t` is known to be a non-leaf tensor that
requires grad: computed, with gradients enabled, from a leaf that requires
grad (`torch.randn(..., requires_grad=True)`, `nn.Parameter`) or from the
output of a parameterised module of the same class (`self.fc(x)`).  Deep
copies of constants, leaves (a parameter of the class, `self.w` or
`self.fc.weight`, included), modules, optimizers and dicts are not reported.""",
    why_bad="""`deepcopy` of a tensor with a `grad_fn` raises `RuntimeError: Only Tensors
created explicitly by the user (graph leaves) support the deepcopy protocol at
the moment`.  What is usually meant is a snapshot of the values.""",
    example="""h = torch.randn(3, requires_grad=True) * 2
snapshot = copy.deepcopy(h)""",
    use_instead="""h = torch.randn(3, requires_grad=True) * 2
snapshot = h.detach().clone()""",
    fix_safety="""Unsafe: the copy no longer requires grad (`deepcopy` would have failed,
so no working behaviour changes, but the fix chooses a snapshot where a
differentiable copy, `h.clone()`, may have been meant).""",
    known_problems="""Only tensors whose history is visible in the same function are
recognised; a tensor passed in as an argument is not.""",
)


def on_call(checker, node, q) -> None:
    """`copy.deepcopy(t)` of a tensor with a graph (not a leaf that requires grad)."""
    if q != "copy.deepcopy" or not node.args:
        return
    first, scope = node.args[0], checker.scope
    if not scope.grad_off and checker.is_graph(first) and not _is_leaf(checker, first):
        scope.note("ADL006", (node, first))


def _is_leaf(checker, node) -> bool:
    """A leaf that requires grad, which `deepcopy` copies: `nn.Parameter(t)`, a name
    bound to one, or a parameter of the class (`self.w` that `__init__` made an
    `nn.Parameter`, `self.fc.weight`), which `is_graph` counts as requiring grad."""
    return checker.is_grad_leaf(node) or checker.parameter_attribute(node) or (
        isinstance(node, ast.Name) and node.id in checker.scope.grad_leaves)


def check_scope(checker, scope) -> None:
    for node, first in scope.noted("ADL006"):
        checker.report("ADL006", node,
                       f"`copy.deepcopy` of `{checker.text(first)}`, a tensor with a grad_fn: "
                       f"deepcopy raises for non-leaf tensors",
                       Fix("use `.detach().clone()`",
                           (checker.edit(node, checker.atom_text(first) + ".detach().clone()"),),
                           safe=False))
