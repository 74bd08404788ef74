"""Which names a file calls inside a loop, and which attributes of ``self`` each method
of a class binds: facts for a rule that asks whether a method runs once per
iteration of a loop and whether something re-binds an attribute it keeps a value in.

Read lazily, once per file, and only by a rule that has a candidate (ADL023's
attribute sums): most files never need them."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from functools import lru_cache

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


def loops_elsewhere(filename: str, owner_class: str, method: str):
    """The loops of the other files of ``filename``'s repository that call ``method`` and
    name ``owner_class`` (the class whose method it is: the file builds or imports its
    objects), as ``(loops, loop_bindings, file name)``, or None when no such file exists.

    FedML's decentralized clients (`client_dsgd.py`) keep each step's loss on `self`;
    the loop that calls `client.train_local(t)` on every iteration is in
    `decentralized_fl_api.py`, which imports `ClientDSGD`.  A file that calls a
    same-named method but never names the class is no evidence: its objects may be of
    another class.  Each other file is parsed once (cached)."""
    import os
    import re
    from autograd_doctor.lint.submodules import file_text, repository_files
    if not owner_class or not filename or filename.startswith("<"):
        return None
    own = os.path.abspath(filename)
    called = re.compile(r"\.%s\s*\(" % re.escape(method))
    named = re.compile(r"\b%s\b" % re.escape(owner_class))
    loops, bindings, where = [], set(), []
    for path in repository_files(filename):
        if path == own:
            continue
        text = file_text(path)
        if not called.search(text) or not named.search(text):
            continue
        facts = _read_path(path)
        if facts is None or method not in facts.loops:
            continue
        loops.extend(facts.loops[method])
        bindings.update(facts.loop_bindings.get(method, ()))
        where.append(os.path.basename(path))
    return (loops, bindings, where[0]) if loops else None


@lru_cache(maxsize=1024)
def _read_path(path: str):
    from autograd_doctor.lint.submodules import file_text
    try:
        return read(ast.parse(file_text(path)))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
