"""Fitted value iteration bootstrapped from a snapshot of the value network taken at each step:
the value network's prediction is detached, `value_net(states).detach()`, and compared with a
target that still carries the snapshot's graph. The loss's gradient reaches only the snapshot,
which no optimizer steps, so the value network's optimizer has nothing to apply and the value
network never moves."""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
value_net = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1))
optimizer = torch.optim.SGD(value_net.parameters(), lr=0.1)
states, next_states, rewards = torch.randn(4, 6, 3), torch.randn(4, 6, 3), torch.randn(4, 6, 1)
for step in range(4):
    snapshot = copy.deepcopy(value_net)
    prediction = value_net(states[step]).detach()  # PRIMARY
    target = rewards[step] + 0.9 * snapshot(next_states[step])
    loss = F.mse_loss(prediction, target)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
result = [p.detach().clone() for p in value_net.parameters()]
