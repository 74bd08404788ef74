"""Optimizer construction errors: a single tensor instead of an iterable of tensors, and an
empty parameter list (most often a `model.parameters()` generator already used up)."""

from __future__ import annotations

import ast
import types

from autograd_doctor import codes
from autograd_doctor.analysis.errors.build import diagnosis, find_calls, statement_change, statement_of, text_of
from autograd_doctor.analysis.errors.context import ErrorContext, last_assignment
from autograd_doctor.report.model import Suggestion
from autograd_doctor.report.source import replace_node_text, statement_at, statement_location


def _optimizer_call(context: ErrorContext):
    """(frame, filename, statement, location, call, optimizer class name) of the failing construction."""
    found = context.innermost_user()
    frame_init = context.torch_frame("__init__")
    optimizer = frame_init.f_locals.get("self") if frame_init is not None else None
    class_name = type(optimizer).__name__ if optimizer is not None else None
    if found is None or class_name is None:
        return None
    frame, line = found
    filename = frame.f_code.co_filename
    statement, location = statement_of(filename, line)
    if statement is None:
        return None
    calls = [c for c in find_calls(statement, class_name) if c.args]
    return frame, filename, statement, location, (calls[0] if len(calls) == 1 else None), class_name


def params_not_iterable(context: ErrorContext, already):
    found = _optimizer_call(context)
    if found is None:
        return None
    frame, filename, statement, location, call, class_name = found
    location.note = f"{class_name} is given one tensor, not a list of tensors"
    helps = []
    if call is not None:
        argument = call.args[0]
        text = text_of(filename, argument)
        helps.append(statement_change(location, f"pass a list: [{text}] (or model.parameters() for all of "
                                      "a module's parameters)", replace_node_text(filename, statement, argument, f"[{text}]")))
    else:
        helps.append(Suggestion("pass an iterable of tensors: [w], model.parameters(), or a list of dicts "
                                "for parameter groups"))
    return diagnosis(codes.OPTIMIZER_PARAMS_NOT_ITERABLE, location,
                     notes=["optimizers take an iterable of parameters (or of parameter-group dicts); a "
                            "tensor is iterable along its first dimension, so PyTorch refuses it explicitly"],
                     help=helps)


def empty_parameter_list(context: ErrorContext, already):
    found = _optimizer_call(context)
    if found is None:
        return None
    frame, filename, statement, location, call, class_name = found
    location.note = f"{class_name} receives no parameters"
    argument = call.args[0] if call is not None else None
    name = argument.id if isinstance(argument, ast.Name) else None
    value = frame.f_locals.get(name, frame.f_globals.get(name)) if name else None
    if isinstance(value, types.GeneratorType):
        made = last_assignment(filename, name, location.line)
        if made is not None and isinstance(made, ast.Assign):
            made_location = statement_location(filename, made, role="made",
                                               note=f"{name} is a generator: it can be iterated only once")
            users = _uses_between(filename, name, made.end_lineno, location.line)
            value_text = text_of(filename, made.value)
            helps = [statement_change(made_location, f"keep the parameters in a list, which can be read "
                                      "any number of times", f"{ast.unparse(made.targets[0])} = list({value_text})")]
            notes = [f"{name} was already iterated (used up) before {class_name} read it, so it yielded nothing"]
            return diagnosis(codes.OPTIMIZER_EMPTY_PARAMETERS, made_location, [*users, location], notes, helps)
    notes = ["the iterable given to the optimizer yielded no tensor: a parameters() generator used up "
             "earlier, a filter such as `if p.requires_grad` with every parameter frozen, or a model whose "
             "layers are not registered (plain lists instead of nn.ModuleList)"]
    return diagnosis(codes.OPTIMIZER_EMPTY_PARAMETERS, location, notes=notes, help=[Suggestion(
        "check what the expression passed to the optimizer yields: list(...) it and print its length")])


def _uses_between(filename: str, name: str, after: int, before: int) -> list:
    found = []
    for number in range(after + 1, before):
        statement = statement_at(filename, number)
        if statement is None or statement.lineno != number:
            continue
        if any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(statement)):
            found.append(statement_location(filename, statement, role="used", note=f"{name} is used up here"))
    return found[:2]


MATCHERS = [
    (r"params argument given to the optimizer should be an iterable of Tensors or dicts", params_not_iterable),
    (r"optimizer got an empty parameter list", empty_parameter_list),
]
