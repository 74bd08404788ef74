"""ADL008 (opt-in advice): `torch.tensor(t)` of a tensor."""

from __future__ import annotations

from autograd_doctor.lint.findings import Fix
from autograd_doctor.lint.rules.base import Rule

RULE = Rule(
    code="ADL008", name="tensor-constructor-on-tensor", default=False,
    summary="`torch.tensor(t)` on a tensor.",
    what_it_does="""Finds `torch.tensor(t)` where `t` is known to be a tensor.  Not the legacy
constructor `torch.Tensor(t)`: given a tensor, it returns an alias of it (the
same storage and dtype) that keeps its graph, so nothing is copied or cut.""",
    why_bad="""`torch.tensor` always copies and drops the autograd graph (PyTorch warns
about it).  The intent is clearer, and the graph cut explicit, with
`t.detach().clone()`.""",
    example="y = torch.tensor(x)",
    use_instead="y = x.detach().clone()",
    fix_safety="""Safe for `torch.tensor(t)` with no other arguments (the result is the
same).  No fix when `dtype=`/`device=` are passed.""",
    known_problems="None known.",
)


def on_call(checker, node, q) -> None:
    """`torch.tensor(t)` of a tensor, where gradients are on.  `torch.Tensor(t)` of a
    tensor is `t.alias()` (torch 2.13: same storage, `AliasBackward0`, gradients reach
    `t`): it neither copies nor cuts, so it is not reported (set AZ: the `forward`s
    of twelve critics and policies of one RL repository, `torch.Tensor(x)` of an
    input that may carry the actor's graph)."""
    if q != "torch.tensor" or not node.args or checker.scope.grad_off:
        return
    first = node.args[0]
    if checker.is_tensor(first):
        checker.scope.note("ADL008", (node, first, q))


def check_scope(checker, scope) -> None:
    for node, first, q in scope.noted("ADL008"):
        fix = None
        if len(node.args) == 1 and not node.keywords:
            fix = Fix("use `.detach().clone()`",
                      (checker.edit(node, checker.atom_text(first) + ".detach().clone()"),), safe=True)
        checker.report("ADL008", node, f"`{checker.text(node.func)}()` of tensor `{checker.text(first)}` "
                       f"copies it and drops it from the graph", fix)
