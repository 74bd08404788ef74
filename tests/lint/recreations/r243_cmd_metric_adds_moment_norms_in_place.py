"""A central moment discrepancy (CMD) loss for domain adaptation starts
from the distance of the two means, `cmd = (mean_x - mean_y).norm(p=2)`,
and adds the distances of the higher central moments with `cmd += ...`.
`norm` keeps its result for backward, so the in-place add into it makes
`cmd.backward()` fail ("one of the variables needed for gradient computation
has been modified by an inplace operation ... output 0 of
LinalgVectorNormBackward0").  The fix accumulates out of place
(`cmd = cmd + ...`).
Buggy line: `cmd += self.moment_diff(offsets_x, offsets_y, k)` in `CMDLoss.forward`.
Expected finding: ADL001 there.
Source: https://github.com/pytorch/pytorch/issues/78140"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class CMDLoss(nn.Module):
    def __init__(self, n_moments=3):
        super().__init__()
        self.n_moments = n_moments

    @staticmethod
    def moment_diff(offsets_x, offsets_y, k):
        return (offsets_x.pow(k).mean(0) - offsets_y.pow(k).mean(0)).norm(p=2)

    def forward(self, x, y):
        mean_x = x.mean(dim=0, keepdim=True)
        mean_y = y.mean(dim=0, keepdim=True)
        offsets_x = x - mean_x
        offsets_y = y - mean_y
        cmd = (mean_x - mean_y).squeeze().norm(p=2)
        for k in range(2, self.n_moments + 1):
            cmd += self.moment_diff(offsets_x, offsets_y, k)  # expect: ADL001
        return cmd


class FeatureExtractor(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(5, 8), nn.Sigmoid())
        self.classifier = nn.Linear(8, 2)

    def forward(self, x):
        h = self.body(x)
        return h, self.classifier(h)


def train_step(model, cmd_loss, optimizer, source, labels, target):
    h_s, logits = model(source)
    h_t, _ = model(target)
    loss = F.cross_entropy(logits, labels) + 0.5 * cmd_loss(h_s, h_t)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()


def run():
    torch.manual_seed(0)
    model = FeatureExtractor()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    train_step(model, CMDLoss(), optimizer, torch.randn(6, 5), torch.tensor([0, 1, 0, 1, 0, 1]), torch.randn(6, 5) + 1)
