"""The near twin of r745: the from-scratch optimizer also has a `zero_grad()` that sets each
`p.grad` to None, and the training loop calls it before every backward pass.  Correct: must
stay silent."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class MomentumSGD:
    def __init__(self, params, lr=0.05, momentum=0.9):
        self.params = list(params)
        self.lr = lr
        self.momentum = momentum
        self.velocities = [torch.zeros_like(p) for p in self.params]

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    def update(self):
        with torch.no_grad():
            for p, v in zip(self.params, self.velocities):
                v.mul_(self.momentum).add_(p.grad)
                p.sub_(self.lr * v)


def batches(n_batches=4):
    torch.manual_seed(1)
    return [(torch.randn(5, 6), torch.randint(0, 3, (5,))) for _ in range(n_batches)]


def train(network, data, epochs=2):
    optimizer = MomentumSGD(network.parameters())
    for _ in range(epochs):
        for x, t in data:
            optimizer.zero_grad()
            loss = F.cross_entropy(network(x), t)
            loss.backward()
            optimizer.update()
    return network


def run():
    torch.manual_seed(0)
    network = nn.Sequential(nn.Linear(6, 12), nn.Sigmoid(), nn.Linear(12, 3))
    return train(network, batches())
