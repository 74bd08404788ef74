from autograd_doctor.lint.rules import Rule

RULES = [
    Rule(
        code="ADL006", name="deepcopy-of-tensor",
        summary="`copy.deepcopy` of a tensor; use `.detach().clone()`.",
        what_it_does="Finds `copy.deepcopy(t)` where `t` is known to be a tensor (not a module or a dict).",
        why_bad="""`deepcopy` raises "Only Tensors created explicitly by the user ... support
the deepcopy protocol" for non-leaf tensors, and for leaves it also copies
`requires_grad` and the `.grad` field, which is rarely wanted.""",
        example="snapshot = copy.deepcopy(h)",
        use_instead="snapshot = h.detach().clone()",
        fix_safety="""Unsafe: the result no longer requires grad even when a leaf did, and no
`.grad` is copied.""",
        known_problems="Deep copies of modules, optimizers and dicts are fine and not reported.",
    ),
    Rule(
        code="ADL007", name="clone-then-detach",
        summary="`x.clone().detach()`; write `x.detach().clone()`.",
        what_it_does="Finds `.clone().detach()` chains.",
        why_bad="""`clone()` first records a copy in the autograd graph that `detach()`
immediately throws away: wasted work and memory.  PyTorch's own warning
recommends `detach().clone()`.""",
        example="y = x.clone().detach()",
        use_instead="y = x.detach().clone()",
        fix_safety="Safe: both give an independent copy with `requires_grad=False`.",
        known_problems="None known.",
    ),
    Rule(
        code="ADL008", name="tensor-constructor-on-tensor",
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
    ),
    Rule(
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
    ),
]
