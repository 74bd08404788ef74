"""A page on exploding gradients and gradient clipping: `clip_grad_norm_()`
changes the gradients in place, "this means it must be called before
optimizer.step() or gradients won't be clipped - calling it after step() is
a silent bug."  Re-created as an RNN regression trainer whose `train_epoch`
clips after the step (the clip then only rescales gradients that the next
`zero_grad()` discards).  Nothing raises.
Buggy line: `torch.nn.utils.clip_grad_norm_(...)` after `optimizer.step()`.
Source: https://theneuralbase.com/pytorch/learn/intermediate/gradient-exploding-gradient-clipping/"""
import torch
import torch.nn as nn


class SeqRegressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.RNN(2, 8, batch_first=True)
        self.head = nn.Linear(8, 1)

    def forward(self, x):
        out, _ = self.rnn(x)
        return self.head(out[:, -1])


def train_epoch(model, optimizer, loss_fn, batches, max_norm=1.0):
    for X, y in batches:
        optimizer.zero_grad()
        output = model(X)
        loss = loss_fn(output, y)
        loss.backward()
        optimizer.step()
        total_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=max_norm)  # expect: ADL022
    return total_norm


def bug_shows():
    """The update applied is the unclipped gradient: the weights moved by lr * g
    with ||g|| far above max_norm."""
    torch.manual_seed(0)
    model = SeqRegressor()
    before = [p.detach().clone() for p in model.parameters()]
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    X, y = torch.randn(4, 5, 2) * 10, torch.randn(4, 1) * 100
    norm = train_epoch(model, optimizer, nn.MSELoss(), [(X, y)], max_norm=1.0)
    moved = torch.sqrt(sum(((p.detach() - b) ** 2).sum() for p, b in zip(model.parameters(), before)))
    return norm.item() > 1.0 and moved.item() > 0.1 * 1.0 + 1e-3
