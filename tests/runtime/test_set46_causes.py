"""Causes found by held-out set 46 (docs/bug-reports.md, "Set 46").

AD213 for a module attribute computed from an nn.Parameter made on the same line: Snake's
`self.a = Parameter(m.rsample(self.in_features)).squeeze()` (EdwardDixon/snake PR 2) stores the
squeezed tensor, the output of an operation on a Parameter that nothing keeps, not the Parameter:
the module registers nothing, the optimizer built from `parameters()` never holds it, and the
Parameter behind it gets a gradient at every backward() and never changes. Named where the
attribute is stored; where the statement is `Parameter(...)` followed by method calls, the help
moves the calls inside (`Parameter(m.rsample(...).squeeze())`), and the program then trains as
the merged fix does."""

import torch

from helpers import apply_help, run_plain, run_program

SNAKE = """
import math
import torch
from torch import nn, pow, sin
from torch.distributions.exponential import Exponential
from torch.nn import Parameter
torch.manual_seed(0)

class Snake(nn.Module):
    def __init__(self, in_features):
        super().__init__()
        self.in_features = [in_features]
        m = Exponential(torch.tensor([0.1]))
        self.a = Parameter(m.rsample(self.in_features)).squeeze()  # STORED

    def forward(self, x):
        return x + (1.0 / self.a) * pow(sin(x * self.a), 2)

class SeriesModel(nn.Module):
    def __init__(self, hidden=8):
        super().__init__()
        self.inp = nn.Linear(1, hidden)
        self.act = Snake(hidden)
        self.out = nn.Linear(hidden, 1)

    def forward(self, t):
        return self.out(self.act(self.inp(t)))

t = torch.linspace(0, 2, 40).unsqueeze(1)
series = torch.sin(2 * math.pi * t)
model = SeriesModel()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
for epoch in range(4):
    optimizer.zero_grad()
    ((model(t) - series) ** 2).mean().backward()
    optimizer.step()  # STEP
a = model.act.a.detach().clone()
params = [p.detach().clone() for p in model.parameters()]
"""

SNAKE_ANSWER = SNAKE.replace("self.a = Parameter(m.rsample(self.in_features)).squeeze()  # STORED",
                             "self.a = Parameter((m.rsample(self.in_features)).squeeze())")

# Another shape: a per-channel gain of a 1-D convolutional forecaster made a Parameter and then
# reshaped for broadcasting, `nn.Parameter(torch.ones(c)).view(1, -1, 1)`.
GAIN = """
import torch
import torch.nn as nn
torch.manual_seed(0)

class ChannelGain(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv1d(channels, channels, 3, padding=1)
        self.gain = nn.Parameter(torch.full((channels,), 0.5)).view(1, -1, 1)  # STORED

    def forward(self, x):
        return self.conv(x) * self.gain

model = nn.Sequential(ChannelGain(3), nn.Flatten(), nn.Linear(3 * 12, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(8, 3, 12), torch.randn(8, 1)
for step in range(3):
    optimizer.zero_grad()
    ((model(x) - y) ** 2).mean().backward()
    optimizer.step()  # STEP
gain = model[0].gain.detach().clone()
params = [p.detach().clone() for p in model.parameters()]
"""

GAIN_ANSWER = GAIN.replace("nn.Parameter(torch.full((channels,), 0.5)).view(1, -1, 1)  # STORED",
                           "nn.Parameter(torch.full((channels,), 0.5).view(1, -1, 1))")


def _found(outcome):
    return [d for d in outcome.diagnoses if d.code == "AD213"]


def test_the_snake_frequency_is_named_where_it_is_stored(tmp_path):
    outcome = run_program(tmp_path, SNAKE)
    (diagnosis,) = _found(outcome)
    assert diagnosis.primary.line == outcome.line("STORED")
    assert any(loc.line == outcome.line("STEP") for loc in diagnosis.related)
    assert any("model.act.a" in note and "not the Parameter" in note for note in diagnosis.notes)
    assert diagnosis.help[0].replacement.strip() == "self.a = Parameter(m.rsample(self.in_features).squeeze())"


def test_the_help_applied_trains_the_frequency_as_the_fix_does(tmp_path):
    outcome = run_program(tmp_path, SNAKE)
    fixed = run_plain(tmp_path, apply_help(outcome, 0), name="fixed.py")
    answer = run_plain(tmp_path, SNAKE_ANSWER, name="answer.py")
    assert torch.equal(fixed["a"], answer["a"])
    assert all(torch.equal(p, q) for p, q in zip(fixed["params"], answer["params"]))
    buggy = run_plain(tmp_path, SNAKE, name="buggy.py")
    assert not torch.equal(buggy["a"], answer["a"])


def test_another_shape_a_gain_reshaped_after_wrapping(tmp_path):
    outcome = run_program(tmp_path, GAIN)
    (diagnosis,) = _found(outcome)
    assert diagnosis.primary.line == outcome.line("STORED")
    assert diagnosis.help[0].replacement.strip() == \
        "self.gain = nn.Parameter(torch.full((channels,), 0.5).view(1, -1, 1))"
    fixed = run_plain(tmp_path, apply_help(outcome, 0), name="fixed.py")
    answer = run_plain(tmp_path, GAIN_ANSWER, name="answer.py")
    assert torch.equal(fixed["gain"], answer["gain"])
    assert all(torch.equal(p, q) for p, q in zip(fixed["params"], answer["params"]))


def test_silent_when_the_parameter_is_stored_itself(tmp_path):
    assert not _found(run_program(tmp_path, SNAKE_ANSWER))
    assert not _found(run_program(tmp_path, GAIN_ANSWER))


def test_silent_for_a_view_of_a_registered_parameter_kept_as_an_attribute(tmp_path):
    # A cached transpose of a registered weight: its Parameter is in the optimizer and trains.
    tied = GAIN.replace(
        "        self.gain = nn.Parameter(torch.full((channels,), 0.5)).view(1, -1, 1)  # STORED\n",
        "        self.scale = nn.Parameter(torch.full((channels,), 0.5))\n"
        "        self.gain = self.scale.view(1, -1, 1)\n")
    assert not _found(run_program(tmp_path, tied))


def test_silent_when_the_frequencies_are_frozen_on_purpose(tmp_path):
    frozen = SNAKE.replace("self.a = Parameter(m.rsample(self.in_features)).squeeze()  # STORED",
                           "self.a = Parameter(m.rsample(self.in_features), requires_grad=False).squeeze()")
    assert not _found(run_program(tmp_path, frozen))


def test_the_set_case_with_a_second_statement_for_a_given_value(tmp_path):
    # Snake's own __init__ stores `self.a` twice: a Parameter when a value is given, the squeezed
    # draw otherwise; the draw's statement is the one named and changed.
    given = SNAKE.replace(
        "    def __init__(self, in_features):\n        super().__init__()\n        self.in_features = [in_features]\n"
        "        m = Exponential(torch.tensor([0.1]))\n",
        "    def __init__(self, in_features, a=None):\n        super().__init__()\n"
        "        self.in_features = [in_features]\n        if a is not None:\n"
        "            self.a = Parameter(torch.ones(self.in_features) * a)\n            return\n"
        "        m = Exponential(torch.tensor([0.1]))\n")
    outcome = run_program(tmp_path, given)
    (diagnosis,) = _found(outcome)
    assert diagnosis.primary.line == outcome.line("STORED")
    assert diagnosis.help[0].replacement.strip() == "self.a = Parameter(m.rsample(self.in_features).squeeze())"
