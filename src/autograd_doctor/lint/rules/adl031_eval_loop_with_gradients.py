"""ADL031 (opt-in): an evaluation loop that runs the model with gradients on and
keeps its outputs beyond the iteration: every batch builds a graph that lives
as long as the kept output."""

from __future__ import annotations

import ast
import os

from autograd_doctor.lint.names import INTEGER_RESULT_METHODS
from autograd_doctor.lint.releasing_helpers import calls_releasing_helper
from autograd_doctor.lint.repository_callers import called_only_without_gradients
from autograd_doctor.lint.rules.adl032_td_target_not_detached import _grad_off_call
from autograd_doctor.lint.rules.base import Rule
from autograd_doctor.lint.submodules import file_text, repository_files

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
`float`), nor a name that an unpacking from a call binds again to what it
was handed under that name (`out, sample = processor.postprocess(out,
sample)`: `sample` keeps what it held).  Running the module also counts for `M.forward(...)`, for a method of a
class of the file (with a `forward`) that returns what `self(...)` computes and
releases nothing (`model.calculate_objective(x, y)`), and for a function of the
file handed `M` that returns what `M` computes (`self._predict(self.model, b)`);
kept also counts for a call handing the result and a container from before the
loop to a function of the file that appends the one into the other
(`self._accumulate_preds(preds, predictions)`).  The `eval()` may also be in a
caller of the same file that calls `M.eval()` and then, with no `M.train()`
between, outside `no_grad` and running no backward or step itself, calls the
function with `M` as an argument (or, for `self.f(...)`, with `self.M`
evaluated): the function's loop is then checked as above, and a function
without a loop is reported when it appends what `M` computes to a list its
caller handed it or one on `self`.  Silent when the function is decorated with
`no_grad` / `inference_mode` (or a wrapper named after them), in a function
that freezes parameters (`requires_grad_(False)`), when every call of it in the repository is made
without gradients (for a function at the top of its file, the calls in files that
name its module), or for Lightning's `validation_step` / `test_step` /
`predict_step` (run under `no_grad` by the trainer), or when the evaluated module
is a normalisation layer built without parameters (`nn.BatchNorm1d(c, affine=False)`,
`nn.LayerNorm(d, elementwise_affine=False)`), bound so in the function or handed so
by every call of it in the file.""",
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
is not checked: the function has a backward pass.  Only callers in the same file
carry the `eval()`; a forward placed after a `no_grad` block that only wraps
the input, whose output is not kept, and a serving handler whose `eval()` is in
another method are not reported.""",
)

_FRAMEWORK_NO_GRAD = frozenset({"validation_step", "test_step", "predict_step"})
_TRAINING_CALLS = frozenset({"backward", "step", "grad"})
_RELEASING = frozenset({"item", "detach", "tolist", "numpy"})


def check_file(checker) -> None:
    if ".eval()" not in checker.source:
        return
    forwarding = _forwarding_methods(checker.tree)
    functions = [f for f in ast.walk(checker.tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))]
    handed = _evaluated_by_callers(checker, functions)
    for func in functions:
        _check_function(checker, func, forwarding, handed.get(id(func), {}), functions)


def _forwarding_methods(tree) -> frozenset:
    """`forward`, and the methods of a class of the file that defines `forward` whose body
    runs it (`self(...)`, `self.forward(...)`): AttentionDeepMIL's
    `model.calculate_objective(x, y)` runs the model as `model(x)` does."""
    names = {"forward"}
    for cls in ast.walk(tree):
        if not isinstance(cls, ast.ClassDef):
            continue
        methods = [m for m in cls.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))]
        if not any(m.name == "forward" for m in methods):
            continue
        for method in methods:
            if not method.name.startswith("__") and _returns_own_forward(method):
                names.add(method.name)
    return frozenset(names)


def _self_forward(node) -> bool:
    return isinstance(node, ast.Call) and (
        (isinstance(node.func, ast.Name) and node.func.id == "self")
        or (isinstance(node.func, ast.Attribute) and node.func.attr == "forward"
            and isinstance(node.func.value, ast.Name) and node.func.value.id == "self"))


def _returns_own_forward(method) -> bool:
    """The method returns what `self(...)` computes, or a value computed from it, and
    releases nothing (no `.detach()`, `.item()`, `.data` ...: Continual-Learning-Benchmark's
    `predict` detaches every output before returning them)."""
    if _released(method):
        return False
    bound = set()
    for node in sorted((n for n in _own_nodes(method) if isinstance(n, (ast.Assign, ast.Return))),
                       key=lambda n: (n.lineno, n.col_offset)):
        value = node.value
        if value is None:
            continue
        carries = any(_self_forward(n) for n in ast.walk(value)) or _reads(value, bound)
        if isinstance(node, ast.Return):
            if carries and not _graph_free(value):
                return True
        elif carries and not _graph_free(value):
            bound |= {n.id for t in node.targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return False


def _trains(checker, func) -> bool:
    """The function runs a backward or a step itself, or freezes parameters (whether any
    graph is built is then unknown)."""
    text = checker.text(func)
    if "requires_grad_(False)" in text or "requires_grad = False" in text:
        return True
    return any(isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute) and c.func.attr in _TRAINING_CALLS
               for c in ast.walk(func))


def _evaluated_by_callers(checker, functions) -> dict:
    """For each function of the file, the parameters (and `self.` attributes, for a
    `self.f(...)` call) that a caller of the same file hands it after `M.eval()`, with
    gradients on: the caller calls `M.eval()`, then, with no `M.train(...)` between,
    not under `no_grad` / `inference_mode`, and itself running no backward or step,
    calls the function with `M` as an argument (MTN's `model.eval()` then
    `run_epoch(valid_data, model, ...)`)."""
    by_name = {}
    for func in functions:
        by_name.setdefault(func.name, []).append(func)
    handed = {}
    for caller in functions:
        if any(_grad_off_decorator(d) for d in caller.decorator_list) or caller.name in _FRAMEWORK_NO_GRAD:
            continue
        evals = [(c.lineno, checker.text(c.func.value)) for c in ast.walk(caller)
                 if isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute) and c.func.attr == "eval"
                 and not c.args]
        if not evals or _trains(checker, caller):
            continue
        trains = [(c.lineno, checker.text(c.func.value)) for c in ast.walk(caller)
                  if isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute) and c.func.attr == "train"]
        for call, off in _calls_with_mode(caller.body):
            if off:
                continue
            evaluated = {text for line, text in evals if line < call.lineno
                         and not any(text == t and line < tl <= call.lineno for tl, t in trains)}
            if not evaluated:
                continue
            is_method = isinstance(call.func, ast.Attribute)
            for callee, got in _handed(checker, call, by_name, evaluated, always=is_method):
                if callee is caller:
                    continue
                if is_method:
                    got = got | {t for t in evaluated if t.startswith("self.")}
                if got and not called_only_without_gradients(caller.name, checker.filename, checker.tree,
                                                             module_level=caller in checker.tree.body):
                    for name in got:
                        handed.setdefault(id(callee), {}).setdefault(name, (caller.name, call.lineno))
    return handed


def _calls_with_mode(body, off=False):
    """(call, under `no_grad` / `inference_mode`) for every call of ``body``, nested
    functions left out."""
    for stmt in body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(stmt, (ast.With, ast.AsyncWith)):
            inner = off or any(_grad_off_call(item.context_expr) for item in stmt.items)
            for item in stmt.items:
                yield from ((n, off) for n in ast.walk(item.context_expr) if isinstance(n, ast.Call))
            yield from _calls_with_mode(stmt.body, inner)
            continue
        blocks = [getattr(stmt, b, None) for b in ("body", "orelse", "finalbody")]
        blocks = [b for b in blocks if isinstance(b, list)]
        for h in getattr(stmt, "handlers", []) or []:
            blocks.append(h.body)
        nested = {id(n) for b in blocks for s in b for n in ast.walk(s)}
        for node in ast.walk(stmt):
            if isinstance(node, ast.Call) and id(node) not in nested:
                yield node, off
        for b in blocks:
            yield from _calls_with_mode(b, off)


def _check_function(checker, func, forwarding=frozenset({"forward"}), handed=None, functions=()) -> None:
    handed = handed or {}
    if func.name in _FRAMEWORK_NO_GRAD or any(_grad_off_decorator(d) for d in func.decorator_list):
        return
    if _trains(checker, func):
        return
    calls = [n for n in ast.walk(func) if isinstance(n, ast.Call)]
    own_evaluated = {checker.text(c.func.value) for c in calls
                     if isinstance(c.func, ast.Attribute) and c.func.attr == "eval" and not c.args}
    evaluated = own_evaluated | set(handed)
    evaluated = {e for e in evaluated if not _parameter_free(checker, func, e, functions)}
    own_evaluated = own_evaluated & evaluated
    handed = {k: v for k, v in handed.items() if k in evaluated}
    if not evaluated:
        return
    runs = _Runs(checker, evaluated, forwarding, functions)
    forward, in_loop = None, True
    for loop in _grad_on_loops(func.body):
        forward = _kept_forward(checker, func, loop, runs, functions)
        if forward is not None:
            break
    if forward is None and handed:
        forward, in_loop = _kept_by_call(checker, func, runs), False
    if forward is None:
        return
    if called_only_without_gradients(func.name, checker.filename, checker.tree,
                                     module_level=func in checker.tree.body):
        return
    used = {n for n in ast.walk(forward) if isinstance(n, ast.Call) and runs(n)}
    own = own_evaluated and any(runs._direct(n, own_evaluated) or
                                any(True for _ in _handed(checker, n, runs.functions, own_evaluated))
                                for n in used)
    caller = None if own else next(iter(sorted(handed.values())), None)
    _report(checker, forward, in_loop, func.name, caller)


_AFFINE_FLAGS = frozenset({"affine", "elementwise_affine"})


def _norm_without_affine(node) -> bool:
    """`nn.BatchNorm2d(c, affine=False)`, `nn.LayerNorm(d, elementwise_affine=False)`,
    `InnerBatchNorm(t, affine=False)`: a normalisation layer built without parameters."""
    if not isinstance(node, ast.Call):
        return False
    f = node.func
    name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
    return "Norm" in name and any(
        k.arg in _AFFINE_FLAGS and isinstance(k.value, ast.Constant) and k.value.value is False
        for k in node.keywords)


def _bound_only_to_norms(function, name: str) -> bool:
    """Every binding of ``name`` in ``function`` is a parameter-free norm's construction
    (at least one, and ``name`` is not a parameter of the function)."""
    args = function.args
    if name in {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs}:
        return False
    values = []
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, (ast.Store, ast.Del)):
            values.append(node)
    assigns = [n for n in ast.walk(function) if isinstance(n, ast.Assign) and len(n.targets) == 1
               and isinstance(n.targets[0], ast.Name) and n.targets[0].id == name]
    return bool(assigns) and len(assigns) == len(values) and all(_norm_without_affine(a.value) for a in assigns)


def _parameter_free(checker, func, name: str, functions) -> bool:
    """The evaluated module ``name`` is a normalisation layer built without parameters
    (escnn's batch-norm tests): bound in ``func`` only to such a construction, or a
    parameter of ``func`` that every call of it in the file is handed one (a
    construction, or a name its caller binds only to one); the function is mentioned
    nowhere else in the file or in another file of the repository."""
    if not name.isidentifier():
        return False
    if _bound_only_to_norms(func, name):
        return True
    args = func.args
    positional = [a.arg for a in args.posonlyargs + args.args]
    if name not in positional and name not in {a.arg for a in args.kwonlyargs}:
        return False
    method = bool(positional) and positional[0] in ("self", "cls")
    if method and name == positional[0]:
        return False  # the object the method is called on (`self.eval()`), not an argument of the calls
    index = positional.index(name) - int(method) if name in positional else None
    calls, mentions = [], 0
    for node in ast.walk(checker.tree):
        if isinstance(node, ast.Name) and node.id == func.name or \
                isinstance(node, ast.Attribute) and node.attr == func.name:
            mentions += 1
        if isinstance(node, ast.Call):
            f = node.func
            last = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
            if last == func.name:
                calls.append(node)
    if not calls or mentions != len(calls):
        return False
    if any(func.name in file_text(p) for p in repository_files(checker.filename)
           if os.path.abspath(p) != os.path.abspath(checker.filename)):
        return False
    enclosing = {}
    for f in functions:
        for node in ast.walk(f):
            if isinstance(node, ast.Call):
                enclosing[id(node)] = f
    for call in calls:
        value = next((k.value for k in call.keywords if k.arg == name), None)
        if value is None and index is not None and index < len(call.args):
            value = call.args[index]
        if value is None or any(isinstance(a, ast.Starred) for a in call.args):
            return False
        if _norm_without_affine(value):
            continue
        caller = enclosing.get(id(call))
        if isinstance(value, ast.Name) and caller is not None and _bound_only_to_norms(caller, value.id):
            continue
        return False
    return True


class _Runs:
    """Whether a call runs an evaluated module: `M(...)`, `M.forward(...)`,
    `M.method(...)` of a forwarding method of the file, or a function of the file
    handed `M` that returns what it computes (Ludwig's `self._predict(self.model,
    batch)`, which returns `model.predict(inputs)`)."""

    def __init__(self, checker, evaluated, forwarding, functions=()):
        self.checker, self.evaluated, self.forwarding = checker, evaluated, forwarding
        self.functions = {}
        for func in functions:
            self.functions.setdefault(func.name, []).append(func)

    def __call__(self, node) -> bool:
        if not isinstance(node, ast.Call):
            return False
        if self._direct(node, self.evaluated):
            return True
        return any(self._returns_run(callee, params)
                   for callee, params in _handed(self.checker, node, self.functions, self.evaluated))

    def _direct(self, node, evaluated) -> bool:
        text = self.checker.text(node.func)
        if text in evaluated:
            return True
        return isinstance(node.func, ast.Attribute) and node.func.attr in self.forwarding \
            and self.checker.text(node.func.value) in evaluated

    def _returns_run(self, callee, params) -> bool:
        if _trains(self.checker, callee) or any(_grad_off_decorator(d) for d in callee.decorator_list):
            return False
        for node in _own_nodes(callee):
            if isinstance(node, ast.Return) and node.value is not None and not _released(node.value) \
                    and any(self._direct(n, params) for n in ast.walk(node.value) if isinstance(n, ast.Call)):
                return not _under_grad_off(callee, node)
        return False


def _own_nodes(func):
    """The nodes of ``func`` outside its nested functions and classes."""
    stack = list(func.body)
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                stack.append(child)


def _under_grad_off(func, target) -> bool:
    for node in _own_nodes(func):
        if isinstance(node, (ast.With, ast.AsyncWith)) and any(_grad_off_call(i.context_expr) for i in node.items):
            if any(n is target for s in node.body for n in ast.walk(s)):
                return True
    return False


def _handed(checker, call, functions, names, always=False):
    """(callee, its parameters handed one of ``names``) for each function of the file that
    ``call`` may call by name (`f(...)` or `self.f(...)`)."""
    if isinstance(call.func, ast.Name):
        name, is_method = call.func.id, False
    elif isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Name) \
            and call.func.value.id == "self":
        name, is_method = call.func.attr, True
    else:
        return
    for callee in functions.get(name, ()):
        params = [a.arg for a in callee.args.posonlyargs + callee.args.args]
        if is_method and params[:1] == ["self"]:
            params = params[1:]
        got = set()
        for i, arg in enumerate(call.args):
            if isinstance(arg, ast.Starred):
                break
            if i < len(params) and checker.text(arg) in names:
                got.add(params[i])
        for kw in call.keywords:
            if kw.arg in params and checker.text(kw.value) in names:
                got.add(kw.arg)
        if got or always:
            yield callee, got


def _appends_into(checker, callee, source: set, container: set) -> bool:
    """Whether ``callee`` appends a value derived from its parameters ``source`` into
    its parameters ``container`` (`predictions[key].append(values)` in a loop over
    `preds.items()`): Ludwig's `self._accumulate_preds(preds, predictions)`."""
    derived = set(source)
    nodes = sorted((n for n in _own_nodes(callee) if isinstance(n, (ast.Assign, ast.For, ast.Expr))),
                   key=lambda n: (n.lineno, n.col_offset))
    for node in nodes:
        if isinstance(node, ast.For) and _reads(node.iter, derived):
            derived |= {n.id for n in ast.walk(node.target) if isinstance(n, ast.Name)}
        elif isinstance(node, ast.Assign) and _reads(node.value, derived) and not _released(node.value) \
                and not _graph_free(node.value):
            derived |= {n.id for t in node.targets for n in ast.walk(t) if isinstance(n, ast.Name)}
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) \
                and isinstance(node.value.func, ast.Attribute) and node.value.func.attr in ("append", "extend") \
                and node.value.args:
            root = node.value.func.value
            while isinstance(root, (ast.Subscript, ast.Attribute)):
                root = root.value
            value = node.value.args[0]
            if isinstance(root, ast.Name) and root.id in container and _reads(value, derived) \
                    and not _released(value) and not _graph_free(value):
                return True
    return False


def _kept_by_call(checker, func, runs):
    """A function with no loop of its own, handed an evaluated module by its caller, that
    appends what the module computes to a list the caller handed it or one on `self`
    (pytorch-benchmark's `measure_allocated_memory(model, batch, outputs)`): the value
    outlives the call."""
    params = {a.arg for a in func.args.posonlyargs + func.args.args + func.args.kwonlyargs} - {"self"}
    tainted, forward = set(), None
    for stmt in _straight_statements(func.body):
        call = next((n for n in ast.walk(stmt) if runs(n)), None)
        if isinstance(stmt, ast.Assign):
            names = {n.id for t in stmt.targets for n in ast.walk(t) if isinstance(n, ast.Name)}
            if (call is not None or _reads(stmt.value, tainted)) and not _released(stmt.value) \
                    and not _graph_free(stmt.value):
                tainted |= names
                if call is not None and forward is None:
                    forward = stmt
            else:
                tainted -= names
            continue
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) \
                and isinstance(stmt.value.func, ast.Attribute) and stmt.value.func.attr in ("append", "extend") \
                and stmt.value.args:
            receiver = stmt.value.func.value
            outside = (isinstance(receiver, ast.Name) and receiver.id in params) or \
                (isinstance(receiver, ast.Attribute) and checker.text(receiver).startswith("self."))
            value = stmt.value.args[0]
            if outside and not _released(value) and not _graph_free(value):
                if any(runs(n) for n in ast.walk(value)):
                    return stmt
                if forward is not None and _reads(value, tainted):
                    return forward
    return None


def _straight_statements(body):
    """The function's statements outside loops, `no_grad` blocks and nested functions."""
    for stmt in body:
        if isinstance(stmt, (ast.With, ast.AsyncWith)):
            if any(_grad_off_call(item.context_expr) for item in stmt.items):
                continue
            yield from _straight_statements(stmt.body)
        elif isinstance(stmt, (ast.For, ast.AsyncFor, ast.While, ast.FunctionDef, ast.AsyncFunctionDef,
                               ast.ClassDef)):
            continue
        elif isinstance(stmt, (ast.If, ast.Try)):
            for block in ("body", "orelse", "finalbody"):
                yield from _straight_statements(getattr(stmt, block, []) or [])
        else:
            yield stmt


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


def _kept_forward(checker, func, loop, runs, functions=()):
    """The statement of the loop that calls an evaluated module, when what it computes is kept."""
    statements = list(_loop_statements(loop.body))
    tainted, forward = set(), None
    opaque = _callable_parameters(func)

    def released(value):  # a call of a helper that detaches counts too
        return _released(value) or calls_releasing_helper(checker, value)
    for stmt in statements:
        call = next((n for n in ast.walk(stmt) if runs(n)), None)
        if isinstance(stmt, ast.Assign):
            names = {n.id for target in stmt.targets for n in ast.walk(target) if isinstance(n, ast.Name)}
            if (call is not None or _carries(stmt.value, tainted, opaque)
                    or (_reads(stmt.value, tainted) and _used_as_tensor(func, names))) and not released(stmt.value) \
                    and not _graph_free(stmt.value):
                passed = _passed_through(stmt) - tainted if call is None else set()
                tainted = (tainted | names) - passed
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
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and forward is not None:
            for callee, containers in _handed(checker, stmt.value, runs.functions, before):
                sources = {p for c, ps in _handed(checker, stmt.value, runs.functions, tainted) if c is callee
                           for p in ps}
                if sources and _appends_into(checker, callee, sources, containers - sources):
                    return forward  # `self._accumulate_preds(preds, predictions)`
        if value is not None and not released(value) and not _graph_free(value):
            direct = any(runs(n) for n in ast.walk(value))
            if direct:
                return stmt  # `outputs.append(model(x))`
            bound = {t.id for t in getattr(stmt, "targets", []) if isinstance(t, ast.Name)}
            if forward is not None and (_carries(value, tainted, opaque)
                                        or (_reads(value, tainted) and _used_as_tensor(func, bound))):
                return forward
    return None


def _passed_through(stmt) -> set:
    """The names that an unpacking assignment from a call binds again to what the call
    was handed under the same name (`out, sample = data_processor.postprocess(out,
    sample)`): by that convention each is the argument given back, updated, so it
    keeps what it held before; nothing shows the other arguments' graph reached it
    (set AE's FNO residual loop kept `sample["x"]`, its input grid)."""
    if not (len(stmt.targets) == 1 and isinstance(stmt.targets[0], (ast.Tuple, ast.List))
            and isinstance(stmt.value, ast.Call)):
        return set()
    handed = {a.id for a in stmt.value.args if isinstance(a, ast.Name)}
    handed |= {k.value.id for k in stmt.value.keywords if isinstance(k.value, ast.Name)}
    return {t.id for t in stmt.targets[0].elts if isinstance(t, ast.Name) and t.id in handed}


def _callable_parameters(func) -> set:
    """The function's parameters: a call of one (`loss_compute(out, y, n)`, a callable
    handed in) returns what the caller handed, unknown here (the Annotated
    Transformer's `SimpleLossCompute` returns `loss.item() * norm`, a number)."""
    return {a.arg for a in func.args.posonlyargs + func.args.args + func.args.kwonlyargs}


_TENSOR_METHODS = frozenset({"item", "detach", "cpu", "numpy", "tolist", "size", "dim", "mean", "sum", "cuda"})


def _used_as_tensor(func, names: set) -> bool:
    """A tensor method is called on one of ``names`` in the function (`losstensor.item()`):
    what a callable parameter returned is a tensor (CheXNet's `loss(varOutput, target)`)."""
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in _TENSOR_METHODS
               and isinstance(n.func.value, ast.Name) and n.func.value.id in names for n in ast.walk(func))


def _carries(value, tainted: set, opaque: set) -> bool:
    """``value`` reads a tainted name, and is not the result of calling a parameter."""
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in opaque:
        return False
    return _reads(value, tainted)


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


def _report(checker, forward, in_loop=True, name="", caller=None) -> None:
    if caller is None:
        where = "this evaluation loop runs the model with gradients on (`eval()` does not turn them off)"
    else:
        where = ("`%s` runs the model with gradients on: `%s` calls it at line %d after `eval()`, with no "
                 "`torch.no_grad()` (`eval()` does not turn gradients off)" % (name, caller[0], caller[1]))
        if in_loop:
            where = "this loop of " + where
    if in_loop:
        kept = ("keeps what it computes past the iteration: each batch's graph and saved activations stay "
                "alive with it")
        fix = "run the loop under `torch.no_grad()` (or `torch.inference_mode()`)"
    else:
        kept = ("hands what it computes to a list the caller keeps: the graph and its saved activations stay "
                "alive with it")
        fix = "run the call under `torch.no_grad()` (or `torch.inference_mode()`)"
    checker.report("ADL031", forward, "%s and %s (memory and time; the values are right); %s" % (where, kept, fix))
