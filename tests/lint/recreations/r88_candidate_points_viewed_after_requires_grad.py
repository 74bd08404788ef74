"""Optimising candidate points of an acquisition function by gradient ascent:
the candidates are made with `torch.tensor(..., requires_grad=True)` and
reshaped with `.view(n, 1, d)` in the same expression, so the name holds the
view, a non-leaf whose `.grad` stays None after backward ("Grad is None after
using view"); the update then fails on None.
Source: https://github.com/pytorch/pytorch/issues/19778"""
import torch


class ExpectedImprovement:
    def __init__(self, train_X, train_Y, best_f):
        self.train_X = train_X
        self.train_Y = train_Y
        self.best_f = best_f

    def posterior(self, X):
        dist = torch.cdist(X.squeeze(1), self.train_X)
        weights = torch.softmax(-dist, dim=-1)
        mean = weights @ self.train_Y
        std = 0.1 + dist.min(dim=-1).values
        return mean, std

    def __call__(self, X):
        mean, std = self.posterior(X)
        u = (mean - self.best_f) / std
        normal = torch.distributions.Normal(torch.zeros_like(u), torch.ones_like(u))
        return std * (u * normal.cdf(u) + normal.log_prob(u).exp())


def optimize_acqf(acq_function, initial_conditions, steps=3, lr=0.05):
    X = torch.tensor(initial_conditions, requires_grad=True).view(len(initial_conditions), 1, -1)
    for _ in range(steps):
        loss = -acq_function(X).sum()
        loss.backward()
        with torch.no_grad():
            X -= lr * X.grad  # expect: ADL020
            X.clamp_(0.0, 1.0)
    return X.detach()


def run():
    torch.manual_seed(0)
    train_X = torch.rand(6, 2)
    train_Y = torch.sin(3 * train_X).sum(-1)
    acq = ExpectedImprovement(train_X, train_Y, best_f=train_Y.max())
    optimize_acqf(acq, [[0.25, 0.5], [0.75, 0.1]])
