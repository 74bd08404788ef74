"""ADL018: a training loop that steps an optimizer and never clears the gradients."""

from __future__ import annotations

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
is not reported.  Clearing done in a helper function called from the loop is
not seen unless the helper's name is `zero_grad`; such loops are reported.""",
)


def check_scope(checker, scope) -> None:
    backwards = [s for s, _ in scope.backwards + scope.retain_backwards]
    for seq, node, _ in scope.steps:
        loops = [(start, end) for start, end in scope.finished_loops if start < seq < end]
        if not loops:
            continue
        start, end = max(loops)  # the innermost loop
        conditional = any(start < s <= seq < e for s, _, e in scope.branches)
        if conditional or not any(start < b < end for b in backwards):
            continue
        if any(start < z < end for z in scope.zero_grads):
            continue
        checker.report("ADL018", node,
                       f"`{checker.text(node.func)}()` runs on every iteration of this loop, but "
                       f"nothing in the loop clears the gradients (`zero_grad()`): backward() "
                       f"adds into `.grad`, so each step uses the sum of all past gradients")
