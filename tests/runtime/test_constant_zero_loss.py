"""AD301 for a loss that is a constant zero: a loss function returns, for a batch with nothing to
learn from, zeros made without a graph (`torch.tensor(0.0)`), and backward() refuses them. The
zeros are named and made leaves that require grad, as the report's merged fix does: backward()
then runs and leaves the parameters without a gradient (held-out set 18, nanodet#7: advice at the
backward() on the first run)."""

import torch

from helpers import apply_help, run_as_script, run_plain

ZERO_BRANCH = """
import torch
import torch.nn.functional as F
torch.manual_seed(0)
head = torch.nn.Linear(4, 3)
optimizer = torch.optim.SGD(head.parameters(), lr=0.1, momentum=0.9)

def detection_loss(scores, labels):
    positive = labels >= 0
    if int(positive.sum()) == 0:
        loss_cls = torch.tensor(0.0)  # ZERO
        loss_box = torch.zeros(())
        return loss_cls + loss_box
    return F.cross_entropy(scores[positive], labels[positive])

x = torch.randn(3, 5, 4)
labels = torch.randint(0, 3, (3, 5))
labels[1] = -1
for step in range(3):
    optimizer.zero_grad()
    loss = detection_loss(head(x[step]), labels[step])  # CALL
    loss.backward()
    optimizer.step()
params = [p.detach().clone() for p in head.parameters()]
"""

ANSWER = ZERO_BRANCH.replace("torch.tensor(0.0)", "torch.tensor(0.0, requires_grad=True)").replace(
    "torch.zeros(())", "torch.zeros((), requires_grad=True)")


def test_the_zeros_are_named_and_made_leaves_that_require_grad(tmp_path):
    outcome = run_as_script(tmp_path, ZERO_BRANCH)
    diagnosis = next(d for d in outcome.diagnoses if d.code == "AD301")
    assert diagnosis.primary.line == outcome.line("ZERO")
    assert any(r.line == outcome.line("CALL") for r in diagnosis.related)
    assert diagnosis.help[0].replacement == ("loss_cls = torch.tensor(0.0, requires_grad=True)\n"
                                             "loss_box = torch.zeros((), requires_grad=True)")


def test_the_help_applied_trains_as_the_answer_does(tmp_path):
    outcome = run_as_script(tmp_path, ZERO_BRANCH)
    fixed = run_plain(tmp_path, apply_help(outcome, 0))["params"]
    answer = run_plain(tmp_path, ANSWER, name="answer.py")["params"]
    assert all(torch.equal(a, b) for a, b in zip(fixed, answer))


def test_a_non_zero_constant_keeps_the_older_diagnosis(tmp_path):
    source = ZERO_BRANCH.replace("torch.tensor(0.0)", "torch.tensor(1.0)")
    outcome = run_as_script(tmp_path, source)
    diagnosis = next(d for d in outcome.diagnoses if d.code == "AD301")
    assert diagnosis.primary.line != outcome.line("ZERO")
    assert not any("requires_grad=True" in (h.replacement or "") for h in diagnosis.help)
