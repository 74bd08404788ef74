# message: unsupported operation: some elements of the input tensor and the written-to tensor refer
#   to a single memory location. Please clone() the tensor before performing the operation.
# code: AD203 (catalogue: overlap_inplace)
# set: 21
# trigger: a replay buffer turns a stored trajectory of positions into step deltas in place with
#   traj[1:].sub_(traj[:-1]) (overlapping rows of one tensor) before a dynamics model trains on them
# source: none found; the pattern as users write it (model-based RL replay buffers)
# results: model, losses
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


class TrajectoryBuffer:
    def __init__(self):
        self.trajectories = []

    def push(self, positions):
        self.trajectories.append(positions.clone())

    def deltas(self, index):
        traj = self.trajectories[index].clone()
        traj[1:].sub_(traj[:-1])  # PRIMARY
        return traj[1:]


torch.manual_seed(0)
buffer = TrajectoryBuffer()
for _ in range(3):
    buffer.push(torch.randn(6, 2).cumsum(0))
model = nn.Linear(2, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
losses = []
for i in range(3):
    steps = buffer.deltas(i)
    loss = nn.functional.mse_loss(model(steps[:-1]), steps[1:])
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
