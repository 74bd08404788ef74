"""ADL014: an in-place write to a leaf that requires grad, with gradients on."""

from __future__ import annotations

import ast

from autograd_doctor.lint.class_leaves import attribute_leaves as _attribute_leaves, classes_in, self_attr as _self_attr
from autograd_doctor.lint.names import GRAD_OFF_NAMES as _GRAD_OFF
from autograd_doctor.lint.rules.base import Rule

RULE = Rule(
    code="ADL014", name="inplace-on-leaf-requiring-grad", needs_gradients=True,
    summary="A leaf tensor that requires grad is modified in place outside `torch.no_grad()`.",
    what_it_does="""Finds in-place writes (`w += ...`, `w.add_(...)`, `w[i] = ...`, `w.zero_()`)
with gradients enabled to a leaf that requires grad: a tensor made in the same
function with `requires_grad=True`, `.requires_grad_()` or `nn.Parameter(...)`,
the `weight` or `bias` of a layer made in the same function (`dense =
nn.Linear(...)`; `dense.weight[:, 0] -= v`), or the loop variable of `for p in
model.parameters():` in a function that also runs `backward()` (the
hand-written SGD update).
Also an attribute leaf of a class: `self.w = torch.zeros(n, requires_grad=True)`
(a factory called with `requires_grad=True`) in `__init__`, bound nowhere else in
the class, written in place (`self.w.add_(...)`, `self.w += ...`, `self.w[i] =
...`) in another method of the class, outside `no_grad()` there, when a call of
that method in the file runs with gradients on (not in a `no_grad()` block or a
`@torch.no_grad()` function, in a function that no `no_grad()` block calls).
The same leaf written later in `__init__` itself (`self.keys[:] += offset` right
after the factory) is reported when a construction `Cls(...)` in the file runs
with gradients on.""",
    why_bad="""PyTorch refuses: `RuntimeError: a leaf Variable that requires grad is being
used in an in-place operation.`  A parameter update must not be recorded in
the graph, so it has to run under `torch.no_grad()` (or go through an
optimizer).""",
    example="""loss.backward()
for p in model.parameters():
    p -= lr * p.grad""",
    use_instead="""loss.backward()
with torch.no_grad():
    for p in model.parameters():
        p -= lr * p.grad""",
    fix_safety="No automatic fix: where the `no_grad()` block should start is a choice.",
    known_problems="""Writes through `.data` or `.detach()` are allowed by PyTorch and not
reported (ADL004 covers `.data`).  A layer's `weight`/`bias` is claimed only
in files that never mention `requires_grad` (one could have frozen it).  A loop over parameters in a helper that
its caller runs under `no_grad()` is not reported unless the helper itself
calls `backward()`.  A class attribute leaf is reported only with a call of the
writing method in the same file (a method name that no other class of the file
defines).""",
)


def check_scope(checker, scope) -> None:
    does_backward = bool(scope.backwards or scope.retain_backwards)
    for w in scope.writes:
        if not w.grad_on or w.through_data or w.via == "detach" or id(w.node) in scope.reported:
            continue
        if w.grad_leaf in ("factory", "module") or (w.grad_leaf == "parameter" and does_backward):
            what = "a parameter" if w.grad_leaf in ("parameter", "module") else "a leaf that requires grad"
            checker.report("ADL014", w.node,
                           f"`{w.name}` is {what}, modified in place ({w.how}) with gradients "
                           f"enabled: PyTorch raises 'a leaf Variable that requires grad is being "
                           f"used in an in-place operation'; do it under `torch.no_grad()`")
            scope.reported.add(id(w.node))


_NOT_WRITES = frozenset({"requires_grad_", "retain_grad", "share_memory_", "register_hook"})


def check_file(checker) -> None:
    """Class attribute leaves (`self.w = torch.zeros(..., requires_grad=True)` in
    `__init__`) written in place by another method that a call in the file runs
    with gradients on."""
    if "requires_grad=True" not in checker.source:
        return
    classes = classes_in(checker.tree)
    defined, grad_off_callers = None, None  # read only for a class with attribute leaves
    for cls in classes:
        leaves = _attribute_leaves(checker, cls)
        if not leaves:
            continue
        if defined is None:
            defined = {}
            for other in classes:
                for item in other.body:
                    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        defined.setdefault(item.name, []).append(other)
            grad_off_callers = _called_under_no_grad(checker.tree)
        _check_constructor(checker, cls, leaves, classes, grad_off_callers)
        for method in cls.body:
            if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) or method.name == "__init__" \
                    or _grad_off_decorated(method) or len(defined.get(method.name, ())) != 1:
                continue
            writes = list(_leaf_writes(method.body, leaves))
            if not writes:
                continue
            call = _call_with_gradients(checker.tree, method.name, grad_off_callers)
            if call is None:
                continue
            for node, attr, how in writes:
                checker.report(
                    "ADL014", node,
                    f"`self.{attr}` is a leaf that requires grad (made with `requires_grad=True` in "
                    f"`__init__`), modified in place ({how}) with gradients enabled: `{method.name}()` is "
                    f"called on line {call.lineno} with gradients on, and PyTorch raises 'a leaf Variable "
                    f"that requires grad is being used in an in-place operation'; do it under "
                    f"`torch.no_grad()`")


def _check_constructor(checker, cls, leaves, classes, grad_off_callers) -> None:
    """`self.keys = torch.randn(..., requires_grad=True)` in `__init__`, then written
    in place later in the same `__init__` (`self.keys[:] += offset`, `self.w.mul_(s)`),
    when a construction `Cls(...)` in the file runs with gradients on (r576)."""
    init = next((m for m in cls.body if isinstance(m, ast.FunctionDef) and m.name == "__init__"), None)
    if init is None or _grad_off_decorated(init) or sum(c.name == cls.name for c in classes) != 1:
        return
    bound = {}
    for stmt in init.body:  # the leaf's own binding, at the top level of `__init__`
        if isinstance(stmt, ast.Assign):
            for t in stmt.targets:
                if _self_attr(t) and t.attr in leaves:
                    bound.setdefault(t.attr, stmt.lineno)
    writes = [(node, attr, how) for node, attr, how in _leaf_writes(init.body, leaves)
              if attr in bound and node.lineno > bound[attr]]
    if not writes:
        return
    call = _call_with_gradients(checker.tree, cls.name, grad_off_callers, by_name=True)
    if call is None:
        return
    for node, attr, how in writes:
        checker.report(
            "ADL014", node,
            f"`self.{attr}` is a leaf that requires grad (made with `requires_grad=True` on line "
            f"{bound[attr]}), modified in place ({how}) with gradients enabled: `{cls.name}(...)` is "
            f"called on line {call.lineno} with gradients on, and PyTorch raises 'a leaf Variable "
            f"that requires grad is being used in an in-place operation'; do it under "
            f"`torch.no_grad()`, or before `requires_grad` is set (`.requires_grad_()` last)")


def _leaf_writes(body, leaves, grad_off=False):
    """In-place writes to `self.<leaf>` in these statements outside `no_grad()`
    blocks, not in nested functions."""
    for stmt in body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(stmt, (ast.With, ast.AsyncWith)) and any(_grad_off_call(i.context_expr) for i in stmt.items):
            continue
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            func = stmt.value.func
            if isinstance(func, ast.Attribute) and func.attr.endswith("_") and not func.attr.startswith("_") \
                    and func.attr not in _NOT_WRITES and _self_attr(func.value) and func.value.attr in leaves:
                yield stmt.value, func.value.attr, f"`.{func.attr}()`"
        elif isinstance(stmt, ast.AugAssign) and _self_attr(stmt.target) and stmt.target.attr in leaves:
            yield stmt, stmt.target.attr, "augmented assignment"
        elif isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Subscript) \
                and _self_attr(stmt.target.value) and stmt.target.value.attr in leaves:
            yield stmt, stmt.target.value.attr, "augmented assignment through an index"
        elif isinstance(stmt, ast.Assign):
            for t in stmt.targets:
                if isinstance(t, ast.Subscript) and _self_attr(t.value) and t.value.attr in leaves:
                    yield stmt, t.value.attr, "item assignment"
        for field in ("body", "orelse", "finalbody"):
            inner = getattr(stmt, field, None)
            if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                yield from _leaf_writes(inner, leaves)
        for handler in getattr(stmt, "handlers", ()):
            yield from _leaf_writes(handler.body, leaves)


def _grad_off_call(expr) -> bool:
    func = expr.func if isinstance(expr, ast.Call) else expr
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    if name == "set_grad_enabled":
        return True  # the flag may be False: not evidence of gradients on
    return name in _GRAD_OFF


def _grad_off_decorated(func) -> bool:
    return any(_grad_off_call(d) for d in func.decorator_list)


def _called_under_no_grad(tree) -> set:
    """Names of functions called inside a `no_grad()` block or a `@no_grad` function."""
    out = set()
    for node in ast.walk(tree):
        region = None
        if isinstance(node, (ast.With, ast.AsyncWith)) and any(_grad_off_call(i.context_expr) for i in node.items):
            region = node.body
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _grad_off_decorated(node):
            region = node.body
        if region is None:
            continue
        for stmt in region:
            for inner in ast.walk(stmt):
                if isinstance(inner, ast.Call):
                    f = inner.func
                    out.add(f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else "")
    return out


def _call_with_gradients(tree, method, grad_off_callers, by_name=False):
    """A call `<x>.method(...)` that runs with gradients on: not in a `no_grad()`
    block, in a function that is neither `@no_grad` nor called from a `no_grad()`
    block (module level counts)."""
    def visit(body, enclosing):
        for stmt in body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if _grad_off_decorated(stmt) or stmt.name in grad_off_callers:
                    continue
                found = visit(stmt.body, stmt)
            elif isinstance(stmt, ast.ClassDef):
                found = visit(stmt.body, enclosing)
            elif isinstance(stmt, (ast.With, ast.AsyncWith)) and any(
                    _grad_off_call(i.context_expr) for i in stmt.items):
                continue
            else:
                found = None
                for node in ast.walk(stmt):
                    if isinstance(node, ast.Call) and (
                            (isinstance(node.func, ast.Attribute) and node.func.attr == method and not by_name)
                            or (by_name and isinstance(node.func, ast.Name) and node.func.id == method)) \
                            and not _inside_grad_off(stmt, node):
                        found = node
                        break
                if found is None:
                    for field in ("body", "orelse", "finalbody"):
                        inner = getattr(stmt, field, None)
                        if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                            found = found or visit(inner, enclosing)
            if found is not None:
                return found
        return None
    return visit(tree.body, None)


def _inside_grad_off(stmt, node) -> bool:
    """Whether ``node`` lies in a `no_grad()` block or a nested function within ``stmt``."""
    for inner in ast.walk(stmt):
        if inner is stmt:
            continue
        if isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) or (
                isinstance(inner, (ast.With, ast.AsyncWith))
                and any(_grad_off_call(i.context_expr) for i in inner.items)):
            if any(n is node for n in ast.walk(inner)):
                return True
    return False
