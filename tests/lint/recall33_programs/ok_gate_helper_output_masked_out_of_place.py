"""Correct near twin: the same gate, masked out of place (`gate.masked_fill(pad,
0.0)`): nothing the sigmoid kept is written.  ADL001 silent."""
import torch
import torch.nn as nn


class Gate(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.score = nn.Linear(dim, 1)

    def gate_of(self, h):
        g = self.score(h).squeeze(-1)
        g = torch.sigmoid(g)
        return g

    def forward(self, h, pad):
        gate = self.gate_of(h)
        gate = gate.masked_fill(pad, 0.0)
        return (h * gate.unsqueeze(-1)).sum(dim=1)


def run():
    torch.manual_seed(0)
    model = Gate(4)
    h = torch.randn(2, 5, 4)
    pad = torch.zeros(2, 5, dtype=torch.bool)
    pad[:, 3:] = True
    loss = model(h, pad).pow(2).sum()
    loss.backward()
    return model.score.weight.grad.clone()


def expected_grad():
    torch.manual_seed(0)
    model = Gate(4)
    h = torch.randn(2, 5, 4)
    pad = torch.zeros(2, 5, dtype=torch.bool)
    pad[:, 3:] = True
    gate = torch.sigmoid(model.score(h).squeeze(-1)) * (~pad)
    loss = (h * gate.unsqueeze(-1)).sum(dim=1).pow(2).sum()
    loss.backward()
    return model.score.weight.grad.clone()
