"""AD130 (an in-place LeakyReLU/ELU with a negative slope) searches the files the failing program
reaches for the line that asked for inplace=True, not every loaded module: under pytest or in a
notebook, another file loaded earlier may hold the same pattern for another purpose."""

import sys

import torch

from helpers import apply_help, run_as_script, run_plain

PROGRAM = """
import torch
from torch import nn

from blocks import Stem

torch.manual_seed(0)
slope = -0.2
model = nn.Sequential(Stem(), nn.LeakyReLU(slope, inplace=True))  # INPLACE
loss = model(torch.randn(4, 3)).sum()
loss.backward()  # BACKWARD
result = [p.grad.clone() for p in model.parameters()]
"""

BLOCKS = """
import torch
from torch import nn


class Stem(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(3, 5)

    def forward(self, x):
        return self.linear(x)
"""

# Loaded before the program ran, and not reached from it: a test file's model for another test.
UNRELATED = """
from torch import nn

unrelated = nn.Sequential(nn.Linear(2, 2), nn.LeakyReLU(-0.1, inplace=True))
"""


def test_the_line_is_in_the_programs_files_not_in_another_loaded_module(tmp_path, monkeypatch):
    (tmp_path / "blocks.py").write_text(BLOCKS)
    (tmp_path / "unrelated_model.py").write_text(UNRELATED)
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("blocks", "unrelated_model"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    __import__("unrelated_model")

    outcome = run_as_script(tmp_path, PROGRAM)

    assert outcome.diagnosis.code == "AD130"
    assert outcome.diagnosis.primary.file == outcome.path
    assert outcome.diagnosis.primary.line == outcome.line("INPLACE")
    fixed = run_plain(tmp_path, apply_help(outcome))
    torch.manual_seed(0)
    from blocks import Stem

    reference = torch.nn.Sequential(Stem(), torch.nn.LeakyReLU(-0.2))
    reference(torch.randn(4, 3)).sum().backward()
    assert all(torch.equal(a, p.grad) for a, p in zip(fixed["result"], reference.parameters()))
