"""What `torch.func` and `torch.autograd.functional` refuse in what the user's function returns or
is given: `grad(f, has_aux=True)` of a function that does not return the pair (output, aux)
(AD234), `jacobian`/`vjp`/`hessian(..., strict=True)` of a function whose output does not depend
on its input (AD235), and a forward-mode tangent of another size than its primal (`jvp`,
`make_dual`, AD236).

The function is found through the transform's frame (its `func` local); the change is written in
the user's file only.
"""

from __future__ import annotations

import ast
import re

from autograd_doctor.analysis.errors.build import diagnosis, statement_change, text_of, user_statement
from autograd_doctor.analysis.errors.context import ErrorContext, last_assignment
from autograd_doctor.diagnosis import codes
from autograd_doctor.diagnosis.model import Suggestion
from autograd_doctor.diagnosis.source import parse_file, replace_node_text, statement_location


def _user_function(context: ErrorContext, torch_functions: tuple[str, ...]):
    """(file, def statement) of the function a transform was given (the `func` local of the
    innermost torch frame among `torch_functions`), when the user wrote it; else None."""
    from autograd_doctor.recording.frames import in_installed_package, is_internal_file

    for frame, _ in reversed(context.frames):
        if frame.f_code.co_name not in torch_functions:
            continue
        function = frame.f_locals.get("func")
        code = getattr(getattr(function, "func", function), "__code__", None)  # a functools.partial's function
        if code is None or is_internal_file(code.co_filename) or in_installed_package(code.co_filename):
            return None
        tree = parse_file(code.co_filename)
        defined = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and (
            n.lineno == code.co_firstlineno or any(d.lineno == code.co_firstlineno for d in n.decorator_list))] \
            if tree is not None else []
        return (code.co_filename, defined[0]) if len(defined) == 1 else None
    return None


def _only_return(function: ast.FunctionDef) -> ast.Return | None:
    """The function's one `return value` statement (nested functions' returns are not its own)."""
    returns = [n for n in ast.walk(function) if isinstance(n, ast.Return)]
    nested = [n for n in ast.walk(function) if isinstance(n, (ast.FunctionDef, ast.Lambda)) and n is not function]
    if nested or len(returns) != 1 or returns[0].value is None:
        return None
    return returns[0]


# ---- AD234: grad(f, has_aux=True) of a function that does not return (output, aux) ------------

def aux_not_a_pair(context: ErrorContext, already):
    found = _user_function(context, ("grad_and_value_impl", "_vjp_with_argnums", "wrapper_fn"))
    if found is None:
        return None
    filename, function = found
    returned = _only_return(function)
    if returned is None:
        return None
    location = statement_location(filename, returned, note="returns something other than the pair (output, aux)")
    notes = ["with has_aux=True, the function must return exactly two things: the output to differentiate "
             "and one auxiliary value (any tuple, dict or tensor), which is handed back as it is, without a gradient"]
    helps = []
    value = returned.value
    if isinstance(value, ast.Tuple) and len(value.elts) > 2 and not any(isinstance(e, ast.Starred) for e in value.elts):
        first = text_of(filename, value.elts[0])
        rest = [text_of(filename, e) for e in value.elts[1:]]
        if first is not None and None not in rest:
            location.note = f"returns {len(value.elts)} values side by side"
            helps.append(statement_change(
                location, f"return the output and the {len(rest)} auxiliary values as one tuple: the caller then "
                f"receives (gradient, ({', '.join(rest)}))", f"return {first}, ({', '.join(rest)})"))
    elif not isinstance(value, ast.Tuple):
        location.note = "returns one value: there is no auxiliary value"
        helps.append(Suggestion("return (output, aux) if the function has an auxiliary value to hand back, or "
                                "drop has_aux=True (the transform then returns the gradient alone)"))
    else:
        helps.append(Suggestion("return exactly (output, aux): gather the auxiliary values into one tuple or dict"))
    return diagnosis(codes.AUX_NOT_A_PAIR, location, notes=notes, help=helps)


# ---- AD235: strict=True and an output independent of the input -------------------------------

_FUNCTIONAL_FUNCTIONS = ("jacobian", "hessian", "vjp", "jvp", "vhp", "hvp")


def _torch_tensor_of_a_list(filename: str, node: ast.AST) -> ast.Call | None:
    """`torch.tensor([a, b, ...])` (a list or tuple of computed values, no other argument) in `node`."""
    for call in ast.walk(node):
        if isinstance(call, ast.Call) and (text_of(filename, call.func) or "") == "torch.tensor" \
                and len(call.args) == 1 and not call.keywords and isinstance(call.args[0], (ast.List, ast.Tuple)) \
                and call.args[0].elts and not all(isinstance(e, ast.Constant) for e in call.args[0].elts):
            return call
    return None


def strict_output_without_grad(context: ErrorContext, already):
    found = _user_function(context, _FUNCTIONAL_FUNCTIONS)
    if found is None:
        return None
    filename, function = found
    returned = _only_return(function)
    if returned is None:
        return None
    statement = returned
    call = _torch_tensor_of_a_list(filename, returned.value)
    if call is None and isinstance(returned.value, ast.Name):
        # `return out` where out = torch.tensor([...]) a few lines up.
        made = last_assignment(filename, returned.value.id, returned.lineno)
        if made is not None and function.lineno <= made.lineno:
            call = _torch_tensor_of_a_list(filename, made)
            statement = made if call is not None else statement
    notes = ["in strict mode the transform refuses an output that autograd cannot trace back to the input "
             "(without strict=True its derivative would be returned as zeros)"]
    if call is not None:
        location = statement_location(filename, statement, note="torch.tensor([...]) copies the values of the "
                                      "elements into a new tensor, without their graph")
        new = replace_node_text(filename, statement, call, f"torch.stack({text_of(filename, call.args[0])})")
        helps = [statement_change(location, "build the vector with torch.stack, which keeps each element's graph "
                                  "(the same values when the elements are single numbers)", new)]
        return diagnosis(codes.STRICT_OUTPUT_WITHOUT_GRAD, location, notes=notes, help=helps)
    location = statement_location(filename, returned, note="what the function returns does not depend on its input "
                                  "through operations autograd records")
    helps = [Suggestion("look for what cuts the path between the input and this value: torch.tensor(...) of "
                        "computed values (use torch.stack), .detach(), .item() or .tolist(), NumPy, a torch.no_grad() "
                        "block, integer ops (argmax, round); an output that is constant on purpose needs strict=False")]
    return diagnosis(codes.STRICT_OUTPUT_WITHOUT_GRAD, location, notes=notes, help=helps)


# ---- AD236: a tangent of another size than its primal -----------------------------------------

_SIZES = re.compile(r"Tensor is of size \[([\d, ]*)\] while the given forward gradient is of size \[([\d, ]*)\]")


def _sizes(text: str) -> tuple[int, ...]:
    return tuple(int(s) for s in text.split(",") if s.strip())


def _primal_tangent_pairs(filename: str, statement: ast.stmt):
    """(primal node, tangent node) pairs of the jvp(f, (p, ...), (t, ...)) or make_dual(p, t) calls
    in the statement."""
    for call in ast.walk(statement):
        if not isinstance(call, ast.Call):
            continue
        name = (text_of(filename, call.func) or "").split(".")[-1]
        if name == "make_dual" and len(call.args) >= 2:
            yield call.args[0], call.args[1]
        elif name == "jvp" and len(call.args) >= 3 and isinstance(call.args[1], ast.Tuple) \
                and isinstance(call.args[2], ast.Tuple) and len(call.args[1].elts) == len(call.args[2].elts):
            yield from zip(call.args[1].elts, call.args[2].elts)


def tangent_of_another_size(context: ErrorContext, already):
    import torch

    sizes = _SIZES.search(context.message)
    found = user_statement(context)
    if sizes is None or found is None:
        return None
    frame, line, filename, statement, location = found
    primal_size, tangent_size = _sizes(sizes.group(1)), _sizes(sizes.group(2))
    location.note = f"the tangent has size {list(tangent_size)}, its primal {list(primal_size)}"
    notes = ["forward-mode AD carries one tangent per primal, of exactly the primal's size: it is the direction "
             "in which the primal moves, element by element (no broadcasting)"]
    helps = []
    scope = {**frame.f_globals, **frame.f_locals}
    for primal, tangent in _primal_tangent_pairs(filename, statement):
        primal_text, tangent_text = text_of(filename, primal), text_of(filename, tangent)
        # Only names are looked up (never evaluated): the tensors the call was given.
        primal_value = scope.get(primal_text) if isinstance(primal, ast.Name) else None
        tangent_value = scope.get(tangent_text) if isinstance(tangent, ast.Name) else None
        if not (isinstance(primal_value, torch.Tensor) and isinstance(tangent_value, torch.Tensor)) \
                or tuple(primal_value.shape) != primal_size or tuple(tangent_value.shape) != tangent_size:
            continue
        location.note = f"{tangent_text} has size {list(tangent_size)}, {primal_text} {list(primal_size)}"
        try:
            broadcasts = torch.broadcast_shapes(tangent_size, primal_size) == torch.Size(primal_size)
        except RuntimeError:
            broadcasts = False
        if broadcasts:
            helps.append(statement_change(
                location, f"expand {tangent_text} to {primal_text}'s size: every example (row) moves in the same "
                "direction, the directional derivative you asked for at each of them",
                replace_node_text(filename, statement, tangent, f"{tangent_text}.expand_as({primal_text})")))
        elif tangent_value.numel() == primal_value.numel():
            helps.append(statement_change(
                location, f"give {tangent_text} {primal_text}'s shape: it has the same number of elements, in the "
                "same order", replace_node_text(filename, statement, tangent, f"{tangent_text}.view_as({primal_text})")))
        break
    helps.append(Suggestion("make each tangent with its primal's shape (torch.randn_like(x), a direction expanded "
                            "with .expand_as(x)); for one direction per example, use vmap over jvp"))
    return diagnosis(codes.TANGENT_OF_ANOTHER_SIZE, location, notes=notes, help=helps)


MATCHERS = [
    (r"output of function f should be a tuple: \(output, aux\) if has_aux is True", aux_not_a_pair),
    (r"Output \d+ of the user-provided function does not require gradients\. The outputs must be computed in a "
     r"differentiable manner from the input when running in strict mode", strict_output_without_grad),
    (r"Trying to set a forward gradient that has a different size than that of the original Tensor",
     tangent_of_another_size),
]
