"""An article on "element 0 of tensors does not require grad and does not
have a grad_fn": the loss is built from a tensor that was cut from the graph
(`.detach()`, a trip through NumPy), so `loss.backward()` has nothing to
differentiate.  Re-created as a regression trainer whose loss is a weighted
error computed by a NumPy helper on the detached predictions (a shape the
article's `.detach()` cause takes in training code) and wrapped back with
`torch.tensor(...)`.  Raises at the first backward.
Buggy line: `preds = model(xb).detach().cpu().numpy()` (the graph cut before
the loss).
Source: https://jishuzhan.net/article/1722447953278275585"""
import numpy as np
import torch
import torch.nn as nn


def weighted_error(preds, targets, weights):
    return float(np.mean(weights * (preds - targets) ** 2))


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 1))

    def forward(self, x):
        return self.body(x).squeeze(-1)


class Trainer:
    def __init__(self, model, lr=1e-3):
        self.model = model
        self.optimizer = torch.optim.Adam(model.parameters(), lr=lr)

    def step(self, xb, yb, wb):
        self.optimizer.zero_grad()
        preds = self.model(xb).detach().cpu().numpy()  # expect: ADL034
        loss = torch.tensor(weighted_error(preds, yb.numpy(), wb.numpy()))
        loss.backward()
        self.optimizer.step()
        return loss.item()


def run():
    torch.manual_seed(0)
    trainer = Trainer(Regressor())
    trainer.step(torch.randn(8, 6), torch.randn(8), torch.rand(8))
