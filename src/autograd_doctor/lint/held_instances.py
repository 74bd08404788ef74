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
    if func.attr not in facts.method_names:  # most calls: a method no class of this file defines
        return None
    receiver = func.value
    cls = None
    if isinstance(receiver, ast.Attribute) and isinstance(receiver.value, ast.Name) \
            and receiver.value.id == "self" and checker.scope.owner_class:
        cls = facts.held(checker.scope.owner_class).get(receiver.attr)
    elif isinstance(receiver, ast.Name) and receiver.id != "self":
        bindings = checker.scope.bind_values.get(receiver.id, ())
        if len(bindings) == 1:
            value = bindings[0][1]
            if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) \
                    and value.func.id in facts.methods:
                cls = value.func.id
    if cls is None or func.attr not in facts.methods.get(cls, ()) or facts.defined_count(func.attr) != 1:
        return None
    return func.attr


def _file_facts(checker) -> "_FileFacts":
    facts = getattr(checker, "_held_instance_facts", None)
    if facts is None:
        facts = _FileFacts(checker.tree)
        checker._held_instance_facts = facts
    return facts


class _FileFacts:
    """What the file's classes say, read once and only as far as a call needs (a whole-tree walk
    for the count of definitions, a class's methods for what `__init__` binds, only when a call
    could reach a same-file method).

    ``methods``: top-level class -> its plain methods (not static or class methods);
    ``defined_count(name)``: how many functions and methods of the file bear that name;
    ``held(class)``: attr -> the same-file class whose instance `__init__` binds to
    `self.<attr>`, when that is the only binding of `self.<attr>` in the class."""

    def __init__(self, tree):
        self.tree = tree
        self.classes = {n.name: n for n in getattr(tree, "body", ()) if isinstance(n, ast.ClassDef)}
        self.methods = {name: frozenset(
            f.name for f in cls.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
            and not any(isinstance(d, ast.Name) and d.id in ("staticmethod", "classmethod")
                        for d in f.decorator_list)) for name, cls in self.classes.items()}
        self.method_names = frozenset().union(*self.methods.values()) if self.methods else frozenset()
        self._defined = None
        self._held = {}

    def defined_count(self, name: str) -> int:
        if self._defined is None:
            self._defined = {}
            for node in ast.walk(self.tree):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    self._defined[node.name] = self._defined.get(node.name, 0) + 1
        return self._defined.get(name, 0)

    def held(self, class_name: str) -> dict:
        found = self._held.get(class_name)
        if found is None:
            found = self._held[class_name] = self._held_by(self.classes.get(class_name))
        return found

    def _held_by(self, cls) -> dict:
        if cls is None:
            return {}
        # cheap first: does `__init__` bind any `self.<attr>` to a same-file class's instance?
        init = next((f for f in cls.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
                     and f.name == "__init__"), None)
        if init is None or not any(
                isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Call)
                and isinstance(stmt.value.func, ast.Name) and stmt.value.func.id in self.methods
                for stmt in ast.walk(init)):
            return {}
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
        return {attr: values[0].func.id for attr, values in bound.items()
                if len(values) == 1 and isinstance(values[0], ast.Call)
                and isinstance(values[0].func, ast.Name) and values[0].func.id in self.methods}
