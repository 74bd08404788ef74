"""Cause 3, a second shape: a top-level training function adds a same-file metric of the
model's predictions (`pearson(pred, y)`, tensor arithmetic) into a running total with
`total = total + ...`; every batch's graph stays reachable from the total."""
import torch
import torch.nn as nn


def pearson(pred, target):
    pc = pred - pred.mean()
    tc = target - target.mean()
    return (pc * tc).sum() / (pc.norm() * tc.norm() + 1e-8)


def train(model, batches, optimizer):
    loss_fn = nn.MSELoss()
    corr_total = 0.0
    for x, y in batches:
        optimizer.zero_grad()
        pred = model(x).squeeze(1)
        loss = loss_fn(pred, y)
        corr_total = corr_total + pearson(pred, y)
        loss.backward()
        optimizer.step()
    return corr_total / len(batches)


def run():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
    batches = [(torch.randn(6, 4), torch.randn(6)) for _ in range(3)]
    return train(model, batches, torch.optim.SGD(model.parameters(), lr=0.05))


def bug_shows():
    return run().grad_fn is not None
