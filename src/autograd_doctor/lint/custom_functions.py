"""Custom autograd Functions whose output may not be written in place.

A `torch.autograd.Function` whose `forward` gives back one of its inputs as is
(`return input_`, model parallelism's identity regions) or a view of it
(`return x.view_as(x)`, a gradient reversal layer) returns a view that
autograd forbids writing in place: `RuntimeError: Output 0 of
<Function>Backward is a view and is being modified inplace.  This view was
created inside a custom Function (or because an input was returned as-is)`.
"""

from __future__ import annotations

import ast

from autograd_doctor.lint.walk import walk_nodes

_VIEWS = frozenset({"view_as", "view"})


def returns_an_input(cls: ast.ClassDef) -> bool:
    """``cls``'s `forward(ctx, *inputs)` returns, on every `return`, one of its inputs
    (not re-bound in `forward`) as is or through `.view_as(...)` / `.view(...)`."""
    forward = next((n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "forward"), None)
    if forward is None:
        return False
    inputs = {a.arg for a in (forward.args.posonlyargs + forward.args.args)[1:]}
    nodes = list(walk_nodes(forward))
    returned = []
    for n in nodes:
        if isinstance(n, ast.Return):
            value = n.value
            while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in _VIEWS:
                value = value.func.value
            if not (isinstance(value, ast.Name) and value.id in inputs):
                return False
            returned.append(value.id)
    if not returned:
        return False
    # the input itself, not a new value given its name (`x = x * 2; return x`)
    return not any(isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) and n.id in returned for n in nodes)


_FUNCTION_BASES = frozenset({"torch.autograd.Function", "torch.autograd.function.Function"})


def saved_inputs(cls: ast.ClassDef, qualname) -> list[int] | None:
    """The positions (after `ctx`) of the inputs that ``cls``'s `forward(ctx, ...)` hands
    `ctx.save_for_backward(...)` as they are (a name never bound again in `forward`),
    when ``cls`` subclasses `torch.autograd.Function` (``qualname`` resolves its bases),
    its `backward` unpacks `ctx.saved_tensors` (where autograd checks their versions)
    and `forward` marks nothing dirty; None otherwise."""
    if not any((qualname(b) or "") in _FUNCTION_BASES for b in cls.bases):
        return None
    methods = {n.name: n for n in cls.body if isinstance(n, ast.FunctionDef)}
    forward, backward = methods.get("forward"), methods.get("backward")
    if forward is None or backward is None or forward.args.vararg is not None:
        return None
    if not any(isinstance(n, ast.Attribute) and n.attr == "saved_tensors" for n in ast.walk(backward)):
        return None
    params = [a.arg for a in forward.args.posonlyargs + forward.args.args]
    if len(params) < 2:
        return None
    ctx, inputs = params[0], params[1:]
    stored = {n.id for n in ast.walk(forward) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    saved = []
    for n in ast.walk(forward):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) \
                and isinstance(n.func.value, ast.Name) and n.func.value.id == ctx:
            if n.func.attr == "mark_dirty":
                return None
            if n.func.attr == "save_for_backward":
                for a in n.args:
                    if isinstance(a, ast.Name) and a.id in inputs and a.id not in stored:
                        saved.append(inputs.index(a.id))
    return sorted(set(saved)) or None
