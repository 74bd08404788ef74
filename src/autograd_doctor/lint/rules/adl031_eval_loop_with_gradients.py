"""ADL031 (opt-in): an evaluation loop that runs the model with gradients on and
keeps its outputs beyond the iteration: every batch builds a graph that lives
as long as the kept output."""

from __future__ import annotations

import ast

from autograd_doctor.lint.names import INTEGER_RESULT_METHODS
from autograd_doctor.lint.repository_callers import called_only_without_gradients
from autograd_doctor.lint.rules.adl032_td_target_not_detached import _grad_off_call
from autograd_doctor.lint.rules.base import Rule

RULE = Rule(
    code="ADL031", name="eval-loop-with-gradients", default=False,
    summary="An evaluation loop (`model.eval()`, no backward) runs the model with gradients on and keeps its "
            "outputs past the iteration: each batch's graph and activations stay alive (memory, time).",
    what_it_does="""In a function that calls `M.eval()` and never `backward()`, `step()` or
`autograd.grad`, finds a `for` loop after it, outside `torch.no_grad()` /
`inference_mode()`, that calls `M(...)` and keeps the result (or a value
computed from it in the loop) beyond the iteration: appended to a list, stored
on `self`, added into a name from before the loop, or bound to a name read after
the loop (before the name is bound again).  Kept values read through `.item()`,
`.detach()`, `.data`, `.tolist()`, `.numpy()` do not count, nor values with no graph (a comparison, a count of one
such as `sum(mse > t)` or `(pred == y).sum()`, an integer result, `len` / `int` /
`float`).  Silent when the function is decorated with
`no_grad` / `inference_mode` (or a wrapper named after them), in a function
that freezes parameters (`requires_grad_(False)`), when every call of it in the repository is made
without gradients (for a function at the top of its file, the calls in files that
name its module), or for Lightning's `validation_step` / `test_step` /
`predict_step` (run under `no_grad` by the trainer).""",
    why_bad="""`eval()` changes dropout and batch norm, not autograd: with gradients on,
every forward records a graph and saves the activations its backward would
need.  Kept outputs keep that graph alive, so evaluation takes more memory (and
time) than training's forward and runs out of memory on large validation
batches (DeblurGANv2, particleflow, facebookarchive/loop).  The values are
right; the cost is memory and time.""",
    example="""model.eval()
outputs = []
for x in loader:
    outputs.append(model(x))""",
    use_instead="""model.eval()
outputs = []
with torch.no_grad():
    for x in loader:
        outputs.append(model(x))""",
    fix_safety="No automatic fix: a caller may backpropagate through the returned outputs on purpose.",
    known_problems="""Opt-in (advice: the values are right, memory and time are not).  A module
whose parameters are all frozen builds no graph and would be reported.  A loop
that is evaluation only for one value of a flag (`if is_train: ... backward()`)
is not checked: the function has a backward pass.""",
)

_FRAMEWORK_NO_GRAD = frozenset({"validation_step", "test_step", "predict_step"})
_TRAINING_CALLS = frozenset({"backward", "step", "grad"})
_RELEASING = frozenset({"item", "detach", "tolist", "numpy"})


def check_file(checker) -> None:
    if ".eval()" not in checker.source:
        return
    for func in ast.walk(checker.tree):
        if isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
            _check_function(checker, func)


def _check_function(checker, func) -> None:
    if func.name in _FRAMEWORK_NO_GRAD or any(_grad_off_decorator(d) for d in func.decorator_list):
        return
    text = checker.text(func)
    if "requires_grad_(False)" in text or "requires_grad = False" in text:
        return  # parameters frozen here: whether any graph is built is unknown
    calls = [n for n in ast.walk(func) if isinstance(n, ast.Call)]
    if any(isinstance(c.func, ast.Attribute) and c.func.attr in _TRAINING_CALLS for c in calls):
        return
    evaluated = {checker.text(c.func.value) for c in calls
                 if isinstance(c.func, ast.Attribute) and c.func.attr == "eval" and not c.args}
    if not evaluated:
        return
    for loop in _grad_on_loops(func.body):
        forward = _kept_forward(checker, func, loop, evaluated)
        if forward is not None:
            if called_only_without_gradients(func.name, checker.filename, checker.tree,
                                             module_level=func in checker.tree.body):
                return
            _report(checker, forward)
            return


def _grad_off_decorator(node) -> bool:
    """`@torch.no_grad()`, `@torch.inference_mode()`, or a project's wrapper named after them
    (YOLOv5's `@smart_inference_mode()`)."""
    if isinstance(node, ast.Call):
        node = node.func
    name = node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else ""
    return "no_grad" in name or "inference_mode" in name


def _grad_on_loops(body):
    for stmt in body:
        if isinstance(stmt, (ast.With, ast.AsyncWith)):
            if any(_grad_off_call(item.context_expr) for item in stmt.items):
                continue
            yield from _grad_on_loops(stmt.body)
        elif isinstance(stmt, (ast.For, ast.AsyncFor)):
            yield stmt
        elif isinstance(stmt, ast.If):
            yield from _grad_on_loops(stmt.body)
            yield from _grad_on_loops(stmt.orelse)
        elif isinstance(stmt, ast.Try):
            yield from _grad_on_loops(stmt.body)


def _loop_statements(body):
    """The loop body's simple statements, not those under `no_grad`."""
    for stmt in body:
        if isinstance(stmt, (ast.With, ast.AsyncWith)):
            if any(_grad_off_call(item.context_expr) for item in stmt.items):
                continue
            yield from _loop_statements(stmt.body)
        elif isinstance(stmt, (ast.If, ast.For, ast.AsyncFor, ast.While, ast.Try)):
            for block in ("body", "orelse", "finalbody"):
                yield from _loop_statements(getattr(stmt, block, []) or [])
        else:
            yield stmt


def _kept_forward(checker, func, loop, evaluated: set):
    """The statement of the loop that calls an evaluated module, when what it computes is kept."""
    statements = list(_loop_statements(loop.body))
    tainted, forward = set(), None
    for stmt in statements:
        call = next((n for n in ast.walk(stmt) if isinstance(n, ast.Call) and checker.text(n.func) in evaluated), None)
        if isinstance(stmt, ast.Assign):
            names = {n.id for target in stmt.targets for n in ast.walk(target) if isinstance(n, ast.Name)}
            if (call is not None or _reads(stmt.value, tainted)) and not _released(stmt.value) \
                    and not _graph_free(stmt.value):
                tainted |= names
                if call is not None and forward is None:
                    forward = stmt
            else:
                tainted -= names  # rebound to a value without the graph (`out = out.data.cpu()`)
    if not statements:
        return None
    before = {n.id for s in func.body if s.lineno < loop.lineno for n in ast.walk(s)
              if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    after = _read_after(func, loop.end_lineno or loop.lineno)
    for stmt in statements:
        value = None
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and isinstance(stmt.value.func, ast.Attribute) \
                and stmt.value.func.attr in ("append", "extend", "add") and stmt.value.args:
            value = stmt.value.args[0]
        elif isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name) and stmt.target.id in before:
            value = stmt.value
        elif isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Attribute) and checker.text(t.value) == "self"
                                                  for t in stmt.targets):
            value = stmt.value
        elif isinstance(stmt, ast.Assign) and stmt is not forward \
                and any(isinstance(t, ast.Name) and t.id in after for t in stmt.targets):
            value = stmt.value
        if value is not None and not _released(value) and not _graph_free(value):
            direct = any(isinstance(n, ast.Call) and checker.text(n.func) in evaluated for n in ast.walk(value))
            if direct:
                return stmt  # `outputs.append(model(x))`
            if forward is not None and _reads(value, tainted):
                return forward
    return None


_NUMBER_BUILTINS = frozenset({"len", "int", "float", "bool", "round"})
_REDUCING = frozenset({"sum", "mean", "float", "double", "to", "cpu", "cuda", "squeeze", "view", "reshape"})


def _graph_free(node) -> bool:
    """A value with no graph whatever the outputs were: a comparison (`mse > t`, a bool
    tensor), a count of one (`sum(mse > t)`, `(pred == y).sum()`), an integer result
    (`out.argmax(1)`), a Python number (`len(x)`, `int(...)`, `float(...)`)."""
    if isinstance(node, (ast.Compare, ast.Constant)):
        return True
    if isinstance(node, ast.BinOp):
        if isinstance(node.op, (ast.BitAnd, ast.BitOr, ast.BitXor)):
            return True
        return _graph_free(node.left) and _graph_free(node.right)
    if isinstance(node, ast.UnaryOp):
        return _graph_free(node.operand)
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Name):
            if func.id in _NUMBER_BUILTINS:
                return True
            return func.id == "sum" and len(node.args) == 1 and _graph_free(node.args[0])
        if isinstance(func, ast.Attribute):
            if func.attr in INTEGER_RESULT_METHODS:
                return True
            return func.attr in _REDUCING and _graph_free(func.value)
    return False


def _read_after(func, end: int) -> set:
    """The names whose first mention after line ``end`` reads them: the loop's last value
    is read there.  A name bound again before any read after the loop (`mse = ...` in a
    second loop) does not read the first loop's value.  On one line a read counts first
    (`x = f(x)` reads `x`)."""
    first = {}
    names = sorted(((n.lineno, 0 if isinstance(n.ctx, ast.Load) else 1, n.col_offset), n.id, n.ctx)
                   for n in ast.walk(func) if isinstance(n, ast.Name) and n.lineno > end)
    for _, name, ctx in names:
        first.setdefault(name, ctx)
    return {name for name, ctx in first.items() if isinstance(ctx, ast.Load)}


def _reads(node, names: set) -> bool:
    return any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(node))


def _released(node) -> bool:
    """The value reads the outputs only through `.item()`, `.detach()` ..."""
    return any((isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in _RELEASING)
               or (isinstance(n, ast.Attribute) and n.attr == "data") for n in ast.walk(node))


def _report(checker, forward) -> None:
    checker.report(
        "ADL031", forward,
        "this evaluation loop runs the model with gradients on (`eval()` does not turn them off) and keeps what "
        "it computes past the iteration: each batch's graph and saved activations stay alive with it (memory "
        "and time; the values are right); run the loop under `torch.no_grad()` (or `torch.inference_mode()`)")
