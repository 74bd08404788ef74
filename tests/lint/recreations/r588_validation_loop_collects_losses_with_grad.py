"""A tutorial on the validation loop warns that running the validation
batches with autograd on builds a graph for every batch, and that keeping
the batch losses as tensors keeps those graphs alive.  Re-created as the
tutorial's trainer: an MLP with dropout, `train_one_epoch`, a `validate`
function run after every epoch that switches to `eval()` but not to
`no_grad()` / `inference_mode()`, and the epoch history holding the
validation losses.  Nothing raises; the history returned to the caller holds
every validation batch's graph.
Buggy line: `val_losses.append(loss_fn(logits, yb))` (validation losses kept
with their graphs, computed with gradients on).
Source: https://www.cosmiclearn.com/pytorch/validation-loop.php"""
import torch
import torch.nn as nn


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Dropout(0.2), nn.Linear(32, 3))

    def forward(self, x):
        return self.net(x)


def train_one_epoch(model, loader, loss_fn, optimizer):
    model.train()
    total = 0.0
    for xb, yb in loader:
        optimizer.zero_grad()
        loss = loss_fn(model(xb), yb)
        loss.backward()
        optimizer.step()
        total += loss.item()
    return total / len(loader)


def validate(model, loader, loss_fn):
    model.eval()
    val_losses = []
    for xb, yb in loader:
        logits = model(xb)
        val_losses.append(loss_fn(logits, yb))  # missed: ADL031
    return torch.stack(val_losses).mean()


def fit(model, train_loader, val_loader, epochs=2):
    loss_fn = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    history = []
    for _ in range(epochs):
        train_loss = train_one_epoch(model, train_loader, loss_fn, optimizer)
        val_loss = validate(model, val_loader, loss_fn)
        history.append((train_loss, val_loss))
    return history


def bug_shows():
    """The validation losses in the history carry a graph back to the weights."""
    torch.manual_seed(0)
    data = [(torch.randn(8, 10), torch.randint(0, 3, (8,))) for _ in range(3)]
    history = fit(Classifier(), data, data)
    return all(v.grad_fn is not None for _, v in history)
