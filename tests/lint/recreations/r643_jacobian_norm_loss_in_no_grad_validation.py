"""An issue on PyTorch asks whether validation may run under
`torch.no_grad()` when part of the loss is the norm of the network's Jacobian,
computed with `torch.autograd.grad`: "when I use with torch.no_grad(), there's
always an error in validation".  Re-created as a contractive regressor whose
loss adds the squared Frobenius norm of the input Jacobian (computed with
`autograd.grad(..., create_graph=True)`), a training epoch and a validation
epoch that wraps the same loss in `torch.no_grad()`.  Raises at the first
validation batch ("element 0 of tensors does not require grad").
Buggy line: `val_loss += contractive_loss(model, x, y).item()` inside `with
torch.no_grad():` (the loss differentiates).
Source: https://github.com/pytorch/pytorch/issues/69217"""
import torch
import torch.nn as nn
import torch.nn.functional as F


def contractive_loss(model, x, y, weight=0.1):
    x = x.clone().requires_grad_(True)
    out = model(x)
    (jac,) = torch.autograd.grad(out.sum(), x, create_graph=True)
    return F.mse_loss(out, y) + weight * jac.pow(2).sum(dim=1).mean()


def train_epoch(model, optimizer, batches):
    model.train()
    for x, y in batches:
        loss = contractive_loss(model, x, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def validate(model, batches):
    model.eval()
    val_loss = 0.0
    with torch.no_grad():
        for x, y in batches:
            val_loss += contractive_loss(model, x, y).item()  # expect: ADL038
    return val_loss / len(batches)


def run():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 1))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    batches = [(torch.randn(8, 4), torch.randn(8, 1)) for _ in range(2)]
    for _ in range(2):
        train_epoch(model, optimizer, batches)
        validate(model, batches)
