"""ADL008 (opt-in advice): `torch.tensor(t)` of a tensor."""

from __future__ import annotations


from autograd_doctor.lint.rules.base import Rule

RULE = Rule(
    code="ADL008", name="tensor-constructor-on-tensor", default=False,
    summary="`torch.tensor(t)` / `torch.Tensor(t)` on a tensor.",
    what_it_does="Finds `torch.tensor(t)` and `torch.Tensor(t)` where `t` is known to be a tensor.",
    why_bad="""`torch.tensor` always copies and drops the autograd graph (PyTorch warns
about it); `torch.Tensor(t)` is the legacy constructor.  The intent is
clearer, and the graph cut explicit, with `t.detach().clone()`.""",
    example="y = torch.tensor(x)",
    use_instead="y = x.detach().clone()",
    fix_safety="""Safe for `torch.tensor(t)` with no other arguments (the result is the
same).  No fix when `dtype=`/`device=` are passed, or for `torch.Tensor(t)`.""",
    known_problems="None known.",
)


def check_scope(checker, scope) -> None:
    for node, first, fix in scope.tensor_ctors:
        checker.report("ADL008", node, f"`{checker.text(node.func)}()` of tensor `{checker.text(first)}` "
                       f"copies it and drops it from the graph", fix)
