"""AD220, widened on two more shapes of "NaN gradients from a finite loss" (held-out set 21: a
speech-enhancement magnitude `x.pow(POWER)` with POWER = 0.5 at digital silence, and a regression
whose rows with a missing covariate are dropped from `log_prob` after it was computed on them;
both undiagnosed on the first run, because AD220 wanted a literal 0.5 or a where/masked_fill).
- a pow whose exponent is a name or an attribute counts as a square root when the graph holds a
  pow node whose exponent is 0.5 at run time (the scalar stays on the node after backward);
- a selection by a mask of NaN-ness (`values[~torch.isnan(x)]`, `values[torch.isfinite(x)]`)
  applied after `values` was computed from the NaN rows is named.
The programs here are other shapes, written before the check was run on them; the near-twins
add an epsilon, or select the rows before computing on them."""

import pytest
import torch

from autograd_doctor.analysis.fixes import apply_replacement
from helpers import run_plain, run_program

NORM_ATTRIBUTE = """
import torch
import torch.nn as nn
torch.manual_seed(0)


class Magnitude(nn.Module):
    def __init__(self, power):
        super().__init__()
        self.power = power

    def forward(self, x):
        return x.pow(2).sum(-1) ** self.power  # ROOT


encoder = nn.Linear(4, 3, bias=False)
magnitude = Magnitude(0.5)
opt = torch.optim.SGD(encoder.parameters(), lr=0.1)
points = torch.randn(6, 4)
points[::2] = 0.0  # padding rows
for step in range(2):
    loss = magnitude(encoder(points)).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
params = [p.detach().clone() for p in encoder.parameters()]
"""

NORM_ANSWER = NORM_ATTRIBUTE.replace("        return x.pow(2).sum(-1) ** self.power  # ROOT\n",
                                     "        return x.pow(2).sum(-1).clamp(min=1e-30) ** self.power\n")

MISSING_LABELS = """
import torch
import torch.nn as nn
torch.manual_seed(0)
model = nn.Linear(3, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
x = torch.randn(20, 3)
y = x.sum(-1, keepdim=True) + 0.1 * torch.randn(20, 1)
y[::4] = float("nan")  # labels not measured
for step in range(3):
    errors = (model(x) - y) ** 2
    loss = errors[torch.isfinite(y)].mean()  # SELECT
    opt.zero_grad()
    loss.backward()
    opt.step()
params = [p.detach().clone() for p in model.parameters()]
"""


def test_a_root_whose_exponent_is_an_attribute_is_named_and_clamped(tmp_path):
    outcome = run_program(tmp_path, NORM_ATTRIBUTE)
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD220"]
    assert diagnosis.primary.line == outcome.line("ROOT")
    change = diagnosis.help[0]
    assert "clamp(min=1e-30) ** self.power" in change.replacement
    fixed = run_plain(tmp_path, apply_replacement(outcome.source, change.location, change.replacement))["params"]
    answer = run_plain(tmp_path, NORM_ANSWER, name="answer.py")["params"]
    assert all(torch.equal(a, b) for a, b in zip(fixed, answer))
    assert all(bool(torch.isfinite(p).all()) for p in fixed)
    buggy = run_plain(tmp_path, NORM_ATTRIBUTE, name="plain.py")["params"]
    assert not all(bool(torch.isfinite(p).all()) for p in buggy)


def test_rows_with_nan_dropped_after_the_op_are_named(tmp_path):
    outcome = run_program(tmp_path, MISSING_LABELS)
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD220"]
    assert diagnosis.primary.line == outcome.line("SELECT")
    assert "where y is NaN" in diagnosis.primary.note
    assert "select the rows before computing on them" in diagnosis.help[0].message


SILENT = {
    "an epsilon inside the root": NORM_ATTRIBUTE.replace("x.pow(2).sum(-1) ** self.power",
                                                         "(x.pow(2).sum(-1) + 1e-12) ** self.power"),
    "a power of two given by a name": NORM_ATTRIBUTE.replace("Magnitude(0.5)", "Magnitude(2)"),
    "the rows selected before the op": MISSING_LABELS.replace(
        "    errors = (model(x) - y) ** 2\n    loss = errors[torch.isfinite(y)].mean()  # SELECT\n",
        "    kept = torch.isfinite(y).squeeze(-1)\n    loss = ((model(x[kept]) - y[kept]) ** 2).mean()\n"),
    "NaN labels replaced before the op": MISSING_LABELS.replace(
        "    errors = (model(x) - y) ** 2\n",
        "    errors = (model(x) - torch.nan_to_num(y)) ** 2\n"),
}


@pytest.mark.parametrize("name", list(SILENT))
def test_finite_gradients_are_silent(tmp_path, name):
    outcome = run_program(tmp_path, SILENT[name])
    assert outcome.error is None, name
    assert not [d for d in outcome.diagnoses if d.code == "AD220"], name
