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
    known_problems="""A loop over a counter (`for b in range(n)`, `enumerate`) that stores the
counter's row (`kept[b] = x[b, 0]`) after every write of `x` in the loop, each
to that same row, is not reported: later iterations write other rows.  Stores
into attributes (`self.cache[...]`) are not tracked.  A container
whose entries the file replaces by clones of themselves (`memories[i] =
memories[i].clone()`, to "break the reference") keeps views on purpose and is
not reported.""",
)


def on_loop_end(checker, loop) -> None:
    """A tensor (or a view of it) stored in a container in the loop, while the
    loop also writes it in place and never re-binds it."""
    for name, store, itself, order, row in loop.stores:
        if name in loop.written and name not in loop.bound and name in checker.scope.tensors \
                and not _own_row_written_before(checker, loop, name, order, row):
            checker.scope.note("ADL011", (store, name, itself))


def _own_row_written_before(checker, loop, name: str, order: int, row: str) -> bool:
    """`for b in range(n): x[b, 0] = v; kept[b] = x[b, 0]`: the stored entry is the row
    the loop's counter selects, and every write to `x` in the loop writes that row and
    comes before the store.  Later iterations write other rows (the counter differs
    each time), so no write reaches an entry after it was stored.  An enclosing loop
    runs the counter over the same rows again, so each one must bind `x` afresh."""
    counter = loop.counter[0] if loop.counter else ""
    if not row or row != counter or counter in loop.bound:
        return False
    if any(name not in outer.bound for outer in checker.scope.loops):
        return False
    writes = [(seq, written_row) for written, seq, written_row in loop.row_writes if written == name]
    return bool(writes) and all(written_row == row and seq < order for seq, written_row in writes)


def check_scope(checker, scope) -> None:
    for store, name, itself in scope.noted("ADL011"):
        what = f"`{name}` itself" if itself else f"a view of `{name}`"
        checker.report("ADL011", store,
                       f"{what} is stored here, but `{name}` is written in place in the same "
                       f"loop, so every stored entry shares its memory and shows its last values")
