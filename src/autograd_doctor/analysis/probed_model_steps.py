"""AD249: an optimizer built from a wrapper's parameters() also steps the trained model the wrapper
holds, in eval mode, which another optimizer trained: the model being explained changes.

An explainer (GNNExplainer's masks), an adversarial patch or a prompt learned around a trained
model is a module that holds the model as a submodule and its own few parameters. Its optimizer
built from `explainer.parameters()` gets the model's weights too (they are the wrapper's
parameters), so every step of the explainer also trains the model it is meant to explain; the
masks then explain a drifting model. Nothing fails.

Looked at once per optimizer, at its first step() whose parameters got gradients, from what is
there at run time:
- the optimizer's construction reads `NAME.parameters()` (its first argument), NAME bound around
  the step() call to a module W;
- W is in train mode and a direct submodule M of W is in eval mode, itself and all of its
  submodules, while W holds parameters outside M that the optimizer holds too (what the wrapper
  learns);
- M's parameters that this optimizer holds got gradients, and another live optimizer holds them
  and stepped with gradients before, or keeps state for them (the model was trained, then put in
  eval mode).
A model fine-tuned by a second optimizer is built from the model's own parameters() (no wrapper);
a test-time adaptation optimizer holds the model's chosen parameters, not a wrapper's; neither is
reported. The construction is named; the help builds the optimizer from W's parameters outside M
(`[W.edge_mask, W.node_feat_mask]` when they are W's own attributes).
"""

from __future__ import annotations

import ast

import torch

from autograd_doctor.analysis.source_scope import frame_values, live_frame
from autograd_doctor.analysis.stale_optimizer import Budget, optimizer_construction, optimizers_holding
from autograd_doctor.diagnosis import codes
from autograd_doctor.diagnosis.model import Diagnosis, Suggestion
from autograd_doctor.diagnosis.source import location_of, segment, statement_location
from autograd_doctor.recording.gradient_states import grad_of
from autograd_doctor.recording.identity import IdentitySet


class ProbedModelSteps:
    """Judges each optimizer once, at its first step() with gradients."""

    def __init__(self):
        self._seen = IdentitySet()
        self._budget = Budget(scans=2)

    def at_step(self, optimizer, stack, trained: IdentitySet) -> Diagnosis | None:
        """AD249 before `optimizer.step()`, or None; `trained`: the optimizers seen stepping with
        gradients (kept by the doctor)."""
        if optimizer in self._seen:
            return None
        held = [p for group in getattr(optimizer, "param_groups", ()) for p in group.get("params", ())]
        if not any(grad_of(p) is not None for p in held):
            return None
        self._seen.add(optimizer)
        frame = live_frame(stack[0]) if stack else None
        values = frame_values(frame) if frame is not None else {}
        del frame
        if not any(_could_wrap(value) for value in values.values()):
            return None  # no wrapper around this step(): decided without reading the source
        construction = optimizer_construction(optimizer, stack)
        if construction is None or not isinstance(construction[1].value, ast.Call):
            return None
        call = construction[1].value
        if not call.args:
            return None
        argument = call.args[0]
        if not (isinstance(argument, ast.Call) and not argument.args and not argument.keywords
                and isinstance(argument.func, ast.Attribute) and argument.func.attr == "parameters"
                and isinstance(argument.func.value, ast.Name)):
            return None
        name = argument.func.value.id
        wrapper = values.get(name)
        del values
        if not isinstance(wrapper, torch.nn.Module) or not wrapper.training:
            return None  # a model put in eval mode as a whole and fine-tuned is not a wrapper
        held_ids = {id(p) for p in held}
        for child_name, child in wrapper.named_children():
            found = self._probed(optimizer, wrapper, child, held_ids, trained)
            if found:
                return _diagnosis(optimizer, stack, construction, argument, name, wrapper, child_name, child)
        return None

    def _probed(self, optimizer, wrapper, child, held_ids: set, trained: IdentitySet) -> bool:
        if any(module.training for module in child.modules()):
            return False
        inside = list(child.parameters())
        inside_ids = {id(p) for p in inside}
        own = [p for p in wrapper.parameters() if id(p) not in inside_ids]
        if not inside or not own or not all(id(p) in held_ids for p in own):
            return False
        stepped = [p for p in inside if id(p) in held_ids and grad_of(p) is not None]
        if not stepped:
            return False
        others = optimizers_holding(stepped, self._budget)
        return bool(others) and any(other is not optimizer and (other in trained or any(other.state.get(p) for p in stepped))
                                    for other in others)


def _could_wrap(value) -> bool:
    """What `at_step` asks of the wrapper before anything else, asked of every value around the
    step() call: a module in train mode with a direct submodule in eval mode, itself and all of its
    submodules. Where no value is one, the optimizer's construction is not looked for. The type is
    read with `type()`: `isinstance` would ask each value for its `__class__`, which a proxy among
    the program's values may answer by running code."""
    return (issubclass(type(value), torch.nn.Module) and value.training
            and any(not any(module.training for module in child.modules()) for child in value.children()))


def _diagnosis(optimizer, stack, construction, argument, name, wrapper, child_name, child) -> Diagnosis:
    filename, statement = construction
    own_names = [n for n, _ in wrapper.named_parameters() if not n.startswith(child_name + ".")]
    if all("." not in n for n in own_names):
        selected = "[" + ", ".join(f"{name}.{n}" for n in own_names) + "]"
    else:
        selected = f"[p for n, p in {name}.named_parameters() if not n.startswith({child_name + '.'!r})]"
    text = segment(filename, statement)
    old = segment(filename, argument)
    helps = []
    if text is not None and old is not None and text.count(old) == 1:
        helps.append(Suggestion(f"build the optimizer from what {name} learns, without the model it holds",
                                text.replace(old, selected), statement_location(filename, statement)))
    primary = statement_location(filename, statement, role="optimizer", note=(
        f"{name}.parameters() holds {name}.{child_name}'s parameters too: this optimizer trains the model "
        f"{name} is built around"))
    related = [location_of(stack[0], role="step", note=f"step() changes {name}.{child_name}'s weights")] if stack else []
    count = sum(1 for _ in child.parameters())
    notes = [f"{name}.{child_name} ({type(child).__name__}) is in eval mode and another optimizer trained its "
             f"{count} parameter(s) before; here they get gradients from {name}'s loss and are stepped again",
             f"what {name} learns of its own: {', '.join(own_names[:4])}{', ...' if len(own_names) > 4 else ''}"]
    return Diagnosis(code=codes.PROBED_MODEL_STEPPED, title=codes.title(codes.PROBED_MODEL_STEPPED),
                     severity="warning", primary=primary, related=related, notes=notes, help=helps)
