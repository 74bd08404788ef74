"""Which methods of a same-file class touch none of its layers or parameters.

An `nn.Module` whose optimizer holds `self.parameters()` computes graph values
with `self.fc(x)`, `self.pi(s)`, `self(x)`.  A method that only reads plain data
kept on the module (`self.data = []`: a replay buffer turned into tensors by
`make_batch()`) does not: its results do not depend on the parameters.
"""

from __future__ import annotations

import ast

_PLAIN = (ast.Constant, ast.List, ast.Tuple, ast.Dict, ast.Set)


def data_only_methods(cls: ast.ClassDef) -> frozenset:
    """Names of the methods of ``cls`` that use `self` only to read or write plain
    data attributes (every assignment to them in the class is a literal without
    calls: `[]`, `0`, `None`) or to call other such methods.  Anything else
    (`self.fc`, `self(x)`, `f(self)`, an attribute the class never assigns, which
    may be a parameter or an inherited layer) makes a method use the module."""
    methods = {m.name: m for m in cls.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))
               and m.args.args and not m.decorator_list}
    plain, other = set(), set()
    for m in methods.values():
        me = m.args.args[0].arg
        for node in ast.walk(m):
            targets = node.targets if isinstance(node, ast.Assign) else \
                [node.target] if isinstance(node, (ast.AnnAssign, ast.AugAssign)) else []
            for t in targets:
                for a in ast.walk(t):
                    if isinstance(a, ast.Attribute) and isinstance(a.value, ast.Name) and a.value.id == me:
                        literal = isinstance(node, ast.Assign) and t is a and isinstance(node.value, _PLAIN) \
                            and not any(isinstance(x, ast.Call) for x in ast.walk(node.value))
                        (plain if literal else other).add(a.attr)
    plain -= other
    free = set(methods)
    changed = True
    while changed:
        changed = False
        for name in sorted(free):
            if not _uses_only(methods[name], plain, free):
                free.discard(name)
                changed = True
    return frozenset(free)


def _uses_only(method, plain: set, free: set) -> bool:
    me = method.args.args[0].arg
    via_attribute = set()
    for node in ast.walk(method):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == me:
            if node.attr not in plain and node.attr not in free:
                return False
            via_attribute.add(id(node.value))
    return all(id(n) in via_attribute for n in ast.walk(method)
               if isinstance(n, ast.Name) and n.id == me)


# Constructors whose result holds the arguments' data and nothing of the module:
# a data set or loader over the given tensors, a tensor made from an array.
_DATA_CONSTRUCTORS = frozenset({"DataLoader", "TensorDataset", "Subset", "ConcatDataset",
                                "from_numpy", "as_tensor", "asarray", "array"})
# Tensor methods that move or cast their receiver: the result is the receiver's value.
_MOVES = frozenset({"to", "float", "double", "half", "long", "int", "bool", "cpu", "cuda", "contiguous"})


def argument_only_methods(cls: ast.ClassDef, qualname=None) -> frozenset:
    """Names of the methods of ``cls`` whose every `return` is built from the method's
    own arguments alone: an argument, moved or cast (`X.to(self.device)`, `X.float()`),
    a tensor made from it (`torch.from_numpy(np.asarray(X))`), or a data set or loader
    over such values (`DataLoader(TensorDataset(X), batch_size=self.batch_size)`),
    rows of such a value (`X[train_idx]`, whatever computed the index), `None` or a
    tuple of these, directly or through local names bound only so; and that write no
    value in place (no `X.mul_(...)`, `X[i] = ...`, `+=`).  Whatever else they call
    (`self.sampler.train_test()` for the indices) adds no graph to what they return,
    which holds no graph of the module's layers beyond its arguments' own (set AU,
    synthcity's `self._dataloader(X)`, `self._check_tensor(X)` and
    `self._train_test_split(X, cond)`, taken for parts whose parameters a step
    updates).
    ``qualname``: the file's resolver of a called name (`TorchDataLoader` imported
    as `from torch.utils.data import DataLoader as TorchDataLoader`)."""
    found = set()
    for m in cls.body:
        if not (isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)) and m.args.args):
            continue
        me = m.args.args[0].arg
        arguments = {a.arg for a in m.args.posonlyargs + m.args.args[1:] + m.args.kwonlyargs}
        if any(isinstance(n, (ast.Yield, ast.YieldFrom, ast.Lambda)) for n in ast.walk(m)):
            continue
        if any(isinstance(n, ast.AugAssign) or isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Store)
               or isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr.endswith("_")
               and not n.func.attr.startswith("_") for n in ast.walk(m)):
            continue  # `X.mul_(self.w)`, `X[i] = self.w`: an argument may take a layer's graph
        locals_of = {}
        for n in ast.walk(m):
            if isinstance(n, (ast.Assign, ast.AnnAssign)):
                targets = n.targets if isinstance(n, ast.Assign) else [n.target]
                for t in targets:
                    for a, v in _pairs(t, n.value):
                        locals_of.setdefault(a, []).append(v)
            elif isinstance(n, (ast.For, ast.AsyncFor, ast.With, ast.AsyncWith, ast.NamedExpr)):
                for a in ast.walk(n.target if hasattr(n, "target") else n):
                    if isinstance(a, ast.Name) and isinstance(a.ctx, ast.Store):
                        locals_of.setdefault(a.id, []).append(None)
        returns = [n for n in ast.walk(m) if isinstance(n, ast.Return)]
        if returns and all(r.value is not None and _from_arguments(r.value, me, arguments, locals_of, 0, qualname)
                           for r in returns):
            found.add(m.name)
    return frozenset(found)


def _pairs(target, value):
    """(name, the value it is bound to, or None when unknown) for each name bound by
    `target = value`, element by element for `a, b = x, y`."""
    if isinstance(target, ast.Name):
        return [(target.id, value)]
    if isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, (ast.Tuple, ast.List)) \
            and len(target.elts) == len(value.elts) and not any(isinstance(e, ast.Starred) for e in target.elts):
        return [p for t, v in zip(target.elts, value.elts) for p in _pairs(t, v)]
    return [(a.id, None) for a in ast.walk(target) if isinstance(a, ast.Name)]


def _from_arguments(value, me: str, arguments: set, locals_of: dict, depth: int, qualname) -> bool:
    if depth > 6:
        return False
    if isinstance(value, ast.Name):
        if value.id in arguments and value.id not in locals_of:
            return True
        bound = locals_of.get(value.id)
        return bool(bound) and value.id not in arguments and all(
            v is not None and _from_arguments(v, me, arguments, locals_of, depth + 1, qualname) for v in bound)
    if isinstance(value, ast.Constant) and value.value is None:
        return True
    if isinstance(value, (ast.Tuple, ast.List)):
        return all(_from_arguments(e, me, arguments, locals_of, depth + 1, qualname) for e in value.elts)
    if isinstance(value, ast.Subscript):  # `X[train_idx]`: the index selects, it adds no graph
        return _from_arguments(value.value, me, arguments, locals_of, depth + 1, qualname)
    if not isinstance(value, ast.Call):
        return False
    func = value.func
    positional = [a.value if isinstance(a, ast.Starred) else a for a in value.args]
    if isinstance(func, ast.Attribute) and func.attr in _MOVES:
        return _from_arguments(func.value, me, arguments, locals_of, depth + 1, qualname) and all(
            isinstance(a, (ast.Constant, ast.Name, ast.Attribute)) for a in positional)
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
    resolved = qualname(func) if qualname is not None and name is not None else None
    if resolved:
        name = resolved.rsplit(".", 1)[-1]
    if name not in _DATA_CONSTRUCTORS or not positional:
        return False
    return all(_from_arguments(a, me, arguments, locals_of, depth + 1, qualname) for a in positional)
