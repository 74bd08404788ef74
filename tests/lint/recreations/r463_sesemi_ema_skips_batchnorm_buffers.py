"""SESEMI's EMA of the model, used in fully supervised mode, averages the
parameters only: the batch-norm running statistics of the EMA copy keep
their initial values (mean 0, variance 1) for the whole training, and the
EMA model evaluates with them.  Nothing raises.  The fix also copies (or
averages) the buffers.
Buggy line: the loop over `parameters()` only, in `EMA.update`.
Source: https://github.com/FlyreelAI/sesemi/issues/36"""
import copy

import torch
import torch.nn as nn


class EMA:
    def __init__(self, model, decay=0.9, with_buffers=False):
        self.module = copy.deepcopy(model)
        self.decay = decay
        self.with_buffers = with_buffers

    @torch.no_grad()
    def update(self, model):
        for ema_p, p in zip(self.module.parameters(), model.parameters()):  # missed: ADL030 finds it, opt-in (--select ADL030)
            ema_p.mul_(self.decay).add_(p, alpha=1 - self.decay)
        if self.with_buffers:
            for ema_b, b in zip(self.module.buffers(), model.buffers()):
                ema_b.copy_(b)


def train(with_buffers):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 6), nn.BatchNorm1d(6), nn.ReLU(), nn.Linear(6, 2))
    ema = EMA(model, with_buffers=with_buffers)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(5):
        x = torch.randn(8, 4) * 3 + 2
        loss = nn.functional.cross_entropy(model(x), torch.randint(0, 2, (8,)))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        ema.update(model)
    return ema.module[1].running_mean.clone()


def bug_shows():
    """The EMA model's batch-norm mean stays at its initial zeros."""
    return torch.equal(train(False), torch.zeros(6)) and not torch.equal(train(True), torch.zeros(6))
