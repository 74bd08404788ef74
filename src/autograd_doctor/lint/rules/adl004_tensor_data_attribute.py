"""ADL004 (opt-in advice): `.data` in code that runs with gradients."""

from __future__ import annotations

import ast

from autograd_doctor.lint.findings import Fix
from autograd_doctor.lint.rules.base import Rule

RULE = Rule(
    code="ADL004", name="tensor-data-attribute", default=False, needs_gradients=True,
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


def on_data_attribute(checker, node) -> None:
    """`x.data` on a tensor (or a layer's weight, bias or grad) where gradients are on."""
    if checker.scope.grad_off:
        return
    base = node.value
    if checker.is_tensor(base) or (
            isinstance(base, ast.Attribute) and base.attr in ("weight", "bias", "grad")
            and not isinstance(base.value, ast.Call)):
        checker.scope.note("ADL004", node)


def check_scope(checker, scope) -> None:
    """Reported only in a function that trains: one that runs backward() or is
    a forward() or a training step."""
    if scope.backwards or scope.retain_backwards or scope.name in ("forward", "training_step") \
            or scope.name.startswith("train"):
        for node in scope.noted("ADL004"):
            base = checker.text(node.value)
            fix = None
            if isinstance(node.ctx, ast.Load) and not getattr(node, "_adl_written", False):
                fix = Fix("read through `.detach()`", (checker.edit(node, base + ".detach()"),),
                          safe=False)
            checker.report("ADL004", node, f"`.data` on `{base}` bypasses autograd's version "
                           f"tracking in code that runs with gradients enabled", fix)
