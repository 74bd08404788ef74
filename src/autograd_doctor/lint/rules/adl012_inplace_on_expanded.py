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
        if w.via == "expand" or _expanded_binding_reaches(scope, w):
            checker.report("ADL012", w.node,
                           "in-place write to an `expand()`ed tensor: its elements share memory, "
                           "so one write changes many of them")
            scope.reported.add(id(w.node))


def _expanded_binding_reaches(scope, w) -> bool:
    """The `name = x.expand(...)` binding live at the write in source order is on a
    path to it.  In the other branch of one `if` (`if prefix: s = g.expand(n, k)`,
    `elif sampling: torch.gather(..., out=s)`) it reaches the write only through a
    later iteration of a loop around both, and not when the loop re-binds the name
    on every path before the write (`s = buffer(...)` at the top of each step)."""
    bound = w.expanded_at
    if not bound:
        return False
    if not scope.exclusive(bound, w.seq):
        return True
    return any(start < bound < end and start < w.seq < end
               and not scope.rebound_on_every_path(w.name, start, w.seq)
               for start, end in scope.finished_loops)
