# message: one of the variables needed for gradient computation has been modified by an inplace operation
# code: AD101 (catalogue: saved_tensor_modified)
# helpers: lib_priority_weights.py
# set: 20
# trigger: a prioritised replay helper in another file weighs each sampled transition by
#   exp(-|td error|) and zeroes the stale ones with weights.index_put_((stale,), 0); exp saved its
#   result for backward, and the weights multiply the TD loss of a Q-network trained in a loop
# source: none found; the pattern as users write it (priority weights kept differentiable by mistake)
# results: q_net, losses
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from lib_priority_weights import importance_weights  # noqa: E402


class ReplayBuffer:
    def __init__(self, capacity, dim):
        self.states = torch.randn(capacity, dim)
        self.rewards = torch.randn(capacity)
        self.age = torch.arange(capacity)

    def sample(self, batch, step):
        index = torch.randint(0, len(self.rewards), (batch,))
        return self.states[index], self.rewards[index], (step - self.age[index]) > 30


torch.manual_seed(0)
buffer = ReplayBuffer(64, 4)
q_net = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 1))
optimizer = torch.optim.Adam(q_net.parameters(), lr=1e-2)
losses = []
for step in range(40, 43):
    states, rewards, stale = buffer.sample(16, step)
    td = q_net(states).squeeze(1) - rewards
    loss = (importance_weights(td, stale) * td ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
