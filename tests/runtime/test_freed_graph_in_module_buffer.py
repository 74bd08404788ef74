"""AD302 through a module buffer registered with a computed value (held-out set 13's bgflow prior:
`self.register_buffer("_cdf_lower_bound", normal.cdf(alpha))` with alpha computed from a learnable
mean): the buffer keeps the constructor's graph, the first backward() frees it, and the next loss
that reads the buffer fails. The report names the registration, not only the backward() line, and
the help registers a detached value; the changed program trains as the answer does."""

import torch

from helpers import apply_help, run_plain, run_program

NORMALISED = """
import torch
import torch.nn as nn
torch.manual_seed(0)


class Normalised(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(3))
        self.register_buffer("norm", self.weight.abs().sum())  # REGISTER

    def forward(self, x):
        return (x * self.weight).sum(-1) / self.norm


model = Normalised()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(8, 3), torch.randn(8)
for step in range(3):
    loss = (model(x) - y).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()  # BACKWARD
    optimizer.step()
weight = model.weight.detach().clone()
"""

ANSWER = NORMALISED.replace('self.register_buffer("norm", self.weight.abs().sum())  # REGISTER',
                            'self.register_buffer("norm", self.weight.abs().sum().detach())')


def test_the_buffer_registration_is_named_and_registered_detached(tmp_path):
    outcome = run_program(tmp_path, NORMALISED)
    diagnosis = next(d for d in outcome.diagnoses if d.code == "AD302")
    assert diagnosis.primary.line == outcome.line("REGISTER")
    assert any(location.line == outcome.line("BACKWARD") for location in diagnosis.related)
    assert any("is a buffer that still points into the graph" in note for note in diagnosis.notes)
    assert diagnosis.help[0].message.startswith("register a detached value")
    assert diagnosis.help[0].replacement.strip() == 'self.register_buffer("norm", self.weight.abs().sum().detach())'
    fixed = run_plain(tmp_path, apply_help(outcome, 0), name="fixed.py")["weight"]
    answer = run_plain(tmp_path, ANSWER, name="answer.py")["weight"]
    assert torch.equal(fixed, answer)


def test_a_buffer_registered_from_data_is_not_blamed(tmp_path):
    # A buffer without history (registered from a constant) plays no part; the program runs.
    plain = ANSWER.replace("self.weight.abs().sum().detach()", "torch.tensor(3.0)")
    outcome = run_program(tmp_path, plain, name="plain.py")
    assert outcome.error is None
    assert not [d for d in outcome.diagnoses if d.code == "AD302"]
