"""`detach()` returns a tensor that shares memory with its source.  A gated
layer computed `gate = torch.sigmoid(self.gate_fc(x))`, took `mask =
gate.detach()` to prune weak gates without sending gradient through the
pruning, and zeroed them in place (`mask[mask < self.threshold] = 0`).  That
writes `gate` itself, which `sigmoid` kept for its backward pass, so
training fails ("one of the variables needed for gradient computation has
been modified by an inplace operation"), the case PyTorch's maintainers give
for why `.detach()` is safer than `.data`.  The fix builds the pruned gate
out of place (`gate * (gate.detach() >= threshold)`).
Buggy line: `mask[mask < self.threshold] = 0` in `GatedLayer.forward`.
Expected finding: ADL005 there (the first run reports it as ADL001 at the same line: the write goes through the alias to what `sigmoid` kept).
Source: https://github.com/pytorch/pytorch/issues/6990"""
import torch
import torch.nn as nn


class GatedLayer(nn.Module):
    def __init__(self, dim=6, threshold=0.5):
        super().__init__()
        self.gate_fc = nn.Linear(dim, dim)
        self.value_fc = nn.Linear(dim, dim)
        self.threshold = threshold

    def forward(self, x):
        gate = torch.sigmoid(self.gate_fc(x))
        mask = gate.detach()
        mask[mask < self.threshold] = 0  # expect: ADL001
        return gate * self.value_fc(x)


def run():
    torch.manual_seed(0)
    layer = GatedLayer()
    optimizer = torch.optim.SGD(layer.parameters(), lr=0.1)
    x, y = torch.randn(4, 6), torch.randn(4, 6)
    loss = (layer(x) - y).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
