"""Set AH's false findings (docs/lint.md, "A thirty-sixth held-out check: set AH"): two
causes, each now a link its rule needs evidence for.  The programs are written for these
tests (not copied), in shapes other than the set's.

- ADL018, "backward filled `.grad` before the clear": implicit-hyper-opt's hyper-step
  (https://github.com/lorraine2/implicit-hyper-opt, `rnn/train2.py`) runs
  `torch.autograd.grad(...)`, then `hyper_optimizer.zero_grad()`, assigns the
  hypergradient to `.grad` and steps.  `torch.autograd.grad` returns its gradients and
  accumulates into no `.grad`; a clearing after it clears nothing it computed.  A clearing
  after `loss.backward()` or `torch.autograd.backward(...)` is still found.
- ADL001, "backward reaches the saving op": BasicTS's DFT decomposition
  (https://github.com/GestaltCogTeam/BasicTS, `src/basicts/modules/decomposition.py`)
  keeps `x` in `freq = x.abs()` and then writes `x[freq <= top.min()] = 0`, but everything
  derived from `freq` ends in a comparison, so no backward reaches the node that saved
  `x`.  Where a value derived from the op's result also reaches the output, it is found.
"""

from __future__ import annotations

import sys

import pytest
import torch
import torch.nn as nn

from autograd_doctor.lint.engine import Selection, lint_source

META_GRADS = '''
import torch
from torch import nn


def meta_train(model, meta_opt, tasks, scale=0.1):
    for x, y in tasks:
        loss = nn.functional.mse_loss(model(x), y)
        grads = torch.autograd.grad(loss, list(model.parameters()))
        meta_opt.zero_grad()
        for p, g in zip(model.parameters(), grads):
            p.grad = g * scale
        meta_opt.step()
'''

IMPORTED_GRAD = '''
import torch
from torch.autograd import grad as autograd_grad


class Trainer:
    def __init__(self, net):
        self.net = net
        self.opt = torch.optim.SGD(net.parameters(), lr=0.1)

    def fit(self, batches):
        for x in batches:
            penalty = self.net(x).pow(2).mean()
            g = autograd_grad(penalty, self.net.weight, create_graph=True)[0]
            self.opt.zero_grad()
            self.net.weight.grad = g.detach()
            self.opt.step()
'''

CLEARED_AFTER_BACKWARD = '''
import torch
from torch import nn


def train(model, batches):
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in batches:
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.zero_grad()
        opt.step()
'''

CLEARED_AFTER_AUTOGRAD_BACKWARD = '''
import torch


class Learner:
    def __init__(self, net):
        self.net = net
        self.optimizer = torch.optim.SGD(net.parameters(), lr=0.1)

    def update(self, x):
        out = self.net(x).sum()
        torch.autograd.backward(out)
        self.optimizer.zero_grad()
        self.optimizer.step()
'''

THRESHOLD_MASK = '''
import torch
from torch import nn


class SparseGate(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        h = self.proj(x)
        score = h.abs()
        cut = score.mean(dim=-1, keepdim=True)
        h[score < cut] = 0
        return h * 2
'''

TOPK_KEEP = '''
import torch
from torch import nn


class KeepTopK(nn.Module):
    def __init__(self, k):
        super().__init__()
        self.k = k
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        z = self.lin(x)
        power = z.pow(2)
        power[..., 0] = 0
        vals, _idx = torch.topk(power, self.k)
        z[power < vals[..., -1:]] = 0.0
        return z
'''

# near-twins: a value derived from the saving op's result reaches the output
THRESHOLD_MASK_RETURNED = THRESHOLD_MASK.replace("return h * 2", "return h, score.sum()")
TOPK_USED = TOPK_KEEP.replace("return z\n", "return z + vals.mean()\n")


def found(source: str, code: str):
    return [f.line for f in lint_source(source, filename="<string>", selection=Selection(select=("ALL",)))
            if f.code == code]


def line_of(source: str, text: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


def load(source: str, name: str):
    module = type(sys)(name)
    exec(compile(source, name, "exec"), module.__dict__)
    return module


def tasks(n=3):
    torch.manual_seed(0)
    return [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(n)]


def test_a_clearing_after_autograd_grad_is_silent_and_the_step_moves():
    assert found(META_GRADS, "ADL018") == []
    net = nn.Linear(3, 1)
    before = net.weight.detach().clone()
    load(META_GRADS, "set_ah_meta").meta_train(net, torch.optim.SGD(net.parameters(), lr=1.0), tasks())
    assert not torch.equal(before, net.weight.detach())  # the assigned gradients were used


def test_a_clearing_after_imported_autograd_grad_is_silent_and_the_step_moves():
    assert found(IMPORTED_GRAD, "ADL018") == []
    torch.manual_seed(0)
    net = nn.Linear(3, 3)
    before = net.weight.detach().clone()
    load(IMPORTED_GRAD, "set_ah_imported").Trainer(net).fit([torch.randn(4, 3) for _ in range(2)])
    assert not torch.equal(before, net.weight.detach())


@pytest.mark.parametrize("source, name, call", [
    (CLEARED_AFTER_BACKWARD, "set_ah_cleared", "loss.backward()"),
    (CLEARED_AFTER_AUTOGRAD_BACKWARD, "set_ah_cleared_fn", "torch.autograd.backward(out)"),
])
def test_a_clearing_after_a_backward_is_still_found_and_the_step_moves_nothing(source, name, call):
    assert found(source, "ADL018") == [line_of(source, "zero_grad()")]
    torch.manual_seed(0)
    net = nn.Linear(3, 1)
    before = [p.detach().clone() for p in net.parameters()]
    module = load(source, name)
    if "def train" in source:
        module.train(net, tasks())
    else:
        module.Learner(net).update(torch.randn(4, 3))
    assert all(torch.equal(a, p.detach()) for a, p in zip(before, net.parameters()))  # plain SGD: no move
    # the help applied: clear before the backward pass
    fixed = source.replace(f"        {call}\n", "").replace("zero_grad()\n", f"zero_grad()\n        {call}\n")
    assert found(fixed, "ADL018") == []
    net2 = nn.Linear(3, 1)
    before2 = [p.detach().clone() for p in net2.parameters()]
    module2 = load(fixed, name + "_fixed")
    if "def train" in source:
        module2.train(net2, tasks())
    else:
        module2.Learner(net2).update(torch.randn(4, 3))
    assert not all(torch.equal(a, p.detach()) for a, p in zip(before2, net2.parameters()))


@pytest.mark.parametrize("source, name, cls, arg", [
    (THRESHOLD_MASK, "set_ah_gate", "SparseGate", 8),
    (TOPK_KEEP, "set_ah_topk", "KeepTopK", 3),
])
def test_a_save_whose_result_only_comparisons_read_is_silent_and_backward_runs(source, name, cls, arg):
    assert found(source, "ADL001") == []
    out = getattr(load(source, name), cls)(arg)(torch.randn(4, 8))
    out.sum().backward()  # no error: the node that saved the written tensor is on no path


@pytest.mark.parametrize("source, name, cls, arg, write", [
    (THRESHOLD_MASK_RETURNED, "set_ah_gate_aux", "SparseGateAux", 8, "h[score < cut] = 0"),
    (TOPK_USED, "set_ah_topk_used", "KeepTopK", 3, "z[power < vals[..., -1:]] = 0.0"),
])
def test_a_save_whose_result_reaches_the_output_is_still_found_and_raises(source, name, cls, arg, write):
    source = source.replace("class SparseGate(", "class SparseGateAux(")
    assert found(source, "ADL001") == [line_of(source, write)]
    out = getattr(load(source, name), cls)(arg)(torch.randn(4, 8))
    total = sum(o.sum() for o in (out if isinstance(out, tuple) else (out,)))
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        total.backward()
