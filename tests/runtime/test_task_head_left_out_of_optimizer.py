"""AD213 for a task head of the user's own class built of library layers only (`ClfHead` holding a
Dropout and a Linear), called on the output of the model the optimizer steps and left out of it
(`Adam(model.parameters())`): the head gets gradients at every backward() and never changes while
the model is trained to fit it (held-out set 22, pytorch-openai-transformer-lm#6). Such a head is
a candidate only where every call of it around step() reads a value computed from the stepped
model: a feature extractor of the user's class also called on the data or the targets (a
perceptual loss) is beside the model on purpose and stays silent."""

import torch

from helpers import apply_help, run_plain, run_program

FINE_TUNING = """
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)

class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(13, 8)
        self.block = nn.Sequential(nn.LayerNorm(8), nn.Linear(8, 8), nn.GELU())

    def forward(self, tokens):
        h = self.embed(tokens)
        return h + self.block(h)

class ClfHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.dropout = nn.Dropout(0.0)
        self.linear = nn.Linear(8, 3)

    def forward(self, h):
        return self.linear(self.dropout(h[:, -1]))

model = Encoder()
clf_head = ClfHead()
opt = torch.optim.Adam(model.parameters(), lr=1e-2)  # BUILT
tokens, labels = torch.randint(0, 13, (6, 5)), torch.randint(0, 3, (6,))
for step in range(3):
    opt.zero_grad()
    loss = F.cross_entropy(clf_head(model(tokens)), labels)
    loss.backward()
    opt.step()  # STEP
params = [p.detach().clone() for p in list(model.parameters()) + list(clf_head.parameters())]
"""

ANSWER = FINE_TUNING.replace("torch.optim.Adam(model.parameters(), lr=1e-2)  # BUILT",
                             "torch.optim.Adam(list(model.parameters()) + list(clf_head.parameters()), lr=1e-2)")


def test_the_head_left_out_is_named_where_the_optimizer_is_built(tmp_path):
    outcome = run_program(tmp_path, FINE_TUNING)
    diagnosis = next(d for d in outcome.diagnoses if d.code == "AD213")
    assert diagnosis.primary.line == outcome.line("BUILT")
    assert "without clf_head's parameters" in diagnosis.primary.note
    assert any(loc.line == outcome.line("STEP") for loc in diagnosis.related)
    assert any("clf_head (ClfHead) is called on values computed from the model" in note for note in diagnosis.notes)
    assert diagnosis.help[0].replacement.splitlines()[-1].strip() == \
        'opt.add_param_group({"params": clf_head.parameters()})'


def test_the_help_applied_trains_as_the_answer_does(tmp_path):
    outcome = run_program(tmp_path, FINE_TUNING)
    fixed = run_plain(tmp_path, apply_help(outcome, 0), name="fixed.py")["params"]
    answer = run_plain(tmp_path, ANSWER, name="answer.py")["params"]
    assert all(torch.equal(a, b) for a, b in zip(fixed, answer))
    buggy = run_plain(tmp_path, FINE_TUNING, name="buggy.py")["params"]
    assert not all(torch.equal(a, b) for a, b in zip(buggy, answer))


def test_silent_when_the_head_is_in_the_optimizer(tmp_path):
    outcome = run_program(tmp_path, ANSWER)
    assert outcome.error is None and not any(d.code == "AD213" for d in outcome.diagnoses)


def test_silent_when_the_head_is_frozen_on_purpose(tmp_path):
    frozen = FINE_TUNING.replace("clf_head = ClfHead()\n", "clf_head = ClfHead()\nclf_head.requires_grad_(False)\n")
    outcome = run_program(tmp_path, frozen)
    assert outcome.error is None and not any(d.code == "AD213" for d in outcome.diagnoses)


def test_silent_for_a_feature_extractor_also_called_on_the_targets(tmp_path):
    # A perceptual loss: the user's feature network compares the model's output with the target's
    # features; it is not trained, and it is called on the targets too.
    perceptual = FINE_TUNING.replace(
        "    loss = F.cross_entropy(clf_head(model(tokens)), labels)\n",
        "    target = torch.randn(6, 5, 8)\n"
        "    loss = F.mse_loss(clf_head(model(tokens)), clf_head(target))\n")
    outcome = run_program(tmp_path, perceptual)
    assert outcome.error is None and not any(d.code == "AD213" for d in outcome.diagnoses)
