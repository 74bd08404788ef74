"""AD301 for a freezing loop whose `if`/`else` both set `p.requires_grad = False`: the condition
picks a group (the pretrained encoder) but both branches freeze, every parameter is frozen and
backward() raises "element 0 of tensors does not require grad". Held-out set 22 (LipFD#18) got
AD301 at the `if` branch's line with advice; the `else` branch's assignment is now named, with
`= True` as code, and the program then trains as the reporter's fix does. Where the branches
freeze different targets, or one of them keeps requires_grad on, this is not said."""

import torch

from helpers import apply_help, run_as_script, run_plain, run_program

TRAINER = """
import torch
import torch.nn as nn
torch.manual_seed(0)

class Detector(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(6, 8)
        self.classifier = nn.Linear(8, 1)

    def forward(self, x):
        return self.classifier(torch.relu(self.encoder(x))).view(-1)

model = Detector()
for name, p in model.named_parameters():
    if name.startswith("encoder"):
        p.requires_grad = False  # IF
    else:
        p.requires_grad = False  # ELSE
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(8, 6), torch.rand(8)
for step in range(3):
    optimizer.zero_grad()
    loss = nn.functional.binary_cross_entropy_with_logits(model(x), y)
    loss.backward()  # BACKWARD
    optimizer.step()
params = [p.detach().clone() for p in model.parameters()]
"""

ANSWER = TRAINER.replace("p.requires_grad = False  # ELSE", "p.requires_grad = True  # ELSE")


def test_the_else_branch_is_named_with_the_change(tmp_path):
    outcome = run_as_script(tmp_path, TRAINER)
    diagnosis = next(d for d in outcome.diagnoses if d.code == "AD301")
    assert diagnosis.primary.line == outcome.line("ELSE")
    assert any(loc.line == outcome.line("IF") for loc in diagnosis.related)
    assert any(loc.line == outcome.line("BACKWARD") for loc in diagnosis.related)
    assert any("both branches of `if name.startswith('encoder')`" in note for note in diagnosis.notes)
    assert diagnosis.help[0].replacement == "p.requires_grad = True"


def test_the_help_applied_trains_as_the_fix_does(tmp_path):
    outcome = run_as_script(tmp_path, TRAINER)
    fixed = run_plain(tmp_path, apply_help(outcome, 0), name="fixed.py")["params"]
    answer = run_plain(tmp_path, ANSWER, name="answer.py")["params"]
    assert all(torch.equal(a, b) for a, b in zip(fixed, answer))


def test_silent_when_only_the_encoder_is_frozen(tmp_path):
    outcome = run_program(tmp_path, ANSWER)
    assert outcome.error is None and not outcome.diagnoses


def test_branches_freezing_different_targets_keep_the_older_help(tmp_path):
    # Everything frozen through two different names: not one condition deciding nothing.
    other = TRAINER.replace("        p.requires_grad = False  # ELSE", "        model.classifier.weight.requires_grad = False  # ELSE")
    other = other.replace("model = Detector()\n", "model = Detector()\nmodel.classifier.bias.requires_grad_(False)\n")
    outcome = run_as_script(tmp_path, other)
    diagnosis = next(d for d in outcome.diagnoses if d.code == "AD301")
    assert not any("both branches" in note for note in diagnosis.notes)
