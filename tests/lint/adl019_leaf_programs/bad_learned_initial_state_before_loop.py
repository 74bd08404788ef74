"""A recurrent policy with a learned initial state: `h0` is computed from the parameter once,
before the loop, and every iteration's backward goes through its graph (tanh saved its result),
which the first backward freed."""
import torch
import torch.nn as nn


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = nn.GRUCell(4, 8)
        self.head = nn.Linear(8, 2)

    def forward(self, obs, h):
        h = self.cell(obs, h)
        return self.head(h), h


def main(steps=3):
    torch.manual_seed(0)
    policy = Policy()
    start = nn.Parameter(torch.zeros(1, 8))
    optimizer = torch.optim.Adam(list(policy.parameters()) + [start], lr=1e-3)
    h0 = torch.tanh(start)
    for step in range(steps):
        obs = torch.randn(1, 4)
        logits, _ = policy(obs, h0)
        loss = logits.pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return start.detach().clone()
