"""A hand-written batch norm (a `BatchNorm2d` subclass re-implementing
`forward` to experiment with the statistics) updates its running statistics
from the batch statistics it normalises with, outside `torch.no_grad()`:
`self.running_mean = m * mean + (1 - m) * self.running_mean`.  Each update
chains the new buffer to the previous one and to the batch's graph, so the
graph of every batch since the start stays alive through the buffer; the
reporter saw host memory grow by gigabytes over a night ("that running_mean
update is exactly your problem.  You keep extending the graph").  Nothing
raises; the fix updates the statistics under `torch.no_grad()` (or from
detached statistics).
Buggy line: `self.running_mean = ...` in `MyBatchNorm2d.forward`.
Expected finding: ADL017 there (a graph tensor kept on a module).
Source: https://github.com/pytorch/pytorch/issues/20275"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class MyBatchNorm2d(nn.BatchNorm2d):
    def forward(self, input):
        exponential_average_factor = self.momentum
        if self.training:
            mean = input.mean([0, 2, 3])
            var = input.var([0, 2, 3], unbiased=False)
            n = input.numel() / input.size(1)
            self.running_mean = exponential_average_factor * mean + (1 - exponential_average_factor) * self.running_mean  # expect: ADL017
            self.running_var = exponential_average_factor * var * n / (n - 1) + (1 - exponential_average_factor) * self.running_var  # expect: ADL017
        else:
            mean = self.running_mean
            var = self.running_var
        out = (input - mean[None, :, None, None]) / torch.sqrt(var[None, :, None, None] + self.eps)
        return out * self.weight[None, :, None, None] + self.bias[None, :, None, None]


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.bn = MyBatchNorm2d(4)
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        x = F.relu(self.bn(self.conv(x)))
        return self.fc(x.mean([2, 3]))


def train(model, optimizer, batches):
    for x, y in batches:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()


def bug_shows():
    """After training, the running mean still carries the graph of the
    batches (a correct batch norm keeps a plain buffer)."""
    torch.manual_seed(0)
    model = Net()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    batches = [(torch.randn(2, 3, 5, 5), torch.tensor([0, 1])) for _ in range(3)]
    train(model, optimizer, batches)
    return model.bn.running_mean.grad_fn is not None
