"""A write through `.data` inside the forward of a module the loss's path goes through: the cut
that AD301 finds at the statement calling the module.

`x.data[...] = y` (or `= y.data[...]`) copies values into `x` behind autograd's back: the copy is
not recorded, so whatever `y` was computed from (an image encoder whose features are put into the
token embeddings, say) gets no gradient through it. When that was the only path from the trained
parameters to the loss, the loss has no grad_fn and backward() raises; the help writes through the
tensors themselves, which autograd records.

Looked at only where AD301 already found the statement whose inputs carry gradients and whose
result does not (run-time evidence of the cut), and that statement calls a module: the forward
methods of that module and of its submodules of the user's own classes are read for an assignment
whose target is reached through `.data` (`hidden_states.data[i][a + 1 : b] = ...`).
"""

from __future__ import annotations

import ast

from autograd_doctor.analysis.distribution_samples import called_forwards


def _through_data(target: ast.AST) -> bool:
    """Whether an assignment target indexes into a tensor's `.data`: `x.data[i]`, `x.data[i][a:b]`."""
    node = target
    while isinstance(node, ast.Subscript):
        node = node.value
        if isinstance(node, ast.Attribute) and node.attr == "data":
            return True
    return False


def data_write_in_called_module(statement: ast.stmt, frame_locals: dict | None) -> tuple[str, ast.stmt, str] | None:
    """(file, assignment, module class) of the first write through `.data` in the forward of a
    module that `statement` calls (or of one of its submodules), or None."""
    for filename, function, module_class in called_forwards(statement, frame_locals):
        for node in ast.walk(function):
            if isinstance(node, (ast.Assign, ast.AugAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                if any(_through_data(target) for target in targets):
                    return filename, node, module_class
    return None


def data_attributes(statement: ast.stmt) -> list[ast.Attribute]:
    """Every `.data` the statement reads or writes through, outermost first."""
    return [node for node in ast.walk(statement) if isinstance(node, ast.Attribute) and node.attr == "data"]
