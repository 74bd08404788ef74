"""An issue on MIPCandy (a medical image processing framework): its
`Normalize` module's "cut" step clips with index assignment, `x[x < left] =
left` and `x[x > right] = right`, and the report warns that these in-place
writes break gradient computation when `x` is part of a graph.  Re-created
as the module (a min/max domain, `cut` then rescale) applied to the sigmoid
probabilities of a small segmentation network before a Dice loss, in a
trainer.  Raises at the first backward: sigmoid's backward uses its output,
which the cut overwrites.
Buggy lines: `x[x < left] = left` and `x[x > right] = right`.
Source: https://github.com/ProjectNeura/MIPCandy/issues/156"""
import torch
import torch.nn as nn


class Normalize(nn.Module):
    def __init__(self, domain=(0.01, 0.99)):
        super().__init__()
        self.domain = domain

    def cut(self, x):
        left, right = self.domain
        if left is not None:
            x[x < left] = left  # reported at the call of `self.normalize`
        if right is not None:
            x[x > right] = right  # reported at the call of `self.normalize`
        return x

    def forward(self, x):
        x = self.cut(x)
        left, right = self.domain
        return (x - left) / (right - left)


def dice_loss(pred, target, eps=1e-6):
    inter = (pred * target).sum(dim=(1, 2, 3))
    union = pred.sum(dim=(1, 2, 3)) + target.sum(dim=(1, 2, 3))
    return 1 - ((2 * inter + eps) / (union + eps)).mean()


class SegmentationTrainer:
    def __init__(self):
        self.model = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 1, 1))
        self.normalize = Normalize()
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=1e-3)

    def train_step(self, image, mask):
        probs = torch.sigmoid(self.model(image))
        loss = dice_loss(self.normalize(probs), mask)  # expect: ADL001
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.item()


def run():
    torch.manual_seed(0)
    trainer = SegmentationTrainer()
    for _ in range(2):
        trainer.train_step(torch.randn(2, 1, 8, 8) * 4, (torch.rand(2, 1, 8, 8) > 0.5).float())
