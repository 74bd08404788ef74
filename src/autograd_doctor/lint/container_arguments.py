"""forward() arguments that are lists of tensors, not tensors.

The walk takes every unannotated argument of a module's `forward()` for a
tensor (callers pass activations there).  GraphRNN's GraphSAGE passes
`forward(self, nodes_list, nodes_count_list)` a Python list of tensors and
replaces its elements, `nodes_list[0] = self.linear_projection(nodes_list[0])`:
read as a tensor, that is an indexed write into the tensor `F.linear` saved,
and ADL001 reported seven such lines.  The argument's own uses are the
evidence: a function that only ever indexes the name with integer constants
(`x[0]`, `x[-1]`; never `x` alone, a slice, a method of `x` or arithmetic on
it) treats it as a sequence, so an element assignment replaces an element.
It is asked only at such an assignment (``Statements.indexed_container``), so
the walk costs nothing for any other forward().  A tensor argument written
that way (`x[0] = self.fc(x[0])` with every other use an integer index too)
goes unreported: the link "the argument is a tensor" has no evidence there.
"""

from __future__ import annotations

import ast


def integer_index(index) -> bool:
    """``0``, ``-1``: an integer constant (not a slice, a mask or a name)."""
    if isinstance(index, ast.UnaryOp) and isinstance(index.op, ast.USub):
        index = index.operand
    return isinstance(index, ast.Constant) and type(index.value) is int


def only_indexed_by_integers(function: ast.AST, name: str) -> bool:
    """Every mention of ``name`` in ``function``'s body is ``name[<integer>]``."""
    indexed = mentions = 0
    for node in ast.walk(function):
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == name \
                and integer_index(node.slice):
            indexed += 1
        elif isinstance(node, ast.Name) and node.id == name:
            mentions += 1
    return indexed > 0 and mentions == indexed
