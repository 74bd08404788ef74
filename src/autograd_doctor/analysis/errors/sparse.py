"""A sparse gradient combined with a dense tensor by an operation that refuses sparse-first
operands: "add(sparse, dense) is not supported. Use add(dense, sparse) instead."

The gradient of `nn.Embedding(..., sparse=True)` (and `EmbeddingBag`, `F.embedding(...,
sparse=True)`) is a sparse tensor: only the rows the batch looked up. Code written for dense
gradients (noise added for differential privacy, a gradient penalty, averaging across clients)
then fails at `p.grad + noise` with a message about `add`, not about the embedding. The help
makes the gradient dense at that operand (`p.grad.to_dense()`, which returns a dense gradient
unchanged), so the same line works for every parameter.
"""

from __future__ import annotations

import ast

import torch

from autograd_doctor.analysis.errors.build import diagnosis, user_statement
from autograd_doctor.analysis.errors.context import ErrorContext, value_of
from autograd_doctor.diagnosis import codes
from autograd_doctor.diagnosis.model import Suggestion
from autograd_doctor.diagnosis.source import replace_node_text, segment, statement_location

_EMBEDDINGS = (torch.nn.Embedding, torch.nn.EmbeddingBag)


def sparse_first_operand(context: ErrorContext, already):
    found = user_statement(context)
    if found is None:
        return None
    frame, line, filename, statement, location = found
    operand = _sparse_gradient_operand(frame, statement, line)
    if operand is None:
        return None
    text = segment(filename, operand)
    owner = value_of(frame, operand.value)
    location.role, location.note = "combined", f"{text} is a sparse tensor here"
    notes = [f"{text} is sparse: the gradient of an embedding made with sparse=True holds only the rows the batch "
             "looked up, and PyTorch does not add a dense tensor to a sparse one in this order"]
    module = _embedding_holding(frame, owner)
    if module is not None:
        notes.append(f"{module} is an embedding created with sparse=True")
    in_place = _in_place_statement(statement, operand)
    if in_place is not None:
        # `p.grad.add_(noise)` as a statement: to_dense() returns a new tensor, so the write must be
        # assigned back to the gradient, or it lands in a copy that is thrown away.
        replacement = f"{text} = {text}.to_dense().{in_place.func.attr}({_arguments_text(filename, in_place)})"
    elif isinstance(statement, ast.AugAssign) and statement.target is operand:
        # `p.grad += noise`: the same, spelled as an augmented assignment.
        operator = _OPERATORS.get(type(statement.op))
        replacement = f"{text} = {text}.to_dense() {operator} {segment(filename, statement.value)}" \
            if operator is not None else None
    else:
        replacement = replace_node_text(filename, statement, operand, f"{text}.to_dense()")
    help_ = Suggestion(f"make the gradient dense before combining it: {text}.to_dense() (a dense gradient is "
                       "returned as it is), or create the embedding with sparse=False"
                       + (f"; the result is assigned back to {text}, since to_dense() of a sparse gradient is a "
                          "new tensor" if in_place is not None or isinstance(statement, ast.AugAssign) else ""),
                       replacement, statement_location(filename, statement) if replacement is not None else None)
    return diagnosis(codes.SPARSE_GRADIENT_COMBINED, location, notes=notes, help=[help_])


def _in_place_statement(statement: ast.stmt, operand: ast.AST) -> ast.Call | None:
    """The call when `statement` is only `operand.method_(...)`, an in-place method whose result is
    not used: its write must land in `operand`."""
    call = statement.value if isinstance(statement, ast.Expr) else None
    if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.value is operand \
            and call.func.attr.endswith("_") and not call.func.attr.startswith("_"):
        return call
    return None


def _arguments_text(filename: str, call: ast.Call) -> str:
    """The source text of the arguments of `call`, as written."""
    parts = [segment(filename, argument) for argument in call.args]
    parts += [segment(filename, keyword) for keyword in call.keywords]
    return ", ".join(parts)


def _sparse_gradient_operand(frame, statement: ast.stmt, line: int) -> ast.Attribute | None:
    """The `x.grad` on the raising line that holds a sparse tensor, as the left operand of a
    binary operation (also `x.grad += ...`), the receiver of a method call or the first argument
    of a function (`torch.add(x.grad, noise)`)."""
    for node in ast.walk(statement):
        candidates = []
        if isinstance(node, ast.BinOp):
            candidates = [node.left]
        elif isinstance(node, ast.AugAssign):
            candidates = [node.target]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            candidates = [node.func.value] + node.args[:1]
        for candidate in candidates:
            if isinstance(candidate, ast.Attribute) and candidate.attr == "grad" and candidate.lineno == line:
                value = value_of(frame, candidate)
                if isinstance(value, torch.Tensor) and value.is_sparse:
                    return candidate
    return None


# The augmented assignments whose operator a sparse gradient refuses with a dense right operand.
_OPERATORS = {ast.Add: "+", ast.Sub: "-"}


def _embedding_holding(frame, parameter) -> str | None:
    """`model.embed_user` for the sparse embedding of the frame's modules whose weight is `parameter`."""
    if not isinstance(parameter, torch.Tensor):
        return None
    scopes = [frame.f_locals] + ([frame.f_globals] if frame.f_globals is not frame.f_locals else [])
    for scope in scopes:
        for name, value in list(scope.items()):
            if not isinstance(value, torch.nn.Module):
                continue
            for path, module in value.named_modules():
                if isinstance(module, _EMBEDDINGS) and module.weight is parameter and module.sparse:
                    return f"{name}.{path}" if path else name
    return None


MATCHERS = [
    (r"add\(sparse, dense\) is not supported", sparse_first_operand),
]
