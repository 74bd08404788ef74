"""Wrong: a gating helper returns the sigmoid of a linear score; the caller masks
the padded positions of that gate in place (`gate[pad] = 0.0`): sigmoid keeps its
output for backward, so `loss.backward()` raises.  ADL001 at the masked write."""
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
        gate[pad] = 0.0
        return (h * gate.unsqueeze(-1)).sum(dim=1)


def run():
    torch.manual_seed(0)
    model = Gate(4)
    h = torch.randn(2, 5, 4)
    pad = torch.zeros(2, 5, dtype=torch.bool)
    pad[:, 3:] = True
    loss = model(h, pad).pow(2).sum()
    loss.backward()
