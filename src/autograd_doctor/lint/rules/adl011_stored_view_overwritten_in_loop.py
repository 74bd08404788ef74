"""ADL011: views stored in a container while their base is overwritten in the loop."""

from __future__ import annotations

from autograd_doctor.lint.rules.base import Rule

RULE = Rule(
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
    known_problems="""Stores into attributes (`self.cache[...]`) are not tracked.  A container
whose entries the file replaces by clones of themselves (`memories[i] =
memories[i].clone()`, to "break the reference") keeps views on purpose and is
not reported.""",
)


def on_loop_end(checker, loop) -> None:
    """A tensor (or a view of it) stored in a container in the loop, while the
    loop also writes it in place and never re-binds it."""
    for name, store, itself in loop.stores:
        if name in loop.written and name not in loop.bound and name in checker.scope.tensors:
            checker.scope.note("ADL011", (store, name, itself))


def check_scope(checker, scope) -> None:
    for store, name, itself in scope.noted("ADL011"):
        what = f"`{name}` itself" if itself else f"a view of `{name}`"
        checker.report("ADL011", store,
                       f"{what} is stored here, but `{name}` is written in place in the same "
                       f"loop, so every stored entry shares its memory and shows its last values")
