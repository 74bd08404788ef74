"""AD220 on a selection by a "not NaN" mask applied after an elementwise loss (held-out set 40,
pytorch#121416: `MSELoss(reduction="none")(x, y)[mask].sum()` with `mask =
torch.logical_not(torch.isnan(y))`, silent on the first run).
Two causes: the check gave up before reading the source when the graph held neither a
where/masked_fill nor a root (a selection node alone is what this graph has), and the mask was
read only as `~torch.isnan(x)`, `~x.isnan()` or `torch.isfinite(x)`. Every spelling of the mask
is tried; the help `L(x[mask], y[mask])` is offered when the live values show the inputs have the
mask's shape, and applied it computes what the report's correct version computes. The other
shape (a loss function with `target == target`) was written before the change ran on it."""

from pathlib import Path

import pytest
import torch

from autograd_doctor.analysis.fixes import apply_replacement
from helpers import run_plain, run_program

SET40 = Path(__file__).resolve().parents[1] / "bug_reports" / "fresh" / "set40"
CASE = "masked_regression_loss_on_targets_with_nan.py"

TARGETS_WITH_NAN = """
import torch
from torch import nn
torch.manual_seed(0)
L = nn.HuberLoss(reduction="none")
features = torch.randn(40, 3)
y = features.sum(-1, keepdim=True)
y[::5] = float("nan")
mask = MASK
model = nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
for step in range(3):
    x = model(features)
    loss = L(x, y)[mask].mean()  # SELECT
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
params = [p.detach().clone() for p in model.parameters()]
"""

SPELLINGS = ["~torch.isnan(y)", "torch.logical_not(torch.isnan(y))", "torch.isnan(y).logical_not()", "y == y",
             "~y.isnan()", "torch.isfinite(y)", "y.isfinite()", "(features[:, :1] > -1) & ~torch.isnan(y)",
             "torch.logical_and(y == y, features[:, :1] > -1)"]

LOSS_FUNCTION = """
import torch
import torch.nn.functional as F
torch.manual_seed(1)


def masked_loss(pred, target):
    keep = target == target
    return F.smooth_l1_loss(pred, target, reduction="none")[keep].mean()  # SELECT


inputs = torch.randn(32, 4)
targets = torch.randn(32, 3)
targets[torch.rand(32, 3) < 0.3] = float("nan")
net = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3))
opt = torch.optim.Adam(net.parameters(), lr=1e-2)
for _ in range(3):
    opt.zero_grad()
    loss = masked_loss(net(inputs), targets)
    loss.backward()
    opt.step()
params = [p.detach().clone() for p in net.parameters()]
"""


def _selection(outcome):
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD220"]
    assert diagnosis.primary.line == outcome.line("SELECT")
    return diagnosis


def test_the_set40_case_is_named_and_its_help_gives_the_correct_version(tmp_path):
    source = (SET40 / "cases" / CASE).read_text()
    outcome = run_program(tmp_path, source.replace("    loss = L(x, y)[mask].sum()\n",
                                                    "    loss = L(x, y)[mask].sum()  # SELECT\n"))
    diagnosis = _selection(outcome)
    assert "where y is NaN only after L(x, y)" in diagnosis.primary.note
    change = diagnosis.help[0]
    assert change.replacement.strip() == "loss = L(x[mask], y[mask]).sum()"
    fixed = run_plain(tmp_path, apply_replacement(outcome.source, change.location, change.replacement))["result"]
    correct = run_plain(tmp_path, (SET40 / "correct" / CASE).read_text(), name="correct.py")["result"]
    assert all(torch.equal(fixed[key], correct[key]) for key in ("weight", "bias", "losses"))
    assert bool(torch.isfinite(fixed["weight"]).all())


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_every_spelling_of_a_not_nan_mask_is_read(tmp_path, spelling):
    outcome = run_program(tmp_path, TARGETS_WITH_NAN.replace("MASK", spelling))
    change = _selection(outcome).help[0]
    assert change.replacement.strip() == "loss = L(x[mask], y[mask]).mean()"
    fixed = run_plain(tmp_path, apply_replacement(outcome.source, change.location, change.replacement))["params"]
    correct = TARGETS_WITH_NAN.replace("MASK", spelling).replace("L(x, y)[mask]", "L(x[mask], y[mask])")
    answer = run_plain(tmp_path, correct, name="answer.py")["params"]
    assert all(torch.equal(a, b) for a, b in zip(fixed, answer))
    assert all(bool(torch.isfinite(p).all()) for p in fixed)


def test_a_loss_function_with_a_self_comparison_mask_is_named_with_advice(tmp_path):
    """The selection runs in a function that has returned by backward(): its inputs' shapes
    cannot be read, so the help is advice, not a rewrite."""
    outcome = run_program(tmp_path, LOSS_FUNCTION)
    diagnosis = _selection(outcome)
    assert "where target is NaN" in diagnosis.primary.note
    assert [h.replacement for h in diagnosis.help] == [None]
    assert "index the inputs with keep" in diagnosis.help[0].message


def test_inputs_of_another_shape_than_the_mask_get_no_rewrite(tmp_path):
    """`L(x, y)` with `x` one value broadcast over the rows: `x[mask]` would fail, so the live
    shapes refuse the rewrite and the help is advice only."""
    source = TARGETS_WITH_NAN.replace("MASK", "~torch.isnan(y)").replace(
        "    x = model(features)\n", "    x = model(features).mean(0)\n")
    outcome = run_program(tmp_path, source)
    assert [h.replacement for h in _selection(outcome).help] == [None]


SILENT = {
    "the set-40 correct version": (SET40 / "correct" / CASE).read_text(),
    "mask applied before the loss": TARGETS_WITH_NAN.replace("MASK", "torch.logical_not(torch.isnan(y))")
    .replace("L(x, y)[mask]", "L(x[mask], y[mask])"),
    "self-comparison mask before the loss": LOSS_FUNCTION.replace(
        'F.smooth_l1_loss(pred, target, reduction="none")[keep]',
        'F.smooth_l1_loss(pred[keep], target[keep], reduction="none")'),
    "a conjunction mask before the loss": TARGETS_WITH_NAN.replace("MASK", "(features[:, :1] > -1) & ~torch.isnan(y)")
    .replace("L(x, y)[mask]", "L(x[mask], y[mask])"),
    "NaN replaced before the loss": TARGETS_WITH_NAN.replace("MASK", "y == y")
    .replace("L(x, y)[mask]", "L(x, torch.nan_to_num(y))[mask]"),
}


@pytest.mark.parametrize("mode", ["default", "full"])
@pytest.mark.parametrize("name", list(SILENT))
def test_masks_applied_before_the_loss_are_silent(tmp_path, name, mode):
    outcome = run_program(tmp_path, SILENT[name], **({"mode": "full"} if mode == "full" else {}))
    assert outcome.error is None, name
    assert not outcome.diagnoses, name
