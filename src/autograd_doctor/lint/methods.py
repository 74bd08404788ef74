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
