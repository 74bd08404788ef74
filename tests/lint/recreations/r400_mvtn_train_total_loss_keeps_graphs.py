"""MVTN's training loop runs the view-selection network and the multi-view
classifier, backpropagates, steps both optimizers and sums `total_loss +=
loss` for the epoch's report.  The sum keeps every batch's graph (renderer,
view selector and classifier): the reporter's process is killed in the
second epoch.  The fix sums `loss.item()`.
Buggy line: `total_loss += loss` in `train`.
Source: https://github.com/ajhamdi/MVTN/issues/2"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class MVTN(nn.Module):
    """Predicts the azimuth and elevation offsets of the views from the shape."""

    def __init__(self, nb_views=4):
        super().__init__()
        self.regressor = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 2 * nb_views), nn.Tanh())

    def forward(self, points):
        return self.regressor(points.mean(dim=1))


class MVNetwork(nn.Module):
    def __init__(self, nb_views=4, num_classes=3):
        super().__init__()
        self.nb_views = nb_views
        self.classifier = nn.Linear(6 + 2 * nb_views, num_classes)

    def forward(self, points, view_offsets):
        features = torch.cat([points.max(dim=1).values, view_offsets], dim=1)
        return self.classifier(features)


def train(data_loader, mvtn, mvnetwork, optimizer, mvtn_optimizer):
    mvtn.train()
    mvnetwork.train()
    total_loss = 0.0
    n = 0
    for points, targets in data_loader:
        view_offsets = mvtn(points)
        outputs = mvnetwork(points, view_offsets)
        loss = F.cross_entropy(outputs, targets)
        optimizer.zero_grad()
        mvtn_optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        mvtn_optimizer.step()
        total_loss += loss  # expect: ADL023
        n += 1
    return total_loss / n


def bug_shows():
    """The epoch's loss is a graph tensor reaching every batch's graph."""
    torch.manual_seed(0)
    mvtn, mvnetwork = MVTN(), MVNetwork()
    optimizer = torch.optim.AdamW(mvnetwork.parameters(), lr=1e-3)
    mvtn_optimizer = torch.optim.AdamW(mvtn.parameters(), lr=1e-4)
    loader = [(torch.randn(2, 10, 6), torch.tensor([0, 2])) for _ in range(3)]
    return train(loader, mvtn, mvnetwork, optimizer, mvtn_optimizer).grad_fn is not None
