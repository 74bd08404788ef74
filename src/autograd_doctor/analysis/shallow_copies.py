"""AD166: `copy.copy(t)` of a tensor, called in the user's code, gives a new tensor object over
the same memory: a "backup" that every later write to t changes too.

MAML++ backs up batch-norm running statistics with `backup.data = copy(running_mean.data)` and
restores them after an evaluation task: the backup is the running statistics themselves, the
evaluation batches update both, and the restore puts the evaluation statistics back. A name
that says copy, no error, a shared buffer.

Reported at the call (recording/aliases.py sees `copy.copy` called from the user's own code on a
tensor and checks that the result shares the tensor's storage), once per line. The help
replaces the call with `x.clone()` when x does not require grad (the same values in memory of
its own, nothing else changes); for a tensor that requires grad, whether the copy should stay in
the graph (`clone()`) or be a new leaf (`detach().clone()`) is the user's choice: advice.
"""

from __future__ import annotations

import ast

from autograd_doctor.diagnosis import codes
from autograd_doctor.diagnosis.model import Diagnosis, Suggestion
from autograd_doctor.diagnosis.source import (
    call_argument, location_of, method_receiver, replace_node_text, segment, statement_at, statement_location,
)


def _copy_calls(statement: ast.stmt) -> list[ast.Call]:
    """`copy(x)` / `copy.copy(x)` calls of the statement, with one positional argument."""
    found = []
    for node in ast.walk(statement):
        if not isinstance(node, ast.Call) or len(node.args) != 1 or node.keywords:
            continue
        func = node.func
        if (isinstance(func, ast.Name) and func.id == "copy") or (
                isinstance(func, ast.Attribute) and func.attr == "copy" and isinstance(func.value, ast.Name)
                and func.value.id == "copy"):
            found.append(node)
    return found


def shallow_copy_diagnosis(requires_grad: bool, stack) -> Diagnosis | None:
    site = stack[0] if stack else None
    if site is None:
        return None
    statement = statement_at(site.filename, site.lineno)
    calls = _copy_calls(statement) if statement is not None else []
    note = ("copy.copy of a tensor makes a new tensor object over the same memory: a write to either changes "
            "both, so it keeps no value of its own")
    if len(calls) != 1:
        primary = location_of(site, role="shared memory", note=note)
        if primary is None:
            return None
        return Diagnosis(code=codes.SHALLOW_TENSOR_COPY, title=codes.title(codes.SHALLOW_TENSOR_COPY),
                         severity="warning", primary=primary,
                         help=[Suggestion("copy the values into memory of their own: x.clone() "
                                          "(or x.detach().clone() for a copy outside the graph)")])
    call = calls[0]
    primary = statement_location(site.filename, statement, role="shared memory", note=note)
    argument = call_argument(call, 0, "x")
    argument_text = segment(site.filename, argument) if argument is not None else None
    helps = []
    if argument_text is not None and not requires_grad:
        replacement = replace_node_text(site.filename, statement, call,
                                        f"{method_receiver(argument, argument_text)}.clone()")
        if replacement is not None:
            helps.append(Suggestion("copy the values into memory of their own with clone()", replacement,
                                    statement_location(site.filename, statement)))
    if not helps:
        helps.append(Suggestion(f"copy the values into memory of their own: {argument_text or 'x'}.clone() keeps the "
                                f"copy in the graph, {argument_text or 'x'}.detach().clone() makes it a new tensor "
                                "outside it"))
    return Diagnosis(code=codes.SHALLOW_TENSOR_COPY, title=codes.title(codes.SHALLOW_TENSOR_COPY),
                     severity="warning", primary=primary, help=helps)
