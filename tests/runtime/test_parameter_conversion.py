"""A conversion applied after nn.Parameter(...) (`nn.Parameter(x).to(dtype)`): the module attribute
is a plain non-leaf tensor, its .grad is None and the module does not register it. The help
converts the data inside the Parameter, which keeps it a Parameter that its optimizer trains;
`.detach().requires_grad_()` would give a leaf the module's optimizer never sees."""

from __future__ import annotations

import torch

from helpers import apply_help, run_as_script, run_plain

TEMPERATURE_CONVERTED_AFTER_PARAMETER = """
    import torch
    from torch import nn


    class Calibrator(nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = nn.Linear(3, 2)
            self.temperature = nn.Parameter(torch.ones(1)).to(torch.float64)  # MADE

        def forward(self, x):
            return self.linear(x).double() / self.temperature


    torch.manual_seed(0)
    model = Calibrator()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(8, 3), torch.randint(0, 2, (8,))
    for step in range(3):
        loss = nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        spread = model.temperature.grad.abs()  # READ
        optimizer.step()
    result = [p.detach().clone() for p in model.parameters()]
"""

INTENDED = TEMPERATURE_CONVERTED_AFTER_PARAMETER.replace(
    "nn.Parameter(torch.ones(1)).to(torch.float64)", "nn.Parameter(torch.ones(1, dtype=torch.float64))")


def test_the_conversion_after_the_parameter_is_named_and_moved_inside_it(tmp_path):
    outcome = run_as_script(tmp_path, TEMPERATURE_CONVERTED_AFTER_PARAMETER)
    assert isinstance(outcome.error, AttributeError)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD308"
    assert diagnosis.primary.line == outcome.line("MADE")
    assert outcome.line("READ") in {location.line for location in diagnosis.related}
    assert any("not a Parameter" in note for note in diagnosis.notes)
    help = diagnosis.help[0]
    assert help.replacement == "self.temperature = nn.Parameter(torch.ones(1).to(torch.float64))"
    assert "Parameter" in help.message


def test_the_help_applied_trains_the_temperature_like_the_intended_program(tmp_path):
    outcome = run_as_script(tmp_path, TEMPERATURE_CONVERTED_AFTER_PARAMETER)
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")
    intended = run_plain(tmp_path, INTENDED, "intended.py")
    assert any(p is fixed["model"].temperature for p in fixed["model"].parameters())
    assert len(fixed["result"]) == len(intended["result"]) == 3
    assert all(torch.equal(a, b) for a, b in zip(fixed["result"], intended["result"]))
    assert not torch.equal(fixed["result"][2], torch.ones(1, dtype=torch.float64))  # the temperature trained
