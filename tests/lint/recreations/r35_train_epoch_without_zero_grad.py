"""The training function of a court-keypoint detector calls backward() and
step() for every batch but never clears the gradients, so each step applies
the sum of all gradients so far (no error is raised).
Source: https://github.com/yastrebksv/TennisCourtDetector/issues/7"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class BallTrackerNet(nn.Module):
    def __init__(self, out_channels=2):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 4, 3, padding=1)
        self.conv2 = nn.Conv2d(4, out_channels, 3, padding=1)

    def forward(self, x):
        return self.conv2(F.relu(self.conv1(x)))


def train(model, train_loader, optimizer, criterion, device, epoch, max_iters=1000):
    model.train()
    losses = []
    for iter_id, batch in enumerate(train_loader):
        out = model(batch[0].float().to(device))
        gt_hm_hp = batch[1].float().to(device)
        loss = criterion(torch.sigmoid(out), gt_hm_hp)
        loss.backward()
        optimizer.step()  # expect: ADL018
        losses.append(loss.item())
        if iter_id > max_iters:
            break
    return np.mean(losses)


def bug_shows() -> bool:
    """With lr=0 the weights stay put: after two identical batches the
    gradient is twice the gradient of one."""
    torch.manual_seed(0)
    model = BallTrackerNet()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.0)
    criterion = nn.MSELoss()
    batch = (torch.randn(2, 3, 6, 6), torch.rand(2, 2, 6, 6))
    train(model, [batch], optimizer, criterion, "cpu", 0)
    single = model.conv1.weight.grad.clone()
    train(model, [batch], optimizer, criterion, "cpu", 1)
    return torch.allclose(model.conv1.weight.grad, 2 * single)
