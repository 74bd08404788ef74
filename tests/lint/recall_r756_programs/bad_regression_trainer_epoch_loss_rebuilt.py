"""A regression trainer that sums the per-sample losses of a batch into `batch_loss` (starting
from 0.0) and then rebuilds the loss with `torch.tensor(batch_loss / n, requires_grad=True)`
before the backward: the copy is a fresh leaf, the network gets no gradient and the step
changes nothing."""
import torch
import torch.nn as nn


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1))

    def forward(self, x):
        return self.net(x)


class Trainer:
    def __init__(self):
        self.model = Regressor()
        self.criterion = nn.MSELoss()
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1)

    def fit_batch(self, xs, ys):
        batch_loss = 0.0
        for x, y in zip(xs, ys):
            batch_loss += self.criterion(self.model(x), y)
        n = len(xs)
        loss = torch.tensor(batch_loss / n, requires_grad=True)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()


def bug_shows():
    torch.manual_seed(0)
    trainer = Trainer()
    before = [p.detach().clone() for p in trainer.model.parameters()]
    trainer.fit_batch(torch.rand(4, 3), torch.rand(4, 1))
    return all(torch.equal(b, p) for b, p in zip(before, trainer.model.parameters()))
