"""What the `.grad` of a few of an optimizer's parameters held at its step() and at each backward().

`optimizer.step()` applies what `.grad` holds. A training loop that never clears it (no
`zero_grad()`, no `p.grad = None`) makes each backward() add to the gradients the previous step
already applied, so every step applies the sum of all gradients so far. Nothing fails.

The evidence is kept small and taken only over an optimizer's first `CHECKED_STEPS` steps: for up
to `SAMPLED_PARAMETERS` parameters, a weak reference to the gradient tensor, its version and a copy
of its first `SAMPLED_VALUES` elements. Right after a step, the sample is taken; when the next
backward() starts, a gradient that is still the same tensor, with the same version and the same
values (not all zero), is what the step applied, carried into this backward(); if it is still there,
not cleared, when the same optimizer steps again, that step applies the sum. Gradient accumulation
on purpose (several backward() calls, one step(), then zero_grad()) clears after the step and is not
taken. No tensor of the program is held: only weak references and copies of a few numbers.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field

import torch

# Steps per optimizer whose gradients are sampled; the bug shows from the second step on.
CHECKED_STEPS = 4
SAMPLED_PARAMETERS = 4
SAMPLED_VALUES = 16


@dataclass
class GradientSample:
    """One parameter's gradient at one moment: which tensor, its version, its first values."""

    gradient: weakref.ref
    version: int
    values: torch.Tensor

    @classmethod
    def of(cls, parameter) -> "GradientSample | None":
        gradient = getattr(parameter, "grad", None)
        if not isinstance(gradient, torch.Tensor) or gradient.layout is not torch.strided \
                or not gradient.is_contiguous() or gradient.numel() == 0:
            return None
        try:
            reference = weakref.ref(gradient)
        except TypeError:
            return None
        return cls(reference, gradient._version, gradient.detach().view(-1)[:SAMPLED_VALUES].clone())

    def unchanged(self, parameter) -> bool:
        """The parameter's `.grad` is still this tensor, unwritten, with these (nonzero) values."""
        gradient = getattr(parameter, "grad", None)
        return (gradient is not None and gradient is self.gradient() and gradient._version == self.version
                and not cleared(gradient) and torch.equal(gradient.detach().view(-1)[:SAMPLED_VALUES], self.values))

    def kept(self, parameter) -> bool:
        """The parameter's `.grad` is still this tensor and was not cleared (not all zero)."""
        gradient = getattr(parameter, "grad", None)
        return gradient is not None and gradient is self.gradient() and not cleared(gradient)


def grad_of(tensor):
    """`tensor.grad`, or None for a non-leaf that does not retain its gradient (its `.grad` is None),
    without reading it there: PyTorch warns at that read ("The .grad attribute of a Tensor that is
    not a leaf Tensor is being accessed"), and the warning would name the doctor's line. A module's
    parameters are non-leaf tensors under a differentiable optimizer (torchopt's MetaOptimizer,
    higher, learn2learn put the updated tensors in `module._parameters`)."""
    if not (tensor.is_leaf or tensor.retains_grad):
        return None
    return tensor.grad


def cleared(gradient) -> bool:
    """Its sampled values are all zero: what zero_grad(set_to_none=False) leaves."""
    return not bool(gradient.detach().view(-1)[:SAMPLED_VALUES].any())


@dataclass
class OptimizerGradients:
    """The sampled gradients of one optimizer, between two of its steps."""

    optimizer: object  # a weak reference to it: its id alone may be a later optimizer's
    parameters: list  # weak references to the sampled parameters
    samples: list  # their GradientSample right after the last step
    steps: int = 1
    carried_into: object = None  # the BackwardCall that started with the applied gradients still there
    carried: list = field(default_factory=list)  # GradientSample at that backward's start


class GradientStates:
    """Per optimizer (by id, checked against a weak reference: an optimizer made after another
    was freed may get its id), what its sampled gradients held; the recorder keeps one."""

    def __init__(self):
        self.optimizers: dict[int, OptimizerGradients] = {}
        self.checked_steps: dict[int, tuple[weakref.ref, int]] = {}  # id -> (the optimizer, its steps)

    def _steps_of(self, optimizer) -> int:
        reference, steps = self.checked_steps.get(id(optimizer), (None, 0))
        return steps if reference is not None and reference() is optimizer else 0

    def step_done(self, optimizer) -> None:
        """Right after step(): sample the gradients it applied (first CHECKED_STEPS steps only)."""
        try:
            reference = weakref.ref(optimizer)
        except TypeError:
            return
        steps = self._steps_of(optimizer) + 1
        self.checked_steps[id(optimizer)] = (reference, steps)
        if steps > CHECKED_STEPS:
            self.optimizers.pop(id(optimizer), None)
            return
        parameters, samples = [], []
        for group in getattr(optimizer, "param_groups", ()):
            for parameter in group.get("params", ()):
                sample = GradientSample.of(parameter)
                if sample is not None:
                    parameters.append(weakref.ref(parameter))
                    samples.append(sample)
                if len(samples) >= SAMPLED_PARAMETERS:
                    break
            if len(samples) >= SAMPLED_PARAMETERS:
                break
        if samples:
            self.optimizers[id(optimizer)] = OptimizerGradients(reference, parameters, samples, steps)
        else:
            self.optimizers.pop(id(optimizer), None)

    def backward_starting(self, call) -> None:
        """A backward() starts: are the gradients the last step applied still there (carried in),
        or, once carried in, were they cleared since?"""
        for key, state in list(self.optimizers.items()):
            parameters = [reference() for reference in state.parameters]
            if state.optimizer() is None:
                del self.optimizers[key]  # that optimizer is gone: it will not step again
            elif state.carried_into is None:
                if all(p is not None and sample.unchanged(p) for p, sample in zip(parameters, state.samples)):
                    state.carried_into = call
                    state.carried = state.samples
                else:
                    del self.optimizers[key]  # cleared (or replaced) before this backward: the usual loop
            elif not all(p is not None and sample.kept(p) for p, sample in zip(parameters, state.carried)):
                del self.optimizers[key]  # cleared between two backward() calls

    def carried_into_step(self, optimizer):
        """Before step(): the BackwardCall that added to the gradients the previous step applied,
        when they are still there, never cleared; None otherwise. Forgets the optimizer's sample."""
        state = self.optimizers.pop(id(optimizer), None)
        if state is None or state.optimizer() is not optimizer or state.carried_into is None:
            return None
        parameters = [reference() for reference in state.parameters]
        if all(p is not None and sample.kept(p) for p, sample in zip(parameters, state.carried)):
            return state.carried_into
        return None
