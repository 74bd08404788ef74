"""MIPCandy (medical image processing): the `Normalize` module's domain cut
is written in place,
`if left is not None: x[x < left] = left` / `if right is not None: x[x > right] = right`.
The maintainers' own report: the in-place writes "can break gradient
computation if `x` is part of a computation graph requiring gradients"
(fixed in PR 159 with out-of-place clamping).  Re-created where it bites: a
segmentation trainer cuts the network's sigmoid probabilities to a domain
before the Dice loss; sigmoid keeps its output for backward, so the first
backward fails with "one of the variables needed for gradient computation
has been modified by an inplace operation".
Buggy line: `x[x < left] = left` (and `x[x > right] = right`) in `Normalize.cut`.
Source: https://github.com/ProjectNeura/MIPCandy/issues/156"""
import torch
import torch.nn as nn


class Normalize(nn.Module):
    def __init__(self, domain=(None, None)):
        super().__init__()
        self.left, self.right = domain

    def cut(self, x):
        left, right = self.left, self.right
        if left is not None:
            x[x < left] = left  # reported at the call of `self.normalize`
        if right is not None:
            x[x > right] = right
        return x

    def forward(self, x):
        return self.cut(x)


def dice_loss(prob, target, eps=1e-6):
    inter = (prob * target).sum((1, 2, 3))
    return 1 - ((2 * inter + eps) / (prob.sum((1, 2, 3)) + target.sum((1, 2, 3)) + eps)).mean()


class SegmentationTrainer:
    def __init__(self):
        self.model = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 1, 1))
        self.normalize = Normalize(domain=(1e-4, 1 - 1e-4))
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=1e-3)

    def train_step(self, image, mask):
        prob = torch.sigmoid(self.model(image))
        prob = self.normalize(prob)  # expect: ADL001
        loss = dice_loss(prob, mask)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.item()


def run():
    torch.manual_seed(0)
    trainer = SegmentationTrainer()
    image = torch.randn(2, 1, 16, 16) * 20
    mask = (torch.rand(2, 1, 16, 16) > 0.5).float()
    trainer.train_step(image, mask)
