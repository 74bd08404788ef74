"""ADL007 (opt-in advice): `.clone().detach()` instead of `.detach().clone()`."""

from __future__ import annotations


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


def check_scope(checker, scope) -> None:
    for node, inner, fix in scope.clone_detach:
        checker.report("ADL007", node, f"`.clone().detach()` copies `{checker.text(inner)}` inside "
                       "the graph first; `.detach().clone()` copies only the values", fix)
