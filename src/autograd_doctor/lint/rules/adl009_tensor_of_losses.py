"""ADL009: `torch.tensor([...])` of graph tensors used as a loss."""

from __future__ import annotations


from autograd_doctor.lint.rules.base import Rule

RULE = Rule(
    code="ADL009", name="tensor-of-losses",
    summary="`torch.tensor([...])` of tensors is used as a loss, which cuts the graph.",
    what_it_does="""Finds `name = torch.tensor([a, b, ...])` whose elements are tensors, when
`name` contains "loss" or `name.backward()` is called in the function.""",
    why_bad="""`torch.tensor` copies the values; the result has no `grad_fn`.  Calling
`backward()` on it fails ("does not require grad"), or, if it was combined
with other terms, those parts silently get no gradient.""",
    example="loss = torch.tensor([loss_a, loss_b]).sum()",
    use_instead="loss = torch.stack([loss_a, loss_b]).sum()",
    fix_safety="""Unsafe: `torch.tensor` becomes `torch.stack`.  Gradients now flow,
which is the intent but a change; the elements must have the same shape.""",
    known_problems="Lists built up with `.append` in a loop are not tracked.",
)


def check_scope(checker, scope) -> None:
    for name, node, fix in scope.loss_lists:
        if "loss" in name.lower() or name in scope.backward_names:
            checker.report("ADL009", node,
                           "`torch.tensor([...])` of tensors copies their values and cuts the graph; "
                           f"`{name}` will not backpropagate into them", fix)
