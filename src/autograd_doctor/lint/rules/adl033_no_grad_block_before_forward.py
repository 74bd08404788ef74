"""ADL033 (opt-in): a `with torch.no_grad():` block that ends before the forward
it prepares: the block only converts the input, and the evaluated module runs
on it after the block, with gradients on."""

from __future__ import annotations

import ast

from autograd_doctor.lint.repository_callers import called_only_without_gradients
from autograd_doctor.lint.rules.adl031_eval_loop_with_gradients import (
    _FRAMEWORK_NO_GRAD, _Runs, _forwarding_methods, _grad_off_decorator, _trains,
)
from autograd_doctor.lint.rules.adl032_td_target_not_detached import _grad_off_call
from autograd_doctor.lint.rules.base import Rule

RULE = Rule(
    code="ADL033", name="no-grad-block-before-forward", default=False,
    summary="A `torch.no_grad()` block only prepares the input of an evaluated module, which runs after the "
            "block with gradients on: the forward records a graph and saves its activations (memory, time).",
    what_it_does="""In a function that calls `M.eval()` and never `backward()`, `step()` or
`autograd.grad`, finds a `with torch.no_grad():` (or `inference_mode()`) block
that does not run `M` but binds names, followed in the same block of statements
(before the names are bound again) by a statement, outside any grad-off block,
that runs `M` (`M(...)`, `M.forward(...)`, a forwarding method of a class of
the file) on one of those names.  Silent when the function is decorated with
`no_grad` / `inference_mode`, freezes parameters, is Lightning's
`validation_step` / `test_step` / `predict_step`, or when every call of it in
the repository is made without gradients.""",
    why_bad="""The grad mode is a property of the block, not of the tensors made in it: a
tensor made under `no_grad` does not require grad, but the module's parameters
do, so the forward run after the block records a graph and keeps the
activations its backward would need for as long as the output lives.  A port
from `volatile=True` that wrapped only the input (`with torch.no_grad(): x =
Variable(input)`) evaluates with gradients on (Efficient-Segmentation-Networks:
out of memory in validation).  The values are right; the cost is memory and
time.""",
    example="""model.eval()
for x in loader:
    with torch.no_grad():
        x = x.to(device)
    out = model(x)""",
    use_instead="""model.eval()
for x in loader:
    with torch.no_grad():
        x = x.to(device)
        out = model(x)""",
    fix_safety="No automatic fix: where the block should end is not in the code.",
    known_problems="""Opt-in (advice: the values are right, memory and time are not).  A module
whose parameters are all frozen elsewhere builds no graph and would be
reported.  Only the function's own `M.eval()` counts.""",
)


def check_file(checker) -> None:
    if ".eval()" not in checker.source or "no_grad" not in checker.source and "inference_mode" not in checker.source:
        return
    forwarding = _forwarding_methods(checker.tree)
    for func in ast.walk(checker.tree):
        if isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
            _check_function(checker, func, forwarding)


def _check_function(checker, func, forwarding) -> None:
    if func.name in _FRAMEWORK_NO_GRAD or any(_grad_off_decorator(d) for d in func.decorator_list) \
            or _trains(checker, func):
        return
    evaluated = {checker.text(c.func.value) for c in ast.walk(func)
                 if isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute) and c.func.attr == "eval"
                 and not c.args}
    if not evaluated:
        return
    runs = _Runs(checker, evaluated, forwarding)
    for block, forward in _blocks_then_forwards(func.body, runs):
        if called_only_without_gradients(func.name, checker.filename, checker.tree,
                                         module_level=func in checker.tree.body):
            return
        checker.report(
            "ADL033", forward,
            "the `torch.no_grad()` block at line %d ends before this forward: the model runs on what the block "
            "made with gradients on (`eval()` does not turn them off; a tensor made under `no_grad` does not "
            "turn them off either), so it records a graph and saves its activations (memory and time; the "
            "values are right); run the forward inside the block" % block.lineno)
        return


def _blocks_then_forwards(body, runs):
    """(grad-off block, the later statement of the same body that runs the module on a
    name the block bound) in every statement list of ``body`` outside grad-off blocks."""
    for i, stmt in enumerate(body):
        if isinstance(stmt, (ast.With, ast.AsyncWith)) and any(_grad_off_call(it.context_expr) for it in stmt.items):
            if any(runs(n) for n in ast.walk(stmt)):
                continue
            bound = {n.id for s in ast.walk(stmt) if isinstance(s, (ast.Assign, ast.AugAssign, ast.AnnAssign))
                     for t in (s.targets if isinstance(s, ast.Assign) else [s.target])
                     for n in ast.walk(t) if isinstance(n, ast.Name)}
            for later in body[i + 1:]:
                if isinstance(later, (ast.With, ast.AsyncWith)) and \
                        any(_grad_off_call(it.context_expr) for it in later.items):
                    continue
                if isinstance(later, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    continue
                call = next((n for n in ast.walk(later) if runs(n) and _reads_any(n, bound)), None)
                if call is not None and _simple(later):
                    yield stmt, later
                    break
                stored = {n.id for n in ast.walk(later) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
                bound -= stored
                if not bound:
                    break
            continue
        for block in ("body", "orelse", "finalbody"):
            inner = getattr(stmt, block, None)
            if isinstance(inner, list) and not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                                 ast.ClassDef)):
                yield from _blocks_then_forwards(inner, runs)
        for handler in getattr(stmt, "handlers", []) or []:
            yield from _blocks_then_forwards(handler.body, runs)


def _simple(stmt) -> bool:
    """A statement with no body of its own (the forward is on the statement itself)."""
    return not any(isinstance(getattr(stmt, b, None), list) for b in ("body", "orelse", "finalbody"))


def _reads_any(call, names: set) -> bool:
    args = list(call.args) + [k.value for k in call.keywords]
    return any(isinstance(n, ast.Name) and n.id in names for a in args for n in ast.walk(a))
