"""AD186: a tensor computed with autograd assigned to a registered parameter's name inside
`forward()` ("TypeError: cannot assign 'torch.FloatTensor' as parameter 'w' (torch.nn.Parameter or
None expected)"). Held-out set 23 (STGODE#11: a Bjorck orthogonalisation step of `self.w`).
Here: a weight normalised from itself in forward (the help deletes the line; the changed program
equals the hand-written one without it), and a scale computed from another parameter (advice
only). Silent: the value kept under a name that is not a parameter."""

import torch

from helpers import apply_help, marked_line, run_as_script, run_plain, run_program

NORMALISED = """
import torch
import torch.nn as nn

torch.manual_seed(0)


class Normalised(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(4, 3))  # MADE

    def forward(self, x):
        self.weight = self.weight / self.weight.norm(dim=1, keepdim=True)  # ASSIGN
        return x @ self.weight.t()


model = Normalised()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    optimizer.zero_grad()
    model(torch.ones(2, 3)).pow(2).sum().backward()
    optimizer.step()
weights = [p.detach().clone() for p in model.parameters()]
"""


def test_a_weight_normalised_from_itself_in_forward(tmp_path):
    outcome = run_as_script(tmp_path, NORMALISED)
    assert isinstance(outcome.error, TypeError)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD186"
    assert diagnosis.primary.line == marked_line(NORMALISED, "ASSIGN")
    assert "computed from self.weight" in diagnosis.primary.note
    assert marked_line(NORMALISED, "MADE") in [r.line for r in diagnosis.related]
    assert diagnosis.help[0].replacement == "pass"
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")
    by_hand = run_plain(tmp_path, "\n".join(line for line in NORMALISED.splitlines() if "# ASSIGN" not in line),
                        "by_hand.py")
    assert all(torch.equal(a, b) for a, b in zip(fixed["weights"], by_hand["weights"]))


SCALED = """
import torch
import torch.nn as nn


class Scaled(nn.Module):
    def __init__(self):
        super().__init__()
        self.log_scale = nn.Parameter(torch.zeros(3))
        self.scale = nn.Parameter(torch.ones(3))

    def forward(self, x):
        self.scale = self.log_scale.exp()  # ASSIGN
        return x * self.scale


Scaled()(torch.randn(2, 3)).sum().backward()
"""


def test_a_parameter_name_given_another_parameters_value_gets_advice(tmp_path):
    outcome = run_as_script(tmp_path, SCALED)
    assert outcome.diagnosis.code == "AD186"
    assert outcome.diagnosis.primary.line == marked_line(SCALED, "ASSIGN")
    assert all(h.replacement is None for h in outcome.diagnosis.help)
    assert "local name" in outcome.diagnosis.help[0].message


def test_the_value_under_a_name_that_is_not_a_parameter_stays_silent(tmp_path):
    source = NORMALISED.replace("self.weight = self.weight /", "self.unit = self.weight /").replace(
        "x @ self.weight.t()", "x @ self.unit.t()")
    outcome = run_program(tmp_path, source)
    assert outcome.error is None
    assert outcome.diagnoses == []
