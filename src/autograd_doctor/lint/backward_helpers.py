"""Same-file functions and methods that run a backward pass.

A training loop often hands its loss to a helper that backpropagates it
(`def policy_gradient_step(theta, ...): ...; loss.backward()`, SPiRL's
`_perform_update(loss, opt, network)`), and reads `.grad` or steps after the
call.  A function runs backward when its own body calls `.backward(...)`,
`torch.autograd.backward(...)` or `torch.autograd.grad(...)`, or calls another
such function.  Names are matched as ``clearing.py`` matches them: `f()` and
`self.f()` are calls of any same-file `f`; `obj.f()` is not (`loss.backward()`
itself, `trainer.step()` of another object).
"""

from __future__ import annotations

import ast
import re
from bisect import bisect_left

from autograd_doctor.lint.arguments import nested_statements
from autograd_doctor.lint.clearing import is_self_call, spread_in_text
from autograd_doctor.lint.findings import line_numbers
from autograd_doctor.lint.walk import own_nodes

_AUTOGRAD_CALLS = frozenset({"backward", "grad"})


# The text of a call `_runs_backward` accepts (`loss.backward (`, `torch.autograd.grad(`): the
# word, then what must follow it. Found with str.find: a regex alternation behind `\b` tries
# every position of the text.
_CALL_TEXT = (("backward", re.compile(r"\s*\(")), ("autograd", re.compile(r"\s*\.\s*grad\s*\(")))


def _call_positions(source: str) -> list:
    found = []
    for word, after in _CALL_TEXT:
        start = source.find(word)
        while start >= 0:
            end = start + len(word)
            if not (start and (source[start - 1].isalnum() or source[start - 1] == "_")) and after.match(source, end):
                found.append(start)
            start = source.find(word, end)
    return found


def backward_functions(tree: ast.Module, source: str) -> frozenset:
    """Names of the functions defined in ``tree`` that run a backward pass."""
    if "backward" not in source and "autograd" not in source:
        return frozenset()
    found = _call_positions(source)
    if not found:
        return frozenset()
    functions = [node for node in nested_statements(tree.body)
                 if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]
    # Only a function whose lines hold such a call can run backward itself. Most files that say
    # "backward(" say it in a docstring or in another object's method: their functions' nodes
    # are not walked at all (this was an eighth of the linter's time on torch/nn).
    lines = sorted(set(line_numbers(source, found)))
    # Within such a function, only the statements whose lines hold one are walked; the
    # callers are found from the text (clearing.spread_in_text).
    runs = {node.name for node in functions
            if _holds_a_line(node, lines) and any(_runs_backward(n) for n in own_nodes(
                [stmt for stmt in node.body if _holds_a_line(stmt, lines)]))}
    if not runs:
        return frozenset()
    return spread_in_text(runs, functions, source)


def _holds_a_line(node: ast.AST, lines: list) -> bool:
    index = bisect_left(lines, node.lineno)
    return index < len(lines) and lines[index] <= (node.end_lineno or node.lineno)


def _runs_backward(node) -> bool:
    """`loss.backward()`, `torch.autograd.backward(...)`, `torch.autograd.grad(...)`."""
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
        return False
    func = node.func
    if func.attr == "backward" and not is_self_call(node):
        return True  # `loss.backward()`; `self.backward(...)` is a same-file call
    return func.attr in _AUTOGRAD_CALLS and isinstance(func.value, ast.Attribute) \
        and func.value.attr == "autograd"
