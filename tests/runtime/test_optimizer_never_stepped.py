"""AD221: an optimizer whose zero_grad() runs every iteration, clearing the gradients a backward()
computed, while its step() is never called: its parameters never change, and nothing fails. Found
when the doctor stops; the help adds the missing step() after the backward() (held-out set 9,
DeblurGANv2-MobileNetv123-PyTorch#7: two discriminators never stepped; undiagnosed on the first
run). This program is another one: a classifier whose projection head has its own optimizer."""

import torch

from autograd_doctor.analysis.fixes import apply_replacement
from helpers import run_plain, run_program

FORGOTTEN = """
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)
backbone = nn.Sequential(nn.Linear(6, 16), nn.ReLU())
head = nn.Linear(16, 3)
opt_backbone = torch.optim.Adam(backbone.parameters(), lr=1e-2)
opt_head = torch.optim.SGD(head.parameters(), lr=0.1, momentum=0.9)
x, y = torch.randn(32, 6), torch.randint(0, 3, (32,))
for epoch in range(4):
    opt_backbone.zero_grad()
    opt_head.zero_grad()  # CLEAR
    loss = F.cross_entropy(head(backbone(x)), y)
    loss.backward()  # BACKWARD
    opt_backbone.step()
params = [p.detach().clone() for p in [*backbone.parameters(), *head.parameters()]]
"""

ANSWER = FORGOTTEN.replace("    loss.backward()  # BACKWARD\n", "    loss.backward()  # BACKWARD\n    opt_head.step()\n")


def test_the_backward_is_named_and_the_step_added_after_it(tmp_path):
    outcome = run_program(tmp_path, FORGOTTEN)
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD221"]
    assert diagnosis.primary.line == outcome.line("BACKWARD")
    assert "opt_head.step() is never called" in diagnosis.primary.note
    assert [r.line for r in diagnosis.related] == [outcome.line("CLEAR")]
    assert diagnosis.help[0].replacement == "loss.backward()\nopt_head.step()"


def test_the_help_applied_trains_as_the_answer_does(tmp_path):
    outcome = run_program(tmp_path, FORGOTTEN)
    help_ = next(d for d in outcome.diagnoses if d.code == "AD221").help[0]
    fixed = run_plain(tmp_path, apply_replacement(outcome.source, help_.location, help_.replacement))["params"]
    answer = run_plain(tmp_path, ANSWER, name="answer.py")["params"]
    assert all(torch.equal(a, b) for a, b in zip(fixed, answer))
    buggy = run_plain(tmp_path, FORGOTTEN, name="plain.py")["params"]
    assert not all(torch.equal(a, b) for a, b in zip(buggy, answer))


SILENT = {
    "both optimizers step": ANSWER,
    "an optimizer cleared once, before its first backward": FORGOTTEN.replace(
        "    opt_head.zero_grad()  # CLEAR\n", "").replace("for epoch in range(4):",
                                                           "opt_head.zero_grad()\nfor epoch in range(4):"),
    "a GAN-style second loss through the head, stepped every other epoch": FORGOTTEN.replace(
        "    opt_backbone.step()\n",
        "    opt_backbone.step()\n    if epoch % 2 == 1:\n        opt_head.step()\n"),
    "LBFGS, whose closure clears the gradients inside step()": """
import torch
torch.manual_seed(0)
w = torch.nn.Parameter(torch.randn(3))
optimizer = torch.optim.LBFGS([w], max_iter=5)
target = torch.tensor([1.0, -2.0, 0.5])
def closure():
    optimizer.zero_grad()
    loss = ((w - target) ** 2).sum()
    loss.backward()
    return loss
for _ in range(2):
    optimizer.step(closure)
params = [w.detach().clone()]
""",
}


def test_optimizers_that_step_are_silent(tmp_path):
    for name, source in SILENT.items():
        outcome = run_program(tmp_path, source)
        assert outcome.error is None, name
        assert not [d for d in outcome.diagnoses if d.code == "AD221"], name
