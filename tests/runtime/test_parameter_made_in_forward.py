"""AD207 for a parameter made inside forward(): `self.temperature = nn.Parameter(...)` there makes
a new parameter at every call, which the optimizer (built from `model.parameters()` before the
first call) never holds; it gets a gradient and never trains (held-out set 12,
Stand-Alone-Self-Attention#2's relative embeddings). Named at the assignment in forward(); the help
is advice (make it once, in __init__), and the answer that does so trains it."""

import torch

from helpers import run_plain, run_program

SCORER = """
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)

class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 3)

    def forward(self, x):
        self.temperature = nn.Parameter(torch.ones(1))  # MADE
        return self.proj(x) / self.temperature

model = Scorer()
optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
x, y = torch.randn(8, 4), torch.randint(0, 3, (8,))
for step in range(3):
    loss = F.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()  # STEP
temperature = model.temperature.detach().clone()
"""

ANSWER = SCORER.replace("        self.temperature = nn.Parameter(torch.ones(1))  # MADE\n", "").replace(
    "        self.proj = nn.Linear(4, 3)\n",
    "        self.proj = nn.Linear(4, 3)\n        self.temperature = nn.Parameter(torch.ones(1))\n")


def test_the_parameter_made_in_forward_is_named_with_advice_to_make_it_in_init(tmp_path):
    outcome = run_program(tmp_path, SCORER)
    diagnosis = next(d for d in outcome.diagnoses if d.code == "AD207")
    assert diagnosis.primary.line == outcome.line("MADE")
    assert "makes a new parameter here at every call" in diagnosis.primary.note
    assert any(loc.line == outcome.line("STEP") for loc in diagnosis.related)
    assert any("Scorer.temperature (float32[1]) is made anew at every call of forward()" in n for n in diagnosis.notes)
    assert diagnosis.help[0].message.startswith("make them once, in __init__")
    assert not any(s.replacement for s in diagnosis.help)


def test_the_answer_trains_the_parameter_and_gets_no_diagnosis(tmp_path):
    outcome = run_program(tmp_path, ANSWER)
    assert outcome.error is None and not any(d.code == "AD207" for d in outcome.diagnoses)
    assert not torch.equal(run_plain(tmp_path, ANSWER, name="answer.py")["temperature"], torch.ones(1))
    assert torch.equal(run_plain(tmp_path, SCORER, name="buggy.py")["temperature"], torch.ones(1))


def test_silent_for_a_parameter_made_once_lazily(tmp_path):
    lazy = SCORER.replace("        self.temperature = nn.Parameter(torch.ones(1))  # MADE\n",
                          "        if not hasattr(self, 'temperature'):\n"
                          "            self.temperature = nn.Parameter(torch.ones(1))\n").replace(
        "optimizer = torch.optim.SGD(model.parameters(), lr=0.5)",
        "model(torch.randn(1, 4))\noptimizer = torch.optim.SGD(model.parameters(), lr=0.5)")
    outcome = run_program(tmp_path, lazy)
    assert outcome.error is None and not any(d.code == "AD207" for d in outcome.diagnoses)


# EvolveGCN's form (held-out set 13, pytorch_geometric_temporal#80): the value wrapped is computed in
# forward() from other parameters; the Parameter cuts it from them. Making it once in __init__ would
# not be the fix: the value is meant to carry the graph. Named once, however many calls made one.
EVOLVED = """
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)

class Evolving(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(4, 4)
        self.scale = nn.Parameter(torch.ones(4))

    def forward(self, x):
        self.layer.weight = nn.Parameter(self.layer.weight * self.scale)  # MADE
        return self.layer(x)

model = Evolving()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(8, 4), torch.randint(0, 4, (8,))
for step in range(3):
    optimizer.zero_grad()
    model(x)
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()  # STEP
"""


def test_a_parameter_of_a_computed_value_is_named_with_the_value_as_the_help(tmp_path):
    outcome = run_program(tmp_path, EVOLVED)
    diagnosis = next(d for d in outcome.diagnoses if d.code == "AD207")
    assert diagnosis.primary.line == outcome.line("MADE")
    assert [loc.line for loc in diagnosis.related] == [outcome.line("STEP")]  # not once per forward() call
    assert diagnosis.notes[0] == ("Linear.weight (float32[4, 4]) is made anew at every call of forward() from "
                                  "`self.layer.weight * self.scale`: a Parameter of it is a new leaf, so no gradient "
                                  "reaches the tensors it was computed from, and the optimizer, built before, holds "
                                  "none of the new ones")
    assert diagnosis.help[0].message.startswith("use `self.layer.weight * self.scale` itself where the module reads "
                                                "it, as a plain tensor (not a Parameter)")
    assert not any(s.replacement for s in diagnosis.help)
