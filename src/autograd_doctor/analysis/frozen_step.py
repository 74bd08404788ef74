"""AD215: an optimizer steps after a backward() while every one of its parameters is frozen
(requires_grad=False) although it trained them at an earlier step: a `requires_grad(model,
False)` toggle from another phase of the loop is still in force, so the loss meant for this
optimizer reached none of its parameters and step() changes nothing (no error).

Read just before step(): a backward() ran since the optimizer's previous step, all of its
parameters have requires_grad=False and no gradient, and the doctor saw this optimizer step with
gradients before (`trained`: such optimizers, by identity, kept by the doctor). The help turns the
parameters' flag on again at the start of the block that holds that backward(), with the same
call that turned it off when the user's file has one (`requires_grad(net, False)` ->
`requires_grad(net, True)`), or with `net.requires_grad_(True)`.
"""

from __future__ import annotations

import ast

import torch

from autograd_doctor.analysis.source_scope import Scope, block_holding, frame_values, live_frame
from autograd_doctor.diagnosis import codes
from autograd_doctor.diagnosis.model import Diagnosis, Suggestion
from autograd_doctor.diagnosis.source import location_of, replace_node_text, segment, statement_location
from autograd_doctor.recording.identity import IdentitySet


def frozen_step_diagnosis(optimizer, stack, recorder, trained: IdentitySet) -> Diagnosis | None:
    """AD215 before `optimizer.step()` (called from `stack`), or None. Adds the optimizer to
    `trained` when this step applies a gradient."""
    parameters = [p for group in getattr(optimizer, "param_groups", ()) for p in group.get("params", ())]
    if not parameters:
        return None
    if any(p.grad is not None for p in parameters):
        trained.add(optimizer)
        return None
    if optimizer not in trained or any(p.requires_grad for p in parameters) or not stack:
        return None
    since = recorder.gradient_clips.last_step.get(optimizer, 0)
    backwards = [call for call in recorder.backward_calls if call.seq > since and call.site is not None]
    if not backwards:
        return None
    trained.discard(optimizer)  # once per phase: reported again only after it trains again
    return _diagnosis(optimizer, parameters, backwards[-1].site, stack[0])


def _owner_name(values: dict, parameters: list) -> str | None:
    """The name of a module in the step's frame whose parameters are the optimizer's."""
    ids = {id(p) for p in parameters}
    for name, value in values.items():
        if isinstance(value, torch.nn.Module) and not name.startswith("_"):
            own = {id(p) for p in value.parameters()}
            if own and ids <= own:
                return name
    return None


def _freezing_call(scope: Scope, name: str, before_line: int) -> ast.Expr | None:
    """The latest call statement before `before_line` that takes `name` and False (`requires_grad(
    net, False)`)."""
    best = None
    for node in ast.walk(scope.node or scope.tree):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and node.lineno < before_line:
            call = node.value
            arguments = [*call.args, *(k.value for k in call.keywords)]
            if any(isinstance(a, ast.Name) and a.id == name for a in arguments) and \
                    any(isinstance(a, ast.Constant) and a.value is False for a in arguments):
                if best is None or node.lineno > best.lineno:
                    best = node
    return best


def _diagnosis(optimizer, parameters: list, backward_site, step_site) -> Diagnosis | None:
    optimizer_class = type(optimizer).__name__
    frame = live_frame(step_site)
    values = frame_values(frame) if frame is not None else {}
    owner = _owner_name(values, parameters)
    filename = backward_site.filename
    scope = Scope(filename, backward_site.lineno)
    backward_statement = scope.statement_at(backward_site.lineno) if scope.tree is not None else None
    primary = location_of(step_site, role="step", note=f"{optimizer_class}.step() changes nothing: all "
                                                       f"{len(parameters)} of its parameters have requires_grad=False")
    related = [location_of(backward_site, role="backward", note="this backward() reached none of them")]
    notes = [f"this optimizer trained its parameters at an earlier step; now all of them are frozen "
             f"(requires_grad=False{', on ' + owner if owner else ''}), so the loss backpropagated here gives them no "
             "gradient and the step is skipped for each (no error): a requires_grad(..., False) from another phase "
             "of the loop is still in force"]
    helps = []
    if owner is not None and backward_statement is not None and step_site.filename == filename:
        freeze = _freezing_call(scope, owner, backward_site.lineno)
        if freeze is not None:
            related.append(statement_location(filename, freeze, role="freeze",
                                              note=f"{owner}'s parameters are frozen here and stay frozen"))
        block = block_holding(scope.tree, backward_statement)
        first = block[0] if block else None
        first_text = segment(filename, first) if first is not None else None
        unfreeze = None
        if freeze is not None:
            # the False argument only: another False in the call (`strict=False`) keeps its meaning
            off = next(a for a in [*freeze.value.args, *(k.value for k in freeze.value.keywords)]
                       if isinstance(a, ast.Constant) and a.value is False)
            unfreeze = replace_node_text(filename, freeze, off, "True")
        if unfreeze is None:
            unfreeze = f"{owner}.requires_grad_(True)"
        if first is not None and first_text is not None and first.lineno == first.end_lineno:
            helps.append(Suggestion(
                f"turn requires_grad on again for {owner}'s parameters before computing the loss that "
                f"{optimizer_class}.step() applies", f"{unfreeze}\n{first_text}", statement_location(filename, first)))
    if not helps:
        helps.append(Suggestion("set requires_grad=True on this optimizer's parameters before the forward pass whose "
                                "loss it should apply (model.requires_grad_(True))"))
    return Diagnosis(code=codes.FROZEN_OPTIMIZER_STEP, title=codes.title(codes.FROZEN_OPTIMIZER_STEP),
                     severity="warning", primary=primary, related=[r for r in related if r is not None],
                     notes=notes, help=helps)
