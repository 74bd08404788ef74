"""Parameters that every call in the file fills with a value without a graph.

tianshou's NPG computes `flat_grads = self._get_flat_grad(...).detach()` and
hands it to `self._conjugate_gradients(flat_grads, ...)`, whose conjugate
gradient loop does `r = minibatch.clone(); rdotr = r.dot(r); ... r -= alpha *
z`.  Seen alone, that is a write to a tensor `dot` saved; but `minibatch` never
carries a graph, so nothing is saved for backward.  A parameter counts as
grad-free when the function is defined once in the file, every mention of its
name is a call, and every call passes, at that parameter, a value that cuts the
graph: `x.detach()`, `x.item()`, `x.data`, a constant, arithmetic of those
(`-loss_grad`), or a name whose every binding in the calling function is one.
Names are matched without resolving them, like ``callers.py``; a call that
passes `*args`/`**kwargs`, or a mention that is not a call, keeps every
parameter as it was.
"""

from __future__ import annotations

import ast
from collections import defaultdict

from autograd_doctor.lint import names as N

_ENTRY_POINTS = frozenset({"forward", "__call__", "training_step", "main"})


def grad_free_parameters(tree: ast.Module, source: str) -> dict:
    """Function name -> the names of its parameters that every call fills grad-free."""
    if ".detach()" not in source and ".data" not in source and ".item()" not in source:
        return {}  # no value in the file is cut from its graph: no walk needed
    defs: dict = defaultdict(list)
    methods: set = set()  # ids of the functions defined in a class body (not static)
    mentions: dict = defaultdict(list)
    parents: dict = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parents[id(child)] = node
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            mentions[node.id].append(node)
        elif isinstance(node, ast.Attribute):
            mentions[node.attr].append(node)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            defs[node.name].append(node)
        elif isinstance(node, ast.ClassDef):
            methods.update(id(s) for s in node.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))
                           and not any(isinstance(d, ast.Name) and d.id == "staticmethod"
                                       for d in s.decorator_list))
    bindings: dict = {}  # id(calling function) -> its bindings
    out = {}
    for name, (function, *more) in defs.items():
        if more or name.startswith("__") or name in _ENTRY_POINTS or not mentions.get(name):
            continue
        method = id(function) in methods
        params = _parameters(function, method)
        free = set(params)
        for mention in mentions[name]:
            call = parents.get(id(mention))
            if not (isinstance(call, ast.Call) and call.func is mention):
                free = set()  # a callback, a reference: called from anywhere
                break
            caller = _enclosing_function(mention, parents)
            if caller is not None and id(caller) not in bindings:
                bindings[id(caller)] = _bindings(caller)
            known = bindings.get(id(caller), {}) if caller is not None else {}
            free &= _free_at(call, function, method, params, known)
            if not free:
                break
        if free:
            out[name] = frozenset(free)
    return out


def _parameters(function, method: bool) -> list:
    args = function.args.posonlyargs + function.args.args
    if method:
        args = args[1:]  # `self`
    return [a.arg for a in args] + [a.arg for a in function.args.kwonlyargs]


def _enclosing_function(node, parents):
    while node is not None:
        node = parents.get(id(node))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            return node if not isinstance(node, ast.Lambda) else None
    return None


def _free_at(call, function, method: bool, params, known) -> set:
    """The parameters that this call fills with grad-free values."""
    if method != isinstance(call.func, ast.Attribute):
        return set()  # a method called as a plain name (or the reverse): not this function
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return set()
    given = dict(zip(params, call.args))
    given.update((k.arg, k.value) for k in call.keywords)
    positional = function.args.posonlyargs + function.args.args
    defaults = dict(zip([a.arg for a in positional][len(positional) - len(function.args.defaults):],
                        function.args.defaults))
    defaults.update((a.arg, d) for a, d in zip(function.args.kwonlyargs, function.args.kw_defaults)
                    if d is not None)
    return {p for p in params if _grad_free(given.get(p, defaults.get(p)), known, 0)}


def _grad_free(value, known, depth) -> bool:
    if value is None or depth > 4:
        return False
    if isinstance(value, ast.Constant):
        return True
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute):
        return value.func.attr in N.GRAD_CUTTING_METHODS
    if isinstance(value, ast.Attribute):
        return value.attr == "data"
    if isinstance(value, ast.UnaryOp):
        return _grad_free(value.operand, known, depth + 1)
    if isinstance(value, ast.BinOp):
        return _grad_free(value.left, known, depth + 1) and _grad_free(value.right, known, depth + 1)
    if isinstance(value, ast.Name):
        bound = known.get(value.id)
        return bool(bound) and all(_grad_free(v, known, depth + 1) for v in bound)
    return False


def _bindings(function) -> dict:
    """Name -> every value bound to it in ``function`` (None: bound some other way)."""
    out: dict = defaultdict(list)
    for a in function.args.posonlyargs + function.args.args + function.args.kwonlyargs:
        out[a.arg].append(None)
    for node in ast.walk(function):
        if isinstance(node, ast.Assign):
            for t in node.targets:
                _bind(out, t, node.value)
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.NamedExpr)):
            _bind(out, node.target, node.value if not isinstance(node, ast.AugAssign) else None)
        elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
            _bind(out, node.target, None)
        elif isinstance(node, ast.withitem) and node.optional_vars is not None:
            _bind(out, node.optional_vars, None)
    return out


def _bind(out, target, value) -> None:
    if isinstance(target, ast.Name):
        out[target.id].append(value)
    elif isinstance(target, (ast.Tuple, ast.List)):
        for t in target.elts:
            _bind(out, t, None)  # one element of an unpacking: unknown
    elif isinstance(target, ast.Starred):
        _bind(out, target.value, None)
