from autograd_doctor.lint.rules import Rule

RULES = [
    Rule(
        code="ADL004", name="tensor-data-attribute",
        summary="`.data` is used in code that runs with gradients enabled.",
        what_it_does="""Finds reads and writes of `<tensor>.data` (a known tensor, or
`<x>.weight`, `<x>.bias`, `<x>.grad`) in code that runs with gradients: a
`forward()` method, a function named `train*` or `training_step`, or a
function (or script) that calls `.backward()` or `torch.autograd.grad()`;
and there only outside `torch.no_grad()` /
`torch.inference_mode()` blocks, `@torch.no_grad()` functions and
parameter-initialisation functions (`__init__`, `reset_parameters`,
`_init_weights`, `init_*`...).""",
        why_bad="""`.data` gives a tensor that shares storage with the original but not its
version counter.  A write through it is invisible to autograd: if the
value was saved for backward, the gradient is silently wrong instead of
raising an error.  `.detach()` shares the version counter, so PyTorch can
catch the mistake; `torch.no_grad()` makes the intent explicit.""",
        example="""loss.backward()
w.data -= lr * w.grad
scale = out.data.abs().max()""",
        use_instead="""loss.backward()
with torch.no_grad():
    w -= lr * w.grad
scale = out.detach().abs().max()""",
        fix_safety="""Unsafe: a read `x.data` becomes `x.detach()`.  A later in-place write
through the result is then tracked by autograd and may raise where it was
silent before.  Writes through `.data` get no automatic fix.""",
        known_problems="""Tensors are recognised by local dataflow only; `.data` on other objects
(a dataset's `.data`) is not reported unless the object is known to be a
tensor.""",
    ),
    Rule(
        code="ADL005", name="write-through-detached-alias",
        summary="A tensor obtained with `.detach()` is written in place while its source is still used.",
        what_it_does="""Finds an in-place write to `d` where `d = x.detach()` was bound earlier in
the same function (and neither name was re-bound since), when `x` is used
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
    ),
]
