"""A sparse gradient combined with a dense tensor by an operation that refuses sparse-first
operands: "add(sparse, dense) is not supported. Use add(dense, sparse) instead."; and a sparse
gradient given to an optimizer that takes dense ones only: "Adam does not support sparse
gradients, please consider SparseAdam instead"; and an optimizer option that adds a dense tensor
to a sparse gradient (SGD's weight_decay), which fails inside step() with the message about `add`.

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
from autograd_doctor.recording.frames import is_internal_file

_EMBEDDINGS = (torch.nn.Embedding, torch.nn.EmbeddingBag)


def sparse_first_operand(context: ErrorContext, already):
    found = user_statement(context)
    if found is None:
        return None
    frame, line, filename, statement, location = found
    operand = _sparse_gradient_operand(frame, statement, line)
    if operand is None:
        # The add is inside an optimizer's step(): SGD's weight_decay adds the dense parameter to
        # its gradient (`grad.add(param, alpha=weight_decay)`), an option PyTorch does not define
        # for a sparse gradient.
        return optimizer_refuses_sparse(context, already, reason=_optimizer_option_reason)
    text = segment(filename, operand)
    owner = value_of(frame, operand.value) if isinstance(operand, ast.Attribute) else None
    location.role, location.note = "combined", f"{text} is a sparse tensor here"
    notes = [f"{text} is sparse: the gradient of an embedding made with sparse=True holds only the rows the batch "
             "looked up, and PyTorch does not add a dense tensor to a sparse one in this order"]
    module = _embedding_holding(frame, owner)
    if module is not None:
        notes.append(f"{module} is an embedding created with sparse=True")
    if _run_by_backward(context, frame):
        # A tensor hook (`weight.register_hook(lambda grad: grad + ...)`) runs inside backward and
        # its result replaces the gradient: PyTorch refuses a result of another layout ("hook has
        # changed the type of value"), so a dense gradient there fails too. What a sparse result
        # should hold (the term on the rows looked up only?) is the program's choice.
        notes.append("this function runs inside backward (a hook): what it returns replaces the gradient and must "
                     "keep its sparse layout, so making it dense fails there too")
        return diagnosis(codes.SPARSE_GRADIENT_COMBINED, location, notes=notes, help=[Suggestion(
            f"keep {text} sparse and add a sparse term to it (for example the term's rows that {text} holds: "
            f"term.sparse_mask({text}.coalesce())), or create the embedding with sparse=False")])
    in_place = _in_place_statement(statement, operand)
    if isinstance(operand, ast.Name) and (in_place is not None or isinstance(statement, ast.AugAssign)):
        # `g.add_(noise)` where g holds a sparse gradient: to_dense() would make a copy that the
        # name then holds, and the gradient g came from would not change.
        return diagnosis(codes.SPARSE_GRADIENT_COMBINED, location, notes=notes, help=[Suggestion(
            f"make the gradient dense before combining it ({text}.to_dense()) and store the result where the "
            "gradient is kept, or create the embedding with sparse=False")])
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


def _run_by_backward(context: ErrorContext, frame) -> bool:
    """Whether the autograd engine called `frame`'s function (a hook or a Function's backward
    during backward()): the frame just outside it, past torch's own, runs the engine."""
    frames = [f for f, _ in context.frames]
    inside = next((i for i, f in enumerate(frames) if f is frame), None)
    if inside is None:
        return False
    for outer in reversed(frames[:inside]):
        if outer.f_code.co_name == "_engine_run_backward":
            return True
        if not is_internal_file(outer.f_code.co_filename):
            return False
    return False


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


def _sparse_gradient_operand(frame, statement: ast.stmt, line: int) -> ast.expr | None:
    """The `x.grad` (or a name, such as a hook's `grad` argument) on the raising line that holds a
    sparse tensor, as the left operand of a binary operation (also `x.grad += ...`), the receiver
    of a method call or the first argument of a function (`torch.add(x.grad, noise)`)."""
    for node in ast.walk(statement):
        candidates = []
        if isinstance(node, ast.BinOp):
            candidates = [node.left]
        elif isinstance(node, ast.AugAssign):
            candidates = [node.target]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            candidates = [node.func.value] + node.args[:1]
        for candidate in candidates:
            if (isinstance(candidate, ast.Name) or isinstance(candidate, ast.Attribute) and candidate.attr == "grad") \
                    and candidate.lineno == line:
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


_SPARSE_ADAM_ADVICE = ("or keep sparse updates with torch.optim.SparseAdam for the embeddings' weights and a "
                       "second, dense optimizer for the other parameters (a different algorithm: its moments are "
                       "updated only for the rows looked up)")


def _optimizer_takes_dense_only(optimizer, sparse_parameters) -> tuple[str, str, str]:
    """(the raising line's note, the reason, the advice) for an optimizer that has no update for
    sparse gradients."""
    name = type(optimizer).__name__
    return f"{name} takes dense gradients only", f"{name} has no update for that layout", _SPARSE_ADAM_ADVICE


def _optimizer_option_reason(optimizer, sparse_parameters) -> tuple[str, str, str]:
    """(the raising line's note, the reason, the advice) for an optimizer whose update takes sparse
    gradients but whose options add a dense tensor to them: SGD's weight_decay adds the parameter
    to its gradient."""
    name = type(optimizer).__name__
    decays = sorted({group.get("weight_decay", 0) for group in optimizer.param_groups
                     if any(p in sparse_parameters for p in group["params"])} - {0})
    option = f"weight_decay={decays[0]}" if decays else "one of its options"
    return (f"{name} with {option} adds a dense tensor to a sparse gradient",
            f"{name} with {option} adds the dense parameter to each gradient (weight decay), which PyTorch does not "
            "define for a sparse one",
            "or keep sparse gradients with weight_decay=0 for the embeddings' weights and an L2 term on the rows "
            "the batch looks up in the loss (a different regulariser: only those rows decay)")


def optimizer_refuses_sparse(context: ErrorContext, already, reason=_optimizer_takes_dense_only):
    """An optimizer's step() refused a sparse gradient (its update takes dense gradients only, or an
    option such as SGD's weight_decay adds a dense tensor to them). The embeddings whose weights hold
    one are found among the modules the user's frames bind; where every such weight belongs to an
    embedding whose constructor call says `sparse=True` in the user's files, the change is
    `sparse=False` there (the same gradient values, dense, which the optimizer's own update and
    its options take)."""
    found = user_statement(context)
    optimizer = _optimizer_in_traceback(context)
    if found is None or optimizer is None:
        return None
    frame, line, filename, statement, location = found
    sparse_parameters = [p for group in optimizer.param_groups for p in group["params"]
                         if p.grad is not None and p.grad.is_sparse]
    if not sparse_parameters:
        return None
    name = type(optimizer).__name__
    raised_note, why, advice = reason(optimizer, sparse_parameters)
    location.role, location.note = "raised", raised_note
    owners = [_sparse_embedding_owning(context, parameter) for parameter in sparse_parameters]
    notes = [f"{len(sparse_parameters)} parameter(s) given to {name} hold a sparse gradient: the weight of an "
             "embedding made with sparse=True gets only the rows the batch looked up, and " + why]
    named = [owner for owner in owners if owner is not None]
    if named:
        notes.append("the embedding(s) with sparse=True: " + ", ".join(named))
    constructions = _sparse_constructions(context)
    if None in owners or not constructions:
        return diagnosis(codes.SPARSE_GRADIENT_OPTIMIZER, location, notes=notes, help=[Suggestion(
            "create the embeddings with sparse=False (the same gradient values, dense), " + advice)])
    # The line to change leads (as for AD151's `model.half()`); the step that raised follows.
    related, helps = [location], []
    for construction_file, construction_statement, keyword in constructions:
        where = statement_location(construction_file, construction_statement, "asked",
                                   "sparse=True gives this embedding's weight a sparse gradient")
        related.append(where)
        helps.append(Suggestion(f"create the embedding with sparse=False: its gradient holds the same values, "
                                f"dense, which {name} takes; " + advice,
                                replace_node_text(construction_file, construction_statement, keyword.value, "False"),
                                statement_location(construction_file, construction_statement)))
    return diagnosis(codes.SPARSE_GRADIENT_OPTIMIZER, related[1], [related[0]] + related[2:], notes=notes, help=helps)


def _optimizer_in_traceback(context: ErrorContext):
    """The optimizer whose method raised: the `self` of the innermost traceback frame that is one."""
    for frame, _ in reversed(context.frames):
        candidate = frame.f_locals.get("self")
        if isinstance(candidate, torch.optim.Optimizer):
            return candidate
    return None


def _sparse_embedding_owning(context: ErrorContext, parameter):
    """The name (`model.tables.0`) of the sparse embedding, among the modules bound in the user's
    frames, whose weight is `parameter`; None when none is."""
    for frame, _ in context.user_frames():
        scopes = [frame.f_locals] + ([frame.f_globals] if frame.f_globals is not frame.f_locals else [])
        for scope in scopes:
            for name, value in list(scope.items()):
                if not isinstance(value, torch.nn.Module):
                    continue
                for path, module in value.named_modules():
                    if isinstance(module, _EMBEDDINGS) and module.sparse and module.weight is parameter:
                        return f"{name}.{path}" if path else name
    return None


def _sparse_constructions(context: ErrorContext) -> list:
    """(file, statement, keyword) of each `Embedding(...)` / `EmbeddingBag(...)` call with the
    keyword `sparse=True` written as a constant, in the user's files the traceback reaches (its
    frames' files and those defining the classes of the modules bound there). Every such call
    makes a sparse embedding; a flag passed as a variable, or a module made in a library, is not
    found, and then no change is offered."""
    from autograd_doctor.diagnosis.source import parse_file, statement_at

    found = []
    for filename in context.files_reached():
        tree = parse_file(filename)
        if tree is None:
            continue
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and _called_name(node) in ("Embedding", "EmbeddingBag")):
                continue
            keyword = next((k for k in node.keywords if k.arg == "sparse"), None)
            if keyword is None or not (isinstance(keyword.value, ast.Constant) and keyword.value.value is True):
                continue
            statement = statement_at(filename, node.lineno)
            if statement is not None:
                found.append((filename, statement, keyword))
    return found


def _called_name(call: ast.Call) -> str | None:
    if isinstance(call.func, ast.Attribute):
        return call.func.attr
    if isinstance(call.func, ast.Name):
        return call.func.id
    return None


MATCHERS = [
    (r"add\(sparse, dense\) is not supported", sparse_first_operand),
    (r"does not support sparse gradients", optimizer_refuses_sparse),
]
