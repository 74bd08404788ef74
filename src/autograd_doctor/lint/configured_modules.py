"""Layers a module's constructor configures away from the constructor call.

`self.act = nn.ReLU()` says what `self.act(x)` does; these do not, at the line:

* an activation chosen by name from a dict of classes, `self.activate =
  activate_name[activate]()` with `activate_name = {"relu": nn.ReLU, ...}`
  bound once at the top of the file;
* an activation kept as a function, `self.activation = activation` with
  `def __init__(self, ..., activation=F.relu)`, or `self.activation = F.relu`;
* an activation layer built in the signature, `self.act = act` with
  `def __init__(self, ..., act=nn.ReLU())` (PyG's FiLMConv); a construction may
  pass another layer built at the call (`act=nn.Tanh()`).

What they build depends on the values the constructor's parameter takes.
Those are read from the file's constructions of the class (``values``): each
call passes a constant, a torch function, its own constructor's parameter
(followed to that class's constructions: `CSPStage(4, 2, activate="relu")`
hands `"relu"` to each `CSPBlock(..., activate=activate)`, which hands it to
each `Convolutional(..., activate=activate)`), or nothing (the default).  A
class the file never constructs takes its default, as a library's users do.
Anything else (a value computed at run time, `*args`, the class mentioned other
than by a call, as a `block=CSPBlock` argument) leaves the parameter unknown,
and so the layer.  A layer counts only when every value gives the same one;
`None` is no value a call can run with (`if self.activation is not None:`).
"""

from __future__ import annotations

import ast

from autograd_doctor.lint import names as N
from autograd_doctor.lint.modules import ModuleSpec

# torch functions that compute what an activation module does: `F.relu` is `nn.ReLU()`
_FUNCTION_MODULES = {}
for _kind, _op in N.MODULE_OPS.items():
    if _kind not in N.PARAMETERISED_MODULES and not _kind.startswith(("BatchNorm", "LayerNorm", "GroupNorm",
                                                                       "MaxPool", "Embedding")):
        _short = _op.rsplit(".", 1)[-1]
        for _q in (_op, f"torch.nn.functional.{_short}", f"torch.{_short}"):
            _FUNCTION_MODULES.setdefault(_q, _kind)

_FUNCTION_NAMES = frozenset(q.rsplit(".", 1)[-1] for q in _FUNCTION_MODULES)

_UNKNOWN = None


class ConstructorValues:
    """The values each constructor parameter of the file's top-level classes takes."""

    def __init__(self, tree: ast.Module):
        self.tree = tree
        self._inits = None      # class name -> its `__init__` (classes defined once)
        self._calls = None      # class name -> [(call, the enclosing function)]
        self._escaped = None    # class names mentioned other than as the callee of a call
        self._owner = None      # id of an `__init__` -> its class name
        self._dicts = None      # top-level name bound once to a dict literal -> the dict
        self._cache: dict = {}

    def _index(self) -> None:
        inits, seen = {}, set()
        for node in self.tree.body:
            if isinstance(node, ast.ClassDef):
                if node.name in seen:
                    inits.pop(node.name, None)
                    continue
                seen.add(node.name)
                init = next((b for b in node.body if isinstance(b, ast.FunctionDef) and b.name == "__init__"), None)
                if init is not None:
                    inits[node.name] = init
        self._inits = inits
        self._owner = {id(init): name for name, init in inits.items()}
        self._calls, self._escaped = {}, set()
        callees = set()
        stack = [(self.tree, None)]
        while stack:
            node, function = stack.pop()
            for child in ast.iter_child_nodes(node):
                inner = child if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) else function
                if isinstance(child, ast.Call) and isinstance(child.func, ast.Name) and child.func.id in inits:
                    self._calls.setdefault(child.func.id, []).append((child, function))
                    callees.add(id(child.func))
                stack.append((child, inner))
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Name) and node.id in inits and id(node) not in callees:
                self._escaped.add(node.id)
        dicts, bound = {}, {}
        for node in ast.walk(self.tree):
            targets = node.targets if isinstance(node, ast.Assign) else \
                [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else []
            for t in targets:
                for n in ast.walk(t):
                    if isinstance(n, ast.Name):
                        bound[n.id] = bound.get(n.id, 0) + 1
                    elif isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name):
                        bound[n.value.id] = bound.get(n.value.id, 0) + 2  # `table[k] = v`: changed
        for node in self.tree.body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                    and isinstance(node.value, ast.Dict) and bound.get(node.targets[0].id) == 1:
                dicts[node.targets[0].id] = node.value
        self._dicts = dicts

    def dict_literal(self, name: str) -> ast.Dict | None:
        """The dict literal a top-level name is bound to, once, and never changed."""
        if self._dicts is None:
            self._index()
        return self._dicts.get(name)

    def values(self, cls: str, parameter: str, depth: int = 0):
        """The expressions ``cls``'s constructor parameter takes (constants and
        torch names), one per distinct source; None when unknown."""
        if self._inits is None:
            self._index()
        key = (cls, parameter)
        if key in self._cache:
            return self._cache[key]
        self._cache[key] = _UNKNOWN  # a cycle of constructors: unknown
        found = self._values(cls, parameter, depth)
        self._cache[key] = found
        return found

    def _values(self, cls, parameter, depth):
        init = self._inits.get(cls)
        if init is None or cls in self._escaped or depth > 6:
            return _UNKNOWN
        positional = [a.arg for a in init.args.posonlyargs + init.args.args][1:]
        defaults = dict(zip(positional[len(positional) - len(init.args.defaults):], init.args.defaults))
        defaults.update((a.arg, d) for a, d in zip(init.args.kwonlyargs, init.args.kw_defaults) if d is not None)
        if parameter not in positional and parameter not in {a.arg for a in init.args.kwonlyargs}:
            return _UNKNOWN
        calls = self._calls.get(cls, [])
        passed = []
        for call, function in calls:
            if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
                return _UNKNOWN
            arg = next((k.value for k in call.keywords if k.arg == parameter), None)
            if arg is None and parameter in positional and positional.index(parameter) < len(call.args):
                arg = call.args[positional.index(parameter)]
            passed.append((arg, function))
        if not calls:
            passed = [(None, None)]  # never built here: what the default builds
        out = []
        for arg, function in passed:
            if arg is None:
                if parameter not in defaults:
                    return _UNKNOWN
                out.append(defaults[parameter])
            elif isinstance(arg, (ast.Constant, ast.Attribute)) or _module_construction(arg):
                out.append(arg)  # (a layer built at the call, `act=nn.Tanh()`, is read by its caller)
            elif isinstance(arg, ast.Name) and function is not None and id(function) in self._owner \
                    and _unbound_parameter(function, arg.id):
                inner = self.values(self._owner[id(function)], arg.id, depth + 1)
                if inner is _UNKNOWN:
                    return _UNKNOWN
                out.extend(inner)
            elif isinstance(arg, ast.Name) and arg.id not in self._inits and not is_parameter(function, arg.id):
                out.append(arg)  # a global or imported name (`nn.ReLU`, `F.relu` as `relu`)
            else:
                return _UNKNOWN
        return tuple(out)


def is_parameter(function, name: str) -> bool:
    """Whether `name` is a parameter of `function` (any kind: positional, keyword-only, *args, **kwargs)."""
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        return False
    args = function.args
    return name in {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs} | \
        {a.arg for a in (args.vararg, args.kwarg) if a is not None}


def _unbound_parameter(function, name: str) -> bool:
    """``name`` is a parameter of ``function`` that its body never re-binds."""
    if not is_parameter(function, name):
        return False
    return not any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store)
                   for n in ast.walk(function))


def configured_layer(checker, value):
    """The ModuleSpec of what `self.<attr> = value` in a module's `__init__` holds,
    when it is configured away from the line (see the module docstring); None
    when unknown."""
    scope = checker.scope
    cls = scope.owner_class
    if isinstance(value, ast.Attribute):
        return _function_layer(checker, value)
    if isinstance(value, ast.Name) and value.id in scope.parameters and len(scope.binds.get(value.id, ())) == 1 \
            and _layer_of(checker, checker.function_defaults.get(value.id)) is not None:
        # only a parameter whose default is such a function (`activation=F.relu`) or a
        # layer built in the signature (`act=nn.ReLU()`, PyG's FiLMConv): the
        # constructions are read for these alone
        found = checker.constructor_values.values(cls, value.id)
        if found is None:
            return None
        specs = {_layer_of(checker, v) for v in found
                 if not (isinstance(v, ast.Constant) and v.value is None)}
        return specs.pop() if len(specs) == 1 and None not in specs else None
    if isinstance(value, ast.Call) and not value.args and not value.keywords \
            and isinstance(value.func, ast.Subscript) and isinstance(value.func.value, ast.Name):
        table = checker.constructor_values.dict_literal(value.func.value.id)
        if table is None or any(k is None for k in table.keys):
            return None
        key = value.func.slice
        if isinstance(key, ast.Constant):
            keys = (key,)
        elif isinstance(key, ast.Name) and key.id in scope.parameters and len(scope.binds.get(key.id, ())) == 1:
            keys = checker.constructor_values.values(cls, key.id)
        else:
            return None
        if not keys or not all(isinstance(k, ast.Constant) for k in keys):
            return None
        entries = {k.value: v for k, v in zip(table.keys, table.values) if isinstance(k, ast.Constant)}
        specs = set()
        for k in keys:
            chosen = entries.get(k.value)
            if not isinstance(chosen, (ast.Name, ast.Attribute)):
                return None
            specs.add(checker.modules.module_spec(ast.Call(func=chosen, args=[], keywords=[])))
        return specs.pop() if len(specs) == 1 and None not in specs else None
    return None


def _module_construction(node) -> bool:
    """`nn.ReLU()`, `nn.LeakyReLU(0.2)`: a call of a capitalised attribute (a layer
    class), with constant arguments only."""
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr[:1].isupper() \
        and all(isinstance(a, ast.Constant) for a in node.args) \
        and all(k.arg is not None and isinstance(k.value, ast.Constant) for k in node.keywords)


def _layer_of(checker, node):
    """The layer a constructor parameter's value gives `self.<attr>`: a torch
    function kept to be called (`F.relu`), or a torch layer built in place
    (`nn.ReLU()`)."""
    if _module_construction(node):
        return checker.modules.module_spec(node)
    return _function_layer(checker, node)


def _function_layer(checker, node):
    """`F.relu` / `torch.tanh` kept to be called like a layer: the layer it is."""
    if not isinstance(node, (ast.Name, ast.Attribute)) or \
            (node.attr if isinstance(node, ast.Attribute) else node.id) not in _FUNCTION_NAMES:
        return None  # (most attributes kept are no torch function: no name lookup)
    kind = _FUNCTION_MODULES.get(checker.qualname(node) or "")
    return ModuleSpec(kind) if kind is not None else None
