"""ADL040: `requires_grad` set on a tensor computed with a graph (a non-leaf):
PyTorch raises 'you can only change requires_grad flags of leaf variables'."""

from __future__ import annotations

import ast

from autograd_doctor.lint.findings import Fix
from autograd_doctor.lint.rules.base import Rule

RULE = Rule(
    code="ADL040", name="requires-grad-set-on-non-leaf", needs_gradients=True,
    summary="`t.requires_grad = ...` / `t.requires_grad_(False)` on a tensor computed with a graph (a non-leaf) raises.",
    what_it_does="""Finds `t.requires_grad = <anything>` and `t.requires_grad_(False)` where
`t` is a local name whose binding live at that line is the result of an op
(a call, an arithmetic expression) that the walk knows to carry a graph: a
parameterised module's output, an op on a parameter, on a leaf made with
`requires_grad=True` or on such a result, computed with gradients on (not
under `no_grad()` / `inference_mode()`, not cut by `.detach()`).
Not reported: names bound to a leaf (`nn.Parameter(...)`, `torch.zeros(...,
requires_grad=True)`, `t.detach()`, a `.clone()` of a detached tensor), to a
parameter or attribute (`w = model.weight`), to a function's parameter (what
the caller passes is not known), to the result of a method that may give its
receiver back unchanged (`.to()`, `.cuda()`, `.float()`, `.type()`,
`.contiguous()`...: a leaf stays a leaf), and `t.requires_grad_()` /
`t.requires_grad_(True)` (allowed on a tensor that already requires grad).""",
    why_bad="""Only a leaf's `requires_grad` flag can be changed.  On a tensor computed
from a graph, the assignment (either value) and `requires_grad_(False)` raise
`RuntimeError: you can only change requires_grad flags of leaf variables`.
`True` was meant to make the value's gradient readable (use `retain_grad()`:
it already requires grad); `False` was meant to stop gradients there (use
`.detach()`, which gives a new leaf).""",
    example="""gate = torch.sigmoid(D(x))
gate.requires_grad = True
gate.retain_grad()

features = D(x)
features.requires_grad = False""",
    use_instead="""gate = torch.sigmoid(D(x))
gate.retain_grad()           # it already requires grad

features = D(x).detach()""",
    fix_safety="""No fix: whether the value was meant to keep its graph (drop the line, use
`retain_grad()`) or to be cut from it (`.detach()`) is the user's choice.""",
    known_problems="""Only local names are followed (not `self.x.requires_grad = ...`, nor an
element of a list); a name bound on one path of an `if` to a graph value and
on the other to a leaf is read from the binding live at the line (the walk's
last one), and a value the walk cannot show to carry a graph (an argument, the
result of a function of another file) is not reported.""",
)

# methods that may give back their receiver itself (then a leaf stays a leaf)
_MAY_RETURN_SELF = frozenset("""
to cuda cpu float double half bfloat16 int long bool type type_as contiguous
requires_grad_ detach detach_ share_memory_ pin_memory coalesce as_subclass
""".split())


def _candidate(checker, obj) -> bool:
    scope = checker.scope
    if scope.grad_off or not isinstance(obj, ast.Name) or obj.id in ("self", "cls"):
        return False
    name = obj.id
    if name in scope.parameters or name in scope.parameter_vars \
            or name not in scope.graph:
        return False
    entry = scope.binding(name, checker.seq + 1)
    if entry is None or entry[1] is None or (len(entry) > 2 and entry[2]):
        return False
    value = entry[1]
    if not isinstance(value, (ast.Call, ast.BinOp, ast.UnaryOp)):
        return False
    if isinstance(value, ast.Call):
        if checker.is_grad_leaf(value) or checker.is_const(value):
            return False
        func = value.func
        if isinstance(func, ast.Attribute) and func.attr in _MAY_RETURN_SELF:
            return False
        if any(isinstance(n, ast.Attribute) and n.attr in ("detach", "data") for n in ast.walk(value)):
            return False
    return checker.is_graph(value)


def on_attribute_assign(checker, target, value, statement) -> None:
    if target.attr == "requires_grad" and _candidate(checker, target.value):
        meant = value.value if isinstance(value, ast.Constant) and isinstance(value.value, bool) else None
        checker.scope.note("ADL040", (target, target.value, meant))


def on_method_call(checker, call, func) -> None:
    if func.attr == "requires_grad_" and checker.false_arg(call) and _candidate(checker, func.value):
        checker.scope.note("ADL040", (call, func.value, "method"))  # `requires_grad_(False)`


def check_scope(checker, scope) -> None:
    for node, obj, how in scope.noted("ADL040"):
        entry = scope.binding(obj.id, 10 ** 9)
        what = f"`{obj.id}` is not a leaf: it was computed with a graph"
        before = [e for e in scope.bind_values.get(obj.id, ()) if e[1] is not None and e[1].lineno <= node.lineno]
        binding = max(before, key=lambda e: e[1].lineno) if before else entry  # the latest binding before the line
        if binding is not None and binding[1] is not None:
            what = f"`{obj.id}` is not a leaf: it was computed with a graph on line {binding[1].lineno}"
        written = "`requires_grad_(False)`" if how == "method" else "setting its `requires_grad`"
        keep = f"`{obj.id}.retain_grad()` to read its gradient (it already requires grad)"
        cut = f"`{obj.id} = {obj.id}.detach()` to stop gradients there"
        help_ = keep if how is True else cut if how in (False, "method") else f"{keep}, or {cut}"
        checker.report("ADL040", node,
                       f"{what}, and {written} raises 'you can only change requires_grad flags of "
                       f"leaf variables'; use {help_}")
