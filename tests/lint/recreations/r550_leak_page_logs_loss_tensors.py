"""A PyTorch memory-leak page ("Memory leak detection") names list
accumulation as a leak source: appending the loss tensor to a history list
keeps each iteration's graph alive; "always use .item() for scalar losses
(loss.item() not loss)".  Re-created as a trainer class whose `fit` logs the
loss tensor of each step into `self.loss_history`.  Nothing raises; memory
grows with every step.
Buggy line: `self.loss_history.append(loss)`.
Source: https://theneuralbase.com/pytorch/learn/intermediate/memory-leak-detection/"""
import torch
import torch.nn as nn


class Trainer:
    def __init__(self, model, lr=0.01):
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=lr)
        self.loss_history = []

    def step(self, x):
        loss = self.model(x).pow(2).mean()
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss

    def fit(self, batches):
        for x in batches:
            loss = self.step(x)
            self.loss_history.append(loss)  # expect: ADL028
        return self.loss_history


def bug_shows():
    """Every logged entry still holds its graph."""
    torch.manual_seed(0)
    trainer = Trainer(nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1)))
    history = trainer.fit([torch.randn(5, 4) for _ in range(3)])
    return all(h.grad_fn is not None for h in history)
