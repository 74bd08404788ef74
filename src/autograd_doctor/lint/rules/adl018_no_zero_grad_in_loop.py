"""ADL018: a training loop that steps an optimizer and never clears the gradients."""

from __future__ import annotations

import ast

from autograd_doctor.lint import names as N
from autograd_doctor.lint.rules.base import Rule

RULE = Rule(
    code="ADL018", name="no-zero-grad-in-loop",
    summary="A loop calls `backward()` and `optimizer.step()` on every iteration but never clears the gradients.",
    what_it_does="""Finds a `for`/`while` loop whose body runs `backward()` and, not inside an
`if`, `<optimizer>.step()`, with no `zero_grad()` (of any optimizer or
module), `p.grad = None`, `p.grad.zero_()` or `p.grad.detach_()` anywhere in
that loop.""",
    why_bad="""`backward()` adds into `.grad`.  Without clearing, the step of iteration
k uses the sum of the gradients of iterations 1..k: training silently
diverges or crawls.  No error is raised.""",
    example="""for x, y in data:
    loss = F.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()""",
    use_instead="""for x, y in data:
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()""",
    fix_safety="No automatic fix: where to clear (and which parameters) is a choice.",
    known_problems="""Gradient accumulation steps under an `if` (`if (i + 1) % k == 0:`) and
is not reported.  Clearing done in a same-file helper called from the loop
(`reset_grad()`, `self.reset_grad()`) is seen; a helper of another object or
file (`trainer.reset_grad()`) is not, and such loops are reported.
An optimizer built inside the loop over tensors also made there (`x =
z.detach().clone()`, `opt = SGD([x])`: a fresh leaf each iteration, as
guidance loops do) has nothing to accumulate and is not reported.""",
)


def check_scope(checker, scope) -> None:
    backwards = [s for s, _ in scope.backwards + scope.retain_backwards]
    for seq, node, optimizer in scope.steps:
        loops = [(start, end) for start, end in scope.finished_loops if start < seq < end]
        if not loops:
            continue
        start, end = max(loops)  # the innermost loop
        conditional = any(start < s <= seq < e for s, _, e in scope.branches)
        if conditional or not any(start < b < end for b in backwards):
            continue
        if any(start < z < end for z in scope.zero_grads):
            continue
        if _fresh_each_iteration(checker, scope, optimizer, seq, start):
            continue
        checker.report("ADL018", node,
                       f"`{checker.text(node.func)}()` runs on every iteration of this loop, but "
                       f"nothing in the loop clears the gradients (`zero_grad()`): backward() "
                       f"adds into `.grad`, so each step uses the sum of all past gradients")


def _fresh_each_iteration(checker, scope, optimizer: str, seq: int, start: int) -> bool:
    """``optimizer`` (stepped at ``seq``) is built inside the loop (after ``start``)
    from a list of tensors all made new in the loop: no gradient outlives an
    iteration (`x = z.detach().clone(); opt = torch.optim.SGD([x])`)."""
    entry = scope.binding(optimizer, seq) if optimizer.isidentifier() else None
    if entry is None or entry[0] <= start or not isinstance(entry[1], ast.Call):
        return False
    build = entry[1]
    func = build.func
    short = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    if not ((checker.qualname(func) or "").startswith("torch.optim.") or short in N.OPTIMIZER_CLASSES):
        return False
    params = build.args[0] if build.args else next(
        (k.value for k in build.keywords if k.arg == "params"), None)
    if not isinstance(params, (ast.List, ast.Tuple)) or not params.elts:
        return False
    for p in params.elts:
        made = scope.binding(p.id, entry[0]) if isinstance(p, ast.Name) else None
        if made is None or made[0] <= start or not _new_tensor(checker, made[1]):
            return False
    return True


def _new_tensor(checker, value) -> bool:
    """A call that returns a new tensor object, whose `.grad` starts empty: a
    `torch.*` function (a factory, an op, `nn.Parameter`), `.clone()`,
    `.detach()`, or an in-place `requires_grad_()` on one of those."""
    if not isinstance(value, ast.Call):
        return False
    func = value.func
    if (checker.qualname(func) or "").startswith("torch."):
        return True
    if isinstance(func, ast.Attribute):
        if func.attr in ("clone", "detach"):
            return True
        if func.attr == "requires_grad_":
            return _new_tensor(checker, func.value)
    return False
