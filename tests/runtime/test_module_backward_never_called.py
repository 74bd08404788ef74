"""AD223: an `nn.Module` that defines `backward(self, grad)`, which autograd never calls (only
`torch.autograd.Function.backward` is called). Held-out set 23 (pitchtron#3: a gradient reversal
layer written as a module). Here: a gradient clip written as a module (the help rewrites its
forward through a Function that calls the method, and the gradients then equal a hand-written
Function's), and a gradient scale whose forward reads the module (advice only). Silent: the same
layers as a torch.autograd.Function, and a trainer module whose `backward(self, loss)` helper the
user calls."""

import torch

from helpers import apply_help, marked_line, run_plain, run_program

CLIP = """
import torch
import torch.nn as nn

torch.manual_seed(0)


class ClipGradient(nn.Module):
    def forward(self, x):
        return x * 1.0

    def backward(self, grad_output):  # BACKWARD
        return grad_output.clamp(-0.01, 0.01)


model = nn.Sequential(nn.Linear(4, 8), ClipGradient(), nn.Tanh(), nn.Linear(8, 1))
x = torch.randn(16, 4)
loss = model(x).pow(2).sum() * 10
loss.backward()
grads = [p.grad.clone() for p in model.parameters()]
"""

CLIP_BY_HAND = """
import torch
import torch.nn as nn

torch.manual_seed(0)


class ClipGradient(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 1.0

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output.clamp(-0.01, 0.01)


class Clip(nn.Module):
    def forward(self, x):
        return ClipGradient.apply(x)


model = nn.Sequential(nn.Linear(4, 8), Clip(), nn.Tanh(), nn.Linear(8, 1))
x = torch.randn(16, 4)
loss = model(x).pow(2).sum() * 10
loss.backward()
grads = [p.grad.clone() for p in model.parameters()]
"""


def test_a_gradient_clip_module_is_reported_and_the_help_uses_its_method(tmp_path):
    outcome = run_program(tmp_path, CLIP)
    assert outcome.error is None
    found = [d for d in outcome.diagnoses if d.code == "AD223"]
    assert len(found) == 1
    assert found[0].primary.line == marked_line(CLIP, "BACKWARD")
    assert "never called" in found[0].primary.note
    outcome.diagnoses[:] = found
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")
    by_hand = run_plain(tmp_path, CLIP_BY_HAND, "by_hand.py")
    assert all(torch.allclose(a, b) for a, b in zip(fixed["grads"], by_hand["grads"]))
    plain = run_plain(tmp_path, CLIP, "plain.py")  # the bug changes the gradients here
    assert not all(torch.allclose(a, b) for a, b in zip(plain["grads"], by_hand["grads"]))


SCALE = """
import torch
import torch.nn as nn


class ScaleGradient(nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, features):
        same = features.view_as(features)
        return same

    def backward(self, grad):  # BACKWARD
        return grad * self.scale


encoder, head = nn.Linear(3, 5), nn.Linear(5, 2)
scale = ScaleGradient(0.1)
for step in range(2):
    loss = head(scale(encoder(torch.randn(4, 3)))).sum()
    loss.backward()
"""


def test_a_gradient_scale_module_reading_itself_gets_advice(tmp_path):
    outcome = run_program(tmp_path, SCALE)
    found = [d for d in outcome.diagnoses if d.code == "AD223"]
    assert len(found) == 1  # once per class, not per call
    assert found[0].primary.line == marked_line(SCALE, "BACKWARD")
    assert found[0].help[0].replacement is None
    assert "torch.autograd.Function" in found[0].help[0].message


FUNCTION = """
import torch
import torch.nn as nn


class ScaleGradient(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad):
        return grad * 0.1


encoder, head = nn.Linear(3, 5), nn.Linear(5, 2)
loss = head(ScaleGradient.apply(encoder(torch.randn(4, 3)))).sum()
loss.backward()
"""

TRAINER = """
import torch
import torch.nn as nn


class Trainer(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(3, 1)

    def forward(self, x):
        return self.net(x)

    def backward(self, loss):
        loss.backward()
        return loss.detach()


trainer = Trainer()
optimizer = torch.optim.SGD(trainer.parameters(), lr=0.1)
for step in range(3):
    optimizer.zero_grad()
    trainer.backward(trainer(torch.randn(4, 3)).pow(2).mean())
    optimizer.step()
"""


def test_a_function_and_a_trainer_backward_helper_stay_silent(tmp_path):
    for source in (FUNCTION, TRAINER, CLIP_BY_HAND):
        outcome = run_program(tmp_path, source)
        assert outcome.error is None
        assert outcome.diagnoses == [], [d.code for d in outcome.diagnoses]
