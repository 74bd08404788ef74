"""ADL014: an in-place write to a leaf that requires grad, with gradients on."""

from __future__ import annotations

from autograd_doctor.lint.rules.base import Rule

RULE = Rule(
    code="ADL014", name="inplace-on-leaf-requiring-grad", needs_gradients=True,
    summary="A leaf tensor that requires grad is modified in place outside `torch.no_grad()`.",
    what_it_does="""Finds in-place writes (`w += ...`, `w.add_(...)`, `w[i] = ...`, `w.zero_()`)
with gradients enabled to a leaf that requires grad: a tensor made in the same
function with `requires_grad=True`, `.requires_grad_()` or `nn.Parameter(...)`,
the `weight` or `bias` of a layer made in the same function (`dense =
nn.Linear(...)`; `dense.weight[:, 0] -= v`), or the loop variable of `for p in
model.parameters():` in a function that also runs `backward()` (the
hand-written SGD update).""",
    why_bad="""PyTorch refuses: `RuntimeError: a leaf Variable that requires grad is being
used in an in-place operation.`  A parameter update must not be recorded in
the graph, so it has to run under `torch.no_grad()` (or go through an
optimizer).""",
    example="""loss.backward()
for p in model.parameters():
    p -= lr * p.grad""",
    use_instead="""loss.backward()
with torch.no_grad():
    for p in model.parameters():
        p -= lr * p.grad""",
    fix_safety="No automatic fix: where the `no_grad()` block should start is a choice.",
    known_problems="""Writes through `.data` or `.detach()` are allowed by PyTorch and not
reported (ADL004 covers `.data`).  A layer's `weight`/`bias` is claimed only
in files that never mention `requires_grad` (one could have frozen it).  A loop over parameters in a helper that
its caller runs under `no_grad()` is not reported unless the helper itself
calls `backward()`.""",
)


def check_scope(checker, scope) -> None:
    does_backward = bool(scope.backwards or scope.retain_backwards)
    for w in scope.writes:
        if not w.grad_on or w.through_data or w.via == "detach" or id(w.node) in scope.reported:
            continue
        if w.grad_leaf in ("factory", "module") or (w.grad_leaf == "parameter" and does_backward):
            what = "a parameter" if w.grad_leaf in ("parameter", "module") else "a leaf that requires grad"
            checker.report("ADL014", w.node,
                           f"`{w.name}` is {what}, modified in place ({w.how}) with gradients "
                           f"enabled: PyTorch raises 'a leaf Variable that requires grad is being "
                           f"used in an in-place operation'; do it under `torch.no_grad()`")
            scope.reported.add(id(w.node))
