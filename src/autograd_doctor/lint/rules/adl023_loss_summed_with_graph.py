"""ADL023: a backpropagated loss summed across the iterations of a training loop
with its graph: the sum keeps every iteration's graph alive."""

from __future__ import annotations

import ast

from autograd_doctor.lint import names as N
from autograd_doctor.lint.findings import Fix
from autograd_doctor.lint.rules.base import Rule

RULE = Rule(
    code="ADL023", name="loss-summed-with-graph",
    summary="A loss that the loop backpropagates is summed across its iterations as a tensor: the sum keeps every iteration's graph.",
    what_it_does="""In a `for`/`while` loop that backpropagates a loss (`loss.backward()`,
`(loss / k).backward()`, `scaler.scale(loss).backward()`,
`accelerator.backward(loss)`), finds a sum of that loss into a name bound
before the loop and never re-bound in it: `total += loss`, `total += loss *
n`, `total = total + loss`, with gradients on; or an append of it to a list
bound before the loop (`history.append(loss)`).  Silent when the sum takes
`loss.item()`, `float(loss)` or `loss.detach()`, when the loss name is
re-bound between the backward and the sum, when the sum is made under
`torch.no_grad()`, when the sum starts again inside the loop, when the sum
and the backward are in different branches of an `if`, and when the sum is
itself backpropagated (gradient accumulation through the sum) or detached in
place.""",
    why_bad="""`loss` carries its graph (the backward proves it), so `total + loss` is a
tensor whose `grad_fn` links to the previous iteration's sum and to this
iteration's graph: the sum holds the autograd history of every iteration of
the loop, and memory grows with the iteration count until the loop ends (or
the process runs out of memory on a long epoch).  PyTorch's FAQ names this
first: "Don't accumulate history across your training loop".  Nothing
raises, and a backward through the sum later fails ('Trying to backward
through the graph a second time').""",
    example="""running_loss = 0.0
for x, y in loader:
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    running_loss += loss""",
    use_instead="""running_loss = 0.0
for x, y in loader:
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    running_loss += loss.item()""",
    fix_safety="""Unsafe (only with `--unsafe-fixes`): `loss` in the sum becomes
`loss.detach()`; the sum keeps its values and its type (a tensor) but no
graph, which changes the program only where code outside this function
differentiates the sum.""",
    known_problems="""Only a sum into a plain name, in the function that runs the loop, of a
loss name that the same loop backpropagates, is seen (and an append to a
list name): a loss summed into an attribute or a dict entry, or handed to a reporter
object that sums it (pytorch-pfn-extras' summaries), is not reported.""",
)

_ARITHMETIC = (ast.Add, ast.Sub, ast.Mult, ast.Div)
_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def check_scope(checker, scope) -> None:
    """Read the function again only when it runs a backward inside a loop."""
    receivers = scope.backward_receivers
    if not receivers or scope.grad_off or not scope.finished_loops or not any(
            a < seq < b for seq, _, _ in receivers for a, b in scope.finished_loops):
        return
    if scope.function is not None:
        body = scope.function.body
    elif scope.name == "<module>":
        body = checker.tree.body
    else:
        return
    losses = {}  # id of the backward call -> the loss names it backpropagates
    summed_back = set()  # names that some backward goes through
    for _, call, receiver in receivers:
        names = _operand_names(receiver)
        if names:
            losses[id(call)] = names
        summed_back.update(n.id for n in ast.walk(receiver) if isinstance(n, ast.Name))
    _check_body(checker, body, losses, summed_back)


def _operand_names(node) -> set[str]:
    """Names that are arithmetic operands of ``node`` (`loss`, `loss / k`, `loss * n`):
    the value carries their graph.  A call (`loss.item()`), an attribute (`loss.data`)
    or a subscript stops the search."""
    if isinstance(node, ast.Name):
        return {node.id}
    if isinstance(node, ast.BinOp) and isinstance(node.op, _ARITHMETIC):
        return _operand_names(node.left) | _operand_names(node.right)
    return set()


def _operand_nodes(node, name: str):
    if isinstance(node, ast.Name):
        if node.id == name:
            yield node
    elif isinstance(node, ast.BinOp) and isinstance(node.op, _ARITHMETIC):
        yield from _operand_nodes(node.left, name)
        yield from _operand_nodes(node.right, name)


def _walk(body, path=()):
    """Every node of ``body`` with its path: the (statement, field) pairs of the
    compound statements around it, not entering nested definitions."""
    for stmt in body:
        yield stmt, path
        if isinstance(stmt, _DEFINITIONS):
            continue
        for field in ("body", "orelse", "finalbody"):
            inner = getattr(stmt, field, None)
            if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                yield from _walk(inner, path + ((stmt, field),))
        for i, handler in enumerate(getattr(stmt, "handlers", ())):
            yield from _walk(handler.body, path + ((stmt, f"handler{i}"),))
        todo = [(child, path) for child in ast.iter_child_nodes(stmt)]
        while todo:  # the expressions of this statement (its own blocks are walked above)
            node, p = todo.pop()
            if isinstance(node, (ast.stmt, ast.ExceptHandler, ast.Lambda)):
                continue
            yield node, p
            todo.extend((child, p) for child in ast.iter_child_nodes(node))


def _bound_names(node):
    """Names a statement or expression binds."""
    if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    elif isinstance(node, (ast.For, ast.AsyncFor)):
        targets = [node.target]
    elif isinstance(node, ast.withitem) and node.optional_vars is not None:
        targets = [node.optional_vars]
    elif isinstance(node, ast.NamedExpr):
        targets = [node.target]
    else:
        return
    for target in targets:
        for n in ast.walk(target):
            if isinstance(n, ast.Name):
                yield n.id


def _sum_of(node):
    """``(total, value)`` for `total += value`, `total -= value`, `total = total + value`."""
    if isinstance(node, ast.AugAssign) and isinstance(node.op, (ast.Add, ast.Sub)) \
            and isinstance(node.target, ast.Name):
        return node.target.id, node.value
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
            and isinstance(node.value, ast.BinOp) and isinstance(node.value.op, ast.Add):
        total = node.targets[0].id
        left, right = node.value.left, node.value.right
        if isinstance(left, ast.Name) and left.id == total:
            return total, right
        if isinstance(right, ast.Name) and right.id == total:
            return total, left
    return None


def _check_body(checker, body, losses: dict, summed_back: set) -> None:
    backwards = []   # (loss name, call, path)
    sums = []        # (total, value, statement, path)
    bindings = []    # (name, line, statement, path)
    detached_in_place = set()
    for node, path in _walk(body):
        if isinstance(node, ast.Call):
            for name in losses.get(id(node), ()):
                backwards.append((name, node, path))
            if isinstance(node.func, ast.Attribute) and node.func.attr == "detach_" \
                    and isinstance(node.func.value, ast.Name):
                detached_in_place.add(node.func.value.id)
            elif isinstance(node.func, ast.Attribute) and node.func.attr == "append" \
                    and isinstance(node.func.value, ast.Name) and len(node.args) == 1 and not node.keywords:
                sums.append((node.func.value.id, node.args[0], node, path))  # `history.append(loss)`
        elif isinstance(node, ast.stmt) or isinstance(node, (ast.withitem, ast.NamedExpr)):
            summed = _sum_of(node)
            if summed is not None:
                sums.append((*summed, node, path))
            for name in _bound_names(node):
                bindings.append((name, node.lineno if hasattr(node, "lineno") else 0, node, path))
    if not backwards or not sums:
        return
    for total, value, stmt, path in sums:
        if total in summed_back or total in detached_in_place or _grad_off(checker, path):
            continue
        for loss in _operand_names(value):
            found = next((b for b in backwards if b[0] == loss and _kept_across(
                total, loss, stmt, path, b, bindings)), None)
            if found is not None:
                _report(checker, total, loss, value, stmt, found[1])
                break


def _kept_across(total, loss, stmt, path, backward, bindings) -> bool:
    """The sum and the backward share a loop, in which ``total`` lives on (bound before
    it, not re-bound in it) and ``loss`` is not re-bound between the two."""
    _, call, back_path = backward
    loop = None
    for (outer, field), (other, other_field) in zip(path, back_path):
        if outer is not other:
            break
        if field != other_field:  # different branches (`if`/`else`, `try`/`except`)
            return False
        if isinstance(outer, _LOOPS) and field == "body":
            loop = outer
    if loop is None:
        return False
    inside = [(name, line, node) for name, line, node, p in bindings if (loop, "body") in p]
    if any(name == total and node is not stmt for name, line, node in inside):
        return False  # the sum starts again in the loop
    if not any(name == total and line < loop.lineno for name, line, node, p in bindings
               if (loop, "body") not in p):
        return False  # no sum before the loop that this one adds to
    low, high = sorted((call.lineno, stmt.lineno))
    return not any(name == loss and low < line < high for name, line, node in inside)


def _grad_off(checker, path) -> bool:
    for stmt, field in path:
        if isinstance(stmt, (ast.With, ast.AsyncWith)) and field == "body":
            for item in stmt.items:
                context = item.context_expr
                func = context.func if isinstance(context, ast.Call) else context
                if N.turns_grad_off(checker.qualname(func), context):
                    return True
    return False


def _report(checker, total, loss, value, stmt, backward) -> None:
    edits = tuple(checker.edit(node, f"{loss}.detach()") for node in _operand_nodes(value, loss))
    appended = isinstance(stmt, ast.Call)
    verb, noun = ("append", "list") if appended else ("sum", "sum")
    fix = Fix(f"{verb} `{loss}.detach()`", edits, safe=False) if edits else None
    checker.report(
        "ADL023", stmt,
        f"`{total}` {'keeps' if appended else 'sums'} `{loss}`, which `{checker.text(backward)}` on line "
        f"{backward.lineno} backpropagates, with its graph on every iteration of this loop: the {noun} keeps "
        f"the graph of every iteration alive, so memory grows with the iteration count; {verb} "
        f"`{loss}.item()` (or `{loss}.detach()`)", fix,
        related=[(backward.lineno, checker.col(backward.lineno, backward.col_offset), 0,
                  f"`{loss}` carries a graph: backpropagated here")])
