"""A PyTorch issue: to keep the gradient of an intermediate (non-leaf)
value, the user writes `s = torch.sigmoid(x)`, then `s.requires_grad = True`
and `s.retain_grad()`; the assignment raises "you can only change
requires_grad flags of leaf variables" (`retain_grad()` alone is what is
needed).  Re-created as a gated MLP that wants to inspect the gradients of
its gate activations: the gate is computed in `forward`, marked, kept on
the module, and read after `backward()` in a training step.  Raises at the
first forward.
Buggy line: `gate.requires_grad = True` (a flag set on a computed tensor).
Source: https://github.com/pytorch/pytorch/issues/3890"""
import torch
import torch.nn as nn


class GatedMLP(nn.Module):
    def __init__(self, dim=8):
        super().__init__()
        self.value = nn.Linear(dim, dim)
        self.gate_fc = nn.Linear(dim, dim)
        self.out = nn.Linear(dim, 1)
        self.last_gate = None

    def forward(self, x):
        gate = torch.sigmoid(self.gate_fc(x))
        gate.requires_grad = True  # expect: ADL040
        gate.retain_grad()
        self.last_gate = gate
        return self.out(gate * self.value(x))


def train_step(model, optimizer, x, y):
    optimizer.zero_grad()
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    gate_grad_norm = model.last_gate.grad.norm().item()
    optimizer.step()
    return loss.item(), gate_grad_norm


def run():
    torch.manual_seed(0)
    model = GatedMLP()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    train_step(model, optimizer, torch.randn(4, 8), torch.randn(4, 1))
