"""ImVisible's training loop adds the loss and its two terms to running
totals as tensors, `running_loss += loss`, `running_loss_MSE += MSE`,
`running_loss_cross_entropy += cross_entropy`, after the batch's backward and
step.  Each total keeps every batch's graph until the epoch ends, so memory
(RAM, in the report) grows with the number of batches; nothing raises.  The
fix adds `.item()` of each.
Buggy line: `running_loss += loss` in `train`.
Source: https://github.com/samuelyu2002/ImVisible/issues/2"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class LytNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(6, 8), nn.ReLU())
        self.classes = nn.Linear(8, 3)
        self.points = nn.Linear(8, 4)

    def forward(self, x):
        h = self.body(x)
        return self.classes(h), self.points(h)


def train(net, optimizer, batches):
    running_loss = 0.0
    running_loss_MSE = 0.0
    running_loss_cross_entropy = 0.0
    for images, labels, points in batches:
        optimizer.zero_grad()
        pred_classes, pred_points = net(images)
        MSE = F.mse_loss(pred_points, points)
        cross_entropy = F.cross_entropy(pred_classes, labels)
        loss = MSE + cross_entropy
        loss.backward()
        optimizer.step()
        running_loss += loss  # expect: ADL023
        running_loss_MSE += MSE  # expect: ADL023
        running_loss_cross_entropy += cross_entropy  # expect: ADL023
    return running_loss, running_loss_MSE, running_loss_cross_entropy


def bug_shows():
    """The epoch's running totals still hold the batches' graphs."""
    torch.manual_seed(0)
    net = LytNet()
    optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
    batches = [(torch.randn(4, 6), torch.randint(0, 3, (4,)), torch.randn(4, 4)) for _ in range(3)]
    totals = train(net, optimizer, batches)
    return all(t.grad_fn is not None for t in totals)
