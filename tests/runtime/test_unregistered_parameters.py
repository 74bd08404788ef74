"""An nn.Parameter that a module keeps in a plain object or a dict (`self.state.temperature =
nn.Parameter(...)`) instead of as its own attribute: the module does not register it, so
`model.parameters()` and the optimizer built from them leave it out. It gets gradients and never
changes; nothing raises. AD213 names the statement that stores it and binds it to the module too."""

from __future__ import annotations

import torch

from helpers import run_plain, run_program
from autograd_doctor.analysis.fixes import apply_replacement

TEMPERATURE_IN_A_NAMESPACE = """
    from types import SimpleNamespace

    import torch
    from torch import nn
    import torch.nn.functional as F


    class Calibrated(nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = nn.Linear(5, 3)
            self.state = SimpleNamespace()
            self.state.temperature = nn.Parameter(torch.ones(1))  # STORED

        def forward(self, x):
            return self.linear(x) / self.state.temperature


    torch.manual_seed(0)
    model = Calibrated()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
    x, y = torch.randn(16, 5), torch.randint(0, 3, (16,))
    for step in range(4):
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    result = [p.detach().clone() for p in model.parameters()] + [model.state.temperature.detach().clone()]
"""

INTENDED = TEMPERATURE_IN_A_NAMESPACE.replace(
    "self.state.temperature = nn.Parameter(torch.ones(1))  # STORED",
    "self.temperature = nn.Parameter(torch.ones(1))\n            self.state.temperature = self.temperature")

ADDED_BY_HAND = TEMPERATURE_IN_A_NAMESPACE.replace(
    "torch.optim.Adam(model.parameters(), lr=0.05)",
    "torch.optim.Adam([*model.parameters(), model.state.temperature], lr=0.05)")


def test_the_statement_storing_the_parameter_is_named(tmp_path):
    outcome = run_program(tmp_path, TEMPERATURE_IN_A_NAMESPACE)
    assert outcome.error is None
    found = [d for d in outcome.diagnoses if d.code == "AD213"]
    assert found, [d.code for d in outcome.diagnoses]
    diagnosis = found[0]
    assert diagnosis.primary.line == outcome.line("STORED")
    assert diagnosis.help[0].replacement == ("self.temperature = nn.Parameter(torch.ones(1))\n"
                                             "self.state.temperature = self.temperature")


def test_the_help_applied_trains_the_temperature_like_the_intended_program(tmp_path):
    outcome = run_program(tmp_path, TEMPERATURE_IN_A_NAMESPACE)
    help = next(d for d in outcome.diagnoses if d.code == "AD213").help[0]
    fixed = run_plain(tmp_path, apply_replacement(outcome.source, help.location, help.replacement), "fixed.py")
    intended = run_plain(tmp_path, INTENDED, "intended.py")
    assert len(fixed["result"]) == len(intended["result"]) == 4
    assert all(torch.equal(a, b) for a, b in zip(fixed["result"], intended["result"]))
    assert not torch.equal(fixed["result"][-1], torch.ones(1))  # the temperature trained


def test_a_parameter_given_to_the_optimizer_by_hand_says_nothing(tmp_path):
    outcome = run_program(tmp_path, ADDED_BY_HAND)
    assert outcome.error is None
    assert not [d for d in outcome.diagnoses if d.code == "AD213"]
