"""AD311: an optimizer's step() applies a `.grad` that carries a graph (a `grad_fn`), assigned by
hand, when no backward() or autograd.grad() with `create_graph=True` ran.

backward() and autograd.grad() make gradients without a graph unless `create_graph=True` asks
for one (a gradient penalty, a second derivative). A gradient computed by hand (`g = A.T @ (A @ x
- y) + (x - x0) / s**2`) from a tensor that requires grad does carry one, and `p.grad = g` keeps
it: a built-in optimizer's step() runs under no_grad and never uses that graph, but the `.grad`
holds it, and the tensors it saved, alive as long as the parameter lives; when the graph reaches
the parameter itself (`x - x0` with `x` the parameter), parameter, `.grad` and graph form a cycle
through autograd's C++ nodes that Python's garbage collector cannot break, so each call leaves
its graph behind (devzhk/InverseBench#22, DAPS's Langevin step: a memory leak, the samples right).

Looked at only at the first steps of each optimizer (a `.grad` read per parameter, no value
read), and not at all once a `create_graph=True` backward()/autograd.grad() ran in the process
(such gradients are then made on purpose), nor for an optimizer made with `differentiable=True`.
The line named is the `<target>.grad = <value>` assignment in a function of the step's stack
whose target is, at run time, a parameter with such a gradient (or whose value is that very
gradient); the help detaches the value. The values the program computes are the same either way,
so no oracle tells the change right or wrong beyond that: the report says unverified.
"""

from __future__ import annotations

import ast

import torch

from autograd_doctor.analysis.source_scope import frame_values, live_frame
from autograd_doctor.analysis.step_surroundings import FirstSteps
from autograd_doctor.diagnosis import codes
from autograd_doctor.diagnosis.model import Diagnosis, Suggestion
from autograd_doctor.diagnosis.source import (
    function_definition, location_of, method_receiver, replace_node_text, segment, statement_location,
)
from autograd_doctor.recording.gradient_states import grad_of

FIRST_STEPS = 2
GRAPH_WALK_LIMIT = 256


def _graph_gradients(optimizer) -> list[torch.Tensor]:
    """The optimizer's parameters whose `.grad` has a grad_fn."""
    found = []
    for group in optimizer.param_groups:
        for parameter in group.get("params", ()):
            gradient = grad_of(parameter) if isinstance(parameter, torch.Tensor) else None
            if gradient is not None and gradient.grad_fn is not None:
                found.append(parameter)
    return found


def _reaches(gradient: torch.Tensor, parameter: torch.Tensor) -> bool:
    """Does the gradient's graph reach the parameter's own accumulator (a cycle)? A bounded walk."""
    seen, todo = set(), [gradient.grad_fn]
    while todo and len(seen) < GRAPH_WALK_LIMIT:
        node = todo.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if getattr(node, "variable", None) is parameter:
            return True
        todo.extend(next_node for next_node, _ in getattr(node, "next_functions", ()))
    return False


def _resolve(node: ast.AST, values: dict):
    """The value of a name or `name.attr` chain in the frame, or None."""
    if isinstance(node, ast.Name):
        return values.get(node.id)
    if isinstance(node, ast.Attribute):
        base = _resolve(node.value, values)
        return getattr(base, node.attr, None) if base is not None else None
    return None


def _assignment(stack, parameters: list[torch.Tensor]):
    """(file, statement, target's text, value node) of a `<target>.grad = <value>` in a function of
    the step's stack whose target is one of `parameters` at run time, or whose value is one of
    their gradients; None when there is none, or several."""
    wanted = {id(p) for p in parameters}
    gradients = {id(grad_of(p)) for p in parameters}
    for site in stack or ():
        frame = live_frame(site)
        function = function_definition(site.code) if frame is not None else None
        if function is None:
            continue
        values = frame_values(frame)
        hits = []
        for statement in ast.walk(function):
            if not isinstance(statement, ast.Assign) or len(statement.targets) != 1:
                continue
            target = statement.targets[0]
            if not (isinstance(target, ast.Attribute) and target.attr == "grad"):
                continue
            base, value = _resolve(target.value, values), _resolve(statement.value, values)
            if (base is not None and id(base) in wanted) or (value is not None and id(value) in gradients):
                hits.append(statement)
        if len(hits) == 1:
            statement = hits[0]
            return site.filename, statement, segment(site.filename, statement.targets[0]), statement.value
        if hits:
            return None
    return None


class GraphGradients:
    """The check at the first steps of each optimizer."""

    def __init__(self) -> None:
        self._steps = FirstSteps(FIRST_STEPS)
        self._reported: set = set()

    def at_step(self, optimizer, stack, recorder) -> Diagnosis | None:
        if recorder.create_graph_seen or self._steps.take(optimizer) is None:
            return None
        if getattr(optimizer, "defaults", {}).get("differentiable"):
            return None
        parameters = _graph_gradients(optimizer)
        if not parameters:
            return None
        self._steps.stop(optimizer)
        found = _assignment(stack, parameters)
        key = (found[0], found[1].lineno) if found is not None else (stack[0].filename, stack[0].lineno) if stack else None
        if key is None or key in self._reported:
            return None
        self._reported.add(key)
        return _diagnosis(optimizer, parameters, stack, found, recorder)


def _diagnosis(optimizer, parameters, stack, found, recorder) -> Diagnosis | None:
    optimizer_class = type(optimizer).__name__
    gradient = grad_of(parameters[0])
    node_name = type(gradient.grad_fn).__name__ if gradient is not None else "a node"
    cycle = gradient is not None and _reaches(gradient, parameters[0])
    counted = f"{len(parameters)} parameter{'s' if len(parameters) != 1 else ''}"
    step = location_of(stack[0] if stack else None, role="step",
                       note=f"{optimizer_class}.step() runs under no_grad: the graph these gradients carry is never used")
    notes = [f".grad of {counted} ({', '.join(str(list(p.shape)) for p in parameters[:3])}) carries a graph "
             f"(grad_fn {node_name}), and no backward() or autograd.grad() with create_graph=True ran: the gradient "
             "was computed by hand from tensors that require grad and assigned with its graph. The step's values are "
             "right, but the .grad keeps that graph and every tensor it saved alive"
             + (": here the graph reaches the parameter itself, a cycle through autograd's nodes that Python's "
                "garbage collector cannot free, so each call leaves its graph behind (memory grows)" if cycle else "")]
    if found is not None:
        filename, statement, target_text, value = found
        primary = statement_location(filename, statement, role="assignment",
                                     note=f"assigns to {target_text} a gradient that carries a graph")
        value_text = segment(filename, value)
        code = replace_node_text(filename, statement, value, f"{method_receiver(value, value_text)}.detach()") \
            if value_text else None
        helps = [Suggestion(f"assign the gradient without its graph: `{target_text} = "
                            f"{method_receiver(value, value_text or 'value')}.detach()` (unverified: the values are "
                            "the same either way, so no oracle compares them; the change only frees the graph)",
                            code, statement_location(filename, statement) if code else None)]
        related = [step] if step is not None else []
    else:
        if step is None:
            return None
        primary, related = step, []
        helps = [Suggestion("detach the hand-made gradient where it is assigned to .grad (`p.grad = g.detach()`), or "
                            "compute it under torch.no_grad() (unverified: the values are the same either way)")]
    return Diagnosis(code=codes.GRAPH_CARRYING_GRADIENT, title=codes.title(codes.GRAPH_CARRYING_GRADIENT),
                     severity="warning", primary=primary, related=related, notes=notes, help=helps)


__all__ = ["GraphGradients"]
