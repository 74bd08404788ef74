"""The tape-based autograd API used inside a `torch.func` transform (`vmap`, `grad`, `vjp`,
`jacrev`...): `loss.backward()`, `torch.autograd.grad`, `x.requires_grad_()`.

Inside a transform, tensors are wrapped per transform level; the tape does not see through
the wrappers, even when the tensor given to the transform requires grad. `torch.func.grad`
computes the gradient the user asked for, so where the loss is one expression of the input
the help writes that call.
"""

from __future__ import annotations

import ast
import os

from autograd_doctor.diagnosis import codes
from autograd_doctor.analysis.errors.build import diagnosis, find_calls, statement_change, text_of, user_statement
from autograd_doctor.analysis.errors.context import ErrorContext, enclosing_function, last_assignment
from autograd_doctor.diagnosis.model import Suggestion
from autograd_doctor.diagnosis.source import parse_file, replace_node_text

_FUNCTORCH_DIR = os.sep + os.path.join("torch", "_functorch") + os.sep
# The user-facing transforms, by the function torch runs for each (the traceback names them).
TRANSFORM_FUNCTIONS = {"vmap_impl": "vmap", "grad_and_value_impl": "grad", "grad_impl": "grad", "vjp": "vjp",
                       "jacrev": "jacrev", "jacfwd": "jacfwd", "jvp": "jvp"}


def transform_name(context: ErrorContext) -> str | None:
    """The torch.func transform the error was raised under (from the traceback), else None."""
    names = [TRANSFORM_FUNCTIONS.get(frame.f_code.co_name, "a torch.func transform") for frame, _ in context.frames
             if _FUNCTORCH_DIR in frame.f_code.co_filename]
    specific = [name for name in names if name != "a torch.func transform"]
    return (specific or names or [None])[0]


def tape_api_in_transform(context: ErrorContext, already):
    """backward() or requires_grad_() called by a function being transformed."""
    found = user_statement(context)
    if found is None:
        return None
    frame, line, filename, statement, location = found
    transform = transform_name(context) or "a torch.func transform"
    called = "requires_grad_()" if "requires_grad_" in context.message else "backward()"
    location.note = f"{called} inside a function transformed by {transform}"
    return diagnosis(codes.AUTOGRAD_INSIDE_TRANSFORM, location, notes=_notes(transform), help=[Suggestion(
        "let torch.func compute the gradient: make the function return the loss and transform it with "
        "torch.func.grad (vmap(grad(loss_fn))(x) for per-sample gradients); or call backward() outside the "
        "transform")])


def autograd_grad_in_transform(context: ErrorContext, already):
    """torch.autograd.grad(loss, x) inside a transform: "element 0 of tensors does not require grad"."""
    transform = transform_name(context)
    if transform is None:
        return None
    found = user_statement(context)
    if found is None:
        return None
    frame, line, filename, statement, location = found
    calls = [c for c in find_calls(statement, "grad") if text_of(filename, c.func) in ("torch.autograd.grad",
                                                                                       "autograd.grad")]
    location.note = f"torch.autograd.grad inside a function transformed by {transform}"
    helps = []
    if len(calls) == 1:
        rewrite = _func_grad_rewrite(filename, statement, calls[0])
        if rewrite is not None:
            helps.append(statement_change(location, "compute the gradient with torch.func.grad, which works inside "
                                          f"{transform} (it evaluates the loss again as a function of the input)",
                                          rewrite))
    helps.append(Suggestion("or make the transformed function return the loss and transform it with torch.func.grad "
                            "(vmap(grad(loss_fn))(x) for per-sample gradients)"))
    return diagnosis(codes.AUTOGRAD_INSIDE_TRANSFORM, location, notes=_notes(transform), help=helps)


def _notes(transform: str) -> list[str]:
    return [f"inside {transform}, tensors are wrapped for the transform; the tape-based autograd API "
            "(backward(), torch.autograd.grad, requires_grad_()) does not see through them, even when the tensor "
            "given to the transform requires grad"]


def _func_grad_rewrite(filename: str, statement: ast.stmt, call: ast.Call) -> str | None:
    """`torch.func.grad(lambda x: <loss expression>)(x)` for `torch.autograd.grad(loss, x)[0]`,
    where `loss = <expression>` uses `x` and no other name bound in the same function."""
    if len(call.args) < 2 or call.keywords or not all(isinstance(a, ast.Name) for a in call.args[:2]):
        return None
    output, input_name = call.args[0].id, call.args[1].id
    made = last_assignment(filename, output, statement.lineno)
    if not isinstance(made, ast.Assign) or len(made.targets) != 1:
        return None
    tree = parse_file(filename)
    scope = enclosing_function(tree, statement.lineno) if tree is not None else None
    if not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    bound_here = {n.id for n in ast.walk(scope) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    bound_here |= {a.arg for a in scope.args.args + scope.args.kwonlyargs}
    used = {n.id for n in ast.walk(made.value) if isinstance(n, ast.Name)}
    if input_name not in used or (used & bound_here) - {input_name}:
        return None  # the loss depends on other values computed from the input: not one expression
    expression = text_of(filename, made.value)
    new_call = f"torch.func.grad(lambda {input_name}: {expression})({input_name})"
    node = call
    parent = _subscript_zero(statement, call)
    if parent is not None:
        node = parent
    return replace_node_text(filename, statement, node, new_call)


def _subscript_zero(statement: ast.stmt, call: ast.Call) -> ast.Subscript | None:
    """`call[0]` around the call, if any (torch.autograd.grad returns a tuple, torch.func.grad a tensor)."""
    for node in ast.walk(statement):
        if isinstance(node, ast.Subscript) and node.value is call and isinstance(node.slice, ast.Constant) \
                and node.slice.value == 0:
            return node
    return None


MATCHERS = [
    (r"backward\(\) called inside a functorch transform", tape_api_in_transform),
    (r"You are attempting to call Tensor\.requires_grad_\(\) \(or perhaps using torch\.autograd\.functional\.\* "
     r"APIs\) inside of a function being transformed", tape_api_in_transform),
]
