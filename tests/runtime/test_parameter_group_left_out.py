"""AD213 for a parameter group built for the optimizer and never given to it: fine-tuning code
often builds one dict per group (`{"params": [...], "lr": ..., "weight_decay": ...}`) and lists
the groups when it builds the optimizer; a group left out of that list trains nothing, although
its parameters get gradients at every step (held-out set 12, HVPNeT#5's CRF group). Named where the
optimizer is built; the help gives the optimizer the group itself, with the settings it names, and
the program then trains as the answer does."""

import torch

from helpers import apply_help, run_plain, run_program

FINE_TUNING = """
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)

class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.LayerNorm(8))
        self.head = nn.Linear(8, 3)

    def forward(self, x):
        return self.head(self.encoder(x))

def build_optimizer(model):
    decay = {"params": [p for n, p in model.encoder.named_parameters() if n.endswith("weight") and p.dim() > 1],
             "weight_decay": 0.01}
    no_decay = {"params": [p for n, p in model.encoder.named_parameters() if not (n.endswith("weight") and p.dim() > 1)],
                "weight_decay": 0.0}
    head = {"params": list(model.head.parameters()), "lr": 5e-2, "weight_decay": 0.0}
    optimizer = torch.optim.AdamW([decay, no_decay], lr=1e-3)  # BUILT
    for step in range(3):
        optimizer.zero_grad()
        F.cross_entropy(model(x), y).backward()
        optimizer.step()  # STEP
    return optimizer

model = Classifier()
x, y = torch.randn(12, 6), torch.randint(0, 3, (12,))
build_optimizer(model)
params = [p.detach().clone() for p in model.parameters()]
"""

ANSWER = FINE_TUNING.replace("torch.optim.AdamW([decay, no_decay], lr=1e-3)  # BUILT",
                             "torch.optim.AdamW([decay, no_decay, head], lr=1e-3)")


def test_the_group_left_out_is_named_where_the_optimizer_is_built(tmp_path):
    outcome = run_program(tmp_path, FINE_TUNING)
    diagnosis = next(d for d in outcome.diagnoses if d.code == "AD213")
    assert diagnosis.primary.line == outcome.line("BUILT")
    assert "without the parameter group head" in diagnosis.primary.note
    assert any(loc.line == outcome.line("STEP") for loc in diagnosis.related)
    assert any("head is a parameter group" in note and "lr=0.05" in note for note in diagnosis.notes)
    assert diagnosis.help[0].replacement.splitlines()[-1].strip() == "optimizer.add_param_group(head)"


def test_the_help_applied_trains_as_the_answer_does(tmp_path):
    outcome = run_program(tmp_path, FINE_TUNING)
    fixed = run_plain(tmp_path, apply_help(outcome, 0), name="fixed.py")["params"]
    answer = run_plain(tmp_path, ANSWER, name="answer.py")["params"]
    assert all(torch.equal(a, b) for a, b in zip(fixed, answer))
    buggy = run_plain(tmp_path, FINE_TUNING, name="buggy.py")["params"]
    assert not all(torch.equal(a, b) for a, b in zip(buggy, answer))


def test_silent_when_every_group_is_given(tmp_path):
    outcome = run_program(tmp_path, ANSWER)
    assert outcome.error is None and not any(d.code == "AD213" for d in outcome.diagnoses)


def test_silent_when_the_left_out_group_is_frozen_on_purpose(tmp_path):
    frozen = FINE_TUNING.replace("model = Classifier()\n", "model = Classifier()\nmodel.head.requires_grad_(False)\n")
    outcome = run_program(tmp_path, frozen)
    assert outcome.error is None and not any(d.code == "AD213" for d in outcome.diagnoses)
