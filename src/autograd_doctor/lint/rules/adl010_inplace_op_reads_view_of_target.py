"""ADL010: an in-place op that reads a view of the tensor it writes."""

from __future__ import annotations

from autograd_doctor.lint.findings import Fix

from autograd_doctor.lint.rules.base import Rule

RULE = Rule(
    code="ADL010", name="inplace-op-reads-view-of-target",
    summary="An in-place op reads a view of the tensor it writes (`a -= a[:, :1]`).",
    what_it_does="""Finds `a op= V`, `a.<op>_(V)` and `a.copy_(V)` where `V` is a view of
`a`: basic indexing (`a[:, :1]`, `a[0]`), `a.t()`, `a.T`, `a.transpose(...)`,
`a.view(...)`, `a.expand(...)`, `a.detach()`...  Advanced indexing (`a[idx]`
with a list or tensor) copies and is not reported.""",
    why_bad="""The kernel reads `V` while it writes `a`, and they share memory.  The
result depends on the order the kernel visits elements: `a -= a[:, :1]`
zeroes column 0 first and then subtracts zeros from the others.  No error
is raised.""",
    example="""a -= a[:, :1]
a.add_(a.t())""",
    use_instead="""a -= a[:, :1].clone()
a.add_(a.t().clone())""",
    fix_safety="""Safe: `.clone()` is added to the operand, which gives the result
everybody expects; the old result was unspecified.""",
    known_problems="""Only views of the same *name* are recognised, and only writes to the
whole tensor: `x.select(0, 0).copy_(x.select(0, 1))` writes one view from
another, which may be disjoint, and is not reported.  `x.copy_(x.flip(0))`
is fine (`flip` copies) and not reported.""",
)


def check_scope(checker, scope) -> None:
    for node, value, target in scope.overlaps:
        fix = Fix("copy the operand first with `.clone()`",
                  (checker.edit(value, checker.atom_text(value) + ".clone()"),), safe=True)
        checker.report("ADL010", node,
                       f"`{checker.text(value)}` is a view of `{target}`, which this in-place op "
                       f"writes while reading it; the result depends on the kernel's loop order", fix)
