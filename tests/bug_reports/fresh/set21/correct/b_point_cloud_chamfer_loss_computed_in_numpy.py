"""A point-cloud decoder trained with the Chamfer distance where NumPy only finds the nearest
neighbours (indices, no gradient needed) and the distances to them are computed in torch, so the
loss keeps its graph to the predicted points.
Source: https://github.com/fwilliams/point-cloud-utils/issues/78."""
import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)

GRID = 8


def nearest_neighbours(query, dataset):
    """Index of the nearest point of `dataset` for each point of `query`, and the squared
    distance to it (NumPy arrays, brute force)."""
    squared = ((query[:, None, :] - dataset[None, :, :]) ** 2).sum(-1)
    index = squared.argmin(1)
    return index, squared[np.arange(len(query)), index]


def chamfer_distance(predicted, target):
    predicted_np = predicted.detach().numpy()
    target_np = target.numpy()
    index_in_target, _ = nearest_neighbours(predicted_np, target_np)
    index_in_predicted, _ = nearest_neighbours(target_np, predicted_np)
    to_target = ((predicted - target[torch.from_numpy(index_in_target)]) ** 2).sum(-1)
    to_predicted = ((target - predicted[torch.from_numpy(index_in_predicted)]) ** 2).sum(-1)
    return to_target.mean() + to_predicted.mean()


u, v = torch.meshgrid(torch.linspace(-1, 1, GRID), torch.linspace(-1, 1, GRID), indexing="ij")
grid = torch.stack([u.reshape(-1), v.reshape(-1)], dim=1)
theta = torch.rand(GRID * GRID) * 2 * np.pi
phi = torch.rand(GRID * GRID) * np.pi
target = torch.stack([phi.sin() * theta.cos(), phi.sin() * theta.sin(), phi.cos()], dim=1)

decoder = nn.Sequential(nn.Linear(2, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 3))
optimizer = torch.optim.Adam(decoder.parameters(), lr=1e-2)
losses = []
for step in range(8):
    predicted = decoder(grid)
    loss = chamfer_distance(predicted, target)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in decoder.parameters()]}
