"""Held-out set 34 (part B)'s miss with advice only (pytorch#22820): a SMAPE loss divided
element-wise and dropped the 0/0 terms *after* the division (`x[~isnan(x)]`); under anomaly mode
DivBackward0 returned NaN, and AD118 only advised an eps or a mask. Now, for a DivBackward0 NaN
whose forward line holds one division of plain operands, AD118 offers the double torch.where:
`torch.where(b != 0, a / torch.where(b != 0, b, torch.ones_like(b)), (a / b).detach())`, the same
forward values with no gradient through the elements whose denominator is 0. Applied, it gives the
hand-written (mask before dividing) version's result, in the set-34 case and in another shape
written before the change was run (click-through rates of never-shown items, `a / b` spelled as an
operator, NaN replaced by torch.where afterwards); the hand-written versions run silent."""

from __future__ import annotations

import os
import sys
import textwrap

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "errors"))

from catalogue import apply_suggestion, run_plain, run_watched, write  # noqa: E402

import autograd_doctor  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SET34 = os.path.join(os.path.dirname(HERE), "bug_reports", "fresh", "set34")
CASE = "b_smape_forecast_loss_drops_nan_terms_after_zero_over_zero.py"

CLICK_THROUGH = """
import torch
import torch.nn as nn

torch.manual_seed(3)

scorer = nn.Sequential(nn.Linear(6, 12), nn.Tanh(), nn.Linear(12, 1))
users = torch.randn(40, 6)
exposure = (torch.rand(40, 8) > 0.6).float()
exposure[:, 2] = 0.0  # two items were never shown
exposure[:, 5] = 0.0
observed = torch.rand(8)
optimizer = torch.optim.SGD(scorer.parameters(), lr=0.1)

losses = []
with torch.autograd.detect_anomaly():
    for step in range(4):
        click_prob = torch.sigmoid(scorer(users))
        clicks = (click_prob * exposure).sum(0)
        impressions = (click_prob.detach() + 1.0) * exposure
        impressions = impressions.sum(0)
        ctr = clicks / impressions
        ctr = torch.where(torch.isnan(ctr), torch.zeros_like(ctr), ctr)
        loss = ((ctr - observed) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())

result = {"losses": torch.stack(losses), "w": scorer[0].weight.detach().clone()}
"""
CLICK_THROUGH_OLD = """        ctr = clicks / impressions
        ctr = torch.where(torch.isnan(ctr), torch.zeros_like(ctr), ctr)
"""
CLICK_THROUGH_NEW = """        shown = impressions != 0
        ctr = torch.zeros_like(impressions)
        ctr[shown] = clicks[shown] / impressions[shown]
"""


def _diagnose(path):
    error = run_watched(path)
    assert error is not None
    (found,) = [d for d in autograd_doctor.diagnoses_of(error) if d.code == "AD118"]
    return found


def _division_help(found):
    (suggestion,) = [s for s in found.help if "double torch.where" in s.message]
    return suggestion


def _fixed_result(folder, path, suggestion):
    target = folder / ("fixed_" + os.path.basename(path))
    target.write_text(apply_suggestion(open(path).read(), suggestion))
    error, namespace = run_plain(str(target))
    assert error is None, error
    return namespace["result"]


def _close(a, b):
    return all(torch.allclose(a[k], b[k], rtol=1e-5, atol=1e-6) for k in a)


def test_set34_smape_division_gets_the_double_where(tmp_path):
    path = os.path.join(SET34, "cases", CASE)
    found = _diagnose(path)
    assert found.primary.line == 31
    suggestion = _division_help(found)
    assert found.help[0] is suggestion
    assert suggestion.replacement.strip() == (
        "elementwise_smape = torch.where(denominator != 0, numerator / torch.where(denominator != 0, "
        "denominator, torch.ones_like(denominator)), (numerator / denominator).detach())")
    fixed = _fixed_result(tmp_path, path, suggestion)
    _, correct = run_plain(os.path.join(SET34, "correct", CASE))
    assert _close(fixed, correct["result"])


def test_click_through_rates_of_never_shown_items(tmp_path):
    path = write(tmp_path, textwrap.dedent(CLICK_THROUGH), "program")
    found = _diagnose(path)
    suggestion = _division_help(found)
    assert "clicks / torch.where(impressions != 0, impressions" in suggestion.replacement
    fixed = _fixed_result(tmp_path, path, suggestion)
    folder = tmp_path / "hand"
    folder.mkdir()
    hand = textwrap.dedent(CLICK_THROUGH).replace(CLICK_THROUGH_OLD, CLICK_THROUGH_NEW)
    error, namespace = run_plain(write(folder, hand, "program"))
    assert error is None, error
    assert _close(fixed, namespace["result"])


def test_hand_written_versions_are_silent(tmp_path):
    assert run_watched(os.path.join(SET34, "correct", CASE)) is None
    hand = textwrap.dedent(CLICK_THROUGH).replace(CLICK_THROUGH_OLD, CLICK_THROUGH_NEW)
    assert run_watched(write(tmp_path, hand, "program")) is None


def test_division_of_calls_keeps_the_advice(tmp_path):
    # Operands that are calls would run again in the changed line: no change, the advice stays.
    source = textwrap.dedent(CLICK_THROUGH).replace(
        "        ctr = clicks / impressions\n", "        ctr = clicks.clone() / impressions.clone()\n")
    found = _diagnose(write(tmp_path, source, "program"))
    assert not [s for s in found.help if "double torch.where" in s.message]
    assert all(s.replacement is None for s in found.help)


def test_a_used_zero_over_zero_keeps_the_advice(tmp_path):
    # The 0/0 element is summed into the loss (its upstream gradient is 1): NaN shows only in the
    # denominator's gradient ("1th output"), and zeroing its gradient would change the meaning.
    source = textwrap.dedent("""
        import torch

        a = torch.tensor([1.0, 0.0, 2.0], requires_grad=True)
        b = torch.tensor([2.0, 0.0, 4.0], requires_grad=True)
        with torch.autograd.detect_anomaly():
            u = a / b
            loss = u.sum()
            loss.backward()
        result = {"a": a.grad}
    """)
    found = _diagnose(write(tmp_path, source, "program"))
    assert not [s for s in found.help if "double torch.where" in s.message]
