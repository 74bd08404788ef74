"""ADL016: a misspelt `requires_grad` (silently ignored as an attribute)."""

from __future__ import annotations

import ast

from autograd_doctor.lint import names as N
from autograd_doctor.lint.findings import Fix
from autograd_doctor.lint.rules.base import Rule

RULE = Rule(
    code="ADL016", name="requires-grad-typo",
    summary="A misspelling of `requires_grad` (`require_grad`, `requires_grads`...).",
    what_it_does="""Finds assignments `t.require_grad = True` (and `requires_grads`,
`require_grads`, `required_grad`, `requires_gard`, `requires_gradient`...)
to anything but `self`, and the same misspelt keywords in `torch.*` calls.""",
    why_bad="""Tensors and modules accept any new attribute, so `w.require_grad = True`
sets an unused attribute and `w.requires_grad` stays `False`: `w` silently
gets no gradient (or a layer meant to be frozen keeps training).  As a
keyword, `torch.zeros(3, require_grad=True)` raises `TypeError`.""",
    example="""w = torch.zeros(3)
w.require_grad = True""",
    use_instead="""w = torch.zeros(3)
w.requires_grad = True""",
    fix_safety="Safe: the attribute or keyword is renamed to `requires_grad`.",
    known_problems="""`self.require_grad = ...` is not reported: a class's own
configuration attribute may well have that name.""",
)


def on_call(checker, node, q) -> None:
    """`torch.zeros(3, require_grad=True)`: a misspelt keyword of a torch call."""
    if q.startswith("torch."):
        for k in node.keywords:
            if k.arg in N.REQUIRES_GRAD_TYPOS:
                checker.scope.note("ADL016", (k, k.arg))


def on_attribute_assign(checker, target, value, stmt) -> None:
    """`w.require_grad = True` (not on `self`: a class may define such an attribute)."""
    if target.attr in N.REQUIRES_GRAD_TYPOS and isinstance(value, ast.Constant) \
            and isinstance(value.value, bool) \
            and not (isinstance(target.value, ast.Name) and target.value.id == "self"):
        checker.scope.note("ADL016", (target, target.attr))


def check_scope(checker, scope) -> None:
    for node, spelled in scope.noted("ADL016"):
        if node.__class__.__name__ == "keyword":  # torch.zeros(3, require_grad=True)
            message = "the call raises TypeError (unexpected keyword argument)"
            fix = Fix("spell it `requires_grad`",
                      (checker.edit(node, "requires_grad=" + checker.text(node.value)),), safe=True)
        else:  # w.require_grad = True
            message = "this sets a new, unused attribute, and nothing requires grad"
            fix = Fix("spell it `requires_grad`",
                      (checker.edit(node, checker.text(node.value) + ".requires_grad"),), safe=True)
        checker.report("ADL016", node, f"`{spelled}` is a misspelling of `requires_grad`: {message}", fix)
