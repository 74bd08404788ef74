"""ADL022: gradient clipping after the optimizer step it should bound, in a loop
that clears the gradients before the next step, or between the clear and the
backward pass: the clipping does nothing."""

from __future__ import annotations

import ast

from autograd_doctor.lint.rules.base import Rule
from autograd_doctor.lint.walk import own_nodes

RULE = Rule(
    code="ADL022", name="clip-after-step",
    summary="Gradients clipped after `optimizer.step()` in a loop that clears them before the next step: the clipping has no effect.",
    what_it_does="""In a `for`/`while` loop that runs `backward()`, finds a call of
`torch.nn.utils.clip_grad_norm_` (or `clip_grad_value_`, `clip_grad_norm`),
also inside an `if` (`if max_grad_norm is not None:`) or as the value of an
assignment (`total_norm = clip_grad_norm_(...)`, the norm kept for logging),
that comes after the
loop's optimizer step (`<optimizer>.step()`, `scaler.step(optimizer)`) in the
same block, with no backward pass and no other step between them or after the
clip in the loop, when the loop clears the gradients (`zero_grad()`) in that
block or a block around it, so on every iteration that steps.  The gradients
the clip rescales are never read by a step: the next iteration clears them
before its own backward pass.
Also a clip between the optimizer's `zero_grad()` and the `backward()` that
precedes its step, in one block of a loop that steps only that optimizer
(TabM's example loop): the clip rescales the gradients just cleared, and the
step applies the unclipped ones the backward computes after it.""",
    why_bad="""`optimizer.step()` reads the gradients when it runs.  Clipping after it
rescales gradients the step has already used, and the `zero_grad()` of the
next iteration throws them away: the update is the unclipped one, and the
`--max-grad-norm` the run was configured with silently does nothing
(GraphStorm's trainers, onsets-and-frames' `train.py`).  Nothing raises; a
run that needed the clipping diverges or is less stable than intended.""",
    example="""for x, y in loader:
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)""",
    use_instead="""for x, y in loader:
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()""",
    fix_safety="No automatic fix: moving the clip before the step changes the updates (as it should).",
    known_problems="""Only a step and a clip in the same block of the loop body are matched
(a clip in a helper function called after the step is not seen), and only
steps of receivers named like an optimizer (`optimizer`, `opt_g`,
`self.optim`) or through a grad scaler.  `nn.utils.clip_grad_norm_` is read as
torch's when no import of the file binds `nn` (a star import of the project's
helpers).  A loop that steps several
optimizers is reported only when every step comes before the clip; a clip
before the backward only when the loop steps one optimizer, the one cleared.
A clip to an infinite norm (`clip_grad_norm_(params, float("inf"))`, the idiom
for measuring the norm) is not a clip and is not reported.""",
)

_CLIP_FUNCTIONS = frozenset({"clip_grad_norm_", "clip_grad_value_", "clip_grad_norm"})


def check_scope(checker, scope) -> None:
    """Only a file with an optimizer step inside a loop is read again (check_file)."""
    if scope.steps and scope.finished_loops and any(
            a < seq < b for seq, _, _ in scope.steps for a, b in scope.finished_loops):
        checker.notes["ADL022 loop steps"] = [True]


def check_file(checker) -> None:
    """Every loop of the file with a clip after its step (read from the tree only
    when a loop steps an optimizer, or the file scales a loss as a grad scaler does,
    and the source names a clip function)."""
    if not (checker.notes.get("ADL022 loop steps") or ".scale(" in checker.source) \
            or "clip_grad" not in checker.source:
        return
    for loop in ast.walk(checker.tree):
        if isinstance(loop, (ast.For, ast.AsyncFor, ast.While)):
            _check_loop(checker, loop)


def _check_loop(checker, loop) -> None:
    calls = list(_calls_in(loop.body))
    steps = [c for c in calls if _is_step(checker, c)]
    backwards = [c for c in calls if _is_backward(c)]
    if not steps or not backwards:
        return
    _check_clip_before_backward(checker, loop, steps)
    branches = _if_branches(loop.body)
    for block, ancestors in _blocks(loop.body, ()):
        for i, stmt in enumerate(block):
            step = _step_of(checker, stmt)
            if step is None or not any(b.lineno < step.lineno for b in backwards):
                continue
            for later in block[i + 1:]:
                if any(_is_backward(c) or _is_step(checker, c) for c in _calls_in([later])
                       if not _is_clip(checker, c)):
                    break
                clip = _clip_in(checker, later)
                if clip is None:
                    continue
                # a step or backward later in the text runs after the clip unless it is in
                # the other branch of an `if` around the clip (`if use_amp: ... else: ...`)
                if any(c.lineno > clip.lineno and not _exclusive(branches, c, clip) for c in steps + backwards):
                    break
                clear = _clear_around(block, ancestors)
                if clear is not None:
                    _report(checker, clip, step, clear)
                break


def _check_clip_before_backward(checker, loop, steps) -> None:
    """`optimizer.zero_grad()`, then the clip, then `loss.backward()` and
    `optimizer.step()`, in one block of a loop that steps only that optimizer: the
    clip rescales the gradients just cleared, and the step reads the unclipped ones
    the backward computes after it."""
    receivers = {checker.text(c.func.value) for c in steps}
    if len(receivers) != 1:
        return
    optimizer = receivers.pop()
    for block, _ in _blocks(loop.body, ()):
        clear = None
        for i, stmt in enumerate(block):
            if _is_call_of(checker, stmt, optimizer, "zero_grad"):
                clear = stmt.value
                continue
            if clear is None:
                continue
            calls = list(_calls_in([stmt]))
            clip = _clip_in(checker, stmt)
            if clip is None:
                if any(_is_backward(c) or _is_step(checker, c) for c in calls):
                    clear = None  # a backward (or a step) between the clear and any clip
                continue
            after = _backward_then_step(checker, block[i + 1:], optimizer)
            if after is not None:
                _report_before_backward(checker, clip, clear, *after)
            clear = None


def _backward_then_step(checker, rest, optimizer):
    """The first backward of ``rest`` and the step of ``optimizer`` after it, with no
    clip between them; None when there is no such pair."""
    backward = None
    for stmt in rest:
        if backward is not None and _clip_in(checker, stmt) is not None:
            return None
        if backward is not None and _is_call_of(checker, stmt, optimizer, "step"):
            return backward, stmt.value
        for call in _calls_in([stmt]):
            if _is_clip(checker, call) or (backward is None and _is_step(checker, call)):
                return None
            if backward is None and _is_backward(call):
                backward = call
    return None


def _is_call_of(checker, stmt, receiver: str, method: str) -> bool:
    """``stmt`` is the call statement `<receiver>.<method>(...)`."""
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and \
        isinstance(stmt.value.func, ast.Attribute) and stmt.value.func.attr == method and \
        checker.text(stmt.value.func.value) == receiver


def _report_before_backward(checker, clip, clear, backward, step) -> None:
    name = clip.func.attr if isinstance(clip.func, ast.Attribute) else clip.func.id
    checker.report(
        "ADL022", clip,
        f"`{name}(...)` runs after `{checker.text(clear.func)}()` on line {clear.lineno} cleared the "
        f"gradients and before `backward()` on line {backward.lineno} computes them: it clips nothing, and "
        f"`{checker.text(step.func)}()` on line {step.lineno} applies the unclipped gradients; clip between "
        f"`backward()` and the step",
        related=[(clear.lineno, checker.col(clear.lineno, clear.col_offset), 0, "the gradients are cleared here"),
                 (backward.lineno, checker.col(backward.lineno, backward.col_offset), 0,
                  "computed here, after the clip")])


def _report(checker, clip, step, clear) -> None:
    name = clip.func.attr if isinstance(clip.func, ast.Attribute) else clip.func.id
    checker.report(
        "ADL022", clip,
        f"`{name}(...)` runs after `{checker.text(step.func)}()` on line {step.lineno}, which has already "
        f"used the unclipped gradients, and `zero_grad()` on line {clear.lineno} clears them before the "
        f"next step: the clipping has no effect; clip between `backward()` and the step",
        related=[(step.lineno, checker.col(step.lineno, step.col_offset), 0, "the step reads the gradients here"),
                 (clear.lineno, checker.col(clear.lineno, clear.col_offset), 0,
                  "cleared here before the next step")])


def _blocks(body, ancestors):
    """Each statement list of the loop body with the lists around it, not entering
    nested loops (their own iterations) or function definitions."""
    yield body, ancestors
    for stmt in body:
        if isinstance(stmt, (ast.For, ast.AsyncFor, ast.While, ast.FunctionDef, ast.AsyncFunctionDef,
                             ast.ClassDef)):
            continue
        for field in ("body", "orelse", "finalbody"):
            inner = getattr(stmt, field, None)
            if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                yield from _blocks(inner, ancestors + (body,))
        for handler in getattr(stmt, "handlers", ()):
            yield from _blocks(handler.body, ancestors + (body,))


def _calls_in(stmts):
    """The calls of these statements, not of the functions or classes defined in them."""
    return (node for node in own_nodes(stmts) if isinstance(node, ast.Call))


def _step_of(checker, stmt):
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and _is_step(checker, stmt.value):
        return stmt.value
    return None


def _is_step(checker, call) -> bool:
    """`optimizer.step()`, `self.opt_g.step()`; `scaler.step(optimizer)`, and the same
    call of a grad scaler known by its use whatever its name (`scalar`, `self.amp`)."""
    func = call.func
    if not isinstance(func, ast.Attribute) or func.attr != "step" or \
            not isinstance(func.value, (ast.Name, ast.Attribute)):
        return False
    name = (func.value.id if isinstance(func.value, ast.Name) else func.value.attr).lower()
    if "sched" in name:
        return False
    if "opt" in name and not call.args:
        return True
    return len(call.args) == 1 and ("scaler" in name or checker.text(func.value) in _grad_scalers(checker))


def _grad_scalers(checker) -> frozenset:
    """The receivers the file uses as a grad scaler: `R.scale(loss).backward()` (only a
    `GradScaler` scales a loss and backpropagates the result) or `R = ...GradScaler(...)`.
    Read once per file."""
    known = checker.notes.get("ADL022 grad scalers")
    if known is None:
        found = set()
        for node in ast.walk(checker.tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr == "backward" and isinstance(node.func.value, ast.Call):
                scaled = node.func.value.func
                if isinstance(scaled, ast.Attribute) and scaled.attr == "scale" and len(node.func.value.args) == 1:
                    found.add(checker.text(scaled.value))
            elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.value, ast.Call) \
                    and (checker.qualname(node.value.func) or "").rsplit(".", 1)[-1] == "GradScaler":
                found.add(checker.text(node.targets[0]))
        known = checker.notes["ADL022 grad scalers"] = [frozenset(found)]
    return known[0]


def _if_branches(body) -> list:
    """For each `if` of the loop body, the ids of the nodes in its body and in its
    `else`: a node of one never runs in the same iteration as a node of the other."""
    branches = []
    for node in own_nodes(body):
        if isinstance(node, ast.If) and node.orelse:
            branches.append(({id(n) for n in own_nodes(node.body)}, {id(n) for n in own_nodes(node.orelse)}))
    return branches


def _exclusive(branches, a, b) -> bool:
    return any(id(a) in one and id(b) in other or id(a) in other and id(b) in one for one, other in branches)


def _is_backward(call) -> bool:
    func = call.func
    return (isinstance(func, ast.Attribute) and func.attr in ("backward", "manual_backward")) or (
        isinstance(func, ast.Attribute) and func.attr in ("grad",) and isinstance(func.value, ast.Attribute)
        and func.value.attr == "autograd")


def _is_clip(checker, call) -> bool:
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
    if name not in _CLIP_FUNCTIONS:
        return False
    q = checker.qualname(func) or ""
    if q.startswith("torch."):
        return True
    if not q and isinstance(func, ast.Attribute) and checker.text(func.value) == "nn.utils" \
            and "nn" not in checker.aliases:
        return True  # `nn` no import of the file binds: a star import of the project's helpers
    return isinstance(func, ast.Attribute) and "accelerator" in checker.text(func.value).lower()


def _clip_in(checker, stmt):
    """The clip this statement runs: a call statement, the value of an assignment
    (`total_norm = clip_grad_norm_(...)`, the norm kept for logging: the gradients
    are rescaled all the same), or one in an `if` around it (`if max_grad_norm is
    not None:`), not in a loop or a nested function.  A clip to an infinite norm
    (`clip_grad_norm_(params, float("inf"))`, the idiom for measuring the norm) is
    not a clip."""
    value = stmt.value if isinstance(stmt, (ast.Expr, ast.Assign, ast.AnnAssign)) else None
    if isinstance(value, ast.Call) and _is_clip(checker, value):
        return None if _infinite_bound(checker, value) else value
    if isinstance(stmt, ast.If):
        for inner in stmt.body:
            clip = _clip_in(checker, inner)
            if clip is not None:
                return clip
    return None


def _infinite_bound(checker, call) -> bool:
    """`max_norm` / `clip_value` given as `float("inf")`, `math.inf`, `np.inf`,
    `torch.inf`: nothing is rescaled, the call only measures the norm."""
    bound = call.args[1] if len(call.args) > 1 else next(
        (k.value for k in call.keywords if k.arg in ("max_norm", "clip_value")), None)
    if bound is None:
        return False
    text = checker.text(bound).replace(" ", "").lower()
    return text in ('float("inf")', "float('inf')", "math.inf", "np.inf", "numpy.inf", "torch.inf", "inf")


def _clear_around(block, ancestors):
    """A `zero_grad()` call statement in ``block`` or a block around it: it runs on
    every iteration that runs the step."""
    for body in (block,) + ancestors:
        for stmt in body:
            if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and \
                    isinstance(stmt.value.func, ast.Attribute) and stmt.value.func.attr == "zero_grad":
                return stmt.value
    return None
