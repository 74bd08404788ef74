"""Set AX (docs/lint.md, "A fifty-second held-out check: set AX"): the false cause of
its first run fixed here, with the false shape (silent), a second false shape
written before the change ran on it, real shapes of the same rule still found, and
a torch check.  None of the shapes is a copy of the set's code:

- ADL018 in threelittlemonkeys/lstm-crf-pytorch
  (https://github.com/threelittlemonkeys/lstm-crf-pytorch, `train.py`): the loop
  calls `loss = model(xc, xw, y0)`, `loss.backward()`, `optim.step()` with no
  `zero_grad()` in the loop, but `model` is built from a class of another project
  file (`from rnn_crf import *`) whose `forward` starts with `self.zero_grad()`,
  and the optimizer is built over `model.parameters()`: every call clears the
  gradients the step reads.  Only a method called on the object
  (`trainer.reset_grad()`) was looked up in its project class, not the `forward`
  that calling the module runs, and a star-imported class was not found.
"""

from __future__ import annotations

import os

import torch
from torch import nn

from autograd_doctor.lint.engine import Selection, lint_source


def _adl018(path):
    with open(path) as f:
        source = f.read()
    return [f.line for f in lint_source(source, filename=path, selection=Selection(select=("ALL",)))
            if f.code == "ADL018"]


def _line(source, text):
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


def _project(tmp_path, files: dict, main_name: str, main: str):
    tmp_path.mkdir(parents=True, exist_ok=True)
    for relative, text in files.items():
        path = tmp_path / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    path = tmp_path / main_name
    path.write_text(main)
    return os.fspath(path)


# --- ADL018: the called model's own `forward` clears its gradients ------------------

# The set's form: the model class star-imported from another file, its forward
# clearing the module's gradients before computing the loss it returns.
SCORER = '''
import torch
from torch import nn


class PairScorer(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.proj = nn.Linear(width, 1)

    def forward(self, x, y):
        self.zero_grad()
        return ((self.proj(x).squeeze(-1) - y) ** 2).mean()
'''

STAR_LOOP = '''
import torch
from scorer import *


def fit(batches, epochs, path):
    model = PairScorer(4)
    optim = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(epochs):
        for x, y in batches:
            loss = model(x, y)
            loss.backward()
            optim.step()
    torch.save(model.state_dict(), path)
'''

# Another shape, written before the change ran on it: a package, the class imported
# by name, `forward` inherited from a project base class that clears, an Adam
# optimizer with keyword options, a `while` loop.
BASE = '''
from torch import nn


class SelfClearing(nn.Module):
    def forward(self, *batch):
        self.zero_grad()
        return self.objective(*batch)
'''

HEADS = '''
from torch import nn

from nets.base import SelfClearing


class Regressor(SelfClearing):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(3, 5), nn.Tanh(), nn.Linear(5, 1))

    def objective(self, x, y):
        return nn.functional.mse_loss(self.body(x).squeeze(-1), y)
'''

NAMED_LOOP = '''
import torch
from nets.heads import Regressor


def run(stream, steps):
    net = Regressor()
    opt = torch.optim.Adam(net.parameters(), lr=1e-2, betas=(0.8, 0.9))
    step = 0
    while step < steps:
        x, y = stream[step % len(stream)]
        objective = net(x, y)
        objective.backward()
        opt.step()
        step += 1
    return net
'''

# Real twins, still reported: the forward does not clear; the forward clears the
# model, but the optimizer also steps a tensor outside it, whose gradient piles up.
NOT_CLEARING = SCORER.replace("        self.zero_grad()\n", "")

EXTRA_PARAMETER_LOOP = '''
import torch
from scorer import *


def fit(batches, epochs, path):
    model = PairScorer(4)
    shift = torch.zeros(1, requires_grad=True)
    optim = torch.optim.SGD(list(model.parameters()) + [shift], lr=0.1)
    for epoch in range(epochs):
        for x, y in batches:
            loss = model(x, y) + (shift ** 2).sum()
            loss.backward()
            optim.step()
    torch.save({"model": model.state_dict(), "shift": shift}, path)
'''


def test_model_whose_forward_clears_is_silent_star_import(tmp_path):
    path = _project(tmp_path, {"scorer.py": SCORER}, "train.py", STAR_LOOP)
    assert _adl018(path) == []


def test_model_whose_inherited_forward_clears_is_silent_named_import(tmp_path):
    files = {"nets/__init__.py": "", "nets/base.py": BASE, "nets/heads.py": HEADS}
    path = _project(tmp_path, files, "run.py", NAMED_LOOP)
    assert _adl018(path) == []


def test_forward_that_does_not_clear_is_still_reported(tmp_path):
    path = _project(tmp_path, {"scorer.py": NOT_CLEARING}, "train.py", STAR_LOOP)
    assert _adl018(path) == [_line(STAR_LOOP, "optim.step()")]


def test_optimizer_over_more_than_the_model_is_still_reported(tmp_path):
    path = _project(tmp_path, {"scorer.py": SCORER}, "train.py", EXTRA_PARAMETER_LOOP)
    assert _adl018(path) == [_line(EXTRA_PARAMETER_LOOP, "optim.step()")]


def test_star_import_shadowed_by_the_file_is_not_followed(tmp_path):
    # The file defines its own `PairScorer` (no clearing): that class is the one built.
    own = STAR_LOOP.replace("def fit(", NOT_CLEARING.split("\n\n\n", 1)[1] + "\n\ndef fit(")
    path = _project(tmp_path, {"scorer.py": SCORER}, "train.py", own)
    assert _adl018(path) == [_line(own, "optim.step()")]


# --- torch: the clearing forward trains as `zero_grad()` in the loop does ----------

class _Scorer(nn.Module):
    def __init__(self, clears):
        super().__init__()
        torch.manual_seed(0)
        self.proj = nn.Linear(4, 1)
        self.clears = clears

    def forward(self, x, y):
        if self.clears:
            self.zero_grad()
        return ((self.proj(x).squeeze(-1) - y) ** 2).mean()


def _train(clears, clear_in_loop):
    torch.manual_seed(1)
    batches = [(torch.randn(6, 4), torch.randn(6)) for _ in range(4)]
    model = _Scorer(clears)
    optim = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in batches:
        if clear_in_loop:
            optim.zero_grad()
        loss = model(x, y)
        loss.backward()
        optim.step()
    return [p.detach().clone() for p in model.parameters()]


def test_torch_clearing_forward_equals_the_correct_loop_and_the_real_shape_differs():
    correct = _train(clears=False, clear_in_loop=True)
    silent_shape = _train(clears=True, clear_in_loop=False)
    real_shape = _train(clears=False, clear_in_loop=False)
    assert all(torch.equal(a, b) for a, b in zip(correct, silent_shape))
    assert not all(torch.allclose(a, b) for a, b in zip(correct, real_shape))
