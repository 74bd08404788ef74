"""ADL012: an in-place write to an `expand()`ed tensor."""

from __future__ import annotations


from autograd_doctor.lint.rules.base import Rule

RULE = Rule(
    code="ADL012", name="inplace-on-expanded",
    summary="In-place write to the result of `expand()`.",
    what_it_does="""Finds in-place writes (indexing, augmented assignment, `_` methods) to
`x.expand(...)`/`x.expand_as(...)` or to a name bound to it.""",
    why_bad="""`expand()` makes a view where many elements share one memory location.
Writing it either raises "unsupported operation: more than one element of
the written-to tensor refers to a single memory location" or, through
tricks, writes one value many times.""",
    example="""m = bias.expand(n, -1)
m[0] += 1""",
    use_instead="""m = bias.expand(n, -1).clone()   # or bias.repeat(n, 1)
m[0] += 1""",
    fix_safety="No automatic fix.",
    known_problems="None known.",
)


def check_scope(checker, scope) -> None:
    for w in scope.writes:
        if id(w.node) in scope.reported or not w.grad_on:
            continue
        if w.via == "expand" or w.expanded:
            checker.report("ADL012", w.node,
                           "in-place write to an `expand()`ed tensor: its elements share memory, "
                           "so one write changes many of them")
            scope.reported.add(id(w.node))
