"""AD213 for modules kept in a plain list (or dict) that a trained module holds: `self.blocks = []`
and `self.blocks.append(nn.Linear(...))` registers nothing, so `model.parameters()` and the
optimizer leave the blocks out while the forward pass goes through them (held-out set 11,
pytorch#715's SNLI classifier). Named where the container is made; where the container holds the
modules themselves, the help makes it an nn.ModuleList, and the program then trains as the answer."""

import torch

from helpers import apply_help, run_plain, run_program

BLOCKS = """
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)

class ResidualMLP(nn.Module):
    def __init__(self, width=6, depth=2):
        super().__init__()
        self.inp = nn.Linear(4, width)
        self.blocks = []  # STORED
        for _ in range(depth):
            self.blocks.append(nn.Linear(width, width))
        self.out = nn.Linear(width, 2)

    def forward(self, x):
        h = torch.relu(self.inp(x))
        for block in self.blocks:
            h = h + torch.tanh(block(h))
        return self.out(h)

model = ResidualMLP()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(10, 4), torch.randint(0, 2, (10,))
for step in range(3):
    optimizer.zero_grad()
    F.cross_entropy(model(x), y).backward()
    optimizer.step()  # STEP
params = [p.detach().clone() for p in [*model.inp.parameters(), *model.out.parameters()]]
blocks = [p.detach().clone() for block in model.blocks for p in block.parameters()]
"""

ANSWER = BLOCKS.replace("        self.blocks = []  # STORED\n", "        self.blocks = nn.ModuleList()\n")


def test_the_plain_list_is_named_and_made_a_module_list(tmp_path):
    outcome = run_program(tmp_path, BLOCKS)
    diagnosis = next(d for d in outcome.diagnoses if d.code == "AD213")
    assert diagnosis.primary.line == outcome.line("STORED")
    assert "plain list" in diagnosis.primary.note
    assert any(loc.line == outcome.line("STEP") for loc in diagnosis.related)
    assert any("model.blocks keeps modules whose 4 parameters" in note for note in diagnosis.notes)
    assert diagnosis.help[0].replacement.strip() == "self.blocks = nn.ModuleList()"


def test_the_help_applied_trains_the_blocks_as_the_answer_does(tmp_path):
    outcome = run_program(tmp_path, BLOCKS)
    assert outcome.diagnosis.code == "AD213"
    fixed = run_plain(tmp_path, apply_help(outcome, 0), name="fixed.py")
    answer = run_plain(tmp_path, ANSWER, name="answer.py")
    for name in ("params", "blocks"):
        assert all(torch.equal(a, b) for a, b in zip(fixed[name], answer[name]))
    buggy = run_plain(tmp_path, BLOCKS, name="buggy.py")
    assert not all(torch.equal(a, b) for a, b in zip(buggy["blocks"], answer["blocks"]))


def test_a_list_of_layer_pairs_gets_advice_only(tmp_path):
    pairs = BLOCKS.replace("self.blocks.append(nn.Linear(width, width))",
                           "self.blocks.append([nn.Linear(width, width), nn.Tanh()])").replace(
        "        for block in self.blocks:\n            h = h + torch.tanh(block(h))\n",
        "        for linear, act in self.blocks:\n            h = h + act(linear(h))\n").replace(
        "for block in model.blocks for p in block.parameters()", "for pair in model.blocks for p in pair[0].parameters()")
    outcome = run_program(tmp_path, pairs)
    diagnosis = next(d for d in outcome.diagnoses if d.code == "AD213")
    assert diagnosis.primary.line == outcome.line("STORED")
    assert not any(s.replacement for s in diagnosis.help)


def test_silent_when_the_optimizer_is_given_the_blocks_too(tmp_path):
    given = BLOCKS.replace("optimizer = torch.optim.SGD(model.parameters(), lr=0.1)",
                           "optimizer = torch.optim.SGD([*model.parameters(), *(p for b in model.blocks "
                           "for p in b.parameters())], lr=0.1)")
    assert not [d for d in run_program(tmp_path, given).diagnoses if d.code == "AD213"]


def test_silent_when_the_listed_modules_are_frozen(tmp_path):
    frozen = BLOCKS.replace("            self.blocks.append(nn.Linear(width, width))",
                            "            self.blocks.append(nn.Linear(width, width).requires_grad_(False))")
    assert not [d for d in run_program(tmp_path, frozen).diagnoses if d.code == "AD213"]
