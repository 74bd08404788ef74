"""ADL010: an in-place op that reads a view of the tensor it writes."""

from __future__ import annotations

import ast

from autograd_doctor.lint.findings import Fix
from autograd_doctor.lint.rules.base import Rule

RULE = Rule(
    code="ADL010", name="inplace-op-reads-view-of-target",
    summary="An in-place op reads a view of the tensor it writes (`a -= a[:, :1]`).",
    what_it_does="""Finds `a op= V`, `a.<op>_(V)` and `a.copy_(V)` where `V` is a view of
`a`: basic indexing (`a[:, :1]`, `a[0]`), `a.t()`, `a.T`, `a.transpose(...)`,
`a.view(...)`, `a.expand(...)`, `a.detach()`...  Advanced indexing (`a[idx]`
with a list or tensor) copies and is not reported.  Also an indexed write whose
index is the written tensor itself, `mask[mask] = v` (IGOS++'s line search):
the index shares the destination's memory.""",
    why_bad="""The kernel reads `V` while it writes `a`, and they share memory.  Where
PyTorch can tell that the two overlap (a transpose, a row, a leading block:
`a.add_(a.t())`, `a += a[0]`), it refuses the op: `RuntimeError:
unsupported operation: some elements of the input tensor and the written-to
tensor refer to a single memory location`.  Where it cannot (a strided view
such as a column), no error is raised and the result depends on the order
the kernel visits elements: `a -= a[:, :1]` zeroes column 0 first and then
subtracts zeros from the others.""",
    example="""a -= a[:, :1]
a.add_(a.t())""",
    use_instead="""a -= a[:, :1].clone()
a.add_(a.t().clone())""",
    fix_safety="""Safe: `.clone()` is added to the operand, which gives the result
everybody expects; the old code raised or gave an unspecified result.""",
    known_problems="""Only views of the same *name* are recognised, and only writes to the
whole tensor: `x.select(0, 0).copy_(x.select(0, 1))` writes one view from
another, which may be disjoint, and is not reported.  `x.copy_(x.flip(0))`
is fine (`flip` copies) and not reported.""",
)


# In-place fills whose last argument is one value: PyTorch reads it before the
# write (`fill_` clones a value that aliases the target; `masked_fill_` and
# `index_fill_` take `.item()`), so `p.fill_(p[0])` is well defined
# (pytorch3d's tests do exactly this).
SCALAR_VALUE_METHODS = frozenset({"fill_", "masked_fill_", "index_fill_"})


def on_inplace_write(checker, target, operands, node) -> None:
    """An in-place op writes the whole tensor ``target`` while reading ``operands``.
    Only a write to the whole tensor is checked: two views of one base
    (`x.select(0, 0).copy_(x.select(0, 1))`) may well be disjoint."""
    if isinstance(node, ast.Call) and node.func.attr in SCALAR_VALUE_METHODS:
        operands = operands[:-1]
    for value in operands:
        if checker.is_view_of(value, target) and target in checker.scope.tensors:
            checker.scope.note("ADL010", (node, value, target))


def check_scope(checker, scope) -> None:
    for node, value, target, *index in scope.noted("ADL010"):
        if index:  # `mask[mask] = v`: ``value`` is the index, the written tensor itself
            fix = Fix("index with a copy: `.clone()`",
                      (checker.edit(value, f"{target}.clone()"),), safe=True)
            checker.report("ADL010", node,
                           f"`{target}` is the index of this write into `{target}` itself: the index and "
                           f"the written-to tensor share memory, and PyTorch raises ('some elements of the "
                           f"input tensor and the written-to tensor refer to a single memory location')", fix)
            continue
        fix = Fix("copy the operand first with `.clone()`",
                  (checker.edit(value, checker.atom_text(value) + ".clone()"),), safe=True)
        checker.report("ADL010", node,
                       f"`{checker.text(value)}` is a view of `{target}`, which this in-place op "
                       f"writes while reading it: PyTorch raises ('some elements of the input tensor and the "
                       f"written-to tensor refer to a single memory location') when it sees the overlap, "
                       f"else the result depends on the kernel's loop order", fix)
