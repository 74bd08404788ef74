from autograd_doctor.lint.rules import Rule

RULES = [
    Rule(
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
    ),
    Rule(
        code="ADL011", name="stored-view-overwritten-in-loop",
        summary="A view (or the tensor itself) is stored in a container, and its base is written in place later in the loop.",
        what_it_does="""Inside a `for`/`while` loop, finds `L.append(V)`, `L.insert(i, V)` or
`D[k] = V` where `V` is a tensor `x` or a view of it, when the same loop also
writes `x` in place and never re-binds `x`.""",
        why_bad="""Every stored entry shares memory with `x`; after the loop they all show
`x`'s final values.  No error is raised.""",
        example="""for step in range(n):
    h.mul_(decay)
    history.append(h)""",
        use_instead="""for step in range(n):
    h = h * decay
    history.append(h)
# or history.append(h.clone())""",
        fix_safety="No automatic fix.",
        known_problems="Stores into attributes (`self.cache[...]`) are not tracked.",
    ),
    Rule(
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
    ),
]
