"""Train with pytorch-softdtw-cuda's CPU soft-DTW loss, seeded, printing losses and checksums
(docs/real-code.md, thirteenth set).

pytorch-softdtw-cuda (https://github.com/Maghoumi/pytorch-softdtw-cuda) has no test that runs
without a GPU. Its CPU path is a custom autograd Function whose forward computes the soft-DTW
table in numba from a detached NumPy copy of the distance matrix and saves that matrix, the table
(a tensor made inside forward) and two scalar tensors made there with `save_for_backward`; its
backward recomputes the alignment matrix in numba. This driver uses its `SoftDTW` module (with and
without the normalisation, with and without a Sakoe-Chiba band, with its own Euclidean distance
and with a distance function passed in) as the loss of a small recurrent model trained with Adam,
and finds a soft-DTW barycentre of a few series by gradient descent on the barycentre itself.
usage: python softdtw_steps.py   (the snapshot's folder and numba on PYTHONPATH)
"""
import math

import torch
from soft_dtw_cuda import SoftDTW


def checksum(tensors):
    return sum(float(t.detach().double().abs().sum()) for t in tensors)


def noisy_series(count, length, dims, generator, shift=0.0):
    time = torch.linspace(0, 2 * math.pi, length)
    phases = torch.rand(count, 1, dims, generator=generator) * math.pi + shift
    return torch.sin(time[None, :, None] * 2 + phases) + 0.1 * torch.randn(count, length, dims, generator=generator)


class Forecaster(torch.nn.Module):
    """A GRU that maps one series to another of the same length."""

    def __init__(self, dims, hidden):
        super().__init__()
        self.gru = torch.nn.GRU(dims, hidden, batch_first=True)
        self.out = torch.nn.Linear(hidden, dims)

    def forward(self, series):
        states, _ = self.gru(series)
        return self.out(states)


def manhattan(x, y):
    """Point-wise L1 distances, batch x n x m (a distance function passed to SoftDTW)."""
    return (x.unsqueeze(2) - y.unsqueeze(1)).abs().sum(3)


def train(configuration, steps=8):
    name, options = configuration
    generator = torch.Generator().manual_seed(5)
    inputs = noisy_series(6, 20, 2, generator)
    targets = noisy_series(6, 24, 2, generator, shift=0.5)[:, :20]
    torch.manual_seed(0)
    model = Forecaster(2, 8)
    loss_function = SoftDTW(use_cuda=False, **options)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
    for step in range(steps):
        optimizer.zero_grad()
        loss = loss_function(model(inputs), targets).mean()
        loss.backward()
        optimizer.step()
        if step % 2 == 0:
            print(f"{name} step {step} loss {loss.item():.6f}")
    print(f"{name} checksum {checksum(model.parameters()):.6f}")


def barycentre(iterations=15):
    generator = torch.Generator().manual_seed(6)
    series = noisy_series(4, 16, 1, generator)
    centre = series.mean(dim=0, keepdim=True).clone().requires_grad_(True)
    loss_function = SoftDTW(use_cuda=False, gamma=0.1)
    optimizer = torch.optim.SGD([centre], lr=0.05)
    for iteration in range(iterations):
        optimizer.zero_grad()
        loss = loss_function(centre.expand(len(series), -1, -1), series).sum()
        loss.backward()
        optimizer.step()
        if iteration % 5 == 0:
            print(f"barycentre iteration {iteration} loss {loss.item():.6f}")
    print(f"barycentre checksum {checksum([centre]):.6f}")


if __name__ == "__main__":
    torch.set_num_threads(1)
    for configuration in [
        ("plain", dict(gamma=1.0)),
        ("normalized", dict(gamma=0.5, normalize=True)),
        ("banded", dict(gamma=1.0, bandwidth=4)),
        ("manhattan", dict(gamma=1.0, dist_func=manhattan)),
    ]:
        train(configuration)
    barycentre()
