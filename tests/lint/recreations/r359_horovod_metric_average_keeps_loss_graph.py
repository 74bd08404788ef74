"""Horovod's ImageNet ResNet-50 example averages its training loss across
workers with a small `Metric` class: `train_loss.update(loss)` adds the
all-reduced loss into `self.sum` in place.  The loss is passed with its
graph, so `self.sum` becomes a graph tensor that holds every batch's graph
of the epoch: memory grew until training ran out of it (OOM).  Nothing
raises before that.  The fix reduces `val.detach()`.
Buggy line: `self.sum += allreduce_average(val)` in `Metric.update`.
Expected finding: ADL023 at `train_loss.update(loss)` (the loss handed, on
every iteration, to a method that adds it into the object's `self.sum`; the
method's line is the finding's related location; memory only).
Source: https://github.com/horovod/horovod/pull/641"""
import torch
import torch.nn as nn
import torch.nn.functional as F


def allreduce_average(tensor):
    """Stands in for `hvd.allreduce` on one worker: the average over workers
    is the tensor itself."""
    return tensor.cpu()


class Metric:
    def __init__(self, name):
        self.name = name
        self.sum = torch.tensor(0.0)
        self.n = torch.tensor(0.0)

    def update(self, val):
        self.sum += allreduce_average(val)
        self.n += 1

    @property
    def avg(self):
        return self.sum / self.n


def train(model, optimizer, batches):
    train_loss = Metric("train_loss")
    for data, target in batches:
        optimizer.zero_grad()
        output = model(data)
        loss = F.cross_entropy(output, target)
        loss.backward()
        optimizer.step()
        train_loss.update(loss)  # expect: ADL023
    return train_loss


def bug_shows():
    """The epoch's average still carries a graph through every batch."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    batches = [(torch.randn(2, 4), torch.tensor([0, 2])) for _ in range(3)]
    metric = train(model, optimizer, batches)
    return metric.sum.grad_fn is not None
