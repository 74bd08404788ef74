"""Fresh shape of cause 3 of r726 (a project optimizer's own step, not read as a step by
ADL018), written as "deep learning from scratch" course repositories write their optimizers:
a `MomentumSGD` class that keeps the parameters and a velocity per parameter, whose
`update()` reads each `p.grad` and writes `p` in place, and a `train()` function whose loop
runs `loss.backward()` and `optimizer.update()` on every batch, then evaluates.  Nothing
clears the gradients, so each update uses the sum of every gradient computed so far.
Nothing raises: `bug_shows()` compares the weights with the same loop clearing the gradients
before each backward pass.
Buggy line: `optimizer.update()` with no clear of `.grad` anywhere.
Source: https://github.com/fchollet/deep-learning-with-python-notebooks/issues/293 (cause of
r726, this shape written for stop 47)"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class MomentumSGD:
    def __init__(self, params, lr=0.05, momentum=0.9):
        self.params = list(params)
        self.lr = lr
        self.momentum = momentum
        self.velocities = [torch.zeros_like(p) for p in self.params]

    def update(self):
        with torch.no_grad():
            for p, v in zip(self.params, self.velocities):
                v.mul_(self.momentum).add_(p.grad)
                p.sub_(self.lr * v)


class TwoLayerNet(nn.Module):
    def __init__(self, n_in=6, n_hidden=12, n_out=3):
        super().__init__()
        self.fc1 = nn.Linear(n_in, n_hidden)
        self.fc2 = nn.Linear(n_hidden, n_out)

    def forward(self, x):
        return self.fc2(torch.sigmoid(self.fc1(x)))


def batches(n_batches=4):
    torch.manual_seed(1)
    return [(torch.randn(5, 6), torch.randint(0, 3, (5,))) for _ in range(n_batches)]


def accuracy(network, data):
    with torch.no_grad():
        hits = sum((network(x).argmax(1) == t).sum().item() for x, t in data)
    return hits / sum(len(t) for _, t in data)


def train(network, data, epochs=2):
    optimizer = MomentumSGD(network.parameters())
    for _ in range(epochs):
        for x, t in data:
            loss = F.cross_entropy(network(x), t)
            loss.backward()
            optimizer.update()  # expect: ADL018
    return accuracy(network, data)


def run():
    torch.manual_seed(0)
    network = TwoLayerNet()
    train(network, batches())
    return network


def bug_shows():
    network = run()
    torch.manual_seed(0)
    reference = TwoLayerNet()
    velocities = [torch.zeros_like(p) for p in reference.parameters()]
    for _ in range(2):
        for x, t in batches():
            for p in reference.parameters():
                p.grad = None
            F.cross_entropy(reference(x), t).backward()
            with torch.no_grad():
                for p, v in zip(reference.parameters(), velocities):
                    v.mul_(0.9).add_(p.grad)
                    p.sub_(0.05 * v)
    return not torch.allclose(network.fc1.weight, reference.fc1.weight)
