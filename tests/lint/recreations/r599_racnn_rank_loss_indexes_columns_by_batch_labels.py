"""A PyTorch re-implementation of RA-CNN (recurrent attention CNN for
fine-grained recognition): the attention-proposal networks are trained with a
pairwise rank loss between consecutive scales, `RankLoss(scores1, scores2,
target)`.  The loss picks the true-class probability with
`F.softmax(scores)[:, target]`, which for a batch selects a batch x batch
block (every sample's probability of every sample's class), not one entry
per sample, and returns the clamped matrix unreduced.  With `batch_size=1`
this is a 1x1 tensor and `backward()` works; with `batch_size=32` the
training fails with "grad can be implicitly created only for scalar
outputs".  The reporter rewrote it with `gather(1, target.view(-1, 1))`.
Re-created as the repository's `RankLoss` and `Manager.do_batch` (rank
losses backpropagated scale by scale with `retain_graph`), with a small
three-scale model.  Raises at the first rank backward.
Buggy line: `ps1 = F.softmax(scores1, dim=1)[:, target.long().data]` (and
the unreduced return).
Source: https://github.com/dillondavis/RecurrentAttentionConvolutionalNeuralNetwork/issues/4"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class RankLoss(nn.Module):
    def __init__(self, margin):
        super(RankLoss, self).__init__()
        self.margin = margin

    def forward(self, scores1, scores2, target):
        ps1 = F.softmax(scores1, dim=1)[:, target.long().data]  # missed: no rule (backward of a non-scalar loss)
        ps2 = F.softmax(scores2, dim=1)[:, target.long().data]
        return torch.clamp(ps1 - ps2 + self.margin, min=0)


class ThreeScaleNet(nn.Module):
    def __init__(self, num_classes=6):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.heads = nn.ModuleList([nn.Linear(8, num_classes) for _ in range(3)])
        self.apn = nn.ModuleList([nn.Linear(8, 3) for _ in range(2)])

    def forward(self, x):
        scores = []
        for i, head in enumerate(self.heads):
            f = self.backbone(x)
            scores.append(head(f))
            if i < 2:
                box = torch.sigmoid(self.apn[i](f))
                x = F.interpolate(x * box[:, :1, None, None], scale_factor=1.0)
        return scores


class Manager(object):
    def __init__(self, model):
        self.model = model
        self.criterion_class = nn.CrossEntropyLoss()
        self.criterion_rank = RankLoss(0.05)

    def do_batch(self, optimizer, batch, label, optimize_class=True):
        self.model.zero_grad()
        scores = self.model(batch)
        if optimize_class:
            for i in range(len(scores) - 1, -1, -1):
                retain_graph = i > 0
                self.criterion_class(scores[i], label).backward(retain_graph=retain_graph)
        else:
            for i in range(len(scores) - 1, 0, -1):
                retain_graph = (i - 1) > 0
                self.criterion_rank(scores[i - 1], scores[i], label).backward(retain_graph=retain_graph)
        optimizer.step()


def run():
    torch.manual_seed(0)
    model = ThreeScaleNet()
    manager = Manager(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    batch, label = torch.randn(32, 3, 16, 16), torch.randint(0, 6, (32,))
    manager.do_batch(optimizer, batch, label, optimize_class=True)
    manager.do_batch(optimizer, batch, label, optimize_class=False)
