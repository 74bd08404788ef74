"""When the first optimizer steps happened, on autograd's own clock, and what they changed.

A graph node's sequence number (`node._sequence_nr()`) only grows as operations are recorded,
so a node whose number is below the one autograd had reached when a step ended was made before
that step: what it computed from the step's parameters holds their values from before it.
Kept for the first few steps (the checks that read them look at the first backward() calls
only): the sequence number after the step, and the ids of the parameters that had a gradient,
which the step applied. A step can also run inside a backward() call (an optimizer stepped by a
parameter's post-accumulate-grad hook, one per parameter, as soon as its gradient is in): such a
step comes after the graph of that backward() was built, yet changed nothing that graph computed
with, so the backward() it ran in is checked against the steps recorded before it started only.
"""

from __future__ import annotations

import torch

MAX_POINTS = 8

_sequence_number = torch._C._autograd._get_sequence_nr


class StepPoints:
    def __init__(self):
        self.points: list[tuple[int, frozenset[int]]] = []  # (sequence number, ids of parameters), oldest first
        self.stopped = False  # no check will read them again: each step after costs nothing
        self.before_backward = 0  # how many points there were when the latest backward() started

    def backward_starting(self) -> None:
        self.before_backward = len(self.points)

    def stop(self) -> None:
        self.stopped = True

    def step_done(self, optimizer) -> None:
        if self.stopped or len(self.points) >= MAX_POINTS:
            return
        changed = frozenset(id(p) for group in optimizer.param_groups for p in group.get("params", ())
                            if isinstance(p, torch.Tensor) and p.grad is not None)
        if changed:
            self.points.append((_sequence_number(), changed))

    def changed_after(self, sequence_number: int) -> set[int]:
        """Ids of the parameters that a recorded step, ended after `sequence_number` and before the
        latest backward() started, changed."""
        return {key for number, changed in self.points[:self.before_backward] if number > sequence_number
                for key in changed}
