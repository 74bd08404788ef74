"""Remember a new optimizer that takes over parameters another optimizer was stepping.

A stateful optimizer (Adam's moments and step count, SGD's momentum buffer) keeps its state per
parameter. Built anew inside the training loop, each new one starts that state at zero while the
parameters carry on from where the previous one left them: every update is a first step, and
nothing fails. Test-time adaptation and per-task or per-epoch schedules also build optimizers
again, but they put the parameters back first (`load_state_dict`, a fresh copy of the model) or
let each optimizer take many steps.

Followed through one parameter per optimizer (the first of its first group), at the step hooks
that already run (recording/optimizer_steps.py): after each step, the parameter's version and
whether the optimizer holds tensors of state for it; before an optimizer's first step, whether
the parameter's latest stepper was another optimizer with state whose step was the last write
into it (the version is unchanged: nothing restored it in between). analysis/rebuilt_optimizer.py
reads the takeovers when the doctor stops (AD181). Only weak references are kept.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

import torch

# Takeovers kept (the first few are the evidence; one per iteration in the bug).
MAX_TAKEOVERS = 16
# Parameters followed per recorder.
MAX_PARAMETERS = 64


@dataclass
class Stepper:
    """The latest optimizer that stepped one parameter."""

    optimizer_ref: weakref.ref
    parameter_ref: weakref.ref
    steps: int
    version_after: int
    stateful: bool
    first_step_site: object  # Site of its first step() call, or None


@dataclass
class Takeover:
    """A new optimizer's first step over a parameter a stateful optimizer had stepped last."""

    class_name: str
    step_site: object  # Site of the new optimizer's first step() call
    previous_steps: int  # how many steps the replaced optimizer took
    previous_site: object  # Site of the replaced optimizer's first step() call


class OptimizerTakeovers:
    def __init__(self):
        self.stepper: dict[int, Stepper] = {}  # id(parameter) -> its latest stepper
        self.takeovers: list[Takeover] = []

    def step_started(self, optimizer, stack: tuple) -> None:
        parameter = _followed_parameter(optimizer)
        if parameter is None:
            return
        previous = self._stepper_of(parameter)
        if previous is None or previous.optimizer_ref() is optimizer or not previous.stateful:
            return
        if parameter._version != previous.version_after or len(self.takeovers) >= MAX_TAKEOVERS:
            return  # written since (loaded back, initialised again): a fresh start meant as one
        self.takeovers.append(Takeover(type(optimizer).__name__, stack[0] if stack else None,
                                       previous.steps, previous.first_step_site))

    def step_done(self, optimizer, stack: tuple) -> None:
        parameter = _followed_parameter(optimizer)
        if parameter is None:
            return
        entry = self._stepper_of(parameter)
        if entry is None or entry.optimizer_ref() is not optimizer:
            if entry is None and len(self.stepper) >= MAX_PARAMETERS:
                self.stepper = {key: known for key, known in self.stepper.items()
                                if known.parameter_ref() is not None}
                if len(self.stepper) >= MAX_PARAMETERS:
                    return
            entry = self.stepper[id(parameter)] = Stepper(weakref.ref(optimizer), weakref.ref(parameter), 0, 0,
                                                          False, stack[0] if stack else None)
        entry.steps += 1
        entry.version_after = parameter._version
        state = optimizer.state.get(parameter) if hasattr(optimizer, "state") else None
        entry.stateful = bool(state) and any(isinstance(value, torch.Tensor) and value.shape == parameter.shape
                                             for value in state.values())

    def _stepper_of(self, parameter) -> Stepper | None:
        entry = self.stepper.get(id(parameter))
        if entry is None or entry.parameter_ref() is not parameter:
            return None
        return entry


def _followed_parameter(optimizer):
    """The first parameter of the optimizer's first group, or None."""
    try:
        groups = optimizer.param_groups
        parameter = groups[0]["params"][0] if groups and groups[0]["params"] else None
    except Exception:
        return None
    return parameter if isinstance(parameter, torch.Tensor) else None


__all__ = ["OptimizerTakeovers", "Takeover"]
