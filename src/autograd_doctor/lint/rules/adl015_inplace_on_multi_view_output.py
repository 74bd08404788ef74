"""ADL015: an in-place write to one of the views chunk/split/unbind returned."""

from __future__ import annotations

import ast

from autograd_doctor.lint.rules.base import Rule

RULE = Rule(
    code="ADL015", name="inplace-on-multi-view-output",
    summary="One of the views returned by `chunk`/`split`/`unbind` (or by iterating a tensor), or the output of a custom autograd Function that returns its input as is, is modified in place.",
    what_it_does="""Finds in-place writes to a name bound by unpacking `x.chunk(...)`,
`x.split(...)`, `x.unbind(...)`, `torch.chunk(x, ...)` (and the other
splitting functions), or to the loop variable of `for row in x:` /
`for row in x.unbind(0):`, when `x` carries a graph (it requires grad), also
through a second binding of such a view: a new name (`g_ = g_h`) or a view
of it (`q = q.view(b, n, h, d).transpose(1, 2)`; never a copy such as
`.clone()`, `.contiguous()` or `.reshape()`, nor `.detach()`).
Also writes to the output of a same-file `torch.autograd.Function` whose
`forward` returns one of its inputs as is or through `.view_as()`/`.view()`
(`y = Identity.apply(h)`, or a same-file module whose `forward` returns that:
`h = self.grl(h)`, also through a same-file module whose `forward` returns
such a layer's output), called on a value with a graph; and, in a method, a
write to a parameter (`hidden_states[mask, :] = v`) where a call
`self.method(h, ...)` in the class passes such an output there.""",
    why_bad="""These functions return several views of one tensor, and autograd cannot
rebase more than one view: the write raises `RuntimeError: Output 0 of
SplitBackward0 is a view and is being modified inplace. This view is the
output of a function that returns multiple views. Such functions do not
allow the output views to be modified inplace.`  A custom Function's output
that is its input (or a view of it) is likewise a view autograd cannot
rebase: "This view was created inside a custom Function (or because an
input was returned as-is) and the autograd logic to handle view+inplace
would override the custom backward associated with the custom Function".""",
    example="""x = torch.randn(4, requires_grad=True) * 2
a, b = x.chunk(2)
a.mul_(2)""",
    use_instead="""x = torch.randn(4, requires_grad=True) * 2
a, b = x.chunk(2)
a = a.mul(2)""",
    fix_safety="No automatic fix (the rewrite `a = a.mul(2)` is ADL001's unsafe fix).",
    known_problems="""Only unpacking into names and `for` loops are tracked; `parts =
x.chunk(2); parts[0].mul_(2)` is not.  The source tensor must be known to
require grad, or be an unannotated parameter of the function that some call
in the file passes a value with a graph at that position (a capsule pose
transform's `..., theta, ... = torch.split(pose_tensor, 1, -1)`, called with a
layer's output).""",
)


def check_scope(checker, scope) -> None:
    if scope.owner_class is not None and (scope.parameter_index_writes or scope.parameter_method_writes
                                          or scope.parameter_aug_writes):
        _note_parameter_writes(checker, scope)
    for w in scope.writes:
        if w.function_view and w.grad_on and not w.through_data and w.via != "detach" \
                and not w.untyped_helper and id(w.node) not in scope.reported:
            checker.report("ADL015", w.node,
                           f"`{w.name}` comes from `{w.function_view}(...)`: the output of a custom "
                           f"autograd Function whose forward returns its input as is (or a view of it); writing "
                           f"it in place ({w.how}) raises 'is a view and is being modified inplace. "
                           f"This view was created inside a custom Function (or because an input was "
                           f"returned as-is)'; write out of place, or write a `.clone()`")
            scope.reported.add(id(w.node))
        if not w.grad_on or not w.split_from or w.through_data or w.via == "detach" \
                or id(w.node) in scope.reported:
            continue
        parameter = scope.provisional_splits.get(w.name)
        if parameter is not None:
            # split from an untyped parameter: wait for a call that passes a graph there
            checker.notes["ADL015 parameter"].append((scope.name, _position(scope, parameter), parameter, w))
            scope.reported.add(id(w.node))
            continue
        _report(checker, w)
        scope.reported.add(id(w.node))


def on_method_call(checker, call, func) -> None:
    """`self.fill(h, ...)` in a method, `h` a custom Function's output that is its input
    (Scope.function_views): where the method writes that parameter in place, the
    write fails (``check_file``)."""
    scope = checker.scope
    if not scope.function_views or scope.grad_off or scope.owner_class is None \
            or not (isinstance(func.value, ast.Name) and func.value.id == "self"):
        return
    for position, arg in enumerate(call.args):
        if isinstance(arg, ast.Name) and arg.id in scope.function_views:
            checker.notes["ADL015 fed views"].append(
                ((scope.owner_class, func.attr), position, scope.function_views[arg.id], call))


def _note_parameter_writes(checker, scope) -> None:
    """In-place writes to a parameter the walk does not know to be a tensor, while it
    still holds the caller's value: a hazard where a caller passes a custom
    Function's output there (``check_file``)."""
    writes = [(seq, name, node, "an indexed assignment") for seq, name, node in scope.parameter_index_writes] + \
        [(seq, name, node, f"`.{node.func.attr}()`") for seq, name, node in scope.parameter_method_writes] + \
        [(seq, name, node, "an augmented assignment") for seq, name, node in scope.parameter_aug_writes]
    for seq, name, node, how in writes:
        binds = scope.binds.get(name)
        position = _position(scope, name)
        if binds and position is not None and not scope.bound_between(name, binds[0], seq):
            checker.notes["ADL015 parameter writes"].append(
                ((scope.owner_class, scope.name), position, name, node, how))


def check_file(checker) -> None:
    """Writes to views split from an untyped parameter, where some call in the file
    passes a value with a graph at that position (or keyword): graph_callers.py.
    And writes to a method's parameter where a call passes a custom Function's
    output that is its input."""
    fed = checker.notes.get("ADL015 fed views")
    if fed:
        written = {}
        for key, position, name, node, how in checker.notes.get("ADL015 parameter writes", ()):
            written.setdefault((key, position), []).append((name, node, how))
        reported = set()
        for key, position, view, call in fed:
            for name, node, how in written.get((key, position), ()):
                if id(node) not in reported:
                    reported.add(id(node))
                    checker.report(
                        "ADL015", node,
                        f"`{name}` is written in place ({how}), and `{checker.text(call.func)}(...)` on "
                        f"line {call.lineno} passes here what `{view}(...)` returned: the output of a custom "
                        f"autograd Function that returns its input as is (or a view of it); the write raises 'is "
                        f"a view and is being modified inplace. This view was created inside a custom "
                        f"Function (or because an input was returned as-is)'; write a `.clone()`")
    if not checker.notes["ADL015 parameter"]:
        return
    places = checker.graph_callers.fed_positions()
    for function, position, name, w in checker.notes["ADL015 parameter"]:
        fed_at = places.get(function, ())
        if (position is not None and position in fed_at) or name in fed_at:
            _report(checker, w)


def _position(scope, name: str):
    args = scope.arguments
    positional = [a.arg for a in args.posonlyargs + args.args] if args is not None else []
    offset = 1 if scope.owner_class and positional and positional[0] in ("self", "cls") else 0
    return positional.index(name) - offset if name in positional[offset:] else None


def _report(checker, w) -> None:
    checker.report("ADL015", w.node,
                   f"`{w.name}` is one of several views returned by `{w.split_from}`; writing it "
                   f"in place ({w.how}) raises 'a view ... of a function that returns multiple "
                   f"views ... modified inplace'; write out of place")
