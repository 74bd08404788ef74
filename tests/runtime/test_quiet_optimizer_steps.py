"""Quiet optimizer steps write through torch's own in-place methods (recording/patches.py).

After the first quiet step has shown which wrapped methods an optimizer writes through, the
later quiet steps run with torch's own methods put back, and the wrappers return when the step
ends. What the step computes, what the doctor finds and what it leaves behind must not change.
"""

import torch

import autograd_doctor
from helpers import run_program


def _is_wrapped(function) -> bool:
    return getattr(function, "__autograd_doctor_wrapped__", None) is not None


class RecordingSGD(torch.optim.SGD):
    """SGD that notes, inside each step (after the step hooks ran), whether `Tensor.add_` is
    the doctor's wrapper."""

    def __init__(self, params, lr):
        super().__init__(params, lr=lr)
        self.wrapped_inside = []

    def step(self, closure=None):
        self.wrapped_inside.append(_is_wrapped(torch.Tensor.add_))
        return super().step(closure)


def _train(watched: bool):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(5, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
    optimizer = RecordingSGD(model.parameters(), lr=0.1)
    x, y = torch.randn(16, 5), torch.randn(16, 1)
    wrapped_between = []
    for _ in range(4):
        optimizer.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
        wrapped_between.append(_is_wrapped(torch.Tensor.add_))
    parameters = [p.detach().clone() for p in model.parameters()]
    return parameters, optimizer.wrapped_inside, wrapped_between


def test_later_quiet_steps_run_torchs_own_method_and_the_wrapper_comes_back_after_each():
    with autograd_doctor.watch():
        _parameters, inside, between = _train(watched=True)
    # The first quiet step that meets `add_` writes through the wrapper and so shows it is used
    # (in a process where an earlier step already showed it, that step runs unwrapped too); every
    # later step runs torch's own method.
    assert inside[1:] == [False, False, False]
    assert between == [True, True, True, True]
    assert not _is_wrapped(torch.Tensor.add_)  # and nothing is left wrapped after watch()


def test_the_parameters_are_bitwise_those_of_a_run_without_the_doctor():
    plain, _, _ = _train(watched=False)
    with autograd_doctor.watch():
        watched, _, _ = _train(watched=True)
    assert all(torch.equal(a, b) for a, b in zip(plain, watched))


STEP_BEFORE_BACKWARD_AT_THE_FOURTH_ITERATION = """
import torch
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.Tanh(), torch.nn.Linear(3, 2))
optimizer = torch.optim.Adam(model.parameters(), lr=0.1)
x = torch.randn(8, 4)
for i in range(4):
    loss = model(x).pow(2).sum()
    if i == 3:
        optimizer.step()  # STEP
    loss.backward()
    if i < 3:
        optimizer.step()  # the gradients are kept: the fourth step has some to apply
"""


def test_a_step_between_forward_and_backward_is_still_found_after_quiet_steps(tmp_path):
    outcome = run_program(tmp_path, STEP_BEFORE_BACKWARD_AT_THE_FOURTH_ITERATION)
    assert isinstance(outcome.error, RuntimeError)
    assert "modified by an inplace operation" in str(outcome.error)
    diagnosis = next(d for d in outcome.diagnoses if d.code == "AD103")
    lines = [location.line for location in [diagnosis.primary, *diagnosis.related] if location is not None]
    assert outcome.line("STEP") in lines


class FailingSGD(torch.optim.Optimizer):
    """Plain SGD whose third step raises after its writes."""

    def __init__(self, params, lr):
        super().__init__(params, {"lr": lr})
        self.steps = 0

    @torch.no_grad()
    def step(self):
        self.steps += 1
        for group in self.param_groups:
            for p in group["params"]:
                p.add_(p.grad, alpha=-group["lr"])
        if self.steps == 3:
            raise ValueError("the learning rate schedule ran out")


def test_a_step_that_raises_leaves_nothing_unwrapped_for_the_program():
    """A step that raises never reaches its post hook: the next backward() wraps again."""
    model = torch.nn.Linear(3, 1)
    optimizer = FailingSGD(model.parameters(), lr=0.1)
    with autograd_doctor.watch():
        for _ in range(3):
            optimizer.zero_grad()
            model(torch.ones(2, 3)).sum().backward()
            try:
                optimizer.step()
            except ValueError:
                assert optimizer.steps == 3
        model(torch.ones(2, 3)).sum().backward()
        assert _is_wrapped(torch.Tensor.add_)
    assert not _is_wrapped(torch.Tensor.add_)
