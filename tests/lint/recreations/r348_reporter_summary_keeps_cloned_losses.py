"""pytorch-pfn-extras' reporter copied each reported tensor with `clone()`
before handing it to the summaries that average the values over an
interval.  `clone()` keeps the autograd history, so the running summary
chained the graph of every iteration reported since the last reset, keeping
them in memory.  Nothing raises.  The fix (#49) stores `detach()`ed values.
Buggy line: `value = value.clone()` in `Reporter.report`.
Expected finding: a graph tensor kept across iterations in an object's state
(no default rule).
Source: https://github.com/pfnet/pytorch-pfn-extras/pull/49"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Summary:
    def __init__(self):
        self._x = 0.0
        self._n = 0

    def add(self, value):
        self._x += value
        self._n += 1

    def compute_mean(self):
        return self._x / self._n


class Reporter:
    def __init__(self):
        self.observation = {}
        self.summaries = {}

    def report(self, values):
        for key, value in values.items():
            if isinstance(value, torch.Tensor):
                value = value.clone()  # missed: none
            self.observation[key] = value
            self.summaries.setdefault(key, Summary()).add(value)


def train(model, optimizer, reporter, batches):
    for x, y in batches:
        optimizer.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        reporter.report({"train/loss": loss})


def bug_shows():
    """The interval's mean loss still carries the graph of every batch."""
    torch.manual_seed(0)
    model = nn.Linear(3, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    reporter = Reporter()
    train(model, optimizer, reporter, [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(3)])
    return reporter.summaries["train/loss"].compute_mean().grad_fn is not None
