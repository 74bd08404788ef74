"""Which branch of a test on a value's type runs only when the value is no tensor.

Training code that sums a loss whose type varies (a term that is `0.0` when an
option is off, a tensor otherwise) guards the sum with a type test:
`total += loss.item() if torch.is_tensor(loss) else loss`, or `if not
isinstance(term, float): term = term.item()`.  The branch that runs when the
test says "no tensor" cannot carry the name's graph, whatever the name held on
the other paths (held-out set BA in docs/lint.md: two such sums in one
panoptic segmentation trainer).

Tests read, each possibly under `not`:

- tensor tests, false only for a value that is no tensor: `torch.is_tensor(x)`,
  `isinstance(x, torch.Tensor)` (or a tuple naming `torch.Tensor`),
  `hasattr(x, "item")` / `hasattr(x, "detach")` (a Python number has neither);
- number tests, true only for a value that is no tensor: `isinstance(x, float)`,
  `isinstance(x, (int, float))`, `isinstance(x, numbers.Number)` (every type of
  the tuple a number type).
"""

from __future__ import annotations

import ast

_TENSOR_TYPES = frozenset({"torch.Tensor", "Tensor", "torch.nn.Parameter", "nn.Parameter"})
_NUMBER_TYPES = frozenset({"int", "float", "complex", "bool", "numbers.Number", "numbers.Real", "Number"})
_TENSOR_ONLY_ATTRIBUTES = frozenset({"item", "detach"})


def branch_without_tensor(checker, test) -> tuple[str, bool] | None:
    """``(name, in_body)`` when ``test`` is a type test of the plain name ``name``:
    ``in_body`` is True when the branch taken on a true test is the one where
    ``name`` is no tensor, False when it is the branch taken on a false test; None
    for any other test."""
    negated = False
    while isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        negated = not negated
        test = test.operand
    read = _type_test(checker, test)
    if read is None:
        return None
    name, true_means_tensor = read
    no_tensor_when_true = not true_means_tensor
    return name, no_tensor_when_true != negated


def _type_test(checker, test) -> tuple[str, bool] | None:
    """``(name, true_means_tensor)`` for a tensor test (True: a false test means no
    tensor) or a number test (False: a true test means no tensor)."""
    if not isinstance(test, ast.Call) or test.keywords or len(test.args) not in (1, 2):
        return None
    subject = test.args[0]
    if not isinstance(subject, ast.Name):
        return None
    q = _qualname(checker, test.func)
    if q == "torch.is_tensor" and len(test.args) == 1:
        return subject.id, True
    if len(test.args) != 2:
        return None
    second = test.args[1]
    if q == "hasattr" and isinstance(second, ast.Constant) and second.value in _TENSOR_ONLY_ATTRIBUTES:
        return subject.id, True
    if q != "isinstance":
        return None
    types = second.elts if isinstance(second, ast.Tuple) else [second]
    qualnames = [_qualname(checker, t) for t in types]
    if any(t in _TENSOR_TYPES for t in qualnames):
        return subject.id, True  # false: none of the types, so no tensor
    if qualnames and all(t in _NUMBER_TYPES for t in qualnames):
        return subject.id, False  # true: a Python number
    return None


def _qualname(checker, node) -> str | None:
    if isinstance(node, ast.Name) and node.id in ("isinstance", "hasattr", "int", "float", "complex", "bool"):
        return node.id
    q = checker.qualname(node)
    if q is not None:
        return q
    return ast.unparse(node) if isinstance(node, (ast.Name, ast.Attribute)) else None
