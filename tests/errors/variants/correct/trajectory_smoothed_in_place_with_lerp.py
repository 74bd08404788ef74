# message: unsupported operation: some elements of the input tensor and the written-to tensor refer to a
#   single memory location. Please clone() the tensor before performing the operation.
# code: AD203 (catalogue: overlap_inplace)
# set: 17
# trigger: a trajectory decoder smooths its predicted waypoints (time, 2) in place with
#   waypoints[1:].lerp_(waypoints[:-1], 0.5) inside forward, each point pulled towards the point before
#   it as predicted (the two slices overlap), in a training loop
# source: none found; the pattern as users write it (NumPy-style in-place smoothing of a sequence)
# results: losses, model
import torch
from torch import nn


class WaypointDecoder(nn.Module):
    def __init__(self, hidden=8, steps=6):
        super().__init__()
        self.steps = steps
        self.head = nn.Linear(hidden, steps * 2)

    def forward(self, h):
        waypoints = self.head(h).view(-1, self.steps, 2).cumsum(1)[0]
        waypoints = torch.cat([waypoints[:1], waypoints[1:].lerp(waypoints[:-1], 0.5)])  # PRIMARY
        return waypoints


torch.manual_seed(0)
model = WaypointDecoder()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
losses = []
for _ in range(3):
    h, target = torch.randn(1, 8), torch.randn(6, 2)
    optimizer.zero_grad()
    loss = (model(h) - target).pow(2).mean()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
