"""FedML's decentralized online learning simulation (DSGD / push-sum): each
client trains on one streaming sample per iteration, runs backward (or
`autograd.grad`), steps, and appends the loss tensor itself to
`self.loss_in_each_iteration`; after each iteration the simulation's regret is
`np.sum(client.get_regret())` over every client.  The list holds 0-d tensors
that require grad, so numpy's conversion raises "Can't call numpy() on Tensor
that requires grad" at the first iteration (and, were it read another way,
every iteration's graph would stay in the list).  Re-created in other words:
an online learner that records each step's loss as a tensor and a regret
helper that sums the records with numpy.
Buggy line: `self.loss_in_each_iteration.append(loss)`.
Source: https://github.com/FedML-AI/FedML/blob/master/python/fedml/simulation/sp/decentralized/client_dsgd.py"""
import numpy as np
import torch
import torch.nn as nn


class OnlineClient:
    def __init__(self, samples, lr=0.05):
        self.samples = samples
        self.model = nn.Linear(3, 1)
        self.criterion = nn.MSELoss()
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=lr)
        self.loss_in_each_iteration = []

    def train_local(self, t):
        self.optimizer.zero_grad()
        x, y = self.samples[t % len(self.samples)]
        loss = self.criterion(self.model(x), y)
        loss.backward()
        self.optimizer.step()
        self.loss_in_each_iteration.append(loss)  # expect: ADL023

    def get_regret(self):
        return self.loss_in_each_iteration


def regret(clients, t):
    total = 0
    for client in clients:
        total += np.sum(client.get_regret())
    return total / (len(clients) * (t + 1))


def run():
    torch.manual_seed(0)
    samples = [(torch.randn(1, 3), torch.randn(1, 1)) for _ in range(4)]
    clients = [OnlineClient(samples) for _ in range(2)]
    for t in range(3):
        for client in clients:
            client.train_local(t)
        print(t, regret(clients, t))
