"""particleflow's PyTorch training script runs the same `train_and_valid`
function for both phases; in the validation phase it sets `model.eval()` but
runs the forward pass and the loss with gradients on.  Every validation
batch builds a graph and keeps the activations it saves while the batch's
outputs live, so larger batch sizes run out of memory in validation.
Nothing raises (until the OOM).  The fix wraps the validation forward in
`torch.no_grad()`.
Buggy line: `ypred = model(X)` in `train_and_valid` with `is_train=False`.
Source: https://github.com/jpata/particleflow/pull/290"""
import torch
import torch.nn as nn
import torch.nn.functional as F


def mlpf_loss(y, ypred):
    return {"Classification": F.cross_entropy(ypred, y), "Total": F.cross_entropy(ypred, y)}


def train_and_valid(model, optimizer, loader, is_train=True):
    if is_train:
        model.train()
    else:
        model.eval()
    epoch_loss = {}
    ypred = None
    for X, y in loader:
        ypred = model(X)  # missed: no rule
        loss = mlpf_loss(y, ypred)
        if is_train:
            optimizer.zero_grad()
            loss["Total"].backward()
            optimizer.step()
        for name in loss:
            epoch_loss[name] = epoch_loss.get(name, 0.0) + loss[name].detach().item()
    return epoch_loss, ypred


def bug_shows():
    """The validation phase's outputs carry a graph."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 3))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    loader = [(torch.randn(4, 5), torch.randint(0, 3, (4,))) for _ in range(2)]
    _, ypred = train_and_valid(model, optimizer, loader, is_train=False)
    return ypred.grad_fn is not None
