"""The learned initial state computed in each iteration: every backward has its own graph."""
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
    for step in range(steps):
        h0 = torch.tanh(start)
        obs = torch.randn(1, 4)
        logits, _ = policy(obs, h0)
        loss = logits.pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return start.detach().clone()
