"""An essay "The annotated PyTorch training loop" walks through each line of
a standard loop ("What each line does and what breaks if you move it") and
lists placement errors that silently break training, among them "calling
gradient clipping before backward pass": at that point the gradients are
the zeros (or `None`s) left by `zero_grad()`, so the clip does nothing and
the step uses the unclipped gradient.  Re-created as the essay's loop
(an MLP on two-feature data, Adam, a cosine schedule, clipping at 1.0)
with the clip moved above `loss.backward()`.  Nothing raises; the step
receives gradients whose norm exceeds `max_norm`.
Buggy line: `torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)`
(called before `loss.backward()`).
Source: https://wpnews.pro/news/the-annotated-pytorch-training-loop.txt"""
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


class MLP(nn.Module):
    def __init__(self, in_features=2, hidden=128, out_features=3):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(in_features, hidden), nn.ReLU(), nn.Linear(hidden, out_features))

    def forward(self, x):
        return self.net(x)


def fit(X_train, y_train, epochs=1, record=None):
    dataset = TensorDataset(X_train, y_train)
    loader = DataLoader(dataset, batch_size=64, shuffle=True)
    model = MLP(in_features=2, hidden=128, out_features=3)
    criterion = nn.CrossEntropyLoss()
    optimiser = torch.optim.Adam(model.parameters(), lr=1e-3)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimiser, T_max=100)
    for epoch in range(epochs):
        model.train()
        for X_batch, y_batch in loader:
            optimiser.zero_grad()
            logits = model(X_batch)
            loss = criterion(logits, y_batch)
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)  # expect: ADL022
            loss.backward()
            if record is not None:
                record.append(torch.norm(torch.stack([p.grad.norm() for p in model.parameters()])).item())
            optimiser.step()
        scheduler.step()
    return model


def bug_shows():
    """The gradient the step uses is larger than max_norm."""
    torch.manual_seed(0)
    X = torch.randn(64, 2) * 50
    y = torch.randint(0, 3, (64,))
    norms = []
    fit(X, y, record=norms)
    return max(norms) > 1.0
