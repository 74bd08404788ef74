"""ADL015: an in-place write to one of the views chunk/split/unbind returned."""

from __future__ import annotations

from autograd_doctor.lint.rules.base import Rule

RULE = Rule(
    code="ADL015", name="inplace-on-multi-view-output",
    summary="One of the views returned by `chunk`/`split`/`unbind` (or by iterating a tensor) is modified in place.",
    what_it_does="""Finds in-place writes to a name bound by unpacking `x.chunk(...)`,
`x.split(...)`, `x.unbind(...)`, `torch.chunk(x, ...)` (and the other
splitting functions), or to the loop variable of `for row in x:` /
`for row in x.unbind(0):`, when `x` carries a graph (it requires grad).""",
    why_bad="""These functions return several views of one tensor, and autograd cannot
rebase more than one view: the write raises `RuntimeError: Output 0 of
SplitBackward0 is a view and is being modified inplace. This view is the
output of a function that returns multiple views. Such functions do not
allow the output views to be modified inplace.`""",
    example="""x = torch.randn(4, requires_grad=True) * 2
a, b = x.chunk(2)
a.mul_(2)""",
    use_instead="""x = torch.randn(4, requires_grad=True) * 2
a, b = x.chunk(2)
a = a.mul(2)""",
    fix_safety="No automatic fix (the rewrite `a = a.mul(2)` is ADL001's unsafe fix).",
    known_problems="""Only unpacking into names and `for` loops are tracked; `parts =
x.chunk(2); parts[0].mul_(2)` is not.  The source tensor must be known to
require grad.""",
)


def check_scope(checker, scope) -> None:
    for w in scope.writes:
        if not w.grad_on or not w.split_from or w.through_data or w.via == "detach" \
                or id(w.node) in scope.reported:
            continue
        checker.report("ADL015", w.node,
                       f"`{w.name}` is one of several views returned by `{w.split_from}`; writing it "
                       f"in place ({w.how}) raises 'a view ... of a function that returns multiple "
                       f"views ... modified inplace'; write out of place")
        scope.reported.add(id(w.node))
