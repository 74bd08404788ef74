"""A PyTorch training-loop tutorial page, "Missing zero_grad Causes
Nonsense", describes the two production bugs it sees most: "The most common
production bug is missing zero_grad; the close second is logging loss
tensors instead of loss.item(), which quietly leaks memory."  This is the
training step the page warns about, shaped as a trainer's epoch function:
`loss.backward()` and `optimizer.step()` with no `zero_grad()` (each update
applies the sum of every gradient so far) and `history.append(loss)`, which
keeps every batch's graph alive for the whole run.  Nothing raises.
Buggy lines: `optimizer.step()` (nothing clears `.grad`) and
`history.append(loss)`.
Source: https://thecodeforge.io/ml-ai/pytorch-training-loop/"""
import torch
import torch.nn as nn


def make_loader(n=3, batch=8):
    torch.manual_seed(0)
    return [(torch.randn(batch, 4), torch.randint(0, 3, (batch,))) for _ in range(n)]


def train_one_epoch(model, loader, optimizer, loss_fn, history, record=None):
    model.train()
    for xb, yb in loader:
        pred = model(xb)
        loss = loss_fn(pred, yb)
        if record is not None:
            grad = model[0].weight.grad
            record.append(None if grad is None else grad.clone())
        loss.backward()
        optimizer.step()  # expect: ADL018
        history.append(loss)  # expect: ADL023
    return history


def fit(epochs=1, record=None):
    model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 3))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loss_fn = nn.CrossEntropyLoss()
    history = []
    for epoch in range(epochs):
        train_one_epoch(model, make_loader(), optimizer, loss_fn, history, record=record)
    return history


def bug_shows():
    """The logged losses hold graphs, and .grad before the second backward
    still holds the first batch's gradient."""
    record = []
    history = fit(record=record)
    return all(h.grad_fn is not None for h in history) and record[1].abs().sum().item() > 0
