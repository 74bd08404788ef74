"""ADL005: a write through a `.detach()` alias whose source is used afterwards."""

from __future__ import annotations


from autograd_doctor.lint.rules.base import Rule

RULE = Rule(
    code="ADL005", name="write-through-detached-alias",
    summary="A tensor obtained with `.detach()` is written in place while its source is still used.",
    what_it_does="""Finds an in-place write to `d` where `d = x.detach()` (or the function
form, `d = torch.detach(x)`) was bound earlier in the same function (and neither name was re-bound since), when `x` is used
again after the write.""",
    why_bad="""`detach()` returns a tensor that shares storage with `x`: the write
changes `x` too.  People expect a copy.""",
    example="""target = pred.detach()
target[mask] = 0
loss = ((pred - target) ** 2).mean()   # pred was zeroed too""",
    use_instead="""target = pred.detach().clone()
target[mask] = 0
loss = ((pred - target) ** 2).mean()""",
    fix_safety="No automatic fix: whether to copy depends on intent.",
    known_problems="""Only `name = src.detach()` bindings in the same function are tracked.
A write straight through the call, `x.detach().clamp_(...)`, is not
reported: the alias is thrown away, so the write can only be meant to change
`x` (without recording it in the graph).""",
)


def check_scope(checker, scope) -> None:
    for w in scope.writes:
        if id(w.node) in scope.reported or not w.grad_on:
            continue
        # Only a *name* bound to `.detach()` is confusing: `x.detach().add_(1)`
        # discards the alias, so it can only be meant to change `x`.
        source = w.detached_from if w.via != "detach" else ""
        if source and scope.used_after(source, w.seq):
            checker.report("ADL005", w.node,
                           f"`{w.name}` shares memory with `{source}` (it came from `.detach()`); "
                           f"writing it in place also changes `{source}`, which is used afterwards")
            scope.reported.add(id(w.node))
