"""Which names a file calls inside a loop, and which attributes of ``self`` each method
of a class binds: facts for a rule that asks whether a method runs once per
iteration of a loop and whether something re-binds an attribute it keeps a value in.

Read lazily, once per file, and only by a rule that has a candidate (ADL023's
attribute sums): most files never need them."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


@dataclass
class LoopCalls:
    # called name (`f` of `f(x)`, `step` of `obj.step(x)`) -> the loop bodies that call it:
    # each a frozenset of the names called anywhere in that loop's body
    loops: dict = field(default_factory=dict)
    # (class, attribute) -> names of the methods of the class that bind `self.<attribute> = ...`
    binders: dict = field(default_factory=dict)
    # attribute names written `obj.<attribute> = ...` in a loop's body, per called name as above
    loop_bindings: dict = field(default_factory=dict)


def _called(node) -> str | None:
    if isinstance(node, ast.Call):
        if isinstance(node.func, ast.Name):
            return node.func.id
        if isinstance(node.func, ast.Attribute):
            return node.func.attr
    return None


def read(tree: ast.Module) -> LoopCalls:
    facts = LoopCalls()
    for node in ast.walk(tree):
        if isinstance(node, _LOOPS):
            called, bound = set(), set()
            for stmt in node.body:
                for inner in ast.walk(stmt):
                    name = _called(inner)
                    if name is not None:
                        called.add(name)
                    elif isinstance(inner, ast.Attribute) and isinstance(inner.ctx, ast.Store):
                        bound.add(inner.attr)
            called = frozenset(called)
            for name in called:
                facts.loops.setdefault(name, []).append(called)
                facts.loop_bindings.setdefault(name, set()).update(bound)
        elif isinstance(node, ast.ClassDef):
            for method in node.body:
                if not isinstance(method, _FUNCTIONS):
                    continue
                for inner in ast.walk(method):
                    targets = inner.targets if isinstance(inner, ast.Assign) else \
                        [inner.target] if isinstance(inner, ast.AnnAssign) else []
                    for target in targets:
                        if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) \
                                and target.value.id == "self":
                            facts.binders.setdefault((node.name, target.attr), set()).add(method.name)
    return facts
