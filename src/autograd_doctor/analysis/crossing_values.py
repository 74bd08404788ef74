"""AD103's help for a value handed over from a model another optimizer has already stepped.

A one-step actor-critic written as two objects: `critic.learn(...)` backpropagates the TD error,
steps the critic's optimizer and returns the TD error; `actor.learn(s, a, td)` weights the action's
log-probability by it. The TD error still carries the critic's graph, so the actor's backward()
runs into the critic's layers, whose weights the critic's step() has just changed, and PyTorch
raises. The TD error is a weight for the actor, a number: the change is `td.detach()` where the
actor's loss reads it.

Looked at only when AD103 is built, in the frame of the failing backward() (live while PyTorch's
error is being reported): a tensor that the function received as an argument, whose graph reaches
the parameter the step changed, and whose graph's leaves are all held by the optimizer that made
that step (so it brings nothing the function's own optimizer trains). The help detaches it in the
one statement of the function that reads it. The graph walk stops after a few thousand nodes.
"""

from __future__ import annotations

import ast

import torch

from autograd_doctor.analysis.errors.context import enclosing_function
from autograd_doctor.analysis.source_scope import leaves_below, live_frame
from autograd_doctor.diagnosis.model import Location, Suggestion
from autograd_doctor.diagnosis.source import parse_file, replace_node_text, statement_location

MAX_NODES = 5000


def crossing_value_help(write, backward_site, recorder) -> tuple[Suggestion, Location] | None:
    """(the help, the statement it changes), or None."""
    parameter = write.target_ref() if getattr(write, "target_ref", None) is not None else None
    frame = live_frame(backward_site)
    if parameter is None or frame is None:
        return None
    try:
        stepped = _held_by_the_stepping_optimizer(parameter, recorder)
        if not stepped:
            return None
        code = frame.f_code
        arguments = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
        values = frame.f_locals
        for name in arguments:
            value = values.get(name)
            if not isinstance(value, torch.Tensor) or value.grad_fn is None:
                continue
            leaves, finished = leaves_below([value.grad_fn], MAX_NODES)
            if not finished or id(parameter) not in leaves or not leaves <= stepped:
                continue
            found = _reading_statement(backward_site, name)
            if found is None:
                return None
            statement, node = found
            replaced = replace_node_text(backward_site.filename, statement, node, f"{name}.detach()")
            if replaced is None:
                return None
            location = statement_location(backward_site.filename, statement, role="handed over",
                                          note=f"{name} still carries the graph of the model that step() changed")
            return Suggestion(f"use {name} as a value here ({name}.detach()): it was handed over with the graph of "
                              "the model the other optimizer trains and has already stepped, and this loss trains "
                              "nothing through it", replaced, location), location
        return None
    finally:
        del frame


def _held_by_the_stepping_optimizer(parameter, recorder) -> set[int]:
    """The ids of the parameters of the newest optimizer step that holds `parameter`."""
    for optimizer_ref, _name, _stack, _seq in reversed(getattr(recorder, "optimizer_steps", [])):
        optimizer = optimizer_ref()
        if optimizer is None:
            continue
        held = {id(p) for group in optimizer.param_groups for p in group["params"]}
        if id(parameter) in held:
            return held
    return set()


def _reading_statement(site, name: str) -> tuple[ast.stmt, ast.Name] | None:
    """(statement, the Name node) of the one statement in the function around `site` that reads
    `name`, when it is read once, in a simple statement."""
    tree = parse_file(site.filename)
    if tree is None:
        return None
    function = enclosing_function(tree, site.lineno)
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    reads = [node for node in ast.walk(function) if isinstance(node, ast.Name) and node.id == name
             and isinstance(node.ctx, ast.Load)]
    if len(reads) != 1:
        return None
    for node in ast.walk(function):
        if isinstance(node, ast.Attribute) and node.value is reads[0] and node.attr == "backward":
            return None  # `value.backward()`: the value is the loss itself, not a weight inside it
    for statement in ast.walk(function):
        if isinstance(statement, (ast.Assign, ast.AugAssign, ast.Expr, ast.Return)) \
                and statement.lineno == statement.end_lineno \
                and any(node is reads[0] for node in ast.walk(statement)):
            return statement, reads[0]
    return None
