"""Held-out set 49's causes (docs/bug-reports.md, "Set 49"). The other shapes below were written
before the change was run on them.

- AD214, a loss rewrapped as a new leaf inside the user's loss module, not where backward() is
  called (github.com/ziyangyeh/TANet-Pytorch, losses/conditional_weighting_loss.py and the two
  loss modules it sums): `loss = loss_fn(...)`, then `loss.backward()`, and each module ends with
  `loss = Variable(loss, requires_grad=True)`. The wrap was looked for only among the assignments
  in the step's own function, so AD214 named the step() and offered advice. The loss function or
  module that returned the loss is now followed (its forward, then the loss modules it calls, up
  to three deep): the wrap of the returned value is the line to change, and the help removes it
  there and, chained, in every loss module it combines. A wrap of a number (`.item()`) gets advice
  only: there is no graph to keep."""

from __future__ import annotations

import os

import torch

from autograd_doctor.analysis.fixes import apply_replacement
from autograd_doctor.diagnosis import codes
from helpers import run_plain, run_program

HERE = os.path.dirname(os.path.abspath(__file__))
SET49 = os.path.join(os.path.dirname(HERE), "bug_reports", "fresh", "set49")
TANET = "tooth_alignment_conditional_weighting_loss_rewrapped"


def _source(kind: str, name: str) -> str:
    with open(os.path.join(SET49, kind, name + ".py"), encoding="utf-8") as stream:
        return stream.read()


def _apply_chain(outcome) -> str:
    """The first help and the helps chained after it, applied from the bottom up."""
    chain = [outcome.diagnosis.help[0]]
    for suggestion in outcome.diagnosis.help[1:]:
        if not suggestion.message.startswith("and the next line of the same kind"):
            break
        chain.append(suggestion)
    source = outcome.source
    for suggestion in sorted(chain, key=lambda s: s.location.line, reverse=True):
        source = apply_replacement(source, suggestion.location, suggestion.replacement)
    return source


def test_the_set49_wraps_in_the_loss_modules_are_named_and_removed(tmp_path):
    outcome = run_program(tmp_path, _source("cases", TANET))
    diagnosis = outcome.diagnosis
    assert diagnosis.code == codes.GRADIENTLESS_OPTIMIZER_STEPS
    assert diagnosis.primary.line == 75
    assert diagnosis.help[0].replacement == "loss = torch.sum(loss) / X_v.shape[0]"
    assert [h.location.line for h in diagnosis.help[1:3]] == [40, 58]
    changed = run_plain(tmp_path, _apply_chain(outcome))
    correct = run_plain(tmp_path, _source("correct", TANET), "c.py")
    assert torch.allclose(changed["result"]["losses"], correct["result"]["losses"])
    assert all(torch.allclose(a, b) for a, b in zip(changed["result"]["weights"], correct["result"]["weights"]))


def test_the_correct_loss_modules_are_silent(tmp_path):
    outcome = run_program(tmp_path, _source("correct", TANET))
    assert outcome.error is None and not outcome.diagnoses


# Another shape: a plain loss function that returns the wrap itself.
RETURNED_WRAP = """
    import torch
    import torch.nn.functional as F
    from torch.autograd import Variable

    torch.manual_seed(0)


    def criterion(prediction, target):
        return Variable(F.mse_loss(prediction, target), requires_grad=True)


    model = torch.nn.Linear(3, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(32, 3), torch.randn(32, 1)
    for step in range(6):
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
    result = [p.detach().clone() for p in model.parameters()]
"""


def test_a_returned_wrap_in_a_loss_function_is_removed(tmp_path):
    outcome = run_program(tmp_path, RETURNED_WRAP)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == codes.GRADIENTLESS_OPTIMIZER_STEPS
    assert diagnosis.primary.line == 10
    assert diagnosis.help[0].replacement == "return F.mse_loss(prediction, target)"
    changed = run_plain(tmp_path, _apply_chain(outcome))
    assert changed["result"][0].abs().sum() > 0
    trained = run_plain(tmp_path, RETURNED_WRAP.replace(
        "Variable(F.mse_loss(prediction, target), requires_grad=True)", "F.mse_loss(prediction, target)"), "c.py")
    assert all(torch.allclose(a, b) for a, b in zip(changed["result"], trained["result"]))


def test_a_wrapped_number_in_a_loss_module_gets_advice_only(tmp_path):
    source = RETURNED_WRAP.replace(
        "        return Variable(F.mse_loss(prediction, target), requires_grad=True)",
        "        loss = F.mse_loss(prediction, target)\n"
        "        loss = torch.tensor(loss.item(), requires_grad=True)\n"
        "        return loss")
    outcome = run_program(tmp_path, source)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == codes.GRADIENTLESS_OPTIMIZER_STEPS
    assert diagnosis.primary.line == 11
    assert diagnosis.help[0].replacement is None
    assert "torch operations" in diagnosis.help[0].message


def test_a_loss_module_that_keeps_its_graph_is_silent(tmp_path):
    source = RETURNED_WRAP.replace("Variable(F.mse_loss(prediction, target), requires_grad=True)",
                                   "F.mse_loss(prediction, target)")
    outcome = run_program(tmp_path, source)
    assert outcome.error is None and not outcome.diagnoses
