"""The checks before `optimizer.step()` run in one loop, without a wrapper's call per check (stop 44,
README "Small steps' cost"). What the wrapper guaranteed still holds: a check that fails is the
doctor's internal error (counted, never the user's), the checks after it still run, a diagnosis
raised under `silent="raise"` stops the program at the step, and a correct small-step loop (many
backward()/step() pairs on small tensors, like an optimizer's test suite) stays silent."""

import pytest
import torch

from autograd_doctor.analysis import update_order
from autograd_doctor.doctor import AutogradDoctorError, internal_error_count
from helpers import run_plain, run_program
from test_frozen_optimizer_step import ALTERNATING

SMALL_STEPS = """
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)
results = {}
for name in ("SGD", "Adam", "AdamW", "RAdam"):
    model = nn.Sequential(nn.Linear(4, 4), nn.Tanh(), nn.Linear(4, 1))
    optimizer = getattr(torch.optim, name)(model.parameters(), lr=1e-2)
    x, y = torch.randn(8, 4), torch.randn(8, 1)
    for _ in range(30):
        optimizer.zero_grad()
        F.mse_loss(model(x), y).backward()
        optimizer.step()
    results[name] = [p.detach().clone() for p in model.parameters()]
"""


@pytest.mark.internal_error
def test_a_failing_check_is_ours_and_the_checks_after_it_still_run(tmp_path, monkeypatch):
    def broken(*args):
        raise RuntimeError("a check of the doctor's failed")

    # The first check of the loop fails at every step; AD215 comes later in the same loop.
    monkeypatch.setattr(update_order, "misplaced_clip_diagnosis", broken)
    before = internal_error_count()
    outcome = run_program(tmp_path, ALTERNATING)
    assert outcome.error is None  # the user's program is not disturbed
    assert internal_error_count() > before
    reports = [d for d in outcome.diagnoses if d.code == "AD215"]
    assert reports and reports[0].primary.line == outcome.line("STEP")
    plain = run_plain(tmp_path, ALTERNATING)
    for ours, theirs in zip(outcome.namespace["params"], plain["params"]):
        assert torch.equal(ours, theirs)


def test_a_raised_diagnosis_stops_at_the_step(tmp_path):
    outcome = run_program(tmp_path, ALTERNATING, silent="raise")
    assert isinstance(outcome.error, AutogradDoctorError)
    assert [d.code for d in outcome.diagnoses][:1] == ["AD215"]
    assert outcome.diagnoses[0].primary.line == outcome.line("STEP")


def test_correct_small_steps_stay_silent_and_train_alike(tmp_path):
    outcome = run_program(tmp_path, SMALL_STEPS)
    assert outcome.error is None
    assert outcome.diagnoses == []
    assert outcome.warnings == []
    plain = run_plain(tmp_path, SMALL_STEPS)
    for name, parameters in plain["results"].items():
        for ours, theirs in zip(outcome.namespace["results"][name], parameters):
            assert torch.equal(ours, theirs)
