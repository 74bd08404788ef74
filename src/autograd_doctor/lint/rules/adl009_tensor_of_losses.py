"""ADL009: `torch.tensor([...])` of graph tensors used as a loss."""

from __future__ import annotations

import ast

from autograd_doctor.lint.findings import Fix
from autograd_doctor.lint.rules.base import Rule

RULE = Rule(
    code="ADL009", name="tensor-of-losses",
    summary="`torch.tensor([...])` of tensors is used as a loss, which cuts the graph.",
    what_it_does="""Finds `name = torch.tensor([a, b, ...])` whose elements are tensors, or
`name = torch.tensor([f(x) for x in xs])` of a list comprehension whose elements
carry a graph (in a file that trains: a model's output, followed through the
values the comprehension iterates and the file's own functions), when `name`
contains "loss" or `name.backward()` is called in the function.""",
    why_bad="""`torch.tensor` copies the values; the result has no `grad_fn`.  Calling
`backward()` on it fails ("does not require grad"), or, if it was combined
with other terms, those parts silently get no gradient.""",
    example="loss = torch.tensor([loss_a, loss_b]).sum()",
    use_instead="loss = torch.stack([loss_a, loss_b]).sum()",
    fix_safety="""Unsafe: `torch.tensor` becomes `torch.stack`.  Gradients now flow,
which is the intent but a change; the elements must have the same shape.""",
    known_problems="""Lists built up with `.append` in a loop are not tracked; the elements of a
list comprehension count only where the file shows that they carry a graph (a
model's output, followed through what the comprehension iterates).""",
)


def on_name_assign(checker, name, value) -> None:
    """`name = torch.tensor([a, b])` (or `torch.tensor([...]).sum()`) of tensors that
    may carry a graph; checked before the assignment re-binds any of them."""
    while (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)
           and checker.qualname(value.func) is None):  # torch.tensor([...]).sum()
        value = value.func.value
    if (isinstance(value, ast.Call) and checker.qualname(value.func) == "torch.tensor"
            and not checker.scope.grad_off and value.args
            and isinstance(value.args[0], (ast.ListComp, ast.GeneratorExp))
            and checker.file.trains and checker.scope.function is not None):
        # `torch.tensor([loss_fn(a, b) for a, b in pairs])`: whether the elements carry a
        # graph needs the values the comprehension iterates, read once the function is
        checker.scope.note("ADL009 comprehension", (name, value))
    elif (isinstance(value, ast.Call) and checker.qualname(value.func) == "torch.tensor"
            and not checker.scope.grad_off
            and value.args and isinstance(value.args[0], (ast.List, ast.Tuple))
            and value.args[0].elts
            and all(checker.is_tensor(e) and not checker.is_const(e) for e in value.args[0].elts)):
        checker.scope.note("ADL009", (name, value))


def check_scope(checker, scope) -> None:
    """Reported when the result is a loss: its name says so, or it is backpropagated."""
    noted = list(scope.noted("ADL009"))
    comprehensions = [(name, node) for name, node in scope.noted("ADL009 comprehension")
                      if "loss" in name.lower() or name in scope.backward_names]
    if comprehensions:
        elements = _comprehension_graphs(checker, scope)
        noted += [(name, node) for name, node in comprehensions if elements.get(id(node.args[0]))]
    for name, node in sorted(noted, key=lambda n: (n[1].lineno, n[1].col_offset)):
        if "loss" in name.lower() or name in scope.backward_names:
            fix = None
            if isinstance(node.func, ast.Attribute) and len(node.args) == 1 and not node.keywords \
                    and not isinstance(node.args[0], ast.GeneratorExp):  # `torch.stack` takes no generator
                fix = Fix("stack the tensors: `torch.stack([...])` keeps the graph",
                          (checker.edit(node.func, checker.text(node.func.value) + ".stack"),),
                          safe=False)
            checker.report("ADL009", node,
                           "`torch.tensor([...])` of tensors copies their values and cuts the graph; "
                           f"`{name}` will not backpropagate into them", fix)


def _comprehension_graphs(checker, scope) -> dict:
    """Id of each comprehension of ``scope``'s function -> whether its elements carry a
    graph, by the file's interpreter of returned graphs (returned_graphs.py: a module's
    output, followed through the values the comprehension iterates, `zip`,
    `enumerate`, `.unbind()`, and the file's own functions; `.item()`, `.detach()`,
    `float()` and `torch.no_grad()` carry none).  Only positive evidence."""
    from autograd_doctor.lint.returned_graphs import FileIndex, Frame, Interpreter

    class _Recording(Interpreter):
        def comprehension(self, node, frame):
            result = super().comprehension(node, frame)
            if not self.stack:  # this function's own comprehensions, not a callee's
                seen[id(node)] = seen.get(id(node), False) or result.holds()
            return result

    seen = {}
    _Recording(checker, FileIndex(checker)).exec_body(scope.function.body, Frame(scope.owner_class, {}))
    return seen
