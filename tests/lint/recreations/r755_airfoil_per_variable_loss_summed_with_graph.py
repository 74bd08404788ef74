"""Transolver (Airfoil-Design-AirfRANS, thuml): the training loop computes the
loss of each output variable (`loss_per_var = criterion(out, targets).mean(dim=0)`,
a vector of four), backpropagates their mean, and keeps epoch totals of both: the
scalar totals (`avg_loss += total_loss`) are found (ADL023), but the per-variable
total, `avg_loss_per_var += loss_per_var` into `torch.zeros(4)`, was missed: the
vector is never itself backpropagated, only its mean, and no rule counted the
reduced tensor as a part of the loss.  The total keeps every batch's graph until
the function returns `.cpu().data.numpy()` of it.  Found by reading set AU.
Re-created in my own shapes: a small regressor over three outputs, an epoch loop
that backpropagates the mean of the per-output losses and sums the vector.
Nothing raises; the vector's total keeps a graph reaching back through every batch.
Buggy line: `per_output += losses` (not `losses.detach()`).
Source: https://github.com/thuml/Transolver (Airfoil-Design-AirfRANS/train.py)"""
import torch
import torch.nn as nn


def train_epoch(model, batches, optimizer):
    per_output = torch.zeros(3)
    for x, y in batches:
        optimizer.zero_grad()
        losses = ((model(x) - y) ** 2).mean(dim=0)
        loss = losses.mean()
        loss.backward()
        optimizer.step()
        per_output += losses  # expect: ADL023
    return per_output / len(batches)


def bug_shows():
    """After the epoch, the per-output total is a tensor whose graph reaches back
    through every batch's losses (one in-place `AddBackward0` per batch)."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 3))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    batches = [(torch.randn(6, 5), torch.randn(6, 3)) for _ in range(5)]
    total = train_epoch(model, batches, optimizer)
    depth, node = 0, total.grad_fn.next_functions[0][0]  # under the division
    while node is not None and node.name() == "AddBackward0":
        depth += 1
        node = node.next_functions[0][0]
    return total.grad_fn is not None and depth >= 4
