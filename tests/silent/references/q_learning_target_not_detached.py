"""The Q-learning update: the target is a constant of the step (computed without a graph)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
body = nn.Sequential(nn.Linear(4, 32), nn.Tanh(), nn.Linear(32, 3))
optimizer = torch.optim.SGD(body.parameters(), lr=0.05)
for _ in range(4):
    states = torch.randn(24, 4)
    actions, rewards = torch.randint(0, 3, (24,)), torch.randn(24)
    next_states, finished = states + 0.1 * torch.randn(24, 4), (torch.rand(24) < 0.2).float()
    with torch.no_grad():
        target = rewards + 0.9 * (1.0 - finished) * body(next_states).max(dim=1).values
    chosen = body(states)[torch.arange(24), actions]
    loss = F.smooth_l1_loss(chosen, target)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
result = [p.detach().clone() for p in body.parameters()]
