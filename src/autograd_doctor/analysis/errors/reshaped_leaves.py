"""A leaf whose shape was changed through `.data` (pruning by hand: `layer.weight.data =
layer.weight.data[:, :90]`) while a graph built from it before the change was still alive.

A leaf's gradient accumulator (the AccumulateGrad node that adds into its `.grad`) is made once
and kept as long as a graph holds it; it records the leaf's shape when it is made. A forward pass
run while the old graph is alive reuses it, so backward() checks the new gradient against the old
shape and fails in the built-in node before it: "Function TBackward0 returned an invalid gradient
at index 0 - got [10, 90] but expected shape compatible with [10, 100]". Releasing the old graph
before the change gives the leaf a new accumulator at its next use. The doctor names the statement
that changed the shape and, when the tensor backward() was called on is the name that still held
the old graph (and nothing else took it), inserts `del <name>` before that statement."""

from __future__ import annotations

import ast
import re

from autograd_doctor.analysis.errors.build import diagnosis, find_calls, statement_change, text_of, user_statement
from autograd_doctor.analysis.errors.context import ErrorContext, enclosing_function, graph_node_named, value_of, \
    walk_own_scope
from autograd_doctor.diagnosis import codes
from autograd_doctor.diagnosis.model import Suggestion
from autograd_doctor.diagnosis.source import parse_file, statement_location

# Built-in nodes only (their names end with a number; a custom Function's node is `<Class>Backward`,
# whose wrong shapes custom_function.wrong_gradients explains).
_MESSAGE = re.compile(r"Function (\w+Backward\d+) returned an invalid gradient at index (\d+) - got (\[[^\]]*\]) "
                      r"but expected shape compatible with (\[[^\]]*\])")
# Reads of the old graph's name that keep no other reference to it.
_RELEASING_READS = ("backward", "item")


def _accumulated_leaf(node, index: int):
    """The leaf whose gradient accumulator is input `index` of `node`, or None."""
    try:
        child = node.next_functions[index][0]
    except (AttributeError, IndexError, RuntimeError, TypeError):
        return None
    return getattr(child, "variable", None) if type(child).__name__ == "AccumulateGrad" else None


def _shape_changes(frame, scope: ast.AST, before_line: int, leaf) -> list[ast.Assign]:
    """The statements `X.data = ...` of `scope` before `before_line` whose X is `leaf`."""
    found = []
    for node in walk_own_scope(scope):
        if not isinstance(node, ast.Assign) or node.lineno >= before_line or len(node.targets) != 1:
            continue
        target = node.targets[0]
        if isinstance(target, ast.Attribute) and target.attr == "data" and value_of(frame, target.value) is leaf:
            found.append(node)
    return sorted(found, key=lambda statement: statement.lineno)


def _body_holding(scope: ast.AST, statement: ast.stmt) -> list | None:
    """The statement list of `scope` (at any depth of its own blocks) that holds `statement`."""
    for node in walk_own_scope(scope):
        for field in ("body", "orelse", "finalbody"):
            body = getattr(node, field, None)
            if isinstance(body, list) and statement in body:
                return body
    return None


def _old_graph_name(statement: ast.stmt, scope: ast.AST, change: ast.Assign, line: int) -> str | None:
    """The name backward() was called on at `statement` when it also held the graph built before
    `change`: bound by an earlier statement of the same block as `change`, rebound between `change`
    and `line`, not deleted, and read in between only as the receiver of backward() or item() (so
    that no list or other name took the graph). None otherwise."""
    calls = find_calls(statement, "backward")
    if len(calls) != 1 or not isinstance(calls[0].func, ast.Attribute) or \
            not isinstance(calls[0].func.value, ast.Name):
        return None
    name = calls[0].func.value.id
    body = _body_holding(scope, change)
    if body is None:
        return None
    earlier = [s for s in body[:body.index(change)] if isinstance(s, ast.Assign) and len(s.targets) == 1
               and isinstance(s.targets[0], ast.Name) and s.targets[0].id == name]
    if not earlier:
        return None
    bound_at = earlier[-1]
    rebound = any(isinstance(n, ast.Assign) and change.lineno < n.lineno <= line
                  and any(isinstance(t, ast.Name) and t.id == name for t in n.targets) for n in walk_own_scope(scope))
    if not rebound:
        return None
    releasing = {id(call.func.value) for call in ast.walk(scope) if isinstance(call, ast.Call)
                 and isinstance(call.func, ast.Attribute) and call.func.attr in _RELEASING_READS
                 and isinstance(call.func.value, ast.Name)}
    for node in walk_own_scope(scope):
        if not (isinstance(node, ast.Name) and node.id == name and bound_at.end_lineno < node.lineno < change.lineno):
            continue
        if isinstance(node.ctx, ast.Del) or (isinstance(node.ctx, ast.Load) and id(node) not in releasing):
            return None
    return name


def stale_accumulator(context: ErrorContext, already):
    import torch

    found = _MESSAGE.search(context.message)
    statement_found = user_statement(context)
    if found is None or statement_found is None:
        return None
    node_name, index, got, expected = found.group(1), int(found.group(2)), found.group(3), found.group(4)
    node = graph_node_named(context, node_name)
    leaf = _accumulated_leaf(node, index) if node is not None else None
    # The evidence: the accumulator the node feeds belongs to a leaf that now has the shape the
    # gradient has, and the accumulator expects another one (made before the shape changed).
    if not isinstance(leaf, torch.Tensor) or str(list(leaf.shape)) != got or got == expected:
        return None
    frame, line, filename, statement, raise_location = statement_found
    tree = parse_file(filename)
    scope = enclosing_function(tree, line) if tree is not None else None
    changes = _shape_changes(frame, scope, line, leaf) if scope is not None else []
    notes = [f"a leaf's gradient accumulator (the AccumulateGrad node that adds into its .grad) is made once and "
             f"kept while a graph holds it; it records the shape the leaf had then ({expected}). A forward pass run "
             "while that graph is alive reuses it, so the new gradient, of the leaf's new shape "
             f"({got}), is checked against the old one"]
    if not changes:
        raise_location.note = f"the gradient for a leaf of shape {got} is checked against its old shape {expected}"
        return diagnosis(codes.STALE_GRADIENT_ACCUMULATOR, raise_location, notes=notes, help=[Suggestion(
            "release every reference to the graph built before the leaf's shape changed (the loss of that step, "
            "lists of losses) before changing it, or give the module a new parameter of the new shape "
            "(nn.Parameter(...): a new leaf gets a new accumulator, and its .grad starts empty)")])
    change = changes[-1]
    target = text_of(filename, change.targets[0].value) or "the parameter"
    primary = statement_location(filename, change, role="reshaped",
                                 note=f"changes {target} from {expected} to {got} while a graph built before still "
                                      "holds its gradient accumulator")
    raise_location.note = f"the gradient for {target} ({got}) is checked against its old shape {expected}"
    name = _old_graph_name(statement, scope, change, line)
    if name is None:
        helps = [Suggestion(f"release every reference to the graph built before line {change.lineno} (the loss of "
                            f"that step, lists of losses) before changing {target}'s shape, or make {target} a new "
                            "nn.Parameter of the new shape (a new leaf gets a new accumulator; its .grad starts "
                            "empty)")]
    else:
        notes.append(f"{name} held the graph of the forward pass before line {change.lineno} until it was bound "
                     "again after it: that graph kept the accumulator alive for the next forward pass")
        change_text = text_of(filename, change)
        helps = [statement_change(primary, f"release the old graph before changing {target}'s shape: del {name} "
                                           f"(the next forward pass then makes an accumulator of shape {got}; the "
                                           f"gradient already in {target}.grad is kept)",
                                  f"del {name}\n{change_text}" if change_text else None)]
    return diagnosis(codes.STALE_GRADIENT_ACCUMULATOR, primary, [raise_location], notes=notes, help=helps)


MATCHERS = [
    (r"Function \w+Backward\d+ returned an invalid gradient at index \d+ - got \[[^\]]*\] but expected shape "
     r"compatible with", stale_accumulator),
]
