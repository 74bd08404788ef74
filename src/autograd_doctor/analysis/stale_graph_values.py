"""AD228: a tensor computed from parameters before an optimizer step changed them is used in a
later loss: it still holds the values from before the step, and its graph, kept alive (often by
`retain_graph=True`, added to silence "Trying to backward through the graph a second time"),
sends gradients computed at those old values. The classic form is a value derived from a
parameter once, in `__init__` (`self.sigma = torch.log1p(torch.exp(self.rho))`): the optimizer
moves `rho`, `sigma` never changes, and nothing is raised.

Looked at on the first backward() calls after an optimizer step (recording/step_points.py): a
name of the backward() frame, or a plain tensor attribute of a module in the user's frames,
holding a tensor whose graph node is in the loss's graph, was made before a recorded step
ended (its sequence number is lower), and reaches a parameter that step changed. Only named
holders are reported: where the tensor was made is then known, and a graph made in another
thread (DataParallel's replicas) is never taken for an old one.
"""

from __future__ import annotations

import ast

import torch

from autograd_doctor.analysis.live_values import readable_grad_fn
from autograd_doctor.analysis.naming import modules_in, user_frames
from autograd_doctor.analysis.source_scope import (
    Scope, backward_roots, frame_values, graph_nodes, leaves_below, live_frame,
)
from autograd_doctor.diagnosis import codes
from autograd_doctor.diagnosis.model import Diagnosis, Suggestion
from autograd_doctor.diagnosis.source import class_definition, location_of, segment, source_line, statement_location

MAX_ATTRIBUTES = 2000


def stale_value_diagnosis(recorder, call, args: tuple, kwargs: dict) -> Diagnosis | None:
    """AD228 for the backward() call that just ran, or None."""
    points = recorder.step_points
    if not points.points:
        return None
    roots = [root.grad_fn for root in backward_roots(args, kwargs) if root.grad_fn is not None]
    if not roots:
        return None
    site = call.site if call is not None else None
    frame = live_frame(site)
    frames = user_frames()
    # The holders made before a recorded step, told by their sequence numbers alone: most
    # backward() calls have none, and then neither the loss's graph nor the parameters are walked.
    older = []
    for holder, value in _holders(frame, frames):
        if isinstance(value, torch.Tensor) and readable_grad_fn(value) is not None:
            changed = points.changed_after(value.grad_fn._sequence_nr())
            if changed:
                older.append((holder, value, changed))
    if not older:
        return None
    walked, _ = graph_nodes(roots)
    in_graph = {id(node) for node in walked}
    for holder, value, changed in older:
        if id(value.grad_fn) not in in_graph:
            continue
        leaves, finished = leaves_below([value.grad_fn])
        stale_ids = leaves & changed
        if stale_ids and finished:
            parameter_names = _parameter_names(frames)
            stale = [parameter_names.get(key, "a parameter") for key in stale_ids]
            return _diagnosis(holder, sorted(set(stale)), site, frame)
    return None


def _parameter_names(frames) -> dict[int, str]:
    """id of each parameter of the modules in the user's frames -> its dotted name."""
    parameter_names = {}
    for model_name, model in modules_in(frames):
        for name, parameter in model.named_parameters():
            parameter_names.setdefault(id(parameter), ".".join(filter(None, (model_name, name))))
    return parameter_names


def _holders(frame, frames) -> list:
    """(("name", name) or ("attribute", module, attribute name), value) for the backward() frame's
    names and the plain tensor attributes of the modules in the user's frames."""
    found = []
    if frame is not None:
        found += [(("name", name), value) for name, value in frame_values(frame).items()
                  if isinstance(value, torch.Tensor)]
    seen = 0
    for _, model in modules_in(frames):
        for module in model.modules():
            for attribute, value in vars(module).items():
                seen += 1
                if isinstance(value, torch.Tensor) and not isinstance(value, torch.nn.Parameter):
                    found.append((("attribute", module, attribute), value))
            if seen > MAX_ATTRIBUTES:
                return found
    return found


def _assignment(holder: tuple, site, frame) -> tuple[str, ast.stmt, ast.AST | None] | None:
    """(file, statement, the class's method holding it or None) that made the holder's value:
    the name's latest assignment before the backward() line, or the `self.<attribute> = ...` in
    the module's class."""
    if holder[0] == "name":
        if site is None:
            return None
        scope = Scope(site.filename, site.lineno)
        found = scope.latest_assignment(holder[1], site.lineno) if scope.tree is not None else None
        return (site.filename, found[0], None) if found is not None else None
    _, module, attribute = holder
    for cls in type(module).__mro__:
        if cls.__module__.startswith("torch."):
            break
        found = class_definition(cls)
        if found is None:
            continue
        filename, definition = found
        for method in definition.body:
            for node in ast.walk(method):
                if isinstance(node, ast.Assign) and any(
                        isinstance(target, ast.Attribute) and target.attr == attribute
                        and isinstance(target.value, ast.Name) and target.value.id == "self"
                        for target in node.targets):
                    return filename, node, method
    return None


def _property_instead(filename: str, statement: ast.Assign, method, attribute: str, expression: str) -> str | None:
    """`method` (the class's __init__) without the assignment, followed by a property that
    computes the attribute from `self` each time it is read; None when the expression reads
    anything of the method's own (its arguments, its locals), which a property cannot see."""
    if not isinstance(method, ast.FunctionDef) or len(statement.targets) != 1 or not statement.value:
        return None
    own = {argument.arg for argument in ast.walk(method.args) if isinstance(argument, ast.arg)} - {"self"}
    own |= {node.id for node in ast.walk(method) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)}
    if any(isinstance(node, ast.Name) and node.id in own for node in ast.walk(statement.value)):
        return None
    first = method.decorator_list[0].lineno if method.decorator_list else method.lineno
    kept = [source_line(filename, line) for line in range(first, method.end_lineno + 1)
            if not statement.lineno <= line <= statement.end_lineno]
    if len(method.body) == 1:
        kept.append(" " * method.body[0].col_offset + "pass")
    indent = method.col_offset
    body = [line[indent:] if line.strip() else "" for line in kept]
    return "\n".join(body + ["", "@property", f"def {attribute}(self):", f"    return {expression}"])


def _diagnosis(holder: tuple, stale: list[str], site, frame) -> Diagnosis | None:
    what = holder[1] if holder[0] == "name" else f"{type(holder[1]).__name__}.{holder[2]}"
    parameters = ", ".join(stale[:3]) + (" ..." if len(stale) > 3 else "")
    note = (f"{what} was computed from {parameters} before optimizer.step() changed {'it' if len(stale) == 1 else 'them'}; "
            f"it still holds the old values, and backward() through its kept graph gives gradients at those "
            "old values")
    found = _assignment(holder, site, frame)
    related = [location_of(site, role="backward", note="uses it again in this loss")]
    helps = []
    if found is not None:
        filename, statement, method = found
        primary = statement_location(filename, statement, role="computed once",
                                     note=f"{what} is computed here, once, from {parameters}")
        expression = segment(filename, statement.value) if isinstance(statement, ast.Assign) else None
        as_property = _property_instead(filename, statement, method, holder[2], expression) \
            if holder[0] == "attribute" and expression is not None else None
        if as_property is not None:
            helps.append(Suggestion(f"compute {holder[2]} from the parameters where it is used, so it follows "
                                    f"every step: a property of the class instead of an attribute set in "
                                    f"{method.name}", as_property, statement_location(filename, method)))
        elif holder[0] == "attribute" and expression is not None:
            helps.append(Suggestion(
                f"compute {holder[2]} from the parameters where it is used, so it follows every step: replace "
                f"this assignment with a property of the class, `def {holder[2]}(self): return {expression}` "
                "under `@property`"))
        elif expression is not None:
            helps.append(Suggestion(f"compute {what} again after each step, inside the training loop, before it is "
                                    f"used; if it is a state carried from one iteration to the next (a hidden "
                                    f"state), detach it where it is carried: `{what} = {what}.detach()`"))
    else:
        primary, related = location_of(site, role="backward", note=note), []
        if primary is None:
            return None
    if not helps:
        helps.append(Suggestion(f"recompute {what} from the parameters after each optimizer step"))
    helps.append(Suggestion("then drop retain_graph=True if it was added only to get past \"Trying to backward "
                            "through the graph a second time\": that error pointed at this reuse"))
    return Diagnosis(code=codes.STALE_GRAPH_VALUE, title=codes.title(codes.STALE_GRAPH_VALUE), severity="warning",
                     primary=primary, related=[r for r in related if r is not None], notes=[note], help=helps)
