"""Which same-file method a call through an instance reaches.

`self.se3.warp(pts, rot, trans)` where the class's `__init__` built `self.se3 =
SE3Field()`, or `sim.step(states, action)` after `sim = Simulator()` in the same
function: the call runs `SE3Field.warp` / `Simulator.step`, a method of a class
defined at the top of this file.  graph_callers.py keys a method by its name, so
the answer is that name, and only when the file defines one function or method of
that name (no other class's method is taken for it).  Anything else (an instance
passed in, an attribute bound twice or outside `__init__`, a class from another
file, a static or class method, whose positions differ) gives None: no evidence.
"""

from __future__ import annotations

import ast


def held_method(checker, call) -> str | None:
    """The name of the same-file method that ``call`` (`<instance>.<method>(...)`) runs."""
    func = call.func
    if not isinstance(func, ast.Attribute):
        return None
    facts = _file_facts(checker)
    receiver = func.value
    cls = None
    if isinstance(receiver, ast.Attribute) and isinstance(receiver.value, ast.Name) \
            and receiver.value.id == "self" and checker.scope.owner_class:
        cls = facts["held"].get((checker.scope.owner_class, receiver.attr))
    elif isinstance(receiver, ast.Name) and receiver.id != "self":
        bindings = checker.scope.bind_values.get(receiver.id, ())
        if len(bindings) == 1:
            value = bindings[0][1]
            if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) \
                    and value.func.id in facts["methods"]:
                cls = value.func.id
    if cls is None or func.attr not in facts["methods"].get(cls, ()) \
            or facts["defined"].get(func.attr, 0) != 1:
        return None
    return func.attr


def _file_facts(checker) -> dict:
    facts = getattr(checker, "_held_instance_facts", None)
    if facts is None:
        facts = _summarise(checker.tree)
        checker._held_instance_facts = facts
    return facts


def _summarise(tree) -> dict:
    """``methods``: class -> its plain methods (not static or class methods);
    ``defined``: name -> how many functions and methods of the file bear it;
    ``held``: (class, attr) -> the same-file class whose instance `__init__` binds
    to `self.<attr>`, when that is the only binding of `self.<attr>` in the class."""
    methods, defined, held = {}, {}, {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            defined[node.name] = defined.get(node.name, 0) + 1
    classes = [n for n in getattr(tree, "body", ()) if isinstance(n, ast.ClassDef)]
    for cls in classes:
        methods[cls.name] = frozenset(
            f.name for f in cls.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
            and not any(isinstance(d, ast.Name) and d.id in ("staticmethod", "classmethod")
                        for d in f.decorator_list))
    for cls in classes:
        bound: dict = {}
        for f in cls.body:
            if not isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for stmt in ast.walk(f):
                targets = stmt.targets if isinstance(stmt, ast.Assign) else \
                    [stmt.target] if isinstance(stmt, (ast.AugAssign, ast.AnnAssign)) else []
                for t in targets:
                    for elt in (t.elts if isinstance(t, (ast.Tuple, ast.List)) else [t]):
                        if isinstance(elt, ast.Attribute) and isinstance(elt.value, ast.Name) \
                                and elt.value.id == "self":
                            value = stmt.value if f.name == "__init__" and elt is t \
                                and isinstance(stmt, ast.Assign) else None
                            bound.setdefault(elt.attr, []).append(value)
        for attr, values in bound.items():
            if len(values) == 1 and isinstance(values[0], ast.Call) \
                    and isinstance(values[0].func, ast.Name) and values[0].func.id in methods:
                held[(cls.name, attr)] = values[0].func.id
    return {"methods": methods, "defined": defined, "held": held}
