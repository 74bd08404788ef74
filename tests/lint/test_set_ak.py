"""Set AK (docs/lint.md, "A thirty-ninth held-out check: set AK"): 5 findings, all
real, no false alarm, so no precision cause to fix.  The five are one loop of SimCTG
(https://github.com/yxuansu/SimCTG, e.g. `pretraining/train.py`) that clips after
every micro-batch's backward while the optimizer steps and clears only every
`gradient_accumulation_steps` micro-batches (ADL029).

Probing that form in shapes not taken from the set (written before the fix, linted
with the frozen copy: `/work/scratch/s42/lint-set-ak-work/probe/`) found a recall
cause: ADL029 knew an optimizer only by its name (`opt...`, `scaler.step(o)`), so
the same loop stepping `adam = torch.optim.Adam(...)` or `self.sgd = optim.SGD(...)`
was silent.  Now a receiver every binding of which in the file builds a
`torch.optim` optimizer class counts as well (a learning-rate scheduler does not).
The programs are written for these tests (not copied).  The near-twins that must stay
silent: the clip inside the window, gradients cleared on every micro-batch, a clip of
another module's parameters, and a `step()`/`zero_grad()` of an object that is no
optimizer.
"""

from __future__ import annotations

import sys

import pytest
import torch
from torch import nn

from autograd_doctor.lint.engine import Selection, lint_source

CLIP_EACH_MICRO_BATCH = '''
import torch
from torch import nn


def fit(pairs, epochs, accumulate, clip):
    net = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
    sgd = torch.optim.SGD(net.parameters(), lr=1.0)
    seen = 0
    for _ in range(epochs):
        for x, y in pairs:
            err = (net(x) - y).pow(2).mean() / accumulate
            err.backward()
            if clip:
                nn.utils.clip_grad_norm_(net.parameters(), clip)
            seen += 1
            if seen % accumulate == 0:
                sgd.step()
                sgd.zero_grad()
    return net
'''

CLIP_IN_WINDOW = CLIP_EACH_MICRO_BATCH.replace(
    "            if clip:\n                nn.utils.clip_grad_norm_(net.parameters(), clip)\n", "").replace(
    "                sgd.step()\n",
    "                if clip:\n                    nn.utils.clip_grad_norm_(net.parameters(), clip)\n"
    "                sgd.step()\n")

CLEARED_EACH_MICRO_BATCH = '''
import torch
from torch import nn


def fit(pairs, every):
    net = nn.Linear(3, 1)
    adam = torch.optim.Adam(net.parameters(), lr=1e-3)
    for i, (x, y) in enumerate(pairs):
        adam.zero_grad()
        (net(x) - y).pow(2).mean().backward()
        nn.utils.clip_grad_norm_(net.parameters(), 1.0)
        if i % every == 0:
            adam.step()
'''

CLIPS_ANOTHER_MODULE = '''
import torch
from torch import nn


def fit(pairs, accumulate, teacher):
    net = nn.Linear(3, 1)
    adam = torch.optim.Adam(net.parameters(), lr=1e-3)
    for i, (x, y) in enumerate(pairs):
        (net(x) - teacher(x)).pow(2).mean().backward()
        nn.utils.clip_grad_norm_(teacher.parameters(), 1.0)
        if (i + 1) % accumulate == 0:
            adam.step()
            adam.zero_grad()
'''

NOT_AN_OPTIMIZER = '''
import torch
from torch import nn


class Walker:
    def step(self):
        pass

    def zero_grad(self):
        pass


def fit(pairs, accumulate):
    net = nn.Linear(3, 1)
    walker = Walker()
    for i, (x, y) in enumerate(pairs):
        (net(x) - y).pow(2).mean().backward()
        nn.utils.clip_grad_norm_(net.parameters(), 1.0)
        if i % accumulate == 0:
            walker.step()
            walker.zero_grad()
'''

TRAINER_WITH_SCHEDULER = '''
from torch import nn, optim


class Trainer:
    def __init__(self, net):
        self.net = net
        self.sgd = optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
        self.decay = optim.lr_scheduler.StepLR(self.sgd, 10)

    def epoch(self, loader, every):
        for i, (x, y) in enumerate(loader):
            nn.functional.mse_loss(self.net(x), y).backward()
            nn.utils.clip_grad_value_(self.net.parameters(), 0.5)
            if (i + 1) % every == 0:
                self.sgd.step()
                self.decay.step()
                self.sgd.zero_grad()
'''


def found(source: str, code: str = "ADL029"):
    return [f.line for f in lint_source(source, filename="<string>", selection=Selection(select=("ALL",)))
            if f.code == code]


def line_of(source: str, text: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


def load(source: str, name: str):
    module = type(sys)(name)
    exec(compile(source, name, "exec"), module.__dict__)
    return module


def test_an_optimizer_known_by_its_constructor_is_found():
    assert found(CLIP_EACH_MICRO_BATCH) == [line_of(CLIP_EACH_MICRO_BATCH, "clip_grad_norm_")]
    assert found(TRAINER_WITH_SCHEDULER) == [line_of(TRAINER_WITH_SCHEDULER, "clip_grad_value_")]


def test_the_finding_names_the_window_and_the_optimizer():
    finding = next(f for f in lint_source(CLIP_EACH_MICRO_BATCH, filename="<string>") if f.code == "ADL029")
    assert "`sgd` steps and clears the gradients only when `seen % accumulate == 0`" in finding.message
    assert "clip once, inside the `if`, right before `sgd.step()`" in finding.message


@pytest.mark.parametrize("source", [CLIP_IN_WINDOW, CLEARED_EACH_MICRO_BATCH, CLIPS_ANOTHER_MODULE,
                                    NOT_AN_OPTIMIZER], ids=["clip-in-window", "cleared-each", "other-module",
                                                            "not-an-optimizer"])
def test_the_near_twins_are_silent(source):
    assert found(source) == []


def _trained(source: str, name: str, pairs, accumulate: float, clip: float):
    torch.manual_seed(0)
    return load(source, name).fit(pairs, 1, accumulate, clip)


def _hand_written(pairs, accumulate: int, clip: float):
    """One SGD step (lr 1) with the window's summed gradient clipped once."""
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
    total = sum((net(x) - y).pow(2).mean() / accumulate for x, y in pairs)
    grads = torch.autograd.grad(total, list(net.parameters()))
    norm = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g) for g in grads]))
    scale = min(1.0, clip / (float(norm) + 1e-6))
    with torch.no_grad():
        return [p - scale * g for p, g in zip(net.parameters(), grads)]


def test_the_finding_changes_the_update_and_its_help_gives_the_hand_written_one():
    torch.manual_seed(1)
    pairs = [(torch.randn(5, 3), torch.randn(5, 1) * 3) for _ in range(4)]
    expected = _hand_written(pairs, 4, 0.05)
    fixed = list(_trained(CLIP_IN_WINDOW, "lib_set_ak_fixed", pairs, 4, 0.05).parameters())
    buggy = list(_trained(CLIP_EACH_MICRO_BATCH, "lib_set_ak_buggy", pairs, 4, 0.05).parameters())
    assert all(torch.allclose(a, b, atol=1e-6) for a, b in zip(fixed, expected))
    assert not all(torch.allclose(a, b, atol=1e-4) for a, b in zip(buggy, expected))
