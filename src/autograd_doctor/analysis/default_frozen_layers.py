"""AD241: an embedding layer rebuilt from a tensor that requires grad, frozen by
`from_pretrained`'s default `freeze=True`, inside a model whose other parameters train.

`nn.Embedding.from_pretrained(weight)` freezes the weight unless `freeze=False` is passed. Code
that rebuilds a trained layer (embedding shards stacked back together, a layer copied from another
model) with it gets a frozen layer: an optimizer built from the parameters that require grad
leaves it out (or holds it and never gets a gradient for it), and nothing fails.

Evidence, all at run time (recording/frozen_constructions.py notes the calls):
- a `from_pretrained` call that did not pass `freeze`, given a tensor that required grad;
- at an optimizer's first two steps, the layer is alive and its weight still does not require grad;
- a module bound around step() holds the layer, and this optimizer holds parameters of that module
  that got a gradient (the model around the layer trains).
A layer frozen on purpose from fixed vectors (GloVe: a tensor without grad), or given
`freeze=True` explicitly, is not noted; a layer unfrozen afterwards is not reported.

The `from_pretrained` call is named; the help passes `freeze=False` there.
"""

from __future__ import annotations

import ast

import torch

from autograd_doctor.analysis.step_surroundings import FirstSteps, modules_around
from autograd_doctor.diagnosis import codes
from autograd_doctor.diagnosis.model import Diagnosis, Suggestion
from autograd_doctor.diagnosis.source import (
    location_of, relative_to_statement, segment, source_line, statement_at, statement_location,
)
from autograd_doctor.recording.gradient_states import grad_of

STEPS_LOOKED_AT = 2
MAX_MODULES = 64


class DefaultFrozenLayers:
    """AD241, before each of an optimizer's first two steps; reported once per noted call."""

    def __init__(self, recorder):
        self._recorder = recorder
        self._steps = FirstSteps(STEPS_LOOKED_AT)

    def at_step(self, optimizer, stack) -> Diagnosis | None:
        notes = [note for note in self._recorder.frozen_constructions.layers if not note.reported]
        if not notes:
            return None
        if self._steps.take(optimizer) is None:
            return None
        held = {id(p) for group in getattr(optimizer, "param_groups", ()) for p in group.get("params", ())
                if grad_of(p) is not None}
        if not held:
            return None
        roots = modules_around(stack, MAX_MODULES)
        for note in notes:
            layer = note.layer()
            weight = getattr(layer, "weight", None) if layer is not None else None
            if not isinstance(weight, torch.Tensor) or weight.requires_grad:
                continue
            owners = [root for root in roots if root is not layer and any(m is layer for m in root.modules())]
            if not any(id(p) in held for owner in owners for p in owner.parameters()):
                continue
            diagnosis = _diagnosis(note, owners[0], stack[0] if stack else None, type(optimizer).__name__)
            if diagnosis is not None:
                note.reported = True
                return diagnosis
        return None


def _call_with_freeze_false(site) -> tuple[ast.stmt, str] | None:
    """The statement of the from_pretrained call at `site`, with `freeze=False` added to the call."""
    statement = statement_at(site.filename, site.lineno)
    if statement is None:
        return None
    calls = [node for node in ast.walk(statement) if isinstance(node, ast.Call)
             and getattr(node.func, "attr", None) == "from_pretrained"]
    text = segment(site.filename, statement)
    if len(calls) != 1 or text is None:
        return None
    call = calls[0]
    lines = text.splitlines(keepends=True)
    row = call.end_lineno - statement.lineno
    original = source_line(site.filename, call.end_lineno)  # the text's later lines are relative to the statement
    removed = statement.col_offset if row == 0 else \
        len(original) - len(relative_to_statement(original, statement.col_offset))
    column = call.end_col_offset - 1 - removed
    line = lines[row]
    if line[column:column + 1] != ")":
        return None
    inside = bool(call.args or call.keywords)
    lines[row] = line[:column] + (", freeze=False" if inside else "freeze=False") + line[column:]
    return statement, "".join(lines)


def _diagnosis(note, owner, step_site, optimizer_class: str) -> Diagnosis | None:
    site = note.stack[0] if note.stack else None
    if site is None:
        return None
    primary = location_of(site, role="frozen",
                          note=f"{note.class_name}.from_pretrained() freezes the weight by default (freeze=True), "
                               "although the tensor it is given requires grad")
    helps = []
    changed = _call_with_freeze_false(site)
    if changed is not None:
        statement, text = changed
        helps.append(Suggestion(f"pass freeze=False: the rebuilt {note.class_name} trains with the rest of "
                                f"{type(owner).__name__}, as the layer it was made from did",
                                text, statement_location(site.filename, statement)))
    else:
        helps.append(Suggestion("pass freeze=False to from_pretrained() so that the layer trains"))
    related = [location_of(step_site, role="step",
                           note=f"{optimizer_class}.step() trains {type(owner).__name__} but not this layer")] \
        if step_site is not None else []
    notes_ = [f"the {note.class_name}'s weight does not require grad: an optimizer built from the parameters that "
              "require grad leaves it out, and backward() gives it no gradient (no error)",
              "the tensor given to from_pretrained() required grad, so the layer is a trained one rebuilt; "
              "freezing it is from_pretrained()'s default, not a line of the program"]
    return Diagnosis(code=codes.DEFAULT_FROZEN_LAYER, title=codes.title(codes.DEFAULT_FROZEN_LAYER),
                     severity="warning", primary=primary, related=[r for r in related if r is not None],
                     notes=notes_, help=helps)


__all__ = ["DefaultFrozenLayers"]
