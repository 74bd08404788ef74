"""ADL004 (opt-in advice): `.data` in code that runs with gradients."""

from __future__ import annotations


from autograd_doctor.lint.rules.base import Rule

RULE = Rule(
    code="ADL004", name="tensor-data-attribute", default=False,
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
)


def check_scope(checker, scope) -> None:
    if scope.backwards or scope.retain_backwards or scope.name in ("forward", "training_step") \
            or scope.name.startswith("train"):
        for node, message, fix in scope.data_uses:
            checker.report("ADL004", node, message, fix)
