"""A from-scratch Adagrad-like optimizer whose `update()` applies each gradient and then
clears it (`p.grad.zero_()`), as some course code does instead of a separate `zero_grad()`:
each update uses one batch's gradient.  Correct: must stay silent."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Adagrad:
    def __init__(self, params, lr=0.1, eps=1e-8):
        self.params = list(params)
        self.lr = lr
        self.eps = eps
        self.sums = [torch.zeros_like(p) for p in self.params]

    def update(self):
        with torch.no_grad():
            for p, s in zip(self.params, self.sums):
                s.add_(p.grad * p.grad)
                p.sub_(self.lr * p.grad / (s.sqrt() + self.eps))
                p.grad.zero_()


def batches(n_batches=4):
    torch.manual_seed(1)
    return [(torch.randn(5, 6), torch.randint(0, 3, (5,))) for _ in range(n_batches)]


def train(network, data, epochs=2):
    optimizer = Adagrad(network.parameters())
    for _ in range(epochs):
        for x, t in data:
            loss = F.cross_entropy(network(x), t)
            loss.backward()
            optimizer.update()
    return network


def run():
    torch.manual_seed(0)
    network = nn.Sequential(nn.Linear(6, 12), nn.Sigmoid(), nn.Linear(12, 3))
    return train(network, batches())
