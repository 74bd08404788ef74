"""A training script logs its loss to a run logger every step,
`run.log({"loss": loss})` with the loss tensor (the report: memory grew by
40 GB in an hour "just by logging the loss values", and stopped growing with
`loss.item()`).  The logger keeps the history of every logged value for its
summary, so the history holds the graph of every step.  The fix logs
`loss.item()`.
Buggy line: `run.log({"loss": loss})` in `train`.
Source: https://github.com/wandb/wandb/issues/354"""
import torch
import torch.nn as nn


class Run:
    """A logger that keeps every logged row, as experiment trackers do."""

    def __init__(self):
        self.history = []
        self.summary = {}

    def log(self, row):
        self.history.append(dict(row))
        self.summary.update(row)


def train(model, batches, run):
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for x, y in batches:
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        run.log({"loss": loss})  # expect: ADL023


def bug_shows():
    """The logger's history carries the graph of every step."""
    torch.manual_seed(0)
    run = Run()
    train(nn.Linear(3, 1), [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(3)], run)
    return all(row["loss"].grad_fn is not None for row in run.history)
