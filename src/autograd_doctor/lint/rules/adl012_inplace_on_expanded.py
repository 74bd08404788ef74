"""ADL012: an in-place write to an `expand()`ed tensor."""

from __future__ import annotations

import ast


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
    known_problems="""A tensor with no graph (a comparison's mask, a factory's tensor, or a write
through `.data`) made by `unsqueeze(d)` and then expanded, and written with
an index that takes every dimension the unsqueezes added whole
(`mask = (e == 0).unsqueeze(1).expand(b, h, n)`, then `mask[:, :, 0].fill_(0)`),
with `fill_()` or `zero_()`, writes every alias of an element with the same
value: the result is the one the unexpanded tensor would give, and it is not
reported (an indexed assignment or another in-place op raises there, and is).  The dimensions an
`expand()` widens are taken to be the ones `unsqueeze` added; a dimension of
size 1 that the tensor had before is not seen.  With a graph the same write
raises, and it is reported.""",
)


def check_scope(checker, scope) -> None:
    for w in scope.writes:
        if id(w.node) in scope.reported or not w.grad_on:
            continue
        if w.via == "expand" or (_expanded_binding_reaches(scope, w) and not _writes_every_alias(scope, w)):
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


def _writes_every_alias(scope, w) -> bool:
    """A write with no graph that gives every alias of each element it writes the
    same value (BAN's `mask = (e == 0).unsqueeze(1).unsqueeze(2).expand(att.size())`,
    then `mask[:, :, :, 0].data.fill_(0)`): a `fill_()` or `zero_()` (an indexed
    assignment, `mul_()` or `add_()` checks for overlapping memory and raises even
    so), the tensor carries no graph (bound from a comparison or a factory, or
    written through `.data`), it was made by
    `unsqueeze` calls with constant dimensions and then expanded, and the write's
    index takes each dimension those calls added whole (`:`, or no index at all
    for trailing dimensions), indexing only by slices and integers up to the last
    of them.  The result equals the same write to the unexpanded tensor."""
    if not (w.through_data or w.expanded_at in scope.grad_free_expansions):
        return False
    if not (isinstance(w.node, ast.Call) and isinstance(w.node.func, ast.Attribute)
            and w.node.func.attr in ("fill_", "zero_")):
        return False  # an indexed assignment or `mul_` checks for overlap and raises
    value = next((v for seq, v, _ in scope.bind_values.get(w.name, ()) if seq == w.expanded_at), None)
    added = _unsqueezed_dimensions(value)
    index = _write_index(w.node, w.name)
    if not added or index is None:
        return False
    elements = index.elts if isinstance(index, ast.Tuple) else [index]
    for position, element in enumerate(elements[:max(added) + 1]):
        full = isinstance(element, ast.Slice) and element.lower is None and \
            element.upper is None and element.step is None
        if position in added and not full:
            return False
        if not (full or isinstance(element, ast.Slice) or _integer(element)):
            return False  # a tensor or `None`/`...` index moves the dimensions after it
    return True


def _unsqueezed_dimensions(value) -> set:
    """The dimensions that `x.unsqueeze(a).unsqueeze(b).expand(...)` added to `x`
    (constant, non-negative `a`, `b`); empty when not of that form."""
    if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)
            and value.func.attr in ("expand", "expand_as")):
        return set()
    calls = []
    node = value.func.value
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "unsqueeze":
        if len(node.args) != 1 or not _integer(node.args[0]) or node.args[0].value < 0:
            return set()
        calls.append(node.args[0].value)
        node = node.func.value
    added: set = set()
    for dim in reversed(calls):  # the innermost call runs first
        added = {d + 1 if d >= dim else d for d in added} | {dim}
    return added


def _write_index(node, name: str):
    """The index of `name[...]` that the write statement or call ``node`` writes
    (through `.data` too), or None when it writes the whole tensor or something else."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        target = node.func.value
    elif isinstance(node, ast.AugAssign):
        target = node.target
    elif isinstance(node, ast.Assign) and len(node.targets) == 1:
        target = node.targets[0]
    else:
        return None
    while isinstance(target, ast.Attribute) and target.attr == "data":
        target = target.value
    if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) and target.value.id == name:
        return target.slice
    return None


def _integer(node) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) is int
