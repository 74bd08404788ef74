"""AD104 when the write into a `split`/`chunk` output is an activation module's made with
inplace=True (`out = self.act(piece)`): the line to change is the module's definition, and the
help makes it inplace=False, which returns the same values in a new tensor (held-out set 18,
ESRGCNN#9: advice only on the first run)."""

import torch

from helpers import apply_help, run_as_script, run_plain

SPLIT_BLOCK = """
import torch
import torch.nn as nn
torch.manual_seed(0)

class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Linear(6, 6)
        self.refine = nn.Linear(4, 4)
        self.act = nn.ReLU(inplace=True)  # DEFINE

    def forward(self, x):
        kept, rest = torch.split(self.conv(x), [2, 4], dim=1)
        out = self.act(rest)  # CALL
        return torch.cat([kept, self.refine(out)], dim=1)

block = Block()
optimizer = torch.optim.SGD(block.parameters(), lr=0.1)
x = torch.randn(5, 6)
for step in range(2):
    optimizer.zero_grad()
    block(x).pow(2).mean().backward()
    optimizer.step()
params = [p.detach().clone() for p in block.parameters()]
"""

ANSWER = SPLIT_BLOCK.replace("nn.ReLU(inplace=True)", "nn.ReLU(inplace=False)")


def test_the_definition_is_named_and_made_out_of_place(tmp_path):
    outcome = run_as_script(tmp_path, SPLIT_BLOCK)
    diagnosis = next(d for d in outcome.diagnoses if d.code == "AD104")
    assert diagnosis.primary.line == outcome.line("DEFINE")
    assert any(r.line == outcome.line("CALL") for r in diagnosis.related)
    assert diagnosis.help[0].replacement.strip() == "self.act = nn.ReLU(inplace=False)"


def test_the_help_applied_trains_as_the_answer_does(tmp_path):
    outcome = run_as_script(tmp_path, SPLIT_BLOCK)
    fixed = run_plain(tmp_path, apply_help(outcome, 0))["params"]
    answer = run_plain(tmp_path, ANSWER, name="answer.py")["params"]
    assert all(torch.equal(a, b) for a, b in zip(fixed, answer))


def test_a_bare_call_that_relies_on_the_write_keeps_the_older_helps(tmp_path):
    source = SPLIT_BLOCK.replace("        out = self.act(rest)  # CALL\n", "        self.act(rest)  # CALL\n        out = rest\n")
    outcome = run_as_script(tmp_path, source)
    diagnosis = next(d for d in outcome.diagnoses if d.code == "AD104")
    assert diagnosis.primary.line == outcome.line("CALL")
    assert not any("inplace=False" in (h.replacement or "") for h in diagnosis.help)
