"""ADL036: `.numpy()` (or `np.asarray` / `np.array`) of a tensor that requires
grad, in code that certainly runs with gradients on: it raises."""

from __future__ import annotations

import ast

from autograd_doctor.lint.clearing import is_self_call
from autograd_doctor.lint.findings import Fix
from autograd_doctor.lint.rules.base import Rule

RULE = Rule(
    code="ADL036", name="numpy-of-graph-tensor",
    summary="`.numpy()` / `np.asarray()` of a tensor that requires grad raises; detach it first.",
    what_it_does="""Finds a NumPy conversion, `t.numpy()` (also after `.cpu()`, `.to(...)`, ...),
`np.asarray(t)`, `np.array(t)` or `np.asanyarray(t)`, of a tensor that requires
grad, with evidence for each link:
- the tensor requires grad: a leaf made with `requires_grad=True`, an
  `nn.Parameter`, or a value computed from one or from a parameterised
  module's output in the same function (the walk's graph facts); or a
  parameter of a same-file function that some call of the file passes such a
  value at its position (`plot(x[:, 0], x @ a)` with `def plot(xs, ys):
  np.asarray(ys)`), also handed on through helpers' parameters, and into a
  method of an object the calling class holds (`self.meter.update(loss)`)
  when every `self.meter = ...` of the class builds one class of the file (or
  takes an `__init__` parameter that every construction of the class fills
  with a new instance of it) and that class is the only definer of the
  method in the file;
- gradients are on where the value is made: not under `no_grad()` /
  `inference_mode()` or in a function decorated with them, and the function
  that makes it runs a backward pass or an optimizer step, or calls a
  same-file function that backpropagates (a function called under `no_grad()`
  by its callers could not backpropagate), or is module-level code;
- nothing between cuts the graph: `.detach()`, `.data`, `.item()` and
  `.tolist()` give values without a graph and are not reported.""",
    why_bad="""`Tensor.numpy()` refuses a tensor that requires grad: `RuntimeError: Can't
call numpy() on Tensor that requires grad. Use tensor.detach().numpy()
instead.`  `np.asarray` and `np.array` (and matplotlib, which calls them) go
through `Tensor.__array__`, which calls `numpy()`, so they fail the same way.
Logging, plotting and metrics code written for an evaluation under
`no_grad()` fails when it is reached from the training loop.""",
    example="""model = nn.Linear(3, 1)
loss = F.mse_loss(model(x), y)
loss.backward()
history.append(loss.cpu().numpy())""",
    use_instead="""model = nn.Linear(3, 1)
loss = F.mse_loss(model(x), y)
loss.backward()
history.append(loss.detach().cpu().numpy())""",
    fix_safety="""Unsafe: inserts `.detach()` before the conversion; the values converted
are the same (the conversion failed before), but a fix that runs where the
linter's evidence was wrong would silence nothing else, so it is left to the
user to apply.""",
    known_problems="""Callers are matched by the function's name in the same file; a function
called from another file, through an object whose class is not known from
the file (`self.logger.log(loss)` with a logger made elsewhere), or only handed
on as a callback, has no evidence and is silent.  A module handed to a class's constructor and called as
`self.mapping(x)` in a method that runs no backward is silent (no evidence that
gradients are on there).""",
)

_NUMPY_CONVERSIONS = frozenset({"numpy.asarray", "numpy.array", "numpy.asanyarray"})
# methods whose result keeps the receiver's graph (on the way to `.numpy()`)
_KEEPS_GRAPH = frozenset({"cpu", "cuda", "to", "float", "double", "half", "squeeze", "unsqueeze",
                          "contiguous", "view", "reshape", "flatten", "clone", "t", "permute",
                          "transpose", "type"})
_CUTS = frozenset({"detach", "item", "tolist"})


def _worth(checker) -> bool:
    flag = getattr(checker, "_adl036", None)
    if flag is None:
        src = checker.source
        # a conversion, and something that runs a backward or a step (the evidence
        # that gradients are on is one of them, in the file)
        flag = checker._adl036 = (("asarray(" in src or "array(" in src or ".numpy()" in src)
                                  and ("backward" in src or "step(" in src))
    return flag


def _strip(node):
    """The tensor under `.cpu()`, `.to(...)`, ... (None when a cut is on the way)."""
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
            node.func.attr in _KEEPS_GRAPH:
        node = node.func.value
    if isinstance(node, ast.Attribute) and node.attr == "data":
        return None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _CUTS:
        return None
    return node


def _parameter_position(checker, scope, node):
    """(position or None, name) when ``node`` is a parameter of the function, not re-bound."""
    if not isinstance(node, ast.Name) or node.id not in scope.parameters or node.id in ("self", "cls"):
        return None
    entry = scope.binding(node.id, checker.seq + 1)
    if entry is not None and entry[1] is not None:
        return None
    args = scope.arguments
    if args is None:
        return None
    names = [a.arg for a in list(args.posonlyargs) + list(args.args)]
    if node.id not in names:
        return (None, node.id) if node.id in [a.arg for a in args.kwonlyargs] else None
    i = names.index(node.id)
    method = scope.owner_class is not None
    if method:
        if i == 0:
            return None
        i -= 1
    return (i, node.id)


def _gradient_value(checker, node) -> bool:
    """`x.grad`, `torch.autograd.grad(...)[0]` (or a name bound to one): a gradient,
    which requires grad only under `create_graph=True`; no evidence either way."""
    if isinstance(node, ast.Name):
        entry = checker.scope.binding(node.id, checker.seq + 1)
        node = entry[1] if entry is not None and entry[1] is not None else node
    for sub in ast.walk(node):
        if isinstance(sub, ast.Attribute) and sub.attr == "grad":
            return True
        if isinstance(sub, ast.Call) and (checker.qualname(sub.func) or "").endswith("autograd.grad"):
            return True
    return False


def _graph(checker, node) -> bool:
    if _gradient_value(checker, node):
        return False
    return checker.is_graph(node) or checker.is_grad_leaf(node) or (
        isinstance(node, ast.Name) and node.id in checker.scope.grad_leaves)


def _conversion(checker, call, tensor) -> None:
    scope = checker.scope
    if scope.grad_off or not _worth(checker):
        return
    inner = _strip(tensor)
    if inner is None:
        return
    if _graph(checker, inner):
        scope.note("ADL036", (call, inner, None))
        return
    where = _parameter_position(checker, scope, inner)
    if where is not None:
        scope.note("ADL036", (call, inner, where))


def on_method_call(checker, call, func) -> None:
    if func.attr == "numpy" and not call.args and not call.keywords:
        _conversion(checker, call, func.value)


def on_call(checker, call, q) -> None:
    if q in _NUMPY_CONVERSIONS and len(call.args) == 1 and not call.keywords:
        _conversion(checker, call, call.args[0])


def on_local_call(checker, call) -> None:
    """`plot(x, x @ a)` / `self.plot(...)`: a same-file function's call that passes a
    value requiring grad (or this function's own parameter, handed on)."""
    scope = checker.scope
    if scope.grad_off or not _worth(checker):
        return
    func = call.func
    callee = func.id if isinstance(func, ast.Name) else func.attr
    if isinstance(func, ast.Attribute) and not is_self_call(call):
        # `self.logger.log(loss)`: the object held in `self.logger` is of one class of the file
        if _held_class(checker, scope.owner_class, func.value.attr, func.attr) is None:
            return
    values = list(call.args) + [k.value for k in call.keywords]
    for i, value in enumerate(values):
        if isinstance(value, ast.Starred) or (i < len(call.args) and any(
                isinstance(a, ast.Starred) for a in call.args[:i])):
            continue
        where = i if i < len(call.args) else call.keywords[i - len(call.args)].arg
        inner = _strip(value)
        if inner is None:
            continue
        if _graph(checker, inner):
            scope.note("ADL036 call", (callee, where, call, value))
        else:
            own = _parameter_position(checker, scope, inner)
            if own is not None:
                scope.note("ADL036 hand", (callee, where, own))


def _held_class(checker, owner, attr, method):
    """The one class of the file whose instance `self.<attr>` of class ``owner``
    holds, when it defines ``method`` and no other function of the file has that
    name: every `self.<attr> = ...` in ``owner`` builds it, or takes an `__init__`
    parameter that every construction `Owner(...)` of the file fills with a new
    instance of it.  None when anything is unknown."""
    if owner is None:
        return None
    cache = checker.__dict__.setdefault("_adl036_held", {})
    key = (owner, attr, method)
    if key not in cache:
        cache[key] = _resolve_held(checker.tree, owner, attr, method)
    return cache[key]


def _resolve_held(tree, owner, attr, method):
    classes = {n.name: n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)}
    cls = classes.get(owner)
    if cls is None:
        return None
    definers = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                and n.name == method]
    init = next((n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"), None)
    built = set()
    for node in ast.walk(cls):
        if not isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            continue
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        if not any(isinstance(t, ast.Attribute) and t.attr == attr and isinstance(t.value, ast.Name)
                   and t.value.id == "self" for t in targets):
            continue
        if not isinstance(node, ast.Assign) or len(targets) != 1:
            return None
        value = node.value
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name):
            built.add(value.func.id)
        elif isinstance(value, ast.Name) and init is not None and \
                any(node is n for n in ast.walk(init)):
            names = [a.arg for a in init.args.args][1:]
            if value.id not in names:
                return None
            position = names.index(value.id)
            constructions = [n for n in ast.walk(tree) if isinstance(n, ast.Call)
                             and isinstance(n.func, ast.Name) and n.func.id == owner]
            if not constructions:
                return None
            for c in constructions:
                given = c.args[position] if position < len(c.args) and not any(
                    isinstance(a, ast.Starred) for a in c.args[:position + 1]) else next(
                    (k.value for k in c.keywords if k.arg == value.id), None)
                if not (isinstance(given, ast.Call) and isinstance(given.func, ast.Name)):
                    return None
                built.add(given.func.id)
        else:
            return None
    if len(built) != 1:
        return None
    held = classes.get(next(iter(built)))
    if held is None or len(definers) != 1 or not any(d in held.body for d in definers):
        return None
    return held.name


def _gradients_on(scope) -> bool:
    """The function runs a backward pass or a step (it could not, called under
    `no_grad()`), or is module-level code."""
    return bool(scope.backwards or scope.retain_backwards or scope.helper_backwards or scope.steps
                or scope.framework_backward or scope.name == "<module>")


def _key(scope):
    return (scope.owner_class, scope.name)


def check_scope(checker, scope) -> None:
    conversions = scope.noted("ADL036")
    calls = scope.noted("ADL036 call")
    hands = scope.noted("ADL036 hand")
    if not (conversions or calls or hands):
        return
    on = _gradients_on(scope)
    for call, tensor, where in conversions:
        if where is None:
            if on:
                _report(checker, call, tensor, None)
        else:
            checker.notes["ADL036 parameter"].append((scope.name, where, call, tensor))
    if on:
        for callee, where, call, value in calls:
            checker.notes["ADL036 fed"].append((callee, where, call, value))
    for callee, where, own in hands:
        checker.notes["ADL036 handed"].append((scope.name, own, callee, where))


def check_file(checker) -> None:
    parameters = checker.notes.get("ADL036 parameter")
    if not parameters:
        return
    # (function, position or keyword) -> the call that passes a value requiring grad
    fed = {}
    for callee, where, call, value in checker.notes.get("ADL036 fed", ()):
        fed.setdefault((callee, where), (call, value))
    handed = list(checker.notes.get("ADL036 handed", ()))
    changed = True
    while changed:  # `def log(self, name, data): scalar_to_float(data)`
        changed = False
        for function, (position, name), callee, where in handed:
            source = fed.get((function, position)) or fed.get((function, name))
            if source is not None and (callee, where) not in fed:
                fed[(callee, where)] = source
                changed = True
    for function, (position, name), call, tensor in parameters:
        source = fed.get((function, position)) or fed.get((function, name))
        if source is not None:
            _report(checker, call, tensor, source)


def _report(checker, call, tensor, source) -> None:
    text = checker.text(tensor)
    if source is None:
        why = f"`{text}` requires grad here (it carries a graph)"
    else:
        caller, value = source
        why = (f"`{text}` requires grad: line {caller.lineno} passes `{checker.text(value)}`, which "
               f"carries a graph, to `{checker.text(caller.func)}()` with gradients on")
    how = "`.numpy()`" if isinstance(call.func, ast.Attribute) and call.func.attr == "numpy" \
        else f"`{checker.text(call.func)}()`"
    fix = Fix("detach before converting",
              (checker.edit(tensor, checker.atom_text(tensor) + ".detach()"),), safe=False)
    checker.report("ADL036", call,
                   f"{how} of a tensor that requires grad raises: {why}; "
                   f"convert `{text}.detach()` instead", fix)
